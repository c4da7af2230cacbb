#!/usr/bin/env bash
# unroll_round.sh - one GPU round for the injector's loop unrolling
# (ptx_unroll.h), run from a stage folder beside main's build (the lead's
# rounds: `cd stage && OUT=DIR timeout 170 bash gpu.sh`), at most ~150 s:
#   1. SASS of reduce's kernel instrumented on the build machine
#      (bench/sass_size.sh CUBINS=, staged in cubins/): LDG per cubin;
#   2. tests/gpu/tools.sh TOOLS=memtrace (exact bytes, identical results);
#   3. bench/gpu_tools_overhead.sh: memtrace unrolled 4 turns a pass loads
#      first, in order (ord), 2 or 8 turns (u2, u8), not unrolled (off:
#      GPUEXT_PTX_UNROLL=0) and main's build (base/), side by side; CASES,
#      COLS and REPEAT from the environment.
# Each step's failure is logged, not fatal.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/unroll-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_CACHE_DISABLE=1
EX=${EX:-../build/examples}
CASES=${CASES:-reduce -n 16777216}
REPEAT=${REPEAT:-5}
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
say "$(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"

# wrappers: DIR/gpuext runs build/gpuext (which finds its agent and tools
# next to itself) with the variable set
for v in off:GPUEXT_PTX_UNROLL=0 u2:GPUEXT_PTX_UNROLL=2 u8:GPUEXT_PTX_UNROLL=8 \
	ord:GPUEXT_PTX_UNROLL_ORDER=turns; do
	d=${v%%:*}
	mkdir -p "$d"
	printf '#!/bin/sh\n%s exec "$(dirname "$0")/../build/gpuext" "$@"\n' "${v#*:}" > "$d/gpuext"
	chmod +x "$d/gpuext"
done

if command -v cuobjdump > /dev/null || [ -x /usr/local/cuda/bin/cuobjdump ]; then
	CUOBJDUMP=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
	for c in cubins/*.cubin; do
		[ -f "$c" ] || continue
		n=$(basename "$c" .cubin)
		"$CUOBJDUMP" -sass "$c" > "$OUT/$n.sass" 2>&1 || say "cuobjdump $n failed"
		say "sass $n: $(grep -c 'LDG' "$OUT/$n.sass") LDG, $(grep -cE 'RED|ATOM' "$OUT/$n.sass") RED/ATOM"
	done
else
	say "no cuobjdump"
fi

# the injector's loops on the GPU: strided_sum unrolled, every count of
# turns, output and counts exact (tests/gpu/inject_check.c)
if [ -x build/gpu/inject_check ]; then
	timeout 40 build/gpu/inject_check > "$OUT/inject_check.log" 2>&1 ||
		say "inject_check: failed (rc $?)"
	say "$(tail -1 "$OUT/inject_check.log")"
	grep -E '^FAIL|strided_sum.*unrolled' "$OUT/inject_check.log" | head -8 >> "$summary"
fi

# the form reduce's mem probes take (pasted, not tiered: the first-launch line)
for d in build ord u2 off; do
	GPUEXT_AGENT_VERBOSE=1 timeout 30 "$d/gpuext" run --tool memtrace -o /dev/null -- \
		"$EX/reduce" -n 16777216 -iters 3 2>&1 | grep -o 'mem probes [^;]*' | head -1 |
		sed "s|^|form $d: |" | tee -a "$summary"
done

t0=$(date +%s)
if [ "${TOOLS_CHECK:-1}" = 1 ]; then
	rm -rf /tmp/unroll-tools
	OUT=/tmp/unroll-tools EX=$EX TOOLS=memtrace timeout 60 bash tests/gpu/tools.sh > "$OUT/tools.log" 2>&1 ||
		say "tools.sh: failed or timed out (rc $?)"
	say "$(tail -1 "$OUT/tools.log")"
	grep '^FAIL' "$OUT/tools.log" | head -5 >> "$summary"
	say "tools.sh took $(($(date +%s) - t0)) s"
fi

t0=$(date +%s)
OUT=$OUT/overhead REPEAT=$REPEAT ITERS=31 EX=$EX CASES="$CASES" \
	TOOLS=${COLS:-"memtrace ord:memtrace u2:memtrace off:memtrace base:memtrace"} TIMEOUT=30 \
	timeout "${BENCH_S:-100}" bash bench/gpu_tools_overhead.sh > "$OUT/overhead.log" 2>&1 ||
	say "gpu_tools_overhead: failed or timed out (rc $?)"
grep '^|' "$OUT/overhead/gpu_tools_overhead.md" 2>/dev/null >> "$summary"
# every instrumented run's result checked by the example itself
say "runs whose result matched the CPU reference: $(cat "$OUT"/overhead/*.log 2>/dev/null |
	grep -c '^result: ok') of $(cat "$OUT"/overhead/*.log 2>/dev/null | grep -c '^result:')"
# keep the table and one log a column, not every repeat's
find "$OUT/overhead" -name '*.r[2-9].log' -delete 2>/dev/null
find "$OUT/overhead" -name '*.out' -delete 2>/dev/null
say "overhead took $(($(date +%s) - t0)) s"
cat "$summary"
