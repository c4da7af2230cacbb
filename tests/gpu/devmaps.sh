#!/usr/bin/env bash
# Inline array lookups on the GPU (docs/device-maps.md, "Lookups are address
# arithmetic"): what a map update inside a probe costs with lookups inlined
# and with every lookup calling the runtime (GPUEXT_MAP_LOOKUP_CALL=1), side
# by side in one run of one build.  Run on a GPU machine from the repository
# root with the build folder (built by `make`, nvcc examples included)
# carried along:
#
#   tests/gpu/devmaps.sh
#
#   - bench/gpu_probe_bench both ways: cycles per probe call of the empty
#     program, the array counter and the per-SM array counter (once per warp
#     and per thread);
#   - PASS when the inline per-SM counter costs at most MAX_ADD cycles (300
#     unless set) more per warp than the empty program, and no more than the
#     runtime call's;
#   - bench/gpu_tools_overhead.sh both ways for threadhist, smload and
#     memtrace (ITERS launches, 30 unless set): median kernel ms and ratios
#     to the plain run; PASS when every instrumented run finished.
# Correctness of the tools and the conformance cases with inline lookups:
# tests/gpu/tools.sh and tests/gpu/run.sh (they use the default, inline).
# Logs go to $OUT (default build/devmaps-gpu-out), everything is also tarred
# into $OUT/devmaps.tgz.  Prints PASS/FAIL lines, the tables and a summary;
# exits 1 on any failure.  Takes about two minutes.
set -u
OUT=${OUT:-build/devmaps-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
ITERS=${ITERS:-30}
MAX_ADD=${MAX_ADD:-300}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/devmaps-summary.txt"
: > "$SUMMARY"
gpu_machine_info > "$OUT/machine.txt"

pass=0 fail=0

# cycles ROW_PREFIX COLUMN LOG: a number of gpu_probe_bench's table (column 2
# once per warp, 3 per thread), empty when the row is missing or failed
cycles() {
	grep -F "| $1" "$3" | head -1 | awk -F'|' -v c="$(($2 + 1))" '{gsub(/ /, "", $c); print $c}' |
		grep -E '^[0-9]+$'
}

# 1. cycles per probe call, both ways
timeout 60 build/gpu/gpu_probe_bench > "$LOGS/bench-inline.md" 2>&1
rc_in=$?
GPUEXT_MAP_LOOKUP_CALL=1 timeout 60 build/gpu/gpu_probe_bench > "$LOGS/bench-call.md" 2>&1
rc_call=$?
rows=("empty program" "array counter" "per-SM array counter")
{
	echo "## Cycles per probe call (bench/gpu_probe_bench), runtime call vs inline lookup"
	echo
	echo "| program | call: per warp | inline: per warp | call: per thread | inline: per thread |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	for r in "${rows[@]}"; do
		echo "| $r | $(cycles "$r" 2 "$LOGS/bench-call.md") | $(cycles "$r" 2 "$LOGS/bench-inline.md") |" \
		     "$(cycles "$r" 3 "$LOGS/bench-call.md") | $(cycles "$r" 3 "$LOGS/bench-inline.md") |"
	done
	echo
} > "$OUT/devmaps.md"
empty=$(cycles "empty program" 2 "$LOGS/bench-inline.md")
sm_in=$(cycles "per-SM array counter" 2 "$LOGS/bench-inline.md")
sm_call=$(cycles "per-SM array counter" 2 "$LOGS/bench-call.md")
if [ $rc_in -ne 0 ] || [ $rc_call -ne 0 ] || [ -z "$empty" ] || [ -z "$sm_in" ] || [ -z "$sm_call" ]; then
	result FAIL "gpu_probe_bench (exit $rc_in inline, $rc_call call; logs/bench-*.md)"
elif [ $((sm_in - empty)) -le "$MAX_ADD" ] && [ "$sm_in" -le "$sm_call" ]; then
	result PASS "per-SM counter update: $sm_in cycles a warp inline, $sm_call with the runtime call, empty $empty (+$((sm_in - empty)) <= $MAX_ADD)"
else
	result FAIL "per-SM counter update: $sm_in cycles a warp inline, $sm_call with the runtime call, empty $empty (+$((sm_in - empty)), want <= $MAX_ADD and <= the call's)"
fi

# 2. the tools on the examples, both ways
for way in inline call; do
	env_set=()
	[ $way = call ] && env_set=(GPUEXT_MAP_LOOKUP_CALL=1)
	env "${env_set[@]}" OUT="$LOGS/tools-$way" ITERS="$ITERS" TIMEOUT=40 \
		TOOLS="threadhist smload memtrace" timeout 150 bench/gpu_tools_overhead.sh \
		> "$LOGS/tools-$way.log" 2>&1
	rc=$?
	{
		echo "## Tools overhead, lookups: $way"
		echo
		grep '^|' "$LOGS/tools-$way/gpu_tools_overhead.md" 2>/dev/null
		echo
	} >> "$OUT/devmaps.md"
	if [ $rc -eq 0 ]; then
		result PASS "gpu_tools_overhead.sh, lookups $way: every run finished"
	else
		result FAIL "gpu_tools_overhead.sh, lookups $way: exit $rc (logs/tools-$way.log)"
	fi
done

cat "$OUT/devmaps.md"
(cd "$OUT" && tar czf devmaps.tgz logs machine.txt devmaps.md devmaps-summary.txt 2>/dev/null)
echo "devmaps summary: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ $fail -eq 0 ]
