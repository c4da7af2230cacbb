#!/usr/bin/env bash
# What device probes cost (issue 6, Must show 3), checked on a GPU machine
# from the repository root with the build folder carried along:
#
#   tests/gpu/probe_cost.sh
#
# Runs bench/gpu_overhead.sh (plain, the recompile baseline, empty entry+exit
# probes, the counting program, threadhist, memtrace; 30 launches each) with
# the driver's JIT cache off, then once more with GPUEXT_AGENT_NO_LINK=1
# (the device runtime compiled into each module instead of linked), and checks
#   - empty probes: vecadd (64 us, 524,288 warps) <= 1.05x plain, gemm
#     (2 ms) <= 1.01x plain;
#   - the runtime is linked on this driver ("runtime linked" in the agent's
#     first-launch line of the counting program on vecadd);
#   - the first launch with empty probes adds <= 20 ms on vecadd and gemm,
#     and with the counting program (linked runtime) <= 20 ms on vecadd.
# The tables (both runs) and the agent's first-launch lines are printed and
# kept in $OUT (default build/probe-cost-out).  PASS/FAIL lines, a summary,
# exit 1 on any failure.  About 2 minutes.
set -u
OUT=${OUT:-build/probe-cost-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
export CUDA_CACHE_DISABLE=1
# first launches here are compiles: gpuext's module cache off too, and
# nothing instrumented ahead of the launch
# (bench/first_launch.sh measures it, cold and warm)
export GPUEXT_CACHE_DISABLE=${GPUEXT_CACHE_DISABLE:-1} GPUEXT_AGENT_AHEAD=${GPUEXT_AGENT_AHEAD:-0}
SUMMARY="$OUT/probe-cost-summary.txt"
: > "$SUMMARY"

pass=0 fail=0

OUT=$OUT/linked ITERS=30 TOOLS="threadhist memtrace" timeout 150 bench/gpu_overhead.sh \
	> "$OUT/linked.log" 2>&1
GPUEXT_AGENT_NO_LINK=1 OUT=$OUT/nolink ITERS=30 TOOLS="threadhist" timeout 100 \
	bench/gpu_overhead.sh > "$OUT/nolink.log" 2>&1
MD=$OUT/linked/gpu_overhead.md

# ratio EXAMPLE PROG: the "ratio" (instrumented / plain) column of PROG's
ratio() {
	awk -F'|' -v ex="$1" -v prog="$2" '
		/^\| example/ { for (i = 1; i <= NF; i++) if ($i ~ "^ " prog " ms ") col = i + 1 }
		col && $2 ~ "^ " ex " " { gsub(/ /, "", $col); print $col }' "$MD"
}
# first_ms EXAMPLE PROG: the agent's total first-launch time (ms)
first_ms() {
	sed -n 's/^gpuext: kernel .* instrumented (.*; \([0-9.]*\) ms)$/\1/p' \
		"$OUT/linked/$1.$2.log" 2>/dev/null | head -1
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a == a + 0 && a <= b) }'; }

check_ratio() { # check_ratio EXAMPLE PROG LIMIT
	local r
	r=$(ratio "$1" "$2")
	if le "$r" "$3"; then
		result PASS "$1 $2 probes: ${r}x plain (<= $3)"
	else
		result FAIL "$1 $2 probes: '${r}'x plain (limit $3; linked/$1.*.log)"
	fi
}
check_first() { # check_first EXAMPLE PROG LIMIT_MS
	local ms
	ms=$(first_ms "$1" "$2")
	if le "$ms" "$3"; then
		result PASS "$1 $2 first launch: +$ms ms (<= $3)"
	else
		result FAIL "$1 $2 first launch: +'$ms' ms (limit $3; linked/$1.$2.log)"
	fi
}

check_ratio vecadd empty 1.05
check_ratio gemm empty 1.01
if grep -q 'instrumented (.*runtime linked' "$OUT/linked/vecadd.count.log" 2>/dev/null; then
	result PASS "the device runtime is linked (prebuilt) on this driver"
else
	result FAIL "the device runtime was not linked: $(grep '^gpuext: ' "$OUT/linked/vecadd.count.log" | head -2)"
fi
check_first vecadd empty 20
check_first gemm empty 20
check_first vecadd count 20

for d in linked nolink; do
	echo "== $d"
	sed -n '/^| example/,$p' "$OUT/$d/gpu_overhead.md" 2>/dev/null ||
		tail -5 "$OUT/$d.log"
done | sed -e 's/_Z10gemm_tiledPKfS0_Pfi/gemm/' -e 's/_Z10reduce_sumPKilPy/reduce/' \
	-e 's/_Z10imbalancedPj/imbalance/' | tee "$OUT/tables.md"
echo "probe cost: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ "$fail" = 0 ]
