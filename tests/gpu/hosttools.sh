#!/usr/bin/env bash
# The host tools on PyTorch (issue 7, Must show 1): run on a GPU machine
# from the repository root with the build folder carried along:
#
#   tests/gpu/hosttools.sh
#
# For tests/gpu/python/torch_train.py (training loop) and torch_infer.py
# (inference loop): `gpuext run --tool cudatrace --json --trace FILE`,
# `--tool syncsnoop --json` and `--tool launchlat --json`, then
# tests/gpu/python/hosttools_check.py checks against what the script
# printed: launches of its marker kernel (erfinv, once per step) in
# cudatrace and launchlat (CUPTI), bytes copied HtoD/DtoH, the planted
# driver-level leak listed with its exact size (and the freed one not), the
# trace file's structure (B/E per thread, X per stream, ts per track), the
# synchronize calls in syncsnoop.  kernelsnoop on both scripts
# (tests/gpu/python/kernelsnoop_check.py): one record per marker launch,
# durations > 0, cuBLAS/cuDNN kernels named, every kernel joined with its
# call.  uvmtrace on tests/gpu/python/torch_managed.py (the training loop
# with its 64 MiB data set in managed memory; uvmtrace_check.py): the
# events equal the UVM driver's own counters, nothing dropped, every 2 MiB
# block of the data set moved to the GPU and back exactly once, the
# script's loss and checksum as without gpuext.  TOOLS="..." runs a subset
# (default: cudatrace syncsnoop launchlat kernelsnoop uvmtrace).
# PASS/FAIL lines, a summary line; logs in $OUT (default
# build/hosttools-gpu-out); exits 1 on any failure.
set -u
OUT=${OUT:-build/hosttools-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
GPUEXT=build/gpuext
PY=tests/gpu/python
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/hosttools-summary.txt"
: > "$SUMMARY"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1
	python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1
	git log -1 --oneline 2>/dev/null
} > "$OUT/machine.txt"

TOOLS=${TOOLS:-cudatrace syncsnoop launchlat kernelsnoop uvmtrace}
want() { case " $TOOLS " in *" $1 "*) return 0 ;; esac; return 1; }
pass=0 fail=0
# note PASS|FAIL LINE: one result
note() {
	echo "$1 $2" | tee -a "$SUMMARY"
	if [ "$1" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
for tool in $TOOLS; do
	if [ ! -r "build/bpf/tools/$tool.bpf.o" ] || [ ! -x "$GPUEXT" ]; then
		echo "FAIL build/bpf/tools/$tool.bpf.o or $GPUEXT not built" | tee -a "$SUMMARY"
		echo "hosttools: 0 passed, 1 failed" | tee -a "$SUMMARY"
		exit 1
	fi
done

for name in torch_train torch_infer; do
	if want kernelsnoop; then
		timeout 170 "$GPUEXT" run --tool kernelsnoop --json -o "$LOGS/$name.kernelsnoop.json" \
			-- python3 "$PY/$name.py" > "$LOGS/$name.kernelsnoop.log" 2> "$LOGS/$name.kernelsnoop.err"
		rc=$?
		line=$(python3 "$PY/kernelsnoop_check.py" "$name" "$LOGS/$name.kernelsnoop.log" \
			"$LOGS/$name.kernelsnoop.json" 2>&1 | tail -1)
		if [ "$rc" != 0 ]; then
			note FAIL "$name kernelsnoop: exit status $rc ($(tail -2 "$LOGS/$name.kernelsnoop.err" | tr '\n' ' '))"
		else
			note "${line%% *}" "${line#* }"
		fi
		gzip -f "$LOGS/$name.kernelsnoop.json"
	fi
	want cudatrace || want syncsnoop || want launchlat || continue
	for tool in cudatrace syncsnoop launchlat; do
		extra=()
		[ "$tool" = cudatrace ] && extra=(--trace "$LOGS/$name.trace.json")
		/usr/bin/time -f '%e s' -o "$LOGS/$name.$tool.time" timeout 170 \
			"$GPUEXT" run --tool "$tool" --json "${extra[@]}" -- python3 "$PY/$name.py" \
			> "$LOGS/$name.$tool.log" 2> "$LOGS/$name.$tool.err"
		rc=$?
		if [ "$rc" != 0 ]; then
			echo "FAIL $name $tool: exit status $rc (see $LOGS/$name.$tool.err)" |
				tee -a "$SUMMARY"
			fail=$((fail + 1))
			tail -5 "$LOGS/$name.$tool.err"
		fi
	done
	python3 "$PY/hosttools_check.py" "$name" "$LOGS" > "$LOGS/$name.check" 2>&1
	rc=$?
	tee -a "$SUMMARY" < "$LOGS/$name.check"
	pass=$((pass + $(grep -c '^PASS' "$LOGS/$name.check")))
	nfail=$(grep -c '^FAIL' "$LOGS/$name.check")
	# the checker failed without a FAIL line: it crashed (its traceback is above)
	[ "$rc" != 0 ] && [ "$nfail" = 0 ] && nfail=1
	fail=$((fail + nfail))
done
# uvmtrace: the training loop with its data set in managed memory.
if want uvmtrace; then
	name=torch_managed
	timeout 170 python3 "$PY/$name.py" > "$LOGS/$name.plain" 2>&1
	GPUEXT_AGENT_VERBOSE=1 timeout 170 "$GPUEXT" run --tool uvmtrace --json \
		-o "$LOGS/$name.uvmtrace.json" -- python3 "$PY/$name.py" \
		> "$LOGS/$name.uvmtrace.log" 2> "$LOGS/$name.uvmtrace.err"
	rc=$?
	line=$(python3 "$PY/uvmtrace_check.py" "$name" "$LOGS/$name.uvmtrace.json" \
		"$LOGS/$name.uvmtrace.err" --managed 64 --touched $((64 << 20)) 2>&1 | tail -1)
	same=$(grep -h '^torch_managed: loss=' "$LOGS/$name.plain" "$LOGS/$name.uvmtrace.log" | sort -u | wc -l)
	if [ "$rc" != 0 ]; then
		note FAIL "$name uvmtrace: exit status $rc ($(tail -2 "$LOGS/$name.uvmtrace.err" | tr '\n' ' '))"
	elif [ "$same" != 1 ]; then
		note FAIL "$name uvmtrace: loss/checksum differ from the plain run ($(grep -h '^torch_managed: loss=' "$LOGS/$name.plain" "$LOGS/$name.uvmtrace.log" | tr '\n' ' '))"
	else
		note "${line%% *}" "${line#* }"
	fi
	gzip -f "$LOGS/$name.uvmtrace.json"
fi
echo "hosttools: $pass passed, $fail failed" | tee -a "$SUMMARY"
tar -C "$OUT" -czf "$OUT/hosttools.tgz" logs machine.txt hosttools-summary.txt 2>/dev/null
[ "$fail" = 0 ]
