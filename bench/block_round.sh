#!/usr/bin/env bash
# block_round.sh - one GPU round of the block probes' work (issue 6, Must
# show 3), from a stage folder beside the repository root of a GPU machine:
#
#   cd STAGE && OUT=DIR bash gpu.sh      (gpu.sh: a copy of this script)
#
# STAGE holds build/ (the branch: gpuext, libgpuext-agent.so, bpf/), base/
# (main's gpuext, agent and bpf/ of the session's start), bench/
# gpu_tools_overhead.sh and tests/gpu/{lib,block_ctx,tools,launch_id}.sh;
# the examples are the repository's (../build/examples).  Steps, each
# logged, none fatal, each cut at its own limit (a row of
# bench/gpu_tools_overhead.sh is written when complete), ~150 s in all:
#   1. tests/gpu/block_ctx.sh: every field of the block record, in registers,
#      in shared memory and with the counted exit, on the four examples;
#   2. tests/gpu/tools.sh (every tool on every example, their checks) and
#      tests/gpu/launch_id.sh;
#   3. the block tools and the empty probes on vecadd -n 16M and reduce -n
#      16M, base vs branch in one table (ITERS=31: the 30 launches after
#      the first).
# Rounds 1 and 2 of the session ran variants of this script (the branch's
# history has them): bare programs (bench/progs/blockv_*), gemm -n 2048,
# and the branch merged with devcodegen's (combo/).
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

step block_ctx 20 env OUT="$OUT/block_ctx" tests/gpu/block_ctx.sh
tail -1 "$OUT/block_ctx.log"

step tools 70 env OUT="$OUT/tools" tests/gpu/tools.sh
tail -1 "$OUT/tools.log"

step launch_id 30 env OUT="$OUT/launch_id" tests/gpu/launch_id.sh
tail -1 "$OUT/launch_id.log"

step overhead 35 env OUT="$OUT/overhead" ITERS=31 TIMEOUT=10 \
	CASES="vecadd -n 16777216;reduce -n 16777216" \
	TOOLS="base:threadhist build:threadhist base:kernelretsnoop build:kernelretsnoop base:smload build:smload base:$ME/gpu_block_empty.bpf.o build:$BE/gpu_block_empty.bpf.o build:$BB/blockv_exit_only.bpf.o build:$BB/blockv_th_smonly.bpf.o build:$BE/gpu_empty.bpf.o" \
	bench/gpu_tools_overhead.sh
cp "$OUT/overhead/gpu_tools_overhead.md" "$OUT/overhead.md" 2>/dev/null

# what comes back: a few files; each step's folder as one tarball, without
# the big per-run outputs (kernelretsnoop's records)
rm -f "$OUT"/tools/tools.tgz
rm -rf "$OUT"/tools/logs/*.json
find "$OUT" -mindepth 2 -type f -size +256k -delete
for d in block_ctx tools launch_id overhead; do
	[ -d "$OUT/$d" ] && tar -C "$OUT" -czf "$OUT/$d.tgz" "$d" && rm -rf "${OUT:?}/$d"
done

echo "== summary ($((SECONDS - t0)) s)"
grep -h "passed" "$OUT/block_ctx.log" "$OUT/tools.log" "$OUT/launch_id.log"
grep -h "FAIL" "$OUT/block_ctx.log" "$OUT/tools.log" "$OUT/launch_id.log" | head -10
for f in overhead; do
	[ -f "$OUT/$f.md" ] && tail -n +7 "$OUT/$f.md"
done
