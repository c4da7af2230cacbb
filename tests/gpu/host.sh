#!/usr/bin/env bash
# The host engineer's GPU batch (issue 7, first part): run on a GPU machine
# from the repository root with the build folder carried along.
#
#   tests/gpu/host.sh
#
#   1. bench/apiprobe_bench on the GPU machine's CPU (hooked vs unhooked
#      call of a C function: empty, counting, hash-update programs).
#   2. The CUDA examples (cudart: every driver call goes through
#      cuGetProcAddress) under `gpuext run` with
#      tests/progs/apiprobe_cuda.bpf.c: uprobe/uretprobe on cuLaunchKernel
#      (and _ptsz) and uprobe on cuModuleGetFunction.  PASS when the example
#      succeeds with the same output as a plain run and the probes counted
#      launches at entry and the same number of successful returns.
# Not yet here (later sessions): kernel uprobes (gpuext attach), CUPTI, the
# PyTorch scripts under the host tools.
# Logs go to $OUT (default build/host-gpu-out).  Exits 1 on any failure.
set -u
OUT=${OUT:-build/host-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=build/gpuext
PROG=build/bpf/tests/progs/apiprobe_cuda.bpf.o
SUMMARY="$OUT/host-summary.txt"
: > "$SUMMARY"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version --format=csv 2>&1
	lscpu | grep 'Model name'
	git log -1 --oneline 2>/dev/null
} > "$OUT/machine.txt"

pass=0 fail=0

if build/bench/apiprobe_bench > "$OUT/apiprobe_bench.md" 2>&1; then
	result PASS "apiprobe_bench (see apiprobe_bench.md)"
else
	result FAIL "apiprobe_bench: $(tail -1 "$OUT/apiprobe_bench.md")"
fi

# value KEY FILE: the map line "  KEY: N" of api_calls
value() { sed -n '/^map api_calls:/,/^map /p' "$2" | awk -v k="$1:" '$1 == k {print $2}'; }

for ex in build/examples/vecadd build/examples/reduce build/examples/gemm; do
	[ -x "$ex" ] || { result FAIL "$ex not built"; continue; }
	name=$(basename "$ex")
	"$ex" > "$OUT/$name.plain.log" 2>&1
	"$GPUEXT" run "$PROG" -- "$ex" > "$OUT/$name.probed.log" 2>&1
	st=$?
	launches=$(value 0 "$OUT/$name.probed.log")
	returns=$(value 1 "$OUT/$name.probed.log")
	app_plain=$(grep -v '^map \|^  [0-9]*: ' "$OUT/$name.plain.log" | grep -vi 'time\|ms\b')
	app_probed=$(grep -v '^map \|^  [0-9]*: \|^gpuext' "$OUT/$name.probed.log" | grep -vi 'time\|ms\b')
	if [ $st -eq 0 ] && [ -n "$launches" ] && [ "$launches" -gt 0 ] &&
	   [ "$launches" = "$returns" ] && [ "$app_plain" = "$app_probed" ]; then
		result PASS "$name: $launches cuLaunchKernel calls probed at entry and return"
	else
		result FAIL "$name: status $st, launches '${launches:-}', returns '${returns:-}' (logs $name.*.log)"
	fi
done

echo "host batch: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ $fail -eq 0 ]
