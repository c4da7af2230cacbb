#!/usr/bin/env bash
# first_launch.sh - what instrumenting a kernel adds to its first launch
# (issue 6, Must show 3: <= 20 ms), on a GPU machine, from the repository
# root with the build folder carried:
#
#   OUT=DIR [EX=build/examples] [EX_SM90=build/examples-sm90] [ITERS=11] \
#       [VARIANTS="cold0 warm0 cold warm"] [OPT_LEVELS="1"] [GX=build] bench/first_launch.sh
#
# GX: the folder whose gpuext (and agent) runs the programs (another build,
# to compare two in one run).
#
# For each CUDA example (CASES; NAME@sm90: the example built with sm_90
# SASS, from $EX_SM90, as applications ship; the others carry sm_75 SASS
# and compute_75 PTX, which the driver JIT-compiles on an H200 even
# uninstrumented) it runs the example plainly, with an empty driver cache
# (cold: PLAIN_COLD times, default 3, their median the baseline) and then
# that cache again (warm), and for each probe program (the
# recompile baseline, the empty probes, the counting program, the device
# tools) under `gpuext run` with GPUEXT_AGENT_VERBOSE=1, once per variant:
#   off    no cache at all (CUDA_CACHE_DISABLE=1, GPUEXT_CACHE_DISABLE=1),
#          nothing ahead: the PTX compiled by every first launch
#   cold0  the first run ever (empty caches: gpuext's module cache and the
#          driver's ComputeCache, in folders of their own: GPUEXT_CACHE_PATH,
#          CUDA_CACHE_PATH), nothing compiled ahead (GPUEXT_AGENT_AHEAD=0)
#   warm0  cold0's caches again, nothing ahead: the next run, as before
#   cold   the first run ever, the agent's default: the targeted kernels
#          compiled from process start with no context (agent_ahead.c)
#   warm   cold's caches again: the application's next run
#   V+TAG  variant V with the environment in $VENV_TAG added (say
#          VARIANTS="cold cold+called" VENV_called=GPUEXT_PTX_MEM_INLINE=0)
# "first ms" is the application's own first launch: the first kernel_ms
# line (CUDA events around the launch; the stream is idle, so it holds the
# module load and the JIT that the launch call does before the kernel is
# queued); "added" is that minus the plain run's first launch in the same
# cache state (cold for off/cold*, warm for warm*): what instrumenting
# adds.  "agent ms" is the agent's own first-launch line (its total, or
# what the launch waited for the compile ahead), "JIT" the driver's compile
# in it, "ahead" whether the compile was done ahead; "run ms" the whole
# process.  Kernel: median of $ITERS launches after the first, / plain.
# Writes $OUT/first_launch.md (one table) and the logs; prints the table.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/first-launch}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
EX=${EX:-build/examples}
EX_SM90=${EX_SM90:-build/examples-sm90}
ITERS=${ITERS:-11}
GX=${GX:-build}
VARIANTS=${VARIANTS:-cold0 warm0 cold warm}
OPT_LEVELS=${OPT_LEVELS-1}
BUDGET_S=${BUDGET_S:-140} # stop starting runs after this many seconds
PLAIN_COLD=${PLAIN_COLD:-3} # plain cold runs an example, their median the baseline
declare -A cold_first       # example -> that median
unset CUDA_CACHE_DISABLE
T0=$(date +%s)
LOGS=$OUT/logs
mkdir -p "$LOGS"

# CASES="vecadd -n 1024;reduce": other examples (';' between them)
cases=("vecadd -n 16777216" "gemm -n 1024" "reduce -n 16777216" "imbalance")
[ -n "${CASES:-}" ] && IFS=';' read -r -a cases <<< "$CASES"
read -r -a progs <<< "${PROGS:-recompile empty count threadhist smload memtrace}"

