#!/usr/bin/env bash
# launch_id_overhead.sh - what the launch id costs an instrumented kernel:
# empty entry+exit probes (examples/gpu_empty.bpf.c) under this build and
# under a base build without launch ids (BASE: a folder with its gpuext and
# libgpuext-agent.so), side by side in one run on one GPU, from the
# repository root with the build folder carried.
#
#   BASE=DIR [OUT=DIR] [ITERS=31] [ROUNDS=2] [EX=build/examples] bench/launch_id_overhead.sh
#
# Per example: the plain run, then ROUNDS times the base and this build in
# turn (alternating, so that drift hits both); per-launch kernel times from
# the example's CUDA events (`kernel_ms:`), the first launch (the agent's
# instrumentation) left out; medians over all rounds.  Writes
# $OUT/launch_id_overhead.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/launch-id-overhead}
ITERS=${ITERS:-31}
ROUNDS=${ROUNDS:-2}
EX=${EX:-build/examples}
BASE=${BASE:?BASE=folder of the base build (gpuext, libgpuext-agent.so)}
mkdir -p "$OUT"
export GPUEXT_CACHE_DISABLE=1 GPUEXT_AGENT_AHEAD=0
EMPTY=build/bpf/examples/gpu_empty.bpf.o
cases=("vecadd -n 16777216" "reduce -n 16777216" "gemm -n 1024")

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
times() { cat "$@" 2>/dev/null | awk '/^kernel_ms:/ {n++; if (n > 1) print $2} /^==run==/ {n = 0}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}'; }
# run LOG GPUEXT_BIN OBJ EXAMPLE ARGS...: one run under the agent, appended
run() {
	local log=$1 gx=$2 obj=$3
	shift 3
	echo "==run==" >> "$log"
	GPUEXT_AGENT_VERBOSE=1 timeout 60 "$gx" run "$obj" -- "$@" -iters "$ITERS" -time >> "$log" 2>&1 ||
		echo "FAILED: $gx run $obj -- $*" >> "$log"
}

md="$OUT/launch_id_overhead.md"
{
	echo "# Launch ids: empty entry+exit probes, this build vs $BASE"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`BASE=$BASE ITERS=$ITERS ROUNDS=$ROUNDS bench/launch_id_overhead.sh\`; median kernel ms (CUDA events) over $ROUNDS runs x $((ITERS - 1)) launches, first launch of each run left out"
	echo
	echo "| example | plain ms | base empty ms | ratio | launch-id empty ms | ratio | launch-id / base |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
} > "$md"
for c in "${cases[@]}"; do
	set -- $c
	bin=$1
	shift
	[ -x "$EX/$bin" ] || { echo "| $bin | not built |" >> "$md"; continue; }
	p="$OUT/$bin"
	rm -f "$p".*.log
	echo "==run==" > "$p.plain.log"
	timeout 60 "$EX/$bin" "$@" -iters "$ITERS" -time >> "$p.plain.log" 2>&1
	for r in $(seq "$ROUNDS"); do
		run "$p.base.log" "$BASE/gpuext" "$EMPTY" "$EX/$bin" "$@"
		run "$p.lid.log" build/gpuext "$EMPTY" "$EX/$bin" "$@"
	done
	plain=$(times "$p.plain.log" | median)
	base=$(times "$p.base.log" | median)
	lid=$(times "$p.lid.log" | median)
	echo "| $bin $* | $plain | $base | $(ratio "$base" "$plain") | $lid | $(ratio "$lid" "$plain") | $(ratio "$lid" "$base") |" >> "$md"
done
cat "$md"
