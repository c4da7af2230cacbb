#!/usr/bin/env bash
# Memory policies on a GPU (issue 8, "Must show" 1 and 3): for each access
# pattern of examples/cuda/uvm_workload.cu at 1.5x and 2x of the budget
# (the managed footprint is 1.5 or 2 x --mem-budget), time and bytes
# migrated under the default policy ("none": the driver-like LRU + density
# tree, same budget) and under each policy; checksums must be identical.
# With SIM=1 every run also records what the device signal saw
# (--mem-trace) and `gpuext sim` replays that trace with the same budget
# and policy: the simulator's bytes beside the measured ones.
# Run from the repository root on the GPU machine with build/ carried
# (make, nvcc examples included):
#
#   bench/mem_policy_bench.sh            # BUDGET=1G ITERS=3
#   BUDGET=256M ITERS=2 PATTERNS="seq dnn" SIGNAL=cupti bench/mem_policy_bench.sh
#
# SIGNAL: device (default: policies/mem-signal.bpf.c in every kernel) or
# cupti (CUPTI's records alone).  MULTS: oversubscriptions ("1.5 2").
# Writes a markdown table to $OUT/mem-policy-bench.md (default
# build/mem-bench-out) and the raw runs under $OUT/logs; prints the table.
# Columns: kernels s = the workload's launch loop (its time_ms), wall s =
# the whole process (start, instrumentation, host init, check); HtoD/DtoH
# = what the driver reported migrating (the UVM tools queue, else CUPTI; DtoH: less the host's own reads at
# the end, dtoh_cpu_bytes); model in/out = what the runtime's
# model moved (faulted + prefetched pages in, evicted pages out); sim =
# `gpuext sim` on the run's trace; sim / measured in, out = its bytes each
# way over the driver's (Must show 3: within 0.8 .. 1.2); runtime ms = time
# in the runtime's fault service (of it the driver calls of its hints) /
# in the signal's snapshot copies (the wait for earlier kernels included);
# block prefetches = whole blocks a policy prefetched.
set -u
OUT=${OUT:-build/mem-bench-out}
mkdir -p "$OUT/logs" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 1
GPUEXT=${GPUEXT:-build/gpuext}
W=${W:-build/examples/uvm_workload}
P=build/bpf/policies
BUDGET=${BUDGET:-1G}
ITERS=${ITERS:-3}
MULTS=${MULTS:-"1.5 2"}
SIGNAL=${SIGNAL:-device}
SIM=${SIM:-0}
TRACE_DIR=${TRACE_DIR:-${TMPDIR:-/tmp}}
PATTERNS=${PATTERNS:-"seq random moe decode dnn"}
# name=objects (comma-separated); "none" is the default policy
POLICIES=${POLICIES:-"none= mru=$P/mru.bpf.o lfu=$P/lfu.bpf.o fifo-chance=$P/fifo-chance.bpf.o always-max=$P/prefetch-always-max.bpf.o mru+always-max=$P/mru.bpf.o,$P/prefetch-always-max.bpf.o"}
for f in "$GPUEXT" "$W"; do
	[ -x "$f" ] || { echo "FAIL $f not built (make; nvcc examples)"; exit 1; }
