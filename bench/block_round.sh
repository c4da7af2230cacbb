#!/usr/bin/env bash
# block_round.sh - one GPU round of the block probes' work (issue 6, Must
# show 3), from a stage folder beside the repository root of a GPU machine:
#
#   cd STAGE && OUT=DIR bash gpu.sh      (gpu.sh: a copy of this script)
#
# STAGE holds build/ (the branch: gpuext, libgpuext-agent.so, bpf/), base/
# (main's gpuext, agent and bpf/), combo/ (the branch merged with another
# one, where a round compares them), bench/gpu_tools_overhead.sh and
# tests/gpu/{lib,block_ctx}.sh; the examples are the repository's
# (../build/examples).  Steps, each logged, none fatal, each cut at its own
# limit (a row of bench/gpu_tools_overhead.sh is written when complete),
# ~150 s in all; ITERS=31, the 30 launches after the first:
#   1. tests/gpu/tools.sh for block tools not checked in round 1 (smload,
#      memtrace_block);
#   2. the block tools on vecadd -n 16M, base vs branch in one table;
#   3. bare block programs on vecadd (kernelretsnoop's and blockretsnoop's
#      parts, threadhist's variants: bench/progs/blockv_*);
#   4. threadhist, kernelretsnoop and the empty block programs on reduce
#      (base vs branch) and on gemm -n 2048 (a 2 ms kernel: ~8 s a run,
#      its CPU check).
# (Round 1 ran tests/gpu/block_ctx.sh, 12/12, and tests/gpu/tools.sh for
# threadhist, kernelretsnoop, blockretsnoop and warpretsnoop, 17/17.)
set -u
OUT=${OUT:-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")" || exit 1
export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export EX=$PWD/../build/examples
BB=build/bpf/bench/progs BE=build/bpf/examples MB=base/bpf/bench/progs ME=base/bpf/examples
CB=combo/bpf/bench/progs
t0=$SECONDS
step() { # step NAME LIMIT CMD...: run, log, never fatal
	local name=$1 limit=$2
	shift 2
	echo "== $name ($((SECONDS - t0)) s)"
	timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
	echo "$name: exit $? ($((SECONDS - t0)) s)"
}
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader > "$OUT/machine.txt" 2>&1

step tools 30 env OUT="$OUT/tools" TOOLS="smload memtrace_block" tests/gpu/tools.sh
tail -1 "$OUT/tools.log"

step vecadd 30 env OUT="$OUT/vecadd" ITERS=31 TIMEOUT=10 CASES="vecadd -n 16777216" \
	TOOLS="base:threadhist build:threadhist combo:threadhist base:kernelretsnoop build:kernelretsnoop combo:kernelretsnoop base:smload build:smload combo:smload build:blockretsnoop" \
	bench/gpu_tools_overhead.sh
cp "$OUT/vecadd/gpu_tools_overhead.md" "$OUT/vecadd.md" 2>/dev/null

step vecadd_progs 30 env OUT="$OUT/vecadd_progs" ITERS=31 TIMEOUT=10 CASES="vecadd -n 16777216" \
	TOOLS="build:$BB/blockv_exit_only.bpf.o build:$BB/blockv_krs_store1.bpf.o build:$BB/blockv_krs_end.bpf.o combo:$CB/blockv_krs_end.bpf.o combo:$CB/blockv_krs_packed.bpf.o build:$BB/blockv_wrs_end.bpf.o build:$BB/blockv_krs_warps.bpf.o build:$BB/blockv_one_atomic.bpf.o build:$BB/blockv_rb_discard.bpf.o build:$BB/blockv_th_smonly.bpf.o build:$BB/blockv_th_sm1k.bpf.o build:$BB/blockv_th_spread.bpf.o" \
	bench/gpu_tools_overhead.sh
cp "$OUT/vecadd_progs/gpu_tools_overhead.md" "$OUT/vecadd_progs.md" 2>/dev/null

step reduce 20 env OUT="$OUT/reduce" ITERS=31 TIMEOUT=10 CASES="reduce -n 16777216" \
	TOOLS="base:threadhist build:threadhist combo:threadhist base:kernelretsnoop build:kernelretsnoop combo:kernelretsnoop base:$ME/gpu_block_empty.bpf.o build:$BE/gpu_block_empty.bpf.o" \
	bench/gpu_tools_overhead.sh
cp "$OUT/reduce/gpu_tools_overhead.md" "$OUT/reduce.md" 2>/dev/null

# gemm -n 2048 (a 2 ms kernel) checks its result on the CPU: ~8 s a run
step gemm 45 env OUT="$OUT/gemm" ITERS=31 TIMEOUT=15 CASES="gemm -n 2048" \
	TOOLS="build:threadhist combo:kernelretsnoop build:$BE/gpu_block_empty.bpf.o build:$BE/gpu_empty.bpf.o" \
	bench/gpu_tools_overhead.sh
cp "$OUT/gemm/gpu_tools_overhead.md" "$OUT/gemm.md" 2>/dev/null

# what comes back: a few files; each step's folder as one tarball, without
# the big per-run outputs (kernelretsnoop's records)
rm -f "$OUT"/tools/tools.tgz
rm -rf "$OUT"/tools/logs/*.json
find "$OUT" -mindepth 2 -type f -size +256k -delete
for d in tools vecadd vecadd_progs reduce gemm; do
	[ -d "$OUT/$d" ] && tar -C "$OUT" -czf "$OUT/$d.tgz" "$d" && rm -rf "${OUT:?}/$d"
done

echo "== summary ($((SECONDS - t0)) s)"
grep -h "passed" "$OUT/tools.log"
grep -h "FAIL" "$OUT/tools.log" | head -10
for f in vecadd vecadd_progs reduce gemm; do
	[ -f "$OUT/$f.md" ] && tail -n +7 "$OUT/$f.md"
done
