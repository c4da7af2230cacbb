#!/usr/bin/env bash
# launch_id_overhead.sh - what launch ids cost an instrumented kernel: each
# program of PROGS under this build and under a base build without launch
# ids (BASE: a folder with its gpuext and libgpuext-agent.so), side by side
# in one run on one GPU, from the repository root with the build folder
# carried.
#
#   BASE=DIR [OUT=DIR] [ITERS=31] [ROUNDS=2] [EX=build/examples] \
#       [PROGS="empty=build/bpf/examples/gpu_empty.bpf.o ..."] bench/launch_id_overhead.sh
#
# Default PROGS: the empty entry+exit probes (examples/gpu_empty.bpf.c: the
# parameter alone), one object for both builds.  NAME=BASEOBJ:OBJ runs
# BASEOBJ under the base and OBJ under this build: a tool whose programs
# read the launch id (the base lacks the helper) against its base version.
# A tool's own output goes to a file, not the log.  CASES: the examples,
# "NAME:ARG:ARG ..." (default vecadd -n 16M, reduce -n 16M, gemm -n 1024).
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
PROGS=${PROGS:-empty=build/bpf/examples/gpu_empty.bpf.o}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export GPUEXT_CACHE_DISABLE=1 GPUEXT_AGENT_AHEAD=0
read -r -a cases <<< "${CASES:-vecadd:-n:16777216 reduce:-n:16777216 gemm:-n:1024}"

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
times() { cat "$@" 2>/dev/null | awk '/^kernel_ms:/ {n++; if (n > 1) print $2} /^==run==/ {n = 0}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}'; }
# run LOG GPUEXT_BIN OBJ EXAMPLE ARGS...: one run under the agent, appended
# (the tool's own output to LOG.tool)
run() {
	local log=$1 gx=$2 obj=$3
	shift 3
	echo "==run==" >> "$log"
	GPUEXT_AGENT_VERBOSE=1 timeout 60 "$gx" run "$obj" -o "$log.tool" -- "$@" -iters "$ITERS" -time >> "$log" 2>&1 ||
		echo "FAILED: $gx run $obj -- $*" >> "$log"
}

md="$OUT/launch_id_overhead.md"
{
	echo "# Launch ids: this build vs $BASE"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`BASE=$BASE ITERS=$ITERS ROUNDS=$ROUNDS PROGS='$PROGS' bench/launch_id_overhead.sh\`; median kernel ms (CUDA events) over $ROUNDS runs x $((ITERS - 1)) launches, first launch of each run left out"
	echo
	echo "| example | plain ms | program | base ms | ratio | launch-id ms | ratio | launch-id / base |"
	echo "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
} > "$md"
for c in "${cases[@]}"; do
	set -- ${c//:/ }
	bin=$1
	shift
	[ -x "$EX/$bin" ] || { echo "| $bin | not built |" >> "$md"; continue; }
	p="$OUT/$bin"
	rm -f "$p".*
	echo "==run==" > "$p.plain.log"
	timeout 60 "$EX/$bin" "$@" -iters "$ITERS" -time >> "$p.plain.log" 2>&1
	plain=$(times "$p.plain.log" | median)
	for pr in $PROGS; do
		name=${pr%%=*} objs=${pr#*=}
		base_obj=${objs%%:*} lid_obj=${objs#*:}
		for r in $(seq "$ROUNDS"); do
			run "$p.$name.base.log" "$BASE/gpuext" "$base_obj" "$EX/$bin" "$@"
			run "$p.$name.lid.log" build/gpuext "$lid_obj" "$EX/$bin" "$@"
		done
		base=$(times "$p.$name.base.log" | median)
		lid=$(times "$p.$name.lid.log" | median)
		echo "| $bin $* | $plain | $name | $base | $(ratio "$base" "$plain") | $lid | $(ratio "$lid" "$plain") | $(ratio "$lid" "$base") |" >> "$md"
	done
	rm -f "$p".*.tool
done
cat "$md"
