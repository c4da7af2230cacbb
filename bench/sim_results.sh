#!/usr/bin/env bash
# sim_results.sh - the UVM simulator on the synthetic workloads at 1.5x and
# 2x oversubscription, every shipped policy plus eviction+prefetch pairs; prints
# a markdown report (bench/results/DATE-sim.md) with the best policy per case.
#     make && bench/sim_results.sh > bench/results/$(date -u +%F)-sim.md
# SIZE (footprint, default 1G), PASSES (4), SEED (1) change the workloads.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${GPUEXT:-build/gpuext}
dir=build/bpf/policies
size=${SIZE:-1G} passes=${PASSES:-4} seed=${SEED:-1}
[ -x "$cli" ] || { echo "$0: $cli not built (run make)" >&2; exit 1; }

policies=(none lru fifo lfu mru freq-decay fifo-chance pid-quota
	prefetch-none prefetch-always-max prefetch-adaptive-seq prefetch-stride prefetch-tree
	prefetch-pid-tree
	mru+prefetch-always-max lfu+prefetch-always-max mru+prefetch-adaptive-seq
	freq-decay+prefetch-adaptive-seq lfu+prefetch-none)
args=()
for p in "${policies[@]}"; do
	if [ "$p" = none ]; then
		args+=(--policy none)
		continue
	fi
	spec=
	IFS=+ read -ra parts <<<"$p"
	for x in "${parts[@]}"; do
		[ -f "$dir/$x.bpf.o" ] || { echo "$0: $dir/$x.bpf.o missing (run make)" >&2; exit 1; }
		spec+=${spec:+,}$dir/$x.bpf.o
	done
	args+=(--policy "$spec")
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "# UVM simulator: synthetic workloads under oversubscription"
echo
echo "- date: $(date -u +%FT%TZ); machine: $cpu ($(nproc) cores), $(uname -sr)"
echo "- gpuext: $(git describe --always --dirty 2>/dev/null || echo unknown)"
echo "- command: \`SIZE=$size PASSES=$passes SEED=$seed bench/sim_results.sh\`"
echo "  (each case: \`gpuext sim --gen W --size $size --passes $passes --seed $seed --oversub X --policy ...\`)"
echo "- model: $("$cli" sim --gen seq --size 4M --oversub 1 | sed -n 's/^model: //p')"
echo "- a name with '+' is an eviction policy and a prefetch policy run together;"
echo "  'speedup' is estimated time with no policy / with the policy (higher is better)"
echo
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
for w in seq random moe decode dnn mix; do
	for o in 1.5 2; do
		out=$("$cli" sim --gen "$w" --size "$size" --passes "$passes" --seed "$seed" \
			--oversub "$o" "${args[@]}")
		echo "## $w at ${o}x"
		echo
		echo "$out" | sed -n 's/^trace gen:[^:]*: /`/p' | sed 's/$/`/'
		echo
		echo "| policy | faults | HtoD MiB | DtoH MiB | evictions | prefetched pages | est. time ms | speedup |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|"
		echo "$out" | awk 'f && NF == 10 {printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $4, $5, $6, $7, $8, $9} /^policy /{f=1}'
		best=$(echo "$out" | awk 'f && NF == 10 {s=$9; sub("x","",s); if (s+0 > b) {b=s+0; n=$1; t=$8}} /^policy /{f=1} END {printf "%s %s %.2f", n, t, b}')
		none=$(echo "$out" | awk 'f && $1 == "none" {print $8} /^policy /{f=1}')
		read -r bn bt bs <<<"$best"
		echo
		echo "Best: **$bn**, ${bs}x faster than no policy."
		echo
		echo "| $w | ${o}x | $none | $bn | $bt | ${bs}x |" >>"$summary"
	done
done
echo "## Summary: the best policy per case"
echo
echo "| workload | oversubscription | no policy, ms | best policy | its time, ms | speedup |"
echo "|---|---:|---:|---|---:|---:|"
cat "$summary"
