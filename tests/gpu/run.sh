#!/usr/bin/env bash
# The GPU batch: run on a GPU machine from the repository root, with the
# build folder built elsewhere (`make`) and carried along.
#
#   tests/gpu/run.sh CASES_DIR      (a copy of shared/conformance/tests)
#
# Writes every log under $OUT (default build/gpu-out), prints a summary and
# exits non-zero if anything failed.  Each step has a time limit; the whole
# batch takes well under 5 minutes.
set -u
cd "$(dirname "$0")/../.." || exit 1
CASES=${1:-}
OUT=${OUT:-build/gpu-out}
mkdir -p "$OUT"
if [ -z "$CASES" ] || [ ! -d "$CASES" ]; then
	echo "usage: tests/gpu/run.sh CASES_DIR (the conformance cases folder)" >&2
	exit 2
fi

{
	date -u
	uname -a
	nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv 2>&1
	ldd --version 2>&1 | head -1
} > "$OUT/machine.txt"

declare -a names results
fail=0
step() { # step NAME LIMIT_S CMD...
	local name=$1 limit=$2 rc start
	shift 2
	echo "== $name: $*"
	start=$(date +%s)
	timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
	rc=$?
	tail -n 25 "$OUT/$name.log" | grep -v '^PASS ' | sed 's/^/   /'
	case $rc in
	0) r="ok" ;;
	77) r="skipped (no GPU)"; fail=1 ;;
	124) r="TIMEOUT after ${limit}s"; fail=1 ;;
	*) r="FAILED (exit $rc)"; fail=1 ;;
	esac
	names+=("$name") results+=("$r ($(( $(date +%s) - start ))s)")
}

step conformance 120 build/gpu/gpu_conformance "$CASES"
grep -E '^(FAIL|SKIP) ' "$OUT/conformance.log" > "$OUT/conformance-failures.txt"
if build/gpuext conformance --help 2>&1 | grep -q -- '--backend'; then
	step conformance-cli 120 build/gpuext conformance --backend ptx "$CASES"
fi
step contention 120 build/gpu/gpu_contention
step bench 120 build/gpu/gpu_probe_bench
step inject 120 build/gpu/inject_check
cp "$OUT/bench.log" "$OUT/gpu_probe_bench.md"

echo
echo "GPU batch summary"
grep -h -m1 '^GPU:' "$OUT"/*.log | head -n 1 | sed 's/^/  /'
for i in "${!names[@]}"; do
	printf '  %-16s %s\n' "${names[$i]}" "${results[$i]}"
done
grep -h -E '^conformance \(|^gpu_contention:|^inject_check:' "$OUT"/*.log | sed 's/^/  /'
echo "logs: $OUT"
exit $fail
