#!/usr/bin/env bash
# block_round.sh - one GPU round of the block tools' work (issue 6, Must
# show 3: threadhist and kernelretsnoop <= 5% on vecadd -n 16M), from a
# stage folder beside the repository root of a GPU machine:
#
#   cd STAGE && OUT=DIR bash gpu.sh      (gpu.sh: a copy of this script)
#
# STAGE holds build/ (the branch: gpuext, libgpuext-agent.so, bpf/,
# bench/gpu_block_cost), base/ (main's gpuext, agent and bpf/ of the
# session's start), first/gpuext (a script: build/gpuext with
# GPUEXT_PTX_BLOCK_ENTRY_FIRST=1, the block_entry program at the kernel's
# entry), optionally nofb/ (round 4: gpuext, agent and bpf/tools of the
# branch built without the sunk program's copy in the exit block, to see
# what that copy costs; not a correct build) and prev/ (rounds 6 and 7:
# the branch's previous build), bench/gpu_tools_overhead.sh
# and tests/gpu/{lib,block_ctx,tools}.sh;
# the examples are the repository's (../build/examples).  Steps, each
# logged, none fatal, each cut at its own limit, ~150 s in all (STEPS picks
# some):
#   cost      bench/cuda/gpu_block_cost: the hand-written variants (what a
#             block's global write costs where), 15 interleaved rounds;
#   endcost   bench/cuda/block_end_cost (build/bench/block_end_cost): a
#             block's end time and record written by hand, 15 rounds;
#   overhead  TOOLS (the block tools and bare block programs) on vecadd
#             -n 16M (REPEAT=5 interleaved runs: median ratio and range; the
#             recompile column: the agent's recompile with no probes), and
#             SMALL_TOOLS (default: threadhist, main's and the branch's) on
#             reduce -n 16M (REPEAT=3) and gemm -n 2048 (one run: 2 ms
#             launches);
#   checks    tests/gpu/block_ctx.sh and tests/gpu/tools.sh (CHECK_TOOLS,
#             default threadhist, kernelretsnoop, smload), with CHECK_AGENT=1
#             tests/gpu/agent.sh (entry and exit probes count every thread);
#   ncu       Nsight Compute's stall reasons and memory counters for a few
#             variants of gpu_block_cost, where ncu is installed.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")" || exit 1
export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export EX=$PWD/../build/examples CUDA_CACHE_DISABLE=1
STEPS=${STEPS:-overhead checks}
COST_ONLY=${COST_ONLY-}
BB=build/bpf/bench/progs
TOOLS=${TOOLS:-"base:threadhist build:threadhist prev:threadhist first:threadhist base:kernelretsnoop build:kernelretsnoop"}
SMALL_TOOLS=${SMALL_TOOLS:-"base:threadhist build:threadhist"}
t0=$SECONDS
step() { # step NAME LIMIT CMD...: run, log, never fatal
	local name=$1 limit=$2
	shift 2
	echo "== $name ($((SECONDS - t0)) s)"
	timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
	echo "$name: exit $? ($((SECONDS - t0)) s)"
}
want() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader > "$OUT/machine.txt" 2>&1
date -u >> "$OUT/machine.txt"

if want cost; then
	step cost 20 build/bench/gpu_block_cost -rounds 15 ${COST_ONLY:+-only $COST_ONLY}
	step cost_check 10 build/bench/gpu_block_cost -check
fi

if want endcost; then
	step endcost 25 build/bench/block_end_cost 15
fi

if want overhead; then
	step overhead 70 env OUT="$OUT/overhead" ITERS=31 TIMEOUT=10 REPEAT=${REPEAT:-5} \
		CASES="vecadd -n 16777216" TOOLS="$TOOLS" bench/gpu_tools_overhead.sh
	cp "$OUT/overhead/gpu_tools_overhead.md" "$OUT/overhead.md" 2>/dev/null
	step overhead_reduce 25 env OUT="$OUT/overhead_reduce" ITERS=31 TIMEOUT=10 REPEAT=3 \
		CASES="reduce -n 16777216" TOOLS="$SMALL_TOOLS" \
		bench/gpu_tools_overhead.sh
	cp "$OUT/overhead_reduce/gpu_tools_overhead.md" "$OUT/overhead_reduce.md" 2>/dev/null
	step overhead_gemm 40 env OUT="$OUT/overhead_gemm" ITERS=31 TIMEOUT=15 REPEAT=1 \
		CASES="gemm -n 2048" TOOLS="$SMALL_TOOLS" bench/gpu_tools_overhead.sh
	cp "$OUT/overhead_gemm/gpu_tools_overhead.md" "$OUT/overhead_gemm.md" 2>/dev/null
fi

if want checks; then
	step block_ctx 25 env OUT="$OUT/block_ctx" tests/gpu/block_ctx.sh
	step tools 40 env OUT="$OUT/tools" TOOLS="${CHECK_TOOLS:-threadhist kernelretsnoop smload}" \
		tests/gpu/tools.sh
	# with CHECK_AGENT=1: every thread counted once at entry and at exit
	[ -n "${CHECK_AGENT-}" ] && step agent 60 env OUT="$OUT/agent" tests/gpu/agent.sh
fi

NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if want ncu && [ -n "$NCU" ]; then
	# plain, W bare, W + store, W + bulk, W last warp, E store, E red
	step ncu $((150 - (SECONDS - t0) > 10 ? 150 - (SECONDS - t0) : 10)) \
		"$NCU" --csv --page raw --section WarpStateStats --section SpeedOfLight \
		--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_red.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
		build/bench/gpu_block_cost -rounds 1 -iters 2 -only 26,27,36,39,41,46
elif want ncu; then
	echo "ncu: not installed" | tee "$OUT/ncu.log"
fi

# what comes back: a few files; each step's folder as one tarball
find "$OUT" -mindepth 2 -type f -size +256k -delete
for d in overhead overhead_reduce overhead_gemm block_ctx tools agent; do
	[ -d "$OUT/$d" ] && tar -C "$OUT" -czf "$OUT/$d.tgz" "$d" && rm -rf "${OUT:?}/$d"
done

echo "== summary ($((SECONDS - t0)) s)"
cat "$OUT/machine.txt"
[ -f "$OUT/cost.log" ] && cat "$OUT/cost.log"
[ -f "$OUT/cost_check.log" ] && tail -1 "$OUT/cost_check.log"
[ -f "$OUT/endcost.log" ] && cat "$OUT/endcost.log"
for f in overhead overhead_reduce overhead_gemm; do
	[ -f "$OUT/$f.md" ] && tail -n +7 "$OUT/$f.md"
done
for f in block_ctx tools agent; do
	[ -f "$OUT/$f.log" ] && grep -h "passed" "$OUT/$f.log" | tail -1
	[ -f "$OUT/$f.log" ] && grep -h "FAIL" "$OUT/$f.log" | head -5
done
[ -f "$OUT/ncu.log" ] && wc -l "$OUT/ncu.log"
