#!/usr/bin/env bash
# gpu_overhead.sh - what device probes cost on the CUDA examples, on a GPU
# machine, with the build folder carried (build/gpuext, the agent,
# build/bpf, build/examples).
#
#   OUT=DIR ITERS=50 [TOOLS="threadhist smload memtrace"] bench/gpu_overhead.sh
#
# Each example runs ITERS launches plainly and under `gpuext run PROG` for
# each probe program (empty entry+exit probes, the counting program, and the
# device tools when built); per-launch kernel times come from the example's
# own CUDA events (`kernel_ms:` lines).  The first launch is left out of
# every run: it is where the agent instruments the kernel (that time is
# reported apart, by the agent).  Reported: median ms per launch and the
# ratio of medians, instrumented / plain, all in one run on one GPU.
# The "recompile" run is the baseline of the kernel's own PTX through the
# agent's path with no probe in it (GPUEXT_AGENT_NO_PROBES: parsed, printed,
# JIT-compiled by the driver, launches redirected): "vs recomp" is
# instrumented / recompile, what the probes alone cost.  The agent's
# "instrumented (N ms)" first-launch times go to $OUT/first_launch.txt.
# Writes $OUT/gpu_overhead.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/gpu-overhead}
ITERS=${ITERS:-50}
mkdir -p "$OUT"
EX=build/examples
GPUEXT=build/gpuext
# the first launch is reported as a compile: gpuext's module cache and the
# instrumentation ahead of the launch off unless asked for (bench/first_launch.sh measures it, cold and warm)
export GPUEXT_CACHE_DISABLE=${GPUEXT_CACHE_DISABLE:-1} GPUEXT_AGENT_AHEAD=${GPUEXT_AGENT_AHEAD:-0}

cases=("vecadd -n 16777216" "gemm -n 2048" "reduce -n 16777216" "imbalance")
progs=("empty=build/bpf/examples/gpu_empty.bpf.o" "count=build/bpf/examples/gpu_count.bpf.o")
# TOOLS: which device tools to measure too (kernelretsnoop prints one line
# per warp: millions on the larger examples).
for t in ${TOOLS-threadhist smload memtrace}; do
	[ -f "build/bpf/tools/$t.bpf.o" ] && progs+=("$t=build/bpf/tools/$t.bpf.o")
done

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# kernel_ms values of a log, the first launch left out
times() { grep '^kernel_ms:' "$1" | awk 'NR > 1 {print $2}'; }

md="$OUT/gpu_overhead.md"
{
	echo "# Device probe overhead on the CUDA examples"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`OUT=$OUT ITERS=$ITERS bench/gpu_overhead.sh\`; $ITERS launches a run, the first left out; median of the per-launch kernel times (CUDA events)"
	echo
	header="| example | plain ms | recompile ms | ratio |"
	sep="| --- | ---: | ---: | ---: |"
	for p in "${progs[@]}"; do
		header+=" ${p%%=*} ms | ratio | vs recomp |"
		sep+=" ---: | ---: | ---: |"
	done
	echo "$header"
	echo "$sep"
} > "$md"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}'; }
# under_agent LOG OBJ ARGS...: the example under `gpuext run OBJ`
under_agent() {
	local log=$1 obj=$2
	shift 2
	GPUEXT_AGENT_VERBOSE=1 timeout 120 "$GPUEXT" run "$obj" -- "$@" -iters "$ITERS" -time > "$log" 2>&1
}

fail=0
: > "$OUT/first_launch.txt"
for c in "${cases[@]}"; do
	set -- $c
	bin=$1
	shift
	name=$bin
	log="$OUT/$name.plain.log"
	timeout 120 "$EX/$bin" "$@" -iters "$ITERS" -time > "$log" 2>&1 || fail=1
	plain=$(times "$log" | median)
	rlog="$OUT/$name.recompile.log"
	GPUEXT_AGENT_NO_PROBES=1 under_agent "$rlog" build/bpf/examples/gpu_empty.bpf.o "$EX/$bin" "$@" || fail=1
	recomp=$(times "$rlog" | median)
	row="| $bin $* | $plain | $recomp | $(ratio "$recomp" "$plain") |"
	for p in "${progs[@]}"; do
		pname=${p%%=*} obj=${p#*=}
		plog="$OUT/$name.$pname.log"
		under_agent "$plog" "$obj" "$EX/$bin" "$@" || fail=1
		m=$(times "$plog" | median)
		row+=" $m | $(ratio "$m" "$plain") | $(ratio "$m" "$recomp") |"
	done
	echo "$row" >> "$md"
	grep -H 'instrumented (' "$OUT/$name".*.log >> "$OUT/first_launch.txt"
done
{
	echo
	echo "First launch, time the agent added (\`GPUEXT_AGENT_VERBOSE=1\`: parse, inject, JIT, load):"
	echo
	sed -e 's|^.*/||' -e 's/^/    /' "$OUT/first_launch.txt"
} >> "$md"
cat "$md"
exit $fail
