#!/usr/bin/env bash
# Issue 4's CPU target, checked: gpuext's JIT no slower than uBPF's JIT on every
# CPU benchmark, and within 2x of native on the median.  Runs cpu_bench RUNS
# times (each run: every engine side by side, 51 interleaved samples) and
# judges each benchmark by the median over runs of its gpuext JIT / uBPF JIT
# ratio, printing the spread beside it.
#
#   bench/jit_vs_ubpf.sh [RUNS]        (default 3; from the repository root)
#
# Needs build/bench/cpu_bench built with uBPF
# (`make build/bench/cpu_bench bpf UBPF_DIR=/path/to/ubpf`).  Each run's
# Markdown and JSON report goes to $OUT/runK (default OUT=build/jit-bench-out);
# bench/results is not touched.  Prints PASS/FAIL lines and a summary; exits 1
# on a failure.
set -u
RUNS=${1:-3}
OUT=${OUT:-build/jit-bench-out}
cd "$(dirname "$0")/.." || exit 1
BENCH=build/bench/cpu_bench
mkdir -p "$OUT"

if [ ! -x "$BENCH" ]; then
	echo "FAIL $BENCH not built (make build/bench/cpu_bench bpf UBPF_DIR=...)"
	exit 1
fi

ratios="$OUT/ratios.txt" # lines: run benchmark jit/ubpf jit/native
: > "$ratios"
for k in $(seq 1 "$RUNS"); do
	if ! "$BENCH" --out "$OUT/run$k" > "$OUT/run$k.log" 2>&1; then
		echo "FAIL cpu_bench run $k (see $OUT/run$k.log)"
		exit 1
	fi
	json=$(ls "$OUT/run$k"/*.json)
	# One benchmark per "name" line; its "ratios" line follows.
	awk -v run="$k" '
		/"name":/ { match($0, /"name": "[^"]*"/); name = substr($0, RSTART + 9, RLENGTH - 10) }
		/"ratios":/ {
			u = $0; sub(/.*"gpuext_jit_vs_ubpf_jit": /, "", u); sub(/[,}].*/, "", u)
			n = $0; sub(/.*"gpuext_jit_vs_native": /, "", n); sub(/[,}].*/, "", n)
			print run, name, u, n
		}' "$json" >> "$ratios"
done
if ! grep -q . "$ratios" || grep -q '"' "$ratios"; then
	echo "FAIL no gpuext JIT / uBPF JIT ratios in the reports (is uBPF built in?)"
	exit 1
fi

# Median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

pass=0 fail=0
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores," \
	"load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs of $BENCH"
native_medians=""
while read -r name; do
	m=$(awk -v b="$name" '$2 == b { print $3 }' "$ratios" | median)
	lo=$(awk -v b="$name" '$2 == b { print $3 }' "$ratios" | sort -g | head -1)
	hi=$(awk -v b="$name" '$2 == b { print $3 }' "$ratios" | sort -g | tail -1)
	nat=$(awk -v b="$name" '$2 == b { print $4 }' "$ratios" | median)
	native_medians="$native_medians $nat"
	line="$name: gpuext JIT / uBPF JIT ${m}x (runs: ${lo}x-${hi}x), / native ${nat}x"
	if awk -v m="$m" 'BEGIN { exit !(m <= 1.0) }'; then
		echo "PASS $line"
		pass=$((pass + 1))
	else
		echo "FAIL $line"
		fail=$((fail + 1))
	fi
done <<< "$(awk '!seen[$2]++ { print $2 }' "$ratios")"
med=$(echo "$native_medians" | tr ' ' '\n' | grep . | median)
if awk -v m="$med" 'BEGIN { exit !(m <= 2.0) }'; then
	echo "PASS gpuext JIT / native, median over benchmarks: ${med}x (target <= 2x)"
	pass=$((pass + 1))
else
	echo "FAIL gpuext JIT / native, median over benchmarks: ${med}x (target <= 2x)"
	fail=$((fail + 1))
fi
echo "jit_vs_ubpf: $pass passed, $fail failed (reports in $OUT)"
[ "$fail" -eq 0 ]