done
budget_mib=$(python3 -c "import sys; s='$BUDGET'; m={'M':1,'G':1024}; print(int(float(s[:-1])*m[s[-1].upper()]))")
TABLE="$OUT/mem-policy-bench.md"
{
	echo "# Memory policies on managed memory: uvm_workload, budget $BUDGET, $ITERS passes, signal $SIGNAL"
	echo
	echo "Machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(date -u '+%F %H:%M UTC')"
	echo "Commit: $(cat COMMIT 2>/dev/null || git log -1 --oneline 2>/dev/null)"
	echo
	echo "| pattern | footprint | policy | kernels s | wall s | vs none | HtoD MiB | DtoH MiB | model in MiB | model out MiB | evictions | sim in MiB | sim out MiB | sim / measured in, out | runtime ms: service (hints) / snapshots | block prefetches | checksum |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} > "$TABLE"
bad=0
BEST=()
# row LOG RC T0 T1 [SIMJSON]: the numbers of one run, space-separated
row() {
	python3 - "$@" <<'PY'
import json, re, sys
log, rc, t0, t1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
text = open(log, errors="replace").read()
mem = {}
for line in text.splitlines():
    if line.startswith('{"mem"'):
        mem = json.loads(line)["mem"]
sim = {}
if len(sys.argv) > 5:
    try:
        sim = json.load(open(sys.argv[5]))["results"][0]
    except Exception:
        sim = {}
ck = re.findall(r"^checksum: (\S+)", text, re.M)
ms = re.findall(r"^time_ms: (\S+)", text, re.M)
ok = rc == 0 and "result: ok" in text
M = 2**20
# the model: faulted pages in (device signal: signal_faults; CUPTI: faults),
# prefetched bytes in, evicted bytes out
faulted = mem.get("signal_faults", 0) or mem.get("faults", 0)
model_in = faulted * 4096 + mem.get("bytes_to_gpu", 0)
f = lambda v: "%.0f" % (v / M)
# measured: what the driver moved for the GPU (the host's own reads of
# GPU-resident pages at the end, dtoh_cpu_bytes, are in no GPU-side trace)
meas = mem.get("htod_bytes", 0) + mem.get("dtoh_bytes", 0) - mem.get("dtoh_cpu_bytes", 0)
# each direction apart: sim in / measured HtoD, sim out / measured DtoH
# (both 0: 1.00, nothing either way)
htod = mem.get("htod_bytes", 0)
dtoh = mem.get("dtoh_bytes", 0) - mem.get("dtoh_cpu_bytes", 0)
q = lambda a, b: "%.2f" % (a / b) if b else ("1.00" if a == 0 else "inf")
ratio = "%s,%s" % (q(sim["bytes_htod"], htod), q(sim["bytes_dtoh"], dtoh)) if sim else "-"
rt = "%.0f(%.0f)/%.0f" % (mem.get("service_ns", 0) / 1e6, mem.get("hint_ns", 0) / 1e6,
                        mem.get("snapshot_ns", 0) / 1e6) if mem else "-"
print("%s %.2f %s %s %s %s %d %s %s %s %s %s %s %s" % (
    "%.3f" % (float(ms[-1]) / 1000) if ms else "-", t1 - t0,
    f(htod), f(dtoh), f(model_in),
    f(mem.get("bytes_to_cpu", 0)), mem.get("evictions", -1),
    f(sim["bytes_htod"]) if sim else "-", f(sim["bytes_dtoh"]) if sim else "-",
    ratio, rt, mem.get("block_prefetches", "-") if mem else "-",
    ck[-1] if ck else "none", "ok" if ok else "BAD"))
PY
}
for pat in $PATTERNS; do
	for mult in $MULTS; do
		size=$(python3 -c "print(int($budget_mib * $mult))")
		ref="" none_k="" best="" best_k=""
		# the workload alone: no budget (everything fits the GPU), no agent
		log="$OUT/logs/$pat-$mult-plain.log"
		t0=$(date +%s.%N)
		"$W" -pattern "$pat" -n "$size" -iters "$ITERS" > "$log" 2>&1
		rc=$? t1=$(date +%s.%N)
		read -r kern wall _ _ _ _ _ _ _ _ _ _ ck ok <<< "$(row "$log" "$rc" "$t0" "$t1")"
		ref=$ck
		[ "$ok" = ok ] || { bad=1; echo "FAIL $pat $mult plain: see $log"; }
		echo "| $pat | ${mult}x ($size MiB) | no budget, no agent | $kern | $wall | | | | | | | | | | | | $ck |" >> "$TABLE"
		for entry in $POLICIES; do
			name=${entry%%=*} objs=${entry#*=}
			args=(--mem-signal "$SIGNAL")
			IFS=, read -ra list <<< "$objs"
			for o in "${list[@]}"; do [ -n "$o" ] && args+=(--mem-policy "$o"); done
			log="$OUT/logs/$pat-$mult-$name.log"
			trace="$TRACE_DIR/gpuext-mem-$pat-$mult-$name.trace"
			[ "$SIM" = 1 ] && args+=(--mem-trace "$trace")
			t0=$(date +%s.%N)
			"$GPUEXT" run --json --mem-budget "$BUDGET" "${args[@]}" -- \
				"$W" -pattern "$pat" -n "$size" -iters "$ITERS" > "$log" 2>&1
			rc=$? t1=$(date +%s.%N)
			simjson=()
			if [ "$SIM" = 1 ] && [ -s "$trace" ]; then
				sp=${objs:-none}
				"$GPUEXT" sim --trace "$trace" --hits --budget "$BUDGET" --policy "$sp" --json \
					> "$log.sim.json" 2> "$log.sim.err" && simjson=("$log.sim.json")
				# the fewest bytes any eviction order moves on this trace
				[ "$name" = none ] && "$GPUEXT" sim --trace "$trace" --hits --budget "$BUDGET" \
					--policy optimal --json > "$log.opt.json" 2>> "$log.sim.err"
				rm -f "$trace"
			fi
			read -r kern wall htod dtoh min mout ev sin sout sratio rtms bpf ck ok <<< \
				"$(row "$log" "$rc" "$t0" "$t1" "${simjson[@]}")"
			[ "$name" = none ] && none_k=$kern
			same=same
			if [ "$ok" != ok ] || [ "$ck" != "$ref" ]; then same="DIFFERENT ($ok)"; bad=1; fi
			ratio=$(awk -v a="$none_k" -v b="$kern" \
				'BEGIN { if (a == "" || a == "-" || b == "-" || b == 0) print "-"; else printf "%.2fx", a / b }')
			echo "| $pat | ${mult}x ($size MiB) | $name | $kern | $wall | $ratio | $htod | $dtoh | $min | $mout | $ev | $sin | $sout | $sratio | $rtms | $bpf | $same |" >> "$TABLE"
			if [ "$name" = none ] && [ -s "$log.opt.json" ]; then
				python3 - "$log.opt.json" "$pat" "${mult}x ($size MiB)" >> "$TABLE" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
M = 2**20
print("| %s | %s | optimal order (simulated: Belady) | | | | | | | | %d | %.0f | %.0f | | | | |" % (
    sys.argv[2], sys.argv[3], r["evictions"], r["bytes_htod"] / M, r["bytes_dtoh"] / M))
PY
			fi
			if [ "$kern" != - ] && { [ -z "$best_k" ] || awk -v a="$kern" -v b="$best_k" 'BEGIN { exit !(a < b) }'; }; then
				best=$name best_k=$kern
			fi
		done
		BEST+=("- $pat at ${mult}x: $best ($best_k s; none $none_k s)")
	done
done
if [ "$SIM" = 1 ]; then
	# Must show 3: the simulator's bytes within 20% of the measured ones,
	# each direction
	python3 - "$TABLE" >> "$TABLE" <<'PY'
import sys
rows = [l.split("|")[1:-1] for l in open(sys.argv[1]) if l.startswith("| ") and "sim / measured" not in l]
pairs = []
for c in rows:
    if len(c) > 13 and "," in c[13]:
        try:
            pairs.append(tuple(float(x) for x in c[13].split(",")))
        except ValueError:
            pass
ok = [p for p in pairs if all(0.8 <= x <= 1.2 for x in p)]
flat = [x for p in pairs for x in p]
print("\nSimulator vs measured: sim / measured bytes within 0.8..1.2 both ways in %d of %d runs%s" % (
    len(ok), len(pairs), " (range %.2f .. %.2f)" % (min(flat), max(flat)) if flat else ""))
PY
fi
{
	echo
	echo "Best policy per workload (kernel-loop time):"
	echo
	printf '%s\n' "${BEST[@]}"
	echo
	echo "vs none: kernel-loop time of the default policy / this policy's (same budget, same run of this script)."
} >> "$TABLE"
cat "$TABLE"
if [ "$bad" != 0 ]; then
	echo "FAIL: a checksum differs or a run failed (see $OUT/logs)"
	exit 1
fi
echo "all checksums identical"