obj() {
	case $1 in
	recompile | empty) echo build/bpf/examples/gpu_empty.bpf.o ;;
	count) echo build/bpf/examples/gpu_count.bpf.o ;;
	*) echo "build/bpf/tools/$1.bpf.o" ;;
	esac
}
# bin CASE_NAME: the example's binary (NAME@sm90: the sm_90 build)
bin() { case $1 in *@sm90) echo "$EX_SM90/${1%@sm90}" ;; *) echo "$EX/$1" ;; esac; }
# the example's kernel_ms lines, also where a tool's output (on the same
# stdout, unflushed) ran into them
kms() { grep -o 'kernel_ms: [0-9.]*' "$1" | awk '{print $2}'; }
first_ms() { kms "$1" | head -1; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == a + 0 && b == b + 0 && a != "" && b != "") printf "%.1f", a - b; else print "-"}'; }
median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
kmedian() { kms "$1" | awk 'NR > 1' | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}'; }
in_budget() { [ $(($(date +%s) - T0)) -lt "$BUDGET_S" ]; }
# field LOG WHAT: from the agent's first-launch line: jit | total | cache | ahead
field() {
	local l
	l=$(grep -m1 '^gpuext: kernel .* instrumented (' "$1")
	case $2 in
	ahead) if [[ "$l" == *"ahead"* ]]; then echo yes; else echo no; fi ;;
	jit) sed -n 's/.*JIT \([0-9.]*\),.*/\1/p' <<< "$l" ;;
	total) sed -n 's/.*; \([0-9.]*\) ms)$/\1/p' <<< "$l" ;;
	cache) sed -n 's/.*, \(compiled ahead with no context\|[a-z ,]*cache[a-z ,]*\); [0-9.]* ms)$/\1/p' <<< "$l" | tr ' ' '_' ;;
	esac
}

