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
CASES=${1:-}
if [ -z "$CASES" ] || [ ! -d "$CASES" ]; then
	echo "usage: tests/gpu/run.sh CASES_DIR (the conformance cases folder)" >&2
	exit 2
fi
CASES=$(cd "$CASES" && pwd)
OUT=${OUT:-build/gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1

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

# The PTX every step loads, kept for reading when something fails.
mkdir -p "$OUT/ptx"
build/gpu/gpu_conformance --ptx-out "$OUT/ptx/conformance.ptx" "$CASES" > /dev/null
build/gpu/gpu_contention --ptx-out "$OUT/ptx"
build/gpu/gpu_probe_bench --ptx-out "$OUT/ptx"

step conformance 120 build/gpu/gpu_conformance "$CASES"
grep -E '^(FAIL|SKIP) ' "$OUT/conformance.log" > "$OUT/conformance-failures.txt"
if build/gpuext conformance --help 2>&1 | grep -q -- '--backend'; then
	step conformance-cli 120 build/gpuext conformance --backend ptx "$CASES"
fi
# run-gpu on clang-built objects: bpf-to-bpf calls on given memory, and
# global data (.rodata/.data/.bss as device array maps, LD_IMM64 map values)
run_gpu_check() { # NAME EXPECTED_R0 ARGS...
	local name=$1 want=$2
	shift 2
	step "$name" 60 build/gpuext run-gpu "$@"
	if ! grep -q "^r0 = $want " "$OUT/$name.log"; then
		echo "   expected r0 = $want"
		results[${#results[@]}-1]="FAILED (r0 is not $want)"
		fail=1
	fi
}
printf '\x05\0\0\0\0\0\0\0' > "$OUT/n5.bin"
run_gpu_check run-gpu-subprogs 30 build/bpf/tests/progs/subprogs.bpf.o gpu/mem/matmul --data "$OUT/n5.bin"
run_gpu_check run-gpu-globals 118 build/bpf/tests/progs/global_data.bpf.o on_entry
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
[ -f "$OUT/conformance-cli.log" ] && echo "  gpuext conformance --backend ptx: $(tail -n 1 "$OUT/conformance-cli.log")"
echo "logs: $OUT"
exit $fail
