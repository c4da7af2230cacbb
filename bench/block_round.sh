#!/usr/bin/env bash
# block_round.sh - one GPU round of the block probes' work (issue 6, Must
# show 3), from a stage folder beside the repository root of a GPU machine:
#
#   cd STAGE && OUT=DIR bash gpu.sh      (gpu.sh: a copy of this script)
#
# STAGE holds build/ (the branch: gpuext, libgpuext-agent.so, bpf/), base/
# (main's gpuext, agent and bpf/), bench/gpu_tools_overhead.sh and
# tests/gpu/{lib,tools,block_ctx}.sh; the examples are the repository's
# (../build/examples).  Steps, each logged, none fatal, ~150 s in all:
#   1. tests/gpu/block_ctx.sh: every field of the block record, in registers,
#      in shared memory and with the counted exit, on the four examples;
#   2. the block tools on vecadd -n 16M, base vs branch in one table
#      (bench/gpu_tools_overhead.sh, ITERS=31: the 30 launches after the
#      first), then bare block programs (empty ones, kernelretsnoop's and
#      blockretsnoop's parts) in another;
#   3. tests/gpu/tools.sh for the block tools (their checks, branch build);
#   4. threadhist, kernelretsnoop and both empty block programs on gemm and
#      reduce, base vs branch.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")" || exit 1
export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export EX=$PWD/../build/examples
BB=build/bpf/bench/progs BE=build/bpf/examples MB=base/bpf/bench/progs ME=base/bpf/examples
t0=$SECONDS
step() { # step NAME LIMIT CMD...: run, log, never fatal
	local name=$1 limit=$2
	shift 2
	echo "== $name ($((SECONDS - t0)) s)"
	timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
	echo "$name: exit $? ($((SECONDS - t0)) s)"
}
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader > "$OUT/machine.txt" 2>&1

step block_ctx 30 env OUT="$OUT/block_ctx" tests/gpu/block_ctx.sh
tail -1 "$OUT/block_ctx.log"

step vecadd 35 env OUT="$OUT/vecadd" ITERS=31 TIMEOUT=15 CASES="vecadd -n 16777216" \
	TOOLS="base:threadhist build:threadhist base:kernelretsnoop build:kernelretsnoop base:smload build:smload base:blockretsnoop build:blockretsnoop base:warpretsnoop build:warpretsnoop" \
	bench/gpu_tools_overhead.sh
cp "$OUT/vecadd/gpu_tools_overhead.md" "$OUT/vecadd.md" 2>/dev/null

step vecadd_progs 35 env OUT="$OUT/vecadd_progs" ITERS=31 TIMEOUT=15 CASES="vecadd -n 16777216" \
	TOOLS="build:$BE/gpu_empty.bpf.o base:$ME/gpu_block_empty.bpf.o build:$BE/gpu_block_empty.bpf.o base:$MB/blockv_entry_only.bpf.o build:$BB/blockv_entry_only.bpf.o base:$MB/blockv_exit_only.bpf.o build:$BB/blockv_exit_only.bpf.o build:$BB/blockv_rb_discard.bpf.o build:$BB/blockv_krs_end.bpf.o build:$BB/blockv_krs_noend.bpf.o build:$BB/blockv_krs_split.bpf.o" \
	bench/gpu_tools_overhead.sh
cp "$OUT/vecadd_progs/gpu_tools_overhead.md" "$OUT/vecadd_progs.md" 2>/dev/null

step tools 35 env OUT="$OUT/tools" TOOLS="threadhist kernelretsnoop blockretsnoop warpretsnoop" \
	tests/gpu/tools.sh
tail -1 "$OUT/tools.log"

step gemm_reduce 30 env OUT="$OUT/gemm_reduce" ITERS=31 TIMEOUT=15 \
	CASES="gemm -n 2048;reduce -n 16777216" \
	TOOLS="base:threadhist build:threadhist base:kernelretsnoop build:kernelretsnoop base:$ME/gpu_block_empty.bpf.o build:$BE/gpu_block_empty.bpf.o" \
	bench/gpu_tools_overhead.sh
cp "$OUT/gemm_reduce/gpu_tools_overhead.md" "$OUT/gemm_reduce.md" 2>/dev/null
# what comes back: a few files; each step's folder as one tarball, without
# the big per-run outputs (kernelretsnoop's records)
rm -f "$OUT"/tools/tools.tgz
find "$OUT" -mindepth 2 -type f -size +256k -delete
for d in block_ctx vecadd vecadd_progs tools gemm_reduce; do
	[ -d "$OUT/$d" ] && tar -C "$OUT" -czf "$OUT/$d.tgz" "$d" && rm -rf "${OUT:?}/$d"
done

echo "== summary ($((SECONDS - t0)) s)"
grep -h "passed" "$OUT/block_ctx.log" "$OUT/tools.log"
grep -h "FAIL" "$OUT/block_ctx.log" "$OUT/tools.log" | head -10
for f in vecadd vecadd_progs gemm_reduce; do
	[ -f "$OUT/$f.md" ] && tail -n +7 "$OUT/$f.md"
done
