#!/usr/bin/env bash
# memtrace_cost.sh - what the device tools cost, two builds side by side in
# one run, and where memtrace's time goes, on a GPU machine with the build
# folder(s) carried:
#
#   OUT=DIR ITERS=31 BUILDS="main=base build" [CASES="vecadd gemm reduce"] \
#       [TOOLS="threadhist smload memtrace"] bench/memtrace_cost.sh
#
# BUILDS: NAME=FOLDER (or FOLDER, named after itself): each folder holds a
# gpuext, its agent and bpf/ (tools; bench/progs/memcost_* where built);
# the examples come from build/examples.  For each example: the plain run,
# then under each build threadhist, smload and memtrace, and (where the
# build has them) bench/progs/memcost_*: memtrace's halves alone
# (memcost_none: the probe, no map update; memcost_traffic: the per-kind
# counters; memcost_heat: the region heat map) and variants of them.  Median kernel ms of ITERS launches (the first left
# out, where the agent instruments), and the ratio to the plain run; the
# first row is the agent's recompile of the kernel with no probes.
# GPUEXT_PTX_STACK_FRAME=1 runs are added for a build named in FRAME_TOO
# (the eBPF frame in local memory, as before slots became registers).
# EXTRA: more rows, "NAME|FOLDER|OBJECT|ENV" separated by ';' (another
# build's object run by this build's gpuext, say).
# Writes $OUT/memtrace_cost.md and each tool's output ($OUT/*.out).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/memtrace-cost}
ITERS=${ITERS:-31}
BUILDS=${BUILDS:-build}
FRAME_TOO=${FRAME_TOO:-}
TIMEOUT=${TIMEOUT:-40}
mkdir -p "$OUT"
EX=build/examples
declare -A args=([vecadd]="-n 16777216" [gemm]="-n 2048" [reduce]="-n 16777216" [imbalance]="")
CASES=${CASES:-vecadd gemm reduce}

median() { sort -g | awk '{a[NR] = $1} END {if (!NR) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
times() { grep '^kernel_ms:' "$1" | awk 'NR > 1 {print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "-"}'; }

# The rows: NAME|FOLDER|OBJECT|ENV; first the kernel recompiled by the
# agent with no probe in it (GPUEXT_AGENT_NO_PROBES), the other baseline
cols=()
for b in $BUILDS; do
	name=${b%%=*} dir=${b#*=}
	[ ${#cols[@]} -eq 0 ] &&
		cols+=("recompile (no probes)|$dir|$dir/bpf/tools/memtrace.bpf.o|GPUEXT_AGENT_NO_PROBES=1")
	for t in ${TOOLS:-threadhist smload memtrace}; do
		cols+=("$name $t|$dir|$dir/bpf/tools/$t.bpf.o|")
	done
	for o in "$dir"/bpf/bench/progs/memcost_*.bpf.o; do
		[ -f "$o" ] || continue
		p=$(basename "$o" .bpf.o)
		cols+=("$name ${p#memcost_}|$dir|$o|")
	done
	case " $FRAME_TOO " in *" $name "*)
		for t in smload memtrace; do
			cols+=("$name $t, frame|$dir|$dir/bpf/tools/$t.bpf.o|GPUEXT_PTX_STACK_FRAME=1")
		done ;;
	esac
done

IFS=';' read -r -a extra <<< "${EXTRA:-}"
for x in "${extra[@]}"; do
	[ -n "$x" ] && cols+=("$x")
done

md="$OUT/memtrace_cost.md"
{
	echo "# Device tools: cost side by side"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
	echo "- command: \`OUT=$OUT ITERS=$ITERS BUILDS=\"$BUILDS\" FRAME_TOO=\"$FRAME_TOO\" bench/memtrace_cost.sh\`; median kernel ms of $ITERS launches, the first left out; ratio to the plain run"
	echo
	echo "| run | $(for c in $CASES; do printf '%s ms | ratio | ' "$c"; done)"
	echo "| --- |$(for c in $CASES; do printf ' ---: | ---: |'; done)"
} > "$md"

fail=0
declare -A plain
row="| plain |"
for c in $CASES; do
	log="$OUT/$c.plain.log"
	timeout "$TIMEOUT" "$EX/$c" ${args[$c]} -iters "$ITERS" -time > "$log" 2>&1 || fail=1
	plain[$c]=$(times "$log" | median)
	row+=" ${plain[$c]} | 1 |"
done
echo "$row" >> "$md"
for col in "${cols[@]}"; do
	IFS='|' read -r name dir obj envv <<< "$col"
	row="| $name |"
	for c in $CASES; do
		tag="$c.${name// /_}"
		tag=${tag//,/}
		env $envv timeout "$TIMEOUT" "$dir/gpuext" run -o "$OUT/$tag.out" "$obj" -- \
			"$EX/$c" ${args[$c]} -iters "$ITERS" -time > "$OUT/$tag.log" 2>&1
		rc=$?
		m=$(times "$OUT/$tag.log" | median)
		[ $rc -eq 124 ] && m=timeout
		[ $rc -ne 0 ] && fail=1
		row+=" $m | $(ratio "$m" "${plain[$c]}") |"
	done
	echo "$row" >> "$md"
done
cat "$md"
exit $fail
