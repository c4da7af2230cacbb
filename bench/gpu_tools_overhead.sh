#!/usr/bin/env bash
# gpu_tools_overhead.sh - what the shipped device tools cost on the CUDA
# examples, on a GPU machine, with the build folder carried.
#
#   OUT=DIR ITERS=30 [BUILD=build] [EX=build/examples] [CASES=...] \
#       [TOOLS="threadhist smload memtrace kernelretsnoop blockretsnoop"] \
#       [TIMEOUT=120] [REPEAT=1] bench/gpu_tools_overhead.sh
#
# Like bench/gpu_overhead.sh (which measures probe programs), but runs each
# tool as a user does, `gpuext run --tool NAME -o FILE -- EXAMPLE`: the tool's
# output (one line per warp for kernelretsnoop) goes to a file, the example's
# kernel_ms lines (CUDA events around each launch) to the log.  The first
# launch is left out (the agent instruments the kernel there).  Reported:
# median ms per launch, instrumented / plain, all in one run on one GPU.
# BUILD selects the build folder (gpuext, the agent, bpf/tools; the examples
# come from EX); a TOOLS entry DIR:NAME runs NAME with DIR's gpuext, agent
# and tools instead, and NAME may be the path of a .bpf.o (a program, not a
# tool), so that two builds, or tools and bare programs, are compared in
# one run.  The column `recompile` is the agent's recompile of the
# example's kernels from their PTX with no probes (GPUEXT_AGENT_NO_PROBES=1
# under --tool threadhist): the baseline of a kernel the driver's JIT built
# instead of nvcc.  CASES: the examples, ';'-separated ("vecadd -n 16777216;gemm -n
# 2048;...").  TIMEOUT: seconds per run (a run past it shows as "timeout").
# Writes $OUT/gpu_tools_overhead.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/gpu-tools-overhead}
ITERS=${ITERS:-30}
BUILD=${BUILD:-build}
TOOLS=${TOOLS:-threadhist smload memtrace kernelretsnoop blockretsnoop}
TIMEOUT=${TIMEOUT:-120}
REPEAT=${REPEAT:-1}
mkdir -p "$OUT"
EX=${EX:-build/examples}
CASES=${CASES:-vecadd -n 16777216;gemm -n 2048;reduce -n 16777216;imbalance}
IFS=';' read -r -a cases <<< "$CASES"

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# kernel_ms values of a log, the first launch left out
times() { grep '^kernel_ms:' "$1" | awk 'NR > 1 {print $2}'; }

md="$OUT/gpu_tools_overhead.md"
{
	echo "# Device tools overhead on the CUDA examples"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`OUT=$OUT ITERS=$ITERS BUILD=$BUILD REPEAT=$REPEAT bench/gpu_tools_overhead.sh\`; $ITERS launches a run, the first left out; median of the per-launch kernel times (CUDA events)"
	[ "$REPEAT" -gt 1 ] && echo "- $REPEAT repeats, interleaved: ms = median of the repeats' medians, ratio = median of the repeats' ratios, [min-max] of those ratios"
	echo
	header="| example | plain ms |"
	sep="| --- | ---: |"
	for t in $TOOLS; do
		header+=" $t ms | ratio |"
		sep+=" ---: | ---: |"
		[ "$REPEAT" -gt 1 ] && { header+=" range |"; sep+=" --- |"; }
	done
	echo "$header"
	echo "$sep"
} > "$md"

# the ratio a / b to 3 decimals, "-" where either is not a number
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f\n", a / b; else print "-"}'; }

# One run of column $col (a tool, DIR:NAME or a .bpf.o) on case $bin "$@",
# repeat $r: its median ms (or "timeout") into the file $OUT/$bin.$name.r$r.ms.
run_col() {
	local col=$1 r=$2 dir=$BUILD t=$1 name what tlog tout rc m envv=
	shift 2
	case $col in *:*) dir=${col%%:*} t=${col#*:} ;; esac
	[ "$t" = recompile ] && t=threadhist envv=GPUEXT_AGENT_NO_PROBES=1
	what=(--tool "$t")
	case $t in *.bpf.o) what=("$t") ;; esac
	name=$(echo "$col" | tr '/:' '__')
	tlog="$OUT/$bin.$name.log" tout="$OUT/$bin.$name.out"
	[ "$REPEAT" -gt 1 ] && tlog="$OUT/$bin.$name.r$r.log"
	timeout "$TIMEOUT" env $envv "$dir/gpuext" run "${what[@]}" -o "$tout" -- "$EX/$bin" "$@" \
		-iters "$ITERS" -time > "$tlog" 2>&1
	rc=$?
	m=$(times "$tlog" | median)
	[ $rc -eq 124 ] && m="timeout"
	[ $rc -ne 0 ] && fail=1
	echo "$m" > "$OUT/$bin.$name.r$r.ms"
	# kernelretsnoop's records are big: keep the head and the summary
	if [ -f "$tout" ] && [ "$(wc -c < "$tout")" -gt 1000000 ]; then
		{ head -20 "$tout"; echo ...; tail -30 "$tout"; } > "$tout.short"
		mv "$tout.short" "$tout"
	fi
}

fail=0
for c in "${cases[@]}"; do
	set -- $c
	bin=$1
	shift
	for r in $(seq "$REPEAT"); do
		log="$OUT/$bin.plain.log"
		[ "$REPEAT" -gt 1 ] && log="$OUT/$bin.plain.r$r.log"
		timeout "$TIMEOUT" "$EX/$bin" "$@" -iters "$ITERS" -time > "$log" 2>&1 || fail=1
		times "$log" | median > "$OUT/$bin.plain.r$r.ms"
		for col in $TOOLS; do
			run_col "$col" "$r" "$@"
		done
	done
	plain=$(cat "$OUT/$bin".plain.r*.ms | median)
	row="| $bin $* | $plain |"
	for col in $TOOLS; do
		name=$(echo "$col" | tr '/:' '__')
		ms=$(cat "$OUT/$bin.$name".r*.ms | grep -v timeout | median)
		grep -q timeout "$OUT/$bin.$name".r*.ms && [ "$ms" = nan ] && ms=timeout
		if [ "$REPEAT" -gt 1 ]; then
			ratios=$(for r in $(seq "$REPEAT"); do
				ratio "$(cat "$OUT/$bin.$name.r$r.ms")" "$(cat "$OUT/$bin.plain.r$r.ms")"
			done | grep -v '^-$' | sort -g)
			row+=" $ms | $(echo "$ratios" | median) | [$(echo "$ratios" | head -1)-$(echo "$ratios" | tail -1)] |"
		else
			row+=" $ms | $(ratio "$ms" "$plain") |"
		fi
	done
	rm -f "$OUT/$bin".*.ms
	echo "$row" >> "$md"
done
cat "$md"
exit $fail