MD=$OUT/first_launch.md
{
	echo "# First launch of an instrumented kernel: time the agent adds"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`OUT=$OUT GX=$GX ITERS=$ITERS VARIANTS=\"$VARIANTS\" OPT_LEVELS=\"$OPT_LEVELS\" bench/first_launch.sh\`"
	echo "- first ms: the application's first launch (its first kernel_ms: module load + JIT + kernel); added: minus the plain run's in the same cache state; agent ms: the agent's first-launch line (total, or what the launch waited for the compile ahead); JIT: the driver's compile in it; run ms: the whole process; kernel: median of $ITERS launches after the first, / plain"
	echo
	echo "| example | program | variant | first ms | added ms | agent ms | JIT ms | cache | ahead | run ms | kernel ms | / plain | rc |"
	echo "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |"
} > "$MD"

# timed LOG CMD...: run CMD into LOG, set rc and run_ms
timed() {
	local log=$1 t0
	shift
	t0=$(date +%s%N)
	"$@" > "$log" 2>&1
	rc=$?
	run_ms=$((($(date +%s%N) - t0) / 1000000))
}

# run_one EXAMPLE_WORDS PROG VARIANT CACHE_DIR [ENV...]
run_one() {
	local c=$1 p=$2 v=$3 dir=$4 log tag=
	shift 4
	set -- env "$@"
	local name=${c%% *}
	log=$LOGS/$name.$p.$v.log
	[ "$p" = recompile ] && set -- "$@" GPUEXT_AGENT_NO_PROBES=1
	if [[ "$v" == *+* ]]; then
		tag=VENV_${v#*+}
		local -a venv
		read -r -a venv <<< "${!tag:-}"
		set -- "$@" "${venv[@]}"
	fi
	case ${v%%+*} in
	off) set -- "$@" CUDA_CACHE_DISABLE=1 GPUEXT_CACHE_DISABLE=1 GPUEXT_AGENT_AHEAD=0 ;;
	*0) set -- "$@" CUDA_CACHE_PATH="$dir/nv" GPUEXT_CACHE_PATH="$dir/gx" GPUEXT_AGENT_AHEAD=0 ;;
	*) set -- "$@" CUDA_CACHE_PATH="$dir/nv" GPUEXT_CACHE_PATH="$dir/gx" GPUEXT_AGENT_AHEAD= ;;
	esac
	# shellcheck disable=SC2086
	timed "$log" "$@" GPUEXT_AGENT_VERBOSE=1 timeout 60 "$GX/gpuext" run "$(obj "$p")" -- \
		"$(bin "$name")" ${c#"$name"} -iters "$ITERS" -time
	local k f base
	k=$(kmedian "$log")
	f=$(first_ms "$log")
	base=$plain_cold_first
	[[ "$v" == warm* ]] && base=$plain_warm_first
	echo "| $c | $p | $v | $f | $(minus "$f" "$base") | $(field "$log" total) | $(field "$log" jit) | $(field "$log" cache) | $(field "$log" ahead) | $run_ms | $k | $(ratio "$k" "$plain") | $rc |" >> "$MD"
}

for c in "${cases[@]}"; do
	name=${c%% *}
	[ -x "$(bin "$name")" ] || { echo "| $c | - | - | no binary $(bin "$name") |" >> "$MD"; continue; }
	# the plain run, first with an empty driver cache (PLAIN_COLD times:
	# one cold start varies by 20 ms and more, reduce's first launch 36-56
	# ms on the H200, so the cold baseline is their median), then with it
	cold=()
	for ((r = 1; r <= PLAIN_COLD; r++)); do
		rm -rf "$OUT/cache/$name.plain"
		# shellcheck disable=SC2086
		timed "$LOGS/$name.plain.cold$r.log" env CUDA_CACHE_PATH="$OUT/cache/$name.plain" \
			timeout 60 "$(bin "$name")" ${c#"$name"} -iters "$ITERS" -time
		cold+=("$(first_ms "$LOGS/$name.plain.cold$r.log")")
	done
	plain_cold_first=$(printf '%s\n' "${cold[@]}" | median)
	cold_first[$name]=$plain_cold_first
	plain=$(kmedian "$LOGS/$name.plain.cold1.log")
	echo "| $c | plain | cold (median of $PLAIN_COLD) | $plain_cold_first | - | - | - | - | - | $run_ms | $plain | 1.000 | $rc |" >> "$MD"
	# shellcheck disable=SC2086
	timed "$LOGS/$name.plain.warm.log" env CUDA_CACHE_PATH="$OUT/cache/$name.plain" \
		timeout 60 "$(bin "$name")" ${c#"$name"} -iters "$ITERS" -time
	plain_warm_first=$(first_ms "$LOGS/$name.plain.warm.log")
	plain=$(kmedian "$LOGS/$name.plain.warm.log")
	echo "| $c | plain | warm | $plain_warm_first | - | - | - | - | - | $run_ms | $plain | 1.000 | $rc |" >> "$MD"
	for p in "${progs[@]}"; do
		[ -f "$(obj "$p")" ] || continue
		dir=$OUT/cache/$name.$p
		rm -rf "$dir"
		for v in $VARIANTS; do
			in_budget || { echo "| $c | $p | $v | skipped (time budget) |" >> "$MD"; continue; }
			# every cold variant starts from empty caches
			[[ "$v" == cold* ]] && rm -rf "$dir"
			run_one "$c" "$p" "$v" "$dir"
		done
	done
done
for o in $OPT_LEVELS; do
	for c in "${cases[@]}"; do
		name=${c%% *}
		[ -x "$(bin "$name")" ] || continue
		plain=$(kmedian "$LOGS/$name.plain.warm.log")
		plain_cold_first=${cold_first[$name]}
		for p in "${progs[@]}"; do
			in_budget || continue
			dir=$OUT/cache/$name.$p.O$o
			rm -rf "$dir"
			if [ "$o" = split ]; then
				run_one "$c" "$p" "cold-split" "$dir" GPUEXT_AGENT_JIT_THREADS=0
			elif [ "$o" = nopic ]; then
				run_one "$c" "$p" "cold-nopic" "$dir" GPUEXT_AGENT_JIT_PIC=0
			else
				run_one "$c" "$p" "cold-O$o" "$dir" GPUEXT_AGENT_JIT_OPT="$o"
			fi
		done
	done
done
cat "$MD"
