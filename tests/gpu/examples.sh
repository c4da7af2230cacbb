#!/usr/bin/env bash
# The CUDA examples on a GPU: run on a GPU machine from the repository root
# with the build folder (build/examples, made by `make` where nvcc exists)
# carried along.
#
#   tests/gpu/examples.sh
#
# Each example checks its own result against the CPU reference it computes
# and exits non-zero on a mismatch; this script also checks that
#   - every run prints a "checksum: 0x..." line,
#   - every vecadd variant (cudart static/shared, fatbin layouts, driver API,
#     cuLink JIT linker) prints vecadd's checksum: same input, same result,
#   - -time -iters K prints exactly K "kernel_ms:" lines,
#   - a second run prints the same checksum (determinism, reduce's atomics).
# Logs go to $OUT (default build/gpu-out), one per run; summary last;
# exit status non-zero if anything failed.  Takes well under a minute.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build/gpu-out}
EX=build/examples
mkdir -p "$OUT"
# vecadd_shared needs libcudart.so.13: the toolkit's, where one is installed.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
	[ -d "$d" ] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d
done

{
	date -u
	nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv 2>&1
} > "$OUT/examples-machine.txt"

if [ ! -x "$EX/vecadd" ]; then
	echo "examples: $EX/vecadd not built (make needs nvcc); nothing to run" | tee "$OUT/examples-summary.txt"
	exit 1
fi

passed=0 failed=0 skipped=0
declare -a lines
ok() { passed=$((passed + 1)); lines+=("  ok    $1"); }
bad() { failed=$((failed + 1)); lines+=("  FAIL  $1"); echo "FAIL: $1"; }
skip() { skipped=$((skipped + 1)); lines+=("  skip  $1"); }

# run LOGNAME ARGS...: runs $EX/ARGS; sum= its checksum (empty on failure,
# which is counted).  Not in a subshell, so that the counts survive.
run() {
	local log=$OUT/examples-$1.log rc
	shift
	sum=
	# A shared library missing on this machine (libcudart.so.13 for
	# vecadd_shared where no toolkit is installed) is a skip, said as such.
	missing=$(ldd "$EX/$1" 2>/dev/null | sed -n 's/^\s*\(libcudart\S*\) => not found$/\1/p' | tr '\n' ' ')
	if [ -n "$missing" ]; then
		skip "$* (not installed here: $missing)"
		return
	fi
	timeout 120 "$EX/$@" > "$log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "$* (exit $rc, log $log): $(tail -n 2 "$log" | tr '\n' ' ')"
		return
	fi
	sum=$(sed -n 's/^checksum: \(0x[0-9a-f]*\)$/\1/p' "$log" | tail -n 1)
	[ -n "$sum" ] || bad "$* printed no checksum line (log $log)"
}

# 1. Every example at its default size, self-checked.
declare -A sums
for name in vecadd gemm reduce imbalance vecadd_shared vecadd_nocompress vecadd_lz4 vecadd_rdc vecadd_debug \
	    vecadd_compress_all vecadd_multi drv_vecadd link_vecadd; do
	run "$name" "$name"
	[ -n "$sum" ] && { ok "$name: $sum"; sums[$name]=$sum; }
done

# 2. Every vecadd variant computes vecadd's result.
for name in vecadd_shared vecadd_nocompress vecadd_lz4 vecadd_compress_all vecadd_multi vecadd_rdc vecadd_debug \
	    drv_vecadd link_vecadd; do
	[ -n "${sums[$name]:-}" ] && [ -n "${sums[vecadd]:-}" ] || continue
	if [ "${sums[$name]}" = "${sums[vecadd]}" ]; then
		ok "$name checksum = vecadd's"
	else
		bad "$name checksum ${sums[$name]} differs from vecadd's ${sums[vecadd]}"
	fi
done

# 3. Timing mode: one kernel_ms line per launch.
for spec in "vecadd -n 4194304" "gemm -n 1024" "reduce" "imbalance" "drv_vecadd" "link_vecadd"; do
	set -- $spec
	log=$1-time
	run "$log" $spec -iters 7 -time
	[ -n "$sum" ] || continue
	k=$(grep -c '^kernel_ms: [0-9.]*$' "$OUT/examples-$log.log")
	if [ "$k" -eq 7 ]; then
		ok "$spec -iters 7 -time: 7 kernel_ms lines, median $(grep '^kernel_ms:' "$OUT/examples-$log.log" | awk '{print $2}' | sort -g | sed -n 4p) ms"
	else
		bad "$spec -iters 7 -time printed $k kernel_ms lines, want 7"
	fi
done

# 4. Same checksum on a second run, and with other sizes still self-checked.
run reduce-again reduce
if [ -n "$sum" ] && [ "$sum" = "${sums[reduce]:-}" ]; then ok "reduce deterministic: $sum"
elif [ -n "$sum" ]; then bad "reduce: second run gave $sum, first ${sums[reduce]:-none}"; fi
for spec in "vecadd -n 1000003" "gemm -n 333" "reduce -n 12345679" "imbalance -n 4321"; do
	set -- $spec
	run "$1-odd" $spec
	[ -n "$sum" ] && ok "$spec: $sum"
done

{
	echo "examples on $(sed -n 3p "$OUT/examples-machine.txt")"
	printf '%s\n' "${lines[@]}"
	echo "examples: $passed passed, $failed failed, $skipped skipped"
} | tee "$OUT/examples-summary.txt"
[ "$failed" -eq 0 ]
