#!/usr/bin/env bash
# Memory policies on a GPU (issue 8, "Must show" 1 and 2): for each access
# pattern of examples/cuda/uvm_workload.cu at 1.5x and 2x of the budget
# (the managed footprint is 1.5 or 2 x --mem-budget), wall time and bytes
# migrated under the default policy ("none": the driver-like LRU + density
# tree, same budget) and under each policy; checksums must be identical.
# Run from the repository root on the GPU machine with build/ carried
# (make, nvcc examples included):
#
#   bench/mem_policy_bench.sh            # BUDGET=2G ITERS=3
#   BUDGET=1G ITERS=2 PATTERNS="moe dnn" bench/mem_policy_bench.sh
#
# Writes a markdown table to $OUT/mem-policy-bench.md (default
# build/mem-bench-out) and the raw runs under $OUT/logs; prints the table.
set -u
OUT=${OUT:-build/mem-bench-out}
mkdir -p "$OUT/logs" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 1
GPUEXT=build/gpuext
W=build/examples/uvm_workload
P=build/bpf/policies
BUDGET=${BUDGET:-2G}
ITERS=${ITERS:-3}
PATTERNS=${PATTERNS:-"seq random moe decode dnn"}
# name=objects (comma-separated); "none" is the default policy
POLICIES=${POLICIES:-"none= mru=$P/mru.bpf.o lfu=$P/lfu.bpf.o fifo-chance=$P/fifo-chance.bpf.o always-max=$P/prefetch-always-max.bpf.o mru+always-max=$P/mru.bpf.o,$P/prefetch-always-max.bpf.o"}
for f in "$GPUEXT" "$W"; do
	[ -x "$f" ] || { echo "FAIL $f not built (make; nvcc examples)"; exit 1; }
done
budget_mib=$(python3 -c "import sys; s='$BUDGET'; m={'M':1,'G':1024}; print(int(float(s[:-1])*m[s[-1].upper()]))")
TABLE="$OUT/mem-policy-bench.md"
{
	echo "# Memory policies on managed memory: uvm_workload, budget $BUDGET, $ITERS passes"
	echo
	echo "Machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(date -u +%F)"
	echo "Commit: $(git log -1 --oneline 2>/dev/null)"
	echo
	echo "| pattern | footprint | policy | wall s | kernels s | HtoD MiB | DtoH MiB | evictions | GPU faults | vs none | checksum |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} > "$TABLE"
bad=0
BEST=()
for pat in $PATTERNS; do
	for mult in 1.5 2; do
		size=$(python3 -c "print(int($budget_mib * $mult))")
		ref="" none_wall="" best="" best_wall=""
		for entry in $POLICIES; do
			name=${entry%%=*} objs=${entry#*=}
			args=()
			IFS=, read -ra list <<< "$objs"
			for o in "${list[@]}"; do [ -n "$o" ] && args+=(--mem-policy "$o"); done
			log="$OUT/logs/$pat-$mult-$name.log"
			t0=$(date +%s.%N)
			"$GPUEXT" run --json --mem-budget "$BUDGET" "${args[@]}" -- \
				"$W" -pattern "$pat" -n "$size" -iters "$ITERS" > "$log" 2>&1
			rc=$?
			t1=$(date +%s.%N)
			row=$(python3 - "$log" "$rc" "$t0" "$t1" <<'PY'
import json, re, sys
log, rc, t0, t1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
text = open(log, errors="replace").read()
mem = {}
for line in text.splitlines():
    if line.startswith('{"mem"'):
        mem = json.loads(line)["mem"]
ck = re.findall(r"^checksum: (\S+)", text, re.M)
ms = re.findall(r"^time_ms: (\S+)", text, re.M)
ok = rc == 0 and "result: ok" in text
print("%.2f %s %.0f %.0f %d %d %s %s" % (t1 - t0, "%.2f" % (float(ms[-1]) / 1000) if ms else "-",
      mem.get("htod_bytes", 0) / 2**20, mem.get("dtoh_bytes", 0) / 2**20,
      mem.get("evictions", -1), mem.get("faults", -1), ck[-1] if ck else "none", "ok" if ok else "BAD"))
PY
)
			read -r wall kern htod dtoh ev faults ck ok <<< "$row"
			[ -z "$ref" ] && ref=$ck
			[ "$name" = none ] && none_wall=$wall
			same=same
			if [ "$ok" != ok ] || [ "$ck" != "$ref" ]; then same="DIFFERENT ($ok)"; bad=1; fi
			ratio=$(awk -v a="$none_wall" -v b="$wall" \
				'BEGIN { if (a == "" || b == 0) print "-"; else printf "%.2fx", a / b }')
			echo "| $pat | ${mult}x ($size MiB) | $name | $wall | $kern | $htod | $dtoh | $ev | $faults | $ratio | $same |" >> "$TABLE"
			if [ -z "$best_wall" ] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
				best=$name best_wall=$wall
			fi
		done
		BEST+=("- $pat at ${mult}x: $best ($best_wall s; none $none_wall s)")
	done
done
{
	echo
	echo "Best policy per workload (wall time):"
	echo
	printf '%s\n' "${BEST[@]}"
	echo
	echo "vs none: wall time of the default policy / this policy's (same budget, same run of this script)."
} >> "$TABLE"
cat "$TABLE"
if [ "$bad" != 0 ]; then
	echo "FAIL: a checksum differs or a run failed (see $OUT/logs)"
	exit 1
fi
echo "all checksums identical"
