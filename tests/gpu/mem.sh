#!/usr/bin/env bash
# Memory policies on the GPU (issue 8, "Must show" 2): run from the
# repository root on the GPU machine with build/ carried (make, nvcc
# examples included):
#
#   tests/gpu/mem.sh
#
# For each pattern of examples/cuda/uvm_workload.cu at 1.5x of a 512 MiB
# budget: the workload alone (the reference checksum), then under
# `gpuext run --mem-budget 512M` with the default policy, mru, lfu +
# prefetch-always-max, seq-ahead and sweep-ahead (whole blocks prefetched)
# and the evil policy (tests/policies/evil.bpf.c: evicts everything,
# prefetches out of range, whole blocks outside managed memory).  PASS when
#   - every run exits 0 with "result: ok" and the reference's checksum;
#   - the device access signal ran (policies/mem-signal.bpf.c in every
#     kernel: snapshots taken) and the runtime saw faults through it and,
#     for the patterns that touch the whole footprint (seq, random, dnn),
#     evicted;
#   - its statistics show the budget held (peak_resident_blocks <=
#     capacity_blocks) and no driver call failed.
# Logs under $OUT (default build/mem-gpu-out).  Prints PASS/FAIL lines and
# a summary; exits 1 on failure.  About 90 seconds.
set -u
OUT=${OUT:-build/mem-gpu-out}
mkdir -p "$OUT/logs" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=build/gpuext
W=build/examples/uvm_workload
P=build/bpf/policies
BUDGET=512M
SIZE=768
SUMMARY="$OUT/mem-summary.txt"
: > "$SUMMARY"
gpu_machine_info > "$OUT/machine.txt"

pass=0 fail=0
mem_stat() { # stat LOG NAME -> the number in the {"mem":{...}} line, or -1
	python3 - "$1" "$2" <<'PY'
import json, sys
v = -1
for line in open(sys.argv[1], errors="replace"):
    if line.startswith('{"mem"'):
        v = json.loads(line)["mem"].get(sys.argv[2], -1)
print(v)
PY
}
checksum() { grep '^checksum:' "$1" | tail -1; }

for f in "$GPUEXT" "$W" "$P/mru.bpf.o" build/bpf/tests/policies/evil.bpf.o; do
	if [ ! -e "$f" ]; then
		result FAIL "$f not built"
		echo "mem: $pass passed, $fail failed" | tee -a "$SUMMARY"
		exit 1
	fi
done

for pat in seq random moe decode dnn; do
	plain="$OUT/logs/$pat-plain.log"
	"$W" -pattern "$pat" -n "$SIZE" -iters 2 > "$plain" 2>&1
	ref=$(checksum "$plain")
	if ! grep -q "result: ok" "$plain" || [ -z "$ref" ]; then
		result FAIL "$pat: the workload alone failed (see $plain)"
		continue
	fi
	for entry in none= mru=$P/mru.bpf.o lfu+always-max=$P/lfu.bpf.o,$P/prefetch-always-max.bpf.o \
		     seq-ahead=$P/seq-ahead.bpf.o sweep-ahead=$P/sweep-ahead.bpf.o \
		     evil=build/bpf/tests/policies/evil.bpf.o; do
		name=${entry%%=*} objs=${entry#*=}
		args=()
		IFS=, read -ra list <<< "$objs"
		for o in "${list[@]}"; do [ -n "$o" ] && args+=(--mem-policy "$o"); done
		log="$OUT/logs/$pat-$name.log"
		timeout 120 "$GPUEXT" run --json --mem-budget "$BUDGET" "${args[@]}" -- \
			"$W" -pattern "$pat" -n "$SIZE" -iters 2 > "$log" 2>&1
		rc=$?
		if [ "$rc" = 0 ] && grep -q "result: ok" "$log" && [ "$(checksum "$log")" = "$ref" ]; then
			result PASS "$pat/$name: checksum identical to the plain run ($ref)"
		else
			result FAIL "$pat/$name: exit $rc, $(checksum "$log") vs plain $ref (see $log)"
		fi
		peak=$(mem_stat "$log" peak_resident_blocks) cap=$(mem_stat "$log" capacity_blocks)
		faults=$(mem_stat "$log" signal_faults) ev=$(mem_stat "$log" evictions) derr=$(mem_stat "$log" driver_errors)
		# seq, random and dnn touch the whole footprint (1.5x the budget):
		# they must evict; moe and decode may fit their working set.
		need_ev=0
		case $pat in seq | random | dnn) need_ev=1 ;; esac
		if [ "$cap" -gt 0 ] && [ "$peak" -le "$cap" ] && [ "$faults" -gt 0 ] &&
		   [ "$ev" -ge "$need_ev" ] && [ "$derr" = 0 ]; then
			result PASS "$pat/$name: budget held (peak $peak of $cap blocks), $faults faults seen, $ev evictions"
		else
			result FAIL "$pat/$name: peak $peak of $cap blocks, faults $faults, evictions $ev, driver errors $derr (see $log)"
		fi
	done
done
echo "mem: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ "$fail" = 0 ]
