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
# synchronize calls in syncsnoop.  PASS/FAIL lines, a summary line; logs
# in $OUT (default build/hosttools-gpu-out); exits 1 on any failure.
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

pass=0 fail=0
for tool in cudatrace syncsnoop launchlat; do
	if [ ! -r "build/bpf/tools/$tool.bpf.o" ] || [ ! -x "$GPUEXT" ]; then
		echo "FAIL build/bpf/tools/$tool.bpf.o or $GPUEXT not built" | tee -a "$SUMMARY"
		echo "hosttools: 0 passed, 1 failed" | tee -a "$SUMMARY"
		exit 1
	fi
done

for name in torch_train torch_infer; do
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
echo "hosttools: $pass passed, $fail failed" | tee -a "$SUMMARY"
tar -C "$OUT" -czf "$OUT/hosttools.tgz" logs machine.txt hosttools-summary.txt 2>/dev/null
[ "$fail" = 0 ]
