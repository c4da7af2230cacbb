#!/usr/bin/env bash
# The CUPTI source and its tools on a GPU machine, from the repository root
# with the build folder carried (build/gpuext, the agent, build/bpf/tools,
# build/examples):
#
#   tests/gpu/cupti.sh
#
# - kernelsnoop (--json) on the CUDA examples: one record per launch the
#   example prints (the kernel's name found in the record), every duration
#   > 0, the summary's kernel count equal to the launches, the launching
#   call joined (api_start <= start) for every kernel, the example's
#   checksum unchanged, no agent message;
# - kernelsnoop on tests/gpu/python/torch_mlp.py: exit 0, the plain run's
#   checksum, GEMM kernels (cuBLAS/CUTLASS, SASS only) among the records;
# - uvmtrace on build/examples/managed (256 MiB managed, host -> device ->
#   host; unified-memory events from the UVM driver's queue): the events
#   equal the driver's own counters (bytes each way, GPU and CPU faults),
#   none dropped, 128 blocks of 2 MiB each moved once each way (exact);
# - fail-open: GPUEXT_CUPTI_PATH pointing nowhere: one message, the example
#   runs correctly.
# libcupti is found by the agent's own search (no GPUEXT_CUPTI_PATH) and
# named in the log (GPUEXT_AGENT_VERBOSE).  Logs go to $OUT (default
# build/cupti-gpu-out).  Prints PASS/FAIL lines and a summary; exits 1 on
# any failure.  Takes about a minute.
set -u
OUT=${OUT:-build/cupti-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=build/gpuext
EX=build/examples
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/cupti-summary.txt"
: > "$SUMMARY"
gpu_machine_info > "$OUT/machine.txt"

pass=0 fail=0
checksum() { grep '^checksum:' "$1" | tail -1; }
launches() { head -1 "$1" | tr ' ' '\n' | awk -F= '$1 == "launches" { print $2 }'; }

# ks_check LOG NAME_RE LAUNCHES: the kernelsnoop JSON checks; prints a
# reason and returns 1 on failure.
ks_check() {
	python3 - "$@" <<'PYEOF'
import json, re, sys
log, name_re, want = sys.argv[1], re.compile(sys.argv[2]), int(sys.argv[3])
recs, summary = [], None
for line in open(log, errors="replace"):
    if not line.startswith("{"):
        continue
    o = json.loads(line)
    if "kernels" in o:
        summary = o
    elif "kernel" in o:
        recs.append(o)
ours = [r for r in recs if name_re.search(r["kernel"])]
bad = []
if len(ours) != want:
    bad.append(f"{len(ours)} records named /{name_re.pattern}/, {want} launches")
if summary is None or summary["kernels"] != len(recs):
    bad.append(f"summary {summary and summary['kernels']} != {len(recs)} records")
if len(recs) != want:
    bad.append(f"{len(recs)} kernel records in all, {want} launches")
if any(r["dur_ns"] <= 0 for r in recs):
    bad.append("a duration <= 0")
unjoined = [r for r in recs if "api_start_ns" not in r]
if unjoined:
    bad.append(f"{len(unjoined)} kernels without their launching call")
# CUPTI interpolates GPU times onto the host clock: a kernel that starts
# within microseconds of its call may land before it; tolerated up to 1%
# (one at least).
early = sum(1 for r in recs if "api_start_ns" in r and r["api_start_ns"] > r["start_ns"])
if early > max(1, len(recs) // 100):
    bad.append(f"{early} kernels starting before their launching call")
lat = sorted(r["start_ns"] - r["api_start_ns"] for r in recs if "api_start_ns" in r)
med = lat[len(lat) // 2] / 1e3 if lat else float("nan")
print(f"{len(recs)} kernels, median dur {sorted(r['dur_ns'] for r in recs)[len(recs) // 2] / 1e3 if recs else 0:.1f} us, "
      f"median call-to-start {med:.1f} us, {early} before the call" +
      ("; " + "; ".join(bad) if bad else ""))
sys.exit(1 if bad else 0)
PYEOF
}

# snoop NAME NAME_RE ARGS...: an example under kernelsnoop.
snoop() {
	local name=$1 re=$2 bin="$EX/$1"
	shift 2
	local log="$LOGS/ks-$name"
	if [ ! -x "$bin" ]; then
		result FAIL "kernelsnoop $name: $bin not built"
		return
	fi
	timeout 120 "$bin" "$@" > "$log.plain" 2>&1
	GPUEXT_AGENT_VERBOSE=1 timeout 120 "$GPUEXT" run --json -o "$log.json" --tool kernelsnoop \
		-- "$bin" "$@" > "$log.out" 2> "$log.err"
	local rc=$? want
	want=$(launches "$log.plain")
	local why
	why=$(ks_check "$log.json" "$re" "${want:-0}" 2>&1)
	local ok=$?
	if [ $rc -ne 0 ]; then
		result FAIL "kernelsnoop $name: exit $rc ($(tail -2 "$log.err" | tr '\n' ' '))"
	elif [ "$(checksum "$log.out")" != "$(checksum "$log.plain")" ]; then
		result FAIL "kernelsnoop $name: checksum differs from the plain run"
	elif grep -v '^gpuext: CUPTI (' "$log.err" | grep -q '^gpuext: '; then
		result FAIL "kernelsnoop $name: agent said: $(grep '^gpuext: ' "$log.err" | head -2 | tr '\n' ' ')"
	elif [ $ok -ne 0 ]; then
		result FAIL "kernelsnoop $name: $why"
	else
		result PASS "kernelsnoop $name: $why"
	fi
}

snoop vecadd 'vecadd' -iters 5
snoop gemm 'gemm_tiled' -iters 3
snoop reduce 'reduce_sum' -iters 4
snoop imbalance 'imbalanced' -iters 2
grep -h '^gpuext: CUPTI (' "$LOGS"/ks-vecadd.err > "$OUT/cupti-lib.txt" 2>/dev/null

# With the driver calls only (GPUEXT_CUPTI_API=driver, cheaper): how many
# kernels still join (a NOTE: says whether a kernel shares its correlation
# id with the driver call inside cudaLaunchKernel).
GPUEXT_CUPTI_API=driver timeout 120 "$GPUEXT" run --json -o "$LOGS/ks-vecadd-driver.json" \
	--tool kernelsnoop -- "$EX/vecadd" -iters 5 > /dev/null 2>&1
echo "NOTE kernelsnoop vecadd with driver calls only: $(grep -c '"api_start_ns"' "$LOGS/ks-vecadd-driver.json" 2>/dev/null) of $(grep -c '^{"kernel"' "$LOGS/ks-vecadd-driver.json" 2>/dev/null) kernels joined" | tee -a "$SUMMARY"

# PyTorch: cuBLAS GEMMs and PyTorch's own kernels, all SASS only.
log="$LOGS/ks-torch_mlp"
timeout 300 python3 tests/gpu/python/torch_mlp.py > "$log.plain" 2>&1
timeout 300 "$GPUEXT" run --json -o "$log.json" --tool kernelsnoop -- \
	python3 tests/gpu/python/torch_mlp.py > "$log.out" 2> "$log.err"
rc=$?
why=$(python3 - "$log.json" <<'PYEOF'
import json, re, sys
recs, summary = [], None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("{"):
        o = json.loads(line)
        if "kernels" in o:
            summary = o
        elif "kernel" in o:
            recs.append(o)
gemm = [r for r in recs if re.search(r"gemm|cutlass|xmma|Kernel2", r["kernel"], re.I)]
names = len({r["kernel"] for r in recs})
print(f"{len(recs)} kernels ({len(gemm)} GEMM), {names} names; summary {summary and summary['kernels']}")
ok = recs and gemm and summary and summary["kernels"] == len(recs) and all(r["dur_ns"] > 0 for r in recs)
sys.exit(0 if ok else 1)
PYEOF
)
ok=$?
if [ $rc -ne 0 ]; then
	result FAIL "kernelsnoop torch_mlp: exit $rc ($(tail -2 "$log.err" | tr '\n' ' '))"
elif [ -z "$(checksum "$log.plain")" ] || [ "$(checksum "$log.out")" != "$(checksum "$log.plain")" ]; then
	result FAIL "kernelsnoop torch_mlp: checksum differs from the plain run (or none)"
elif [ $ok -ne 0 ]; then
	result FAIL "kernelsnoop torch_mlp: $why"
else
	result PASS "kernelsnoop torch_mlp: $why"
fi

# uvmtrace on 256 MiB of managed memory touched host -> device -> host
# (tests/gpu/python/uvmtrace_check.py: the events equal the UVM driver's
# counters, none dropped, each 2 MiB block moved once each way).
log="$LOGS/uvm-managed"
if [ -x "$EX/managed" ]; then
	timeout 120 "$EX/managed" > "$log.plain" 2>&1
	GPUEXT_AGENT_VERBOSE=1 timeout 120 "$GPUEXT" run --json -o "$log.json" --tool uvmtrace \
		-- "$EX/managed" > "$log.out" 2> "$log.err"
	rc=$?
	timeout 120 "$GPUEXT" run -o "$log.txt" --tool uvmtrace -- "$EX/managed" > /dev/null 2>&1
	why=$(python3 tests/gpu/python/uvmtrace_check.py managed "$log.json" "$log.err" --managed 256 2>&1 | tail -1)
	if [ $rc -ne 0 ]; then
		result FAIL "uvmtrace managed: exit $rc ($(tail -2 "$log.err" | tr '\n' ' '))"
	elif [ "$(checksum "$log.out")" != "$(checksum "$log.plain")" ]; then
		result FAIL "uvmtrace managed: checksum differs from the plain run"
	else
		result "${why%% *}" "${why#* }"
	fi
	gzip -f "$log.json"
else
	result FAIL "uvmtrace managed: $EX/managed not built"
fi

# Fail-open: no libcupti where it is said to be.
log="$LOGS/failopen-nolib"
GPUEXT_CUPTI_PATH=/nonexistent/libcupti.so timeout 120 "$GPUEXT" run --tool kernelsnoop -- \
	"$EX/vecadd" > "$log.out" 2> "$log.err"
rc=$?
msgs=$(grep -c '^gpuext: ' "$log.err")
if [ $rc -eq 0 ] && [ "$msgs" = 1 ] && grep -q 'cupti programs disabled' "$log.err" &&
	grep -q '^result: ok' "$log.out"; then
	result PASS "fail-open without libcupti: one message, vecadd correct"
else
	result FAIL "fail-open without libcupti: exit $rc, $msgs messages: $(head -3 "$log.err" | tr '\n' ' ')"
fi

if grep -h 'CUPTI dropped' "$LOGS"/*.err > /dev/null 2>&1; then
	grep -h 'CUPTI dropped' "$LOGS"/*.err | sed 's/^/NOTE /' | tee -a "$SUMMARY"
fi
echo "cupti: $pass passed, $fail failed" | tee -a "$SUMMARY"
tar -C "$OUT" -czf "$OUT/cupti.tgz" logs cupti-summary.txt machine.txt 2>/dev/null
[ "$fail" -eq 0 ]
