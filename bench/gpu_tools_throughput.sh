#!/usr/bin/env bash
# gpu_tools_throughput.sh - what a device tool costs an application that
# launches kernels back to back, not one kernel timed alone:
#
#   [OUT=DIR] [BUILD=build] [TOOLS="memtrace ..."] [CASES="vecadd -n N;..."]
#       [ITERS=2000] [REPEAT=3] bench/gpu_tools_throughput.sh
#
# gpu_tools_overhead.sh times each launch with CUDA events and synchronizes
# after it; whatever the agent does between launches (the mirror thread's
# copies of the device maps into the session) falls outside those times.
# Here each example runs ITERS launches with no synchronization between
# them and prints loop_ms (its -loop option: the wall time of the launches
# after the first, which instrumentation makes slow, per launch), plain and
# under each tool: the time a launch takes in a stream of them, which is
# what an application sees.  The process's CPU time (user + sys) shows what
# the agent's threads burn.  REPEAT interleaved repeats; the table gives the
# median loop_ms and the median of the repeats' ratios to plain.
# Columns: a tool name, an object (.bpf.o), or DIR:TOOL for another build's
# gpuext (to compare builds side by side).
# Writes $OUT/gpu_tools_throughput.md and prints it.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/gpu-tools-throughput}
BUILD=${BUILD:-build}
EX=${EX:-build/examples}
TOOLS=${TOOLS:-threadhist kernelretsnoop memtrace}
CASES=${CASES:-vecadd -n 16777216;reduce -n 16777216}
ITERS=${ITERS:-2000}
REPEAT=${REPEAT:-3}
TIMEOUT=${TIMEOUT:-120}
mkdir -p "$OUT"
IFS=';' read -r -a cases <<< "$CASES"

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# column COL REPEAT CASE-ARGS...: "loop_ms cpu_s" of one repeat of one column
column() {
	local col=$1 r=$2 bin=$3 dir=$BUILD t name log cpu pre=()
	shift 3
	t=$col
	case $col in *:*) dir=${col%%:*} t=${col#*:} ;; esac
	name=$(echo "$col" | tr '/:' '__')
	if [ "$t" != plain ]; then
		pre=("$dir/gpuext" run --tool "$t" -o "$OUT/$bin.$name.out" --)
		case $t in *.bpf.o) pre=("$dir/gpuext" run "$t" -o "$OUT/$bin.$name.out" --) ;; esac
	fi
	log="$OUT/$bin.$name.r$r.log"
	cpu=$( { TIMEFORMAT='%U %S'; time timeout "$TIMEOUT" "${pre[@]}" "$EX/$bin" "$@" \
		-iters "$ITERS" -loop > "$log" 2>&1; } 2>&1 | tail -1)
	awk -v c="$cpu" '/^loop_ms:/ {ms = $2} END {split(c, u, " "); printf "%s %.3f\n", ms == "" ? "nan" : ms, u[1] + u[2]}' "$log"
}

md="$OUT/gpu_tools_throughput.md"
{
	echo "# Device tools: an application's launches back to back"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`ITERS=$ITERS REPEAT=$REPEAT TOOLS=\"$TOOLS\" bench/gpu_tools_throughput.sh\`; ms = the example's loop_ms (wall time a launch, launches 2..$ITERS back to back, no synchronization between them); CPU = the process's user + sys; median over $REPEAT interleaved repeats, ratio = median of the repeats' ratios"
	echo
	header="| example | plain ms | CPU s |"
	sep="| --- | ---: | ---: |"
	for t in $TOOLS; do
		header+=" $t ms | ratio | CPU s |"
		sep+=" ---: | ---: | ---: |"
	done
	echo "$header"
	echo "$sep"
} > "$md"

for c in "${cases[@]}"; do
	set -- $c
	bin=$1
	shift
	for r in $(seq "$REPEAT"); do
		for col in plain $TOOLS; do
			column "$col" "$r" "$bin" "$@" > "$OUT/$bin.$(echo "$col" | tr '/:' '__').r$r.res"
		done
	done
	pms=$(cat "$OUT/$bin".plain.r*.res | awk '{print $1}' | median)
	row="| $bin $* | $pms | $(cat "$OUT/$bin".plain.r*.res | awk '{print $2}' | median) |"
	for col in $TOOLS; do
		name=$(echo "$col" | tr '/:' '__')
		ms=$(cat "$OUT/$bin.$name".r*.res | awk '{print $1}' | median)
		ratio=$(for r in $(seq "$REPEAT"); do
			paste "$OUT/$bin.$name.r$r.res" "$OUT/$bin.plain.r$r.res" | awk '{if ($3 > 0) printf "%.3f\n", $1 / $3}'
		done | median)
		row+=" $ms | $ratio | $(cat "$OUT/$bin.$name".r*.res | awk '{print $2}' | median) |"
	done
	echo "$row" >> "$md"
done
cat "$md"
