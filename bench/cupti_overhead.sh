#!/usr/bin/env bash
# cupti_overhead.sh - what CUPTI collection costs a PyTorch training step,
# on a GPU machine with the build folder carried (build/gpuext, the agent,
# build/bpf/tools/kernelsnoop.bpf.o).
#
#   OUT=DIR STEPS=200 ROUNDS=3 bench/cupti_overhead.sh
#
# bench/python/train_step.py (a 4-layer transformer encoder, AdamW) runs
# STEPS measured steps after 20 warm-up steps, plainly and under
# `gpuext run --tool kernelsnoop` (every kernel's CUPTI record through the
# JIT-compiled program and the ring buffer to the CLI, written to a file),
# alternating, ROUNDS times each.  Reported: median step time of all
# measured steps per mode and the ratio instrumented / plain (target
# <= 1.03), all in one run on one GPU.  Writes $OUT/cupti_overhead.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/cupti-overhead}
STEPS=${STEPS:-200}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
GPUEXT=build/gpuext
PY=bench/python/train_step.py

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
p90() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else print a[int((NR * 9 + 9) / 10)]}'; }
steps_of() { grep -h '^step_ms:' "$@" | awk '{print $2}'; }

status=0
for r in $(seq 1 "$ROUNDS"); do
	timeout 300 python3 "$PY" "$STEPS" > "$OUT/plain.$r.log" 2>&1 || status=1
	timeout 300 "$GPUEXT" run --tool kernelsnoop -o "$OUT/kernelsnoop.$r.txt" -- \
		python3 "$PY" "$STEPS" > "$OUT/cupti.$r.log" 2>&1 || status=1
done
plain=$(steps_of "$OUT"/plain.*.log | median)
cupti=$(steps_of "$OUT"/cupti.*.log | median)
plain90=$(steps_of "$OUT"/plain.*.log | p90)
cupti90=$(steps_of "$OUT"/cupti.*.log | p90)
nplain=$(steps_of "$OUT"/plain.*.log | wc -l)
ncupti=$(steps_of "$OUT"/cupti.*.log | wc -l)
kernels=$(grep -h ' kernels, ' "$OUT"/kernelsnoop.*.txt | awk '{s += $1} END {print s + 0}')
ratio=$(awk -v a="$cupti" -v b="$plain" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "nan" }')
ratio90=$(awk -v a="$cupti90" -v b="$plain90" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "nan" }')
md="$OUT/cupti_overhead.md"
{
	echo "# CUPTI collection overhead on a PyTorch training step"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- torch: $(python3 -c 'import torch; print(torch.__version__)' 2>&1)"
	echo "- commit: $(git log -1 --oneline 2>/dev/null)"
	echo "- command: OUT=$OUT STEPS=$STEPS ROUNDS=$ROUNDS bench/cupti_overhead.sh"
	echo "- workload: bench/python/train_step.py (4-layer transformer encoder, d_model 512, batch 32x128, AdamW), $STEPS measured steps after 20 warm-up steps, $ROUNDS rounds per mode, alternating"
	echo "- instrumented: \`gpuext run --tool kernelsnoop -o FILE -- python3 bench/python/train_step.py\` ($kernels kernel records printed in all)"
	echo
	echo "| mode | steps | median step ms | p90 step ms |"
	echo "|---|---:|---:|---:|"
	echo "| plain | $nplain | $plain | $plain90 |"
	echo "| kernelsnoop (CUPTI) | $ncupti | $cupti | $cupti90 |"
	echo "| ratio | | **$ratio** | $ratio90 |"
	echo
	echo "Target: median ratio <= 1.03 (issue 7)."
} > "$md"
cat "$md"
[ "$nplain" -gt 0 ] && [ "$ncupti" -gt 0 ] || status=1
exit $status
