#!/usr/bin/env bash
# first_launch.sh - what instrumenting a kernel adds to its first launch
# (issue 6, Must show 3: <= 20 ms), on a GPU machine, from the repository
# root with the build folder carried:
#
#   OUT=DIR [EX=build/examples] [ITERS=11] [VARIANTS="off cold warm"] \
#       [OPT_LEVELS="1"] bench/first_launch.sh
#
# For each CUDA example and each probe program (the recompile baseline, the
# empty probes, the counting program, threadhist, smload, memtrace) it runs
# the example under `gpuext run` with GPUEXT_AGENT_VERBOSE=1 and reads the
# agent's first-launch line (device side, parse+inject, JIT, load, total),
# once per variant:
#   off   no cache at all (CUDA_CACHE_DISABLE=1, GPUEXT_CACHE_DISABLE=1): the
#         PTX compiled by every first launch (the path before the caches)
#   cold  the first run ever: empty caches, gpuext's module cache (modules
#         linked with the prebuilt runtime) and the driver's ComputeCache
#         (the others), in folders of their own (CUDA_CACHE_PATH,
#         GPUEXT_CACHE_PATH); $AHEAD=1: kernels instrumented ahead of their
#         first launch (GPUEXT_AGENT_AHEAD), "first ms" then what it waited
#   warm  the cold run's caches again: the application's next run
# Writes $OUT/first_launch.md (one table) and the logs; prints the table.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/first-launch}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
EX=${EX:-build/examples}
ITERS=${ITERS:-11}
VARIANTS=${VARIANTS:-off cold warm}
OPT_LEVELS=${OPT_LEVELS-1}
BUDGET_S=${BUDGET_S:-140} # stop starting runs after this many seconds
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
median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
kmedian() { grep '^kernel_ms:' "$1" | awk 'NR > 1 {print $2}' | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}'; }
in_budget() { [ $(($(date +%s) - T0)) -lt "$BUDGET_S" ]; }
# field LOG WHAT: from the agent's first-launch line: jit | total | cache
field() {
	local l
	l=$(grep -m1 '^gpuext: kernel .* instrumented (' "$1")
	case $2 in
	jit) sed -n 's/.*JIT \([0-9.]*\),.*/\1/p' <<< "$l" ;;
	total) sed -n 's/.*; \([0-9.]*\) ms)$/\1/p' <<< "$l" ;;
	cache) sed -n 's/.*, \([a-z ,]*cache[a-z ,]*\); [0-9.]* ms)$/\1/p' <<< "$l" | tr ' ' '_' ;;
	esac
}

MD=$OUT/first_launch.md
{
	echo "# First launch of an instrumented kernel: time the agent adds"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`OUT=$OUT ITERS=$ITERS VARIANTS=\"$VARIANTS\" OPT_LEVELS=\"$OPT_LEVELS\" bench/first_launch.sh\`"
	echo "- first ms: the agent's total for the first launch (device side + parse/inject + JIT + load); JIT: the driver's compile; kernel: median of $ITERS launches after the first, / plain"
	echo
	echo "| example | program | variant | first ms | JIT ms | cache | kernel ms | / plain | rc |"
	echo "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |"
} > "$MD"

# run_one EXAMPLE_WORDS PROG VARIANT CACHE_DIR [ENV...]
run_one() {
	local c=$1 p=$2 v=$3 dir=$4 log rc
	shift 4
	set -- env "$@"
	local name=${c%% *}
	log=$LOGS/$name.$p.$v.log
	[ "$p" = recompile ] && set -- "$@" GPUEXT_AGENT_NO_PROBES=1
	case $v in
	off) set -- "$@" CUDA_CACHE_DISABLE=1 GPUEXT_CACHE_DISABLE=1 GPUEXT_AGENT_AHEAD=0 ;;
	*) set -- "$@" CUDA_CACHE_PATH="$dir/nv" GPUEXT_CACHE_PATH="$dir/gx" \
		GPUEXT_AGENT_AHEAD="${AHEAD:-0}" ;;
	esac
	# shellcheck disable=SC2086
	"$@" GPUEXT_AGENT_VERBOSE=1 timeout 60 build/gpuext run "$(obj "$p")" -- "$EX/$name" \
		${c#"$name"} -iters "$ITERS" -time > "$log" 2>&1
	rc=$?
	local k
	k=$(kmedian "$log")
	echo "| $c | $p | $v | $(field "$log" total) | $(field "$log" jit) | $(field "$log" cache) | $k | $(ratio "$k" "$plain") | $rc |" >> "$MD"
}

for c in "${cases[@]}"; do
	name=${c%% *}
	[ -x "$EX/$name" ] || { echo "| $c | - | - | no binary $EX/$name |" >> "$MD"; continue; }
	# shellcheck disable=SC2086
	timeout 60 "$EX/$name" ${c#"$name"} -iters "$ITERS" -time > "$LOGS/$name.plain.log" 2>&1
	plain=$(kmedian "$LOGS/$name.plain.log")
	echo "| $c | plain | - | - | - | - | $plain | 1.000 | $? |" >> "$MD"
	for p in "${progs[@]}"; do
		[ -f "$(obj "$p")" ] || continue
		dir=$OUT/cache/$name.$p
		rm -rf "$dir"
		for v in $VARIANTS; do
			in_budget || { echo "| $c | $p | $v | skipped (time budget) |" >> "$MD"; continue; }
			run_one "$c" "$p" "$v" "$dir"
		done
	done
done
for o in $OPT_LEVELS; do
	for c in "${cases[@]}"; do
		name=${c%% *}
		[ -x "$EX/$name" ] || continue
		plain=$(kmedian "$LOGS/$name.plain.log")
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
