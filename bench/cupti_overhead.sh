#!/usr/bin/env bash
# cupti_overhead.sh - what CUPTI collection costs a PyTorch training step,
# on a GPU machine with the build folder carried (build/gpuext, the agent,
# build/bpf/tools/kernelsnoop.bpf.o).
#
#   OUT=DIR STEPS=200 ROUNDS=3 bench/cupti_overhead.sh
#
# bench/python/train_step.py (a 4-layer transformer encoder, AdamW) runs
# STEPS measured steps after 20 warm-up steps, plainly and under
# `gpuext run --tool kernelsnoop -o FILE` (every kernel's CUPTI record
# through the JIT-compiled program and the ring buffer to the CLI) with
# CUPTI recording the driver and runtime calls for the join (the default),
# the driver calls only, and none (GPUEXT_CUPTI_API=driver, 0); the modes
# alternate, ROUNDS times each.  Reported: median and p90 step time of all
# measured steps per mode and their ratio to plain (target <= 1.03 for the
# default), all in one run on one GPU.  Writes $OUT/cupti_overhead.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/cupti-overhead}
STEPS=${STEPS:-200}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"
GPUEXT=build/gpuext
PY=bench/python/train_step.py
# mode name = GPUEXT_CUPTI_API value ("plain": no gpuext at all)
modes=(plain all driver none)

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
p90() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else print a[int((NR * 9 + 9) / 10)]}'; }
steps_of() { cat "$OUT/$1".*.log 2>/dev/null | grep '^step_ms:' | awk '{print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "nan" }'; }

status=0
for r in $(seq 1 "$ROUNDS"); do
	for m in "${modes[@]}"; do
		case $m in
		plain) timeout 300 python3 "$PY" "$STEPS" > "$OUT/$m.$r.log" 2>&1 || status=1 ;;
		*)
			api=$m
			[ "$m" = all ] && api=
			[ "$m" = none ] && api=0
			GPUEXT_CUPTI_API=$api timeout 300 "$GPUEXT" run --tool kernelsnoop \
				-o "$OUT/kernelsnoop-$m.$r.txt" -- python3 "$PY" "$STEPS" \
				> "$OUT/$m.$r.log" 2>&1 || status=1
			;;
		esac
	done
done
base=$(steps_of plain | median)
base90=$(steps_of plain | p90)
md="$OUT/cupti_overhead.md"
{
	echo "# CUPTI collection overhead on a PyTorch training step"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- torch: $(python3 -c 'import torch; print(torch.__version__)' 2>&1)"
	echo "- commit: $(git log -1 --oneline 2>/dev/null)"
	echo "- command: OUT=$OUT STEPS=$STEPS ROUNDS=$ROUNDS bench/cupti_overhead.sh"
	echo "- workload: bench/python/train_step.py (4-layer transformer encoder, d_model 512, batch 32x128, AdamW), $STEPS measured steps after 20 warm-up steps, $ROUNDS rounds per mode, modes alternating"
	echo "- instrumented: \`GPUEXT_CUPTI_API=... gpuext run --tool kernelsnoop -o FILE -- python3 bench/python/train_step.py\`"
	echo
	echo "| mode | steps | kernels printed | median step ms | p90 step ms | median ratio | p90 ratio |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for m in "${modes[@]}"; do
		n=$(steps_of "$m" | wc -l)
		med=$(steps_of "$m" | median)
		hi=$(steps_of "$m" | p90)
		k=$(cat "$OUT/kernelsnoop-$m".*.txt 2>/dev/null | grep ' kernels, ' | awk '{s += $1} END {print s + 0}')
		case $m in
		plain) label="plain" ;;
		all) label="kernelsnoop, driver+runtime calls joined (default)" ;;
		driver) label="kernelsnoop, driver calls joined" ;;
		none) label="kernelsnoop, no API records" ;;
		esac
		echo "| $label | $n | $k | $med | $hi | $(ratio "$med" "$base") | $(ratio "$hi" "$base90") |"
		[ "$n" -gt 0 ] || status=1
	done
	echo
	echo "Target (issue 7): median ratio <= 1.03 for the default mode."
} > "$md"
cat "$md"
exit $status
