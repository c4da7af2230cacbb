#!/usr/bin/env bash
# tier_swap.sh - what a tiered kernel costs before and after its swap, in
# one run (agent_tier.c: the called form of mem probes first, the pasted
# form compiled in the background and launched from the first launch
# after that compile on), on a GPU machine from the repository root with
# the build folder carried:
#
#   OUT=DIR [ITERS=300] [PROG=build/bpf/tools/memtrace.bpf.o] [GX=build] \
#       [CASES="reduce -n 16777216;gemm -n 2048;vecadd -n 16777216"] bench/tier_swap.sh
#
# For each case (NAME@sm90: from $EX_SM90) the plain run, then the program
# under `gpuext run` with GPUEXT_AGENT_VERBOSE=1 and empty caches (the
# background compile is a cold one): the launch the pasted form came in at
# (the agent's "mem probes pasted from launch N on" line), the median kernel
# ms of the launches before it (the called form; the first launch left
# out) and from it on (the pasted form), each / the plain run's median;
# then GPUEXT_AGENT_TIER=0 (pasted from the first launch on, as before
# tiers) for the same ratio.  Writes $OUT/tier_swap.md and the logs.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/tier-swap}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
EX=${EX:-build/examples}
EX_SM90=${EX_SM90:-build/examples-sm90}
ITERS=${ITERS:-300}
GX=${GX:-build}
PROG=${PROG:-build/bpf/tools/memtrace.bpf.o}
IFS=';' read -r -a cases <<< "${CASES:-reduce -n 16777216;gemm -n 2048;vecadd -n 16777216}"

bin() { case $1 in *@sm90) echo "$EX_SM90/${1%@sm90}" ;; *) echo "$EX/$1" ;; esac; }
kms() { grep -o 'kernel_ms: [0-9.]*' "$1" | awk '{print $2}'; }
median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}'; }

md=$OUT/tier_swap.md
{
	echo "# Tiers: kernel ms before and after the swap, one run each"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`OUT=$OUT ITERS=$ITERS PROG=$PROG GX=$GX bench/tier_swap.sh\`; median kernel ms, / plain"
	echo
	echo "| example | plain ms | swap at launch | called ms | / plain | pasted ms | / plain | TIER=0 ms | / plain | rc |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} > "$md"
for c in "${cases[@]}"; do
	name=${c%% *}
	tag=${name//@/-}
	b=$(bin "$name")
	[ -x "$b" ] || { echo "| $c | no binary $b |" >> "$md"; continue; }
	# shellcheck disable=SC2086
	timeout 60 "$b" ${c#"$name"} -iters "$ITERS" -time > "$OUT/$tag.plain.log" 2>&1
	plain=$(kms "$OUT/$tag.plain.log" | awk 'NR > 1' | median)
	rm -rf "$OUT/cache"
	# shellcheck disable=SC2086
	env CUDA_CACHE_PATH="$OUT/cache/nv" GPUEXT_CACHE_PATH="$OUT/cache/gx" GPUEXT_AGENT_VERBOSE=1 \
		timeout 60 "$GX/gpuext" run "$PROG" -- "$b" ${c#"$name"} -iters "$ITERS" -time \
		> "$OUT/$tag.tier.log" 2>&1
	rc=$?
	# the agent's line (stderr) may land inside one of the example's
	# (stdout): looked for anywhere
	at=$(grep -o 'mem probes pasted from launch [0-9]*' "$OUT/$tag.tier.log" | head -1 |
		awk '{print $NF}')
	called=- pasted=-
	if [ -n "$at" ]; then
		called=$(kms "$OUT/$tag.tier.log" | awk -v n="$at" 'NR > 1 && NR < n' | median)
		pasted=$(kms "$OUT/$tag.tier.log" | awk -v n="$at" 'NR >= n' | median)
	fi
	rm -rf "$OUT/cache"
	# shellcheck disable=SC2086
	env CUDA_CACHE_PATH="$OUT/cache/nv" GPUEXT_CACHE_PATH="$OUT/cache/gx" GPUEXT_AGENT_TIER=0 \
		timeout 60 "$GX/gpuext" run "$PROG" -- "$b" ${c#"$name"} -iters "$ITERS" -time \
		> "$OUT/$tag.notier.log" 2>&1
	rc=$((rc | $?))
	notier=$(kms "$OUT/$tag.notier.log" | awk 'NR > 1' | median)
	echo "| $c | $plain | ${at:-none} | $called | $(ratio "$called" "$plain") | $pasted | $(ratio "$pasted" "$plain") | $notier | $(ratio "$notier" "$plain") | $rc |" >> "$md"
done
rm -rf "$OUT/cache"
cat "$md"
