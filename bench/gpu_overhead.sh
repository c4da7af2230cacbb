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
# Writes $OUT/gpu_overhead.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/gpu-overhead}
ITERS=${ITERS:-50}
mkdir -p "$OUT"
EX=build/examples
GPUEXT=build/gpuext

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
	header="| example | plain ms |"
	sep="| --- | ---: |"
	for p in "${progs[@]}"; do
		header+=" ${p%%=*} ms | ratio |"
		sep+=" ---: | ---: |"
	done
	echo "$header"
	echo "$sep"
} > "$md"

fail=0
for c in "${cases[@]}"; do
	set -- $c
	bin=$1
	shift
	name=$bin
	log="$OUT/$name.plain.log"
	timeout 120 "$EX/$bin" "$@" -iters "$ITERS" -time > "$log" 2>&1 || fail=1
	plain=$(times "$log" | median)
	row="| $bin $* | $plain |"
	for p in "${progs[@]}"; do
		pname=${p%%=*} obj=${p#*=}
		plog="$OUT/$name.$pname.log"
		timeout 120 "$GPUEXT" run "$obj" -- "$EX/$bin" "$@" -iters "$ITERS" -time > "$plog" 2>&1 || fail=1
		m=$(times "$plog" | median)
		ratio=$(awk -v a="$m" -v b="$plain" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}')
		row+=" $m | $ratio |"
	done
	echo "$row" >> "$md"
done
cat "$md"
exit $fail
