#!/usr/bin/env bash
# devmem-gpu.sh - the GPU round of the devmem work (issue 6: eBPF stack slots
# in registers, memtrace's cost), run from a stage folder laid out like the
# repository (build/ = this branch, base/ = main's gpuext, agent and tools)
# beside the lead's carried ../build/examples, ../build/gpu, ../gpu-libs:
#
#   cd stage-devmem && OUT=DIR timeout 170 bash gpu.sh
#
# Every step has its own time limit and logs under $OUT; a failed step is
# reported and the next one runs.  Prints a summary at the end.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")" || exit 1
[ -d ../gpu-libs ] && export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_CACHE_DISABLE=1
# the examples are the lead's, carried beside this folder
[ -e build/examples ] || ln -s ../../build/examples build/examples
SUMMARY=$OUT/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1; } > "$SUMMARY"
step() { # step NAME LIMIT CMD...: run, log to $OUT/NAME.log, one summary line
	local name=$1 limit=$2 start=$SECONDS rc
	shift 2
	timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
	rc=$?
	echo "$name: exit $rc ($((SECONDS - start)) s)" | tee -a "$SUMMARY"
}

# 1. correctness of slots in registers and inline updates (quick): the
#    tests/ptx_stack cases on the GPU, run-gpu = test-run for array_update
step stack-cases 10 build/gpu/gpu_conformance tests/ptx_stack
want=$(build/gpuext test-run build/bpf/tests/progs/array_update.bpf.o update 2>&1 | sed -n 's/^update: r0 = \([0-9]*\) .*/\1/p')
step array-update 10 build/gpuext run-gpu build/bpf/tests/progs/array_update.bpf.o update
if [ -n "$want" ] && grep -q "^r0 = $want " "$OUT/array-update.log" 2>/dev/null; then
	echo "array-update: PASS r0 = $want as on the host" | tee -a "$SUMMARY"
else
	echo "array-update: FAIL (host r0 '$want'; see array-update.log)" | tee -a "$SUMMARY"
fi

# the GPU helpers written inline (ptx_intrin.c), packed into r0
step gpu-helpers 10 build/gpuext run-gpu build/bpf/examples/gpu_helpers.bpf.o helpers
if grep -qi "^r0 = .*0xf000100111" "$OUT/gpu-helpers.log" 2>/dev/null; then
	echo "gpu-helpers: PASS r0 = 0xf000100111" | tee -a "$SUMMARY"
else
	echo "gpu-helpers: FAIL (want 0xf000100111; see gpu-helpers.log)" | tee -a "$SUMMARY"
fi

# 2. the tools' cost, main vs this branch (and main's memtrace object run
#    by this branch: the translator's part alone), memtrace's halves
step cost 80 env OUT="$OUT/cost" ITERS=31 BUILDS="main=base branch=build" \
	EXTRA="branch, main's memtrace.bpf.o|build|base/bpf/tools/memtrace.bpf.o|" \
	TIMEOUT=15 bash bench/memtrace_cost.sh
cp "$OUT/cost/memtrace_cost.md" "$OUT/" 2>/dev/null
for c in vecadd gemm reduce; do
	for b in main branch; do
		tail -12 "$OUT/cost/$c.${b}_memtrace.out" > "$OUT/$c.$b.memtrace.txt" 2>/dev/null
	done
done
rm -f "$OUT"/cost/*.out
tar -C "$OUT" -czf "$OUT/cost-logs.tgz" cost 2>/dev/null && rm -rf "$OUT/cost"

# 3. cycles per probe call, this branch with slots in registers and with
#    the memory frame (GPUEXT_PTX_STACK_FRAME=1), one build
step bench-branch 15 build/gpu/gpu_probe_bench
step bench-frame 15 env GPUEXT_PTX_STACK_FRAME=1 build/gpu/gpu_probe_bench
for f in branch frame; do
	echo "== $f" >> "$SUMMARY"
	grep -E '^\| (empty program|array counter|per-SM array counter) ' "$OUT/bench-$f.log" >> "$SUMMARY"
done

# 4. the tools' checks (exact bytes, threads) and the conformance cases
[ "$SECONDS" -lt 120 ] && step tools 30 env OUT="$OUT/tools" TOOLS="threadhist memtrace smload" bash tests/gpu/tools.sh
grep -E '^(PASS|FAIL)' "$OUT/tools/tools-summary.txt" > "$OUT/tools.txt" 2>/dev/null
rm -rf "$OUT/tools"
[ "$SECONDS" -lt 150 ] && step conformance 10 build/gpu/gpu_conformance gpu-cases
[ "$SECONDS" -lt 155 ] && step inject 8 build/gpu/inject_check

echo "---- summary" | tee -a "$SUMMARY"
cat "$SUMMARY"
grep -c '^PASS' "$OUT/tools.txt" 2>/dev/null | sed 's/^/tools PASS lines: /'
grep '^FAIL' "$OUT/tools.txt" 2>/dev/null
tail -3 "$OUT/conformance.log" 2>/dev/null
tail -3 "$OUT/stack-cases.log" 2>/dev/null
tail -3 "$OUT/inject.log" 2>/dev/null
cat "$OUT/memtrace_cost.md" 2>/dev/null
