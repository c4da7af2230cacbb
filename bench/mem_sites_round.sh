#!/usr/bin/env bash
# mem_sites_round.sh - one GPU round of where and how mem probes are pasted
# (docs/ptx-inject.md, "Mem probes inline"), run from a stage folder laid
# out as the repository, on the GPU machine, with main's build/examples one
# level up (the lead's layout: ../build/examples):
#
#   OUT=DIR [ITERS=31] [ROWS="NAME|ENV[|none memtrace];..."] bash bench/mem_sites_round.sh
#
# build/ holds this branch's gpuext, agent and bpf objects (tools/memtrace,
# bench/progs/memcost_none), base/build/ main's; build/examples-sm90 the
# sm_90-native examples; sass/*.cubin (ptxas on the build machine) are
# disassembled here (the triton wheel's cuobjdump).  Steps, each logged
# and not fatal:
#   0. build/gpu/inject_check under each ROWS setting (CHECK_ROWS: which)
#   0b. tests/gpu/tools.sh for the tools with mem probes (CHECK_TOOLS)
#   1. SASS of the staged cubins -> $OUT/sass.tgz
#   2. bench/memtrace_cost.sh (tiers off): main vs branch, memtrace and
#      memcost_none (the probe with no map update) on vecadd/gemm/reduce, and the ROWS
#      (the branch's build under other settings, its module cache off)
#   3. bench/first_launch.sh for memtrace on reduce (nvcc's sm_75+PTX build)
#      and reduce/gemm sm_90, main and branch: the time added to the first
#      launch, cold (first run ever) with and without the compile ahead;
#      (FIRST_ROWS="NAME|ENV;...", default "branch|;main|": NAME main is main's
#      build, any other the branch's under ENV)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
ITERS=${ITERS:-31}
ROOT=$PWD
[ -d ../gpu-libs ] && export LD_LIBRARY_PATH=$ROOT/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GPUEXT_CACHE_PATH=/tmp/memsites-cache.$$
step() { echo "== $1 ($(date -u +%T))"; }

# main's examples, where the scripts look for them
[ -e build/examples ] || ln -sfn "$ROOT/../build/examples" build/examples
[ -e base/build/examples ] || ln -sfn "$ROOT/../build/examples" base/build/examples
[ -e base/build/examples-sm90 ] || ln -sfn "$ROOT/build/examples-sm90" base/build/examples-sm90
git log -1 --oneline 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1

step "0. inject_check (outputs bit-identical, exact counts, one run per warp and access)"
if [ -x build/gpu/inject_check ]; then
	IFS=';' read -r -a rows <<< "${ROWS:-}"
	for r in "default|" "${rows[@]}"; do
		IFS='|' read -r name envv _ <<< "$r"
		case " ${CHECK_ROWS:-default $name} " in *" $name "*) ;; *) continue ;; esac
		# shellcheck disable=SC2086
		env $envv timeout 30 build/gpu/inject_check > "$OUT/inject_check.$name.log" 2>&1
		echo "inject_check $name: rc $? $(grep -c -i 'fail' "$OUT/inject_check.$name.log") lines with 'fail'; $(tail -1 "$OUT/inject_check.$name.log")"
	done
fi

step "0b. tests/gpu/tools.sh (TOOLS=${CHECK_TOOLS-memtrace memtrace_block})"
if [ -n "${CHECK_TOOLS-memtrace memtrace_block}" ] && [ -f tests/gpu/tools.sh ]; then
	OUT=$OUT/tools TOOLS="${CHECK_TOOLS-memtrace memtrace_block}" timeout 60 bash tests/gpu/tools.sh \
		> "$OUT/tools.log" 2>&1
	echo "tools.sh rc $?: $(tail -1 "$OUT/tools.log")"
	grep -E '^(PASS|FAIL)' "$OUT/tools.log" | head -20
	rm -rf "$OUT/tools/logs"
fi

step "1. SASS"
bin=$(python3 -c 'import triton,os;print(os.path.dirname(triton.__file__))' 2>/dev/null)/backends/nvidia/bin
if [ -x "$bin/cuobjdump" ] && ls sass/*.cubin > /dev/null 2>&1; then
	mkdir -p "$OUT/sass"
	for c in sass/*.cubin; do
		"$bin/cuobjdump" -sass "$c" > "$OUT/sass/$(basename "$c" .cubin).sass" 2>&1 ||
			echo "cuobjdump $c failed"
	done
	(cd "$OUT" && tar czf sass.tgz sass && rm -rf sass)
else
	echo "no cuobjdump ($bin) or no cubins"
fi

step "2. memtrace_cost"
extra=""
IFS=';' read -r -a rows <<< "${ROWS:-}"
for r in "${rows[@]}"; do
	[ -n "$r" ] || continue
	IFS='|' read -r name envv objs <<< "$r"
	for o in ${objs:-none memtrace}; do
		f=build/bpf/tools/$o.bpf.o
		[ "$o" = none ] && f=build/bpf/bench/progs/memcost_none.bpf.o
		extra+="br $name $o|build|$f|GPUEXT_CACHE_DISABLE=1 $envv;"
	done
done
# the kernel as pasted from its first launch on (no tiers: docs/agent.md)
GPUEXT_AGENT_TIER=0 OUT=$OUT/cost ITERS=$ITERS BUILDS="main=base/build branch=build" TOOLS=memtrace \
	VARIANTS=build/bpf/bench/progs/memcost_none.bpf.o EXTRA="$extra" TIMEOUT=25 \
	timeout 75 bash bench/memtrace_cost.sh > "$OUT/cost.log" 2>&1 || echo "memtrace_cost rc $?"
cp "$OUT/cost/memtrace_cost.md" "$OUT/" 2>/dev/null
cat "$OUT/memtrace_cost.md" 2>/dev/null
# the tools' outputs of the default rows (memtrace's bytes), then the rest away
(cd "$OUT/cost" && tar czf ../cost-logs.tgz ./*.log ./*.out 2>/dev/null)
rm -rf "$OUT/cost"

step "3. first launch"
cases="reduce -n 1048576;reduce@sm90 -n 1048576;gemm@sm90 -n 512"
# FIRST_ROWS: more runs of the branch, "NAME|ENV;..."
IFS=';' read -r -a frows <<< "${FIRST_ROWS-branch|;main|}"
for r in "${frows[@]}"; do
	IFS='|' read -r b envv <<< "$r"
	[ -n "$b" ] || continue
	tree=$ROOT
	[ "$b" = main ] && tree=$ROOT/base
	# shellcheck disable=SC2086
	env $envv OUT=$OUT/first-$b EX=$ROOT/build/examples EX_SM90=$ROOT/build/examples-sm90 ITERS=3 \
		VARIANTS="cold0 cold" OPT_LEVELS= PROGS=memtrace CASES="$cases" BUDGET_S=12 \
		timeout 22 bash "$tree/bench/first_launch.sh" > "$OUT/first-$b.log" 2>&1 ||
		echo "first_launch $b rc $?"
	grep -E '^\| .*(plain|memtrace)' "$OUT/first-$b/first_launch.md" 2>/dev/null |
		sed "s/^/$b /"
	cp "$OUT/first-$b/first_launch.md" "$OUT/first-$b.md" 2>/dev/null
	(cd "$OUT" && tar czf "first-$b-logs.tgz" "first-$b" 2>/dev/null && rm -rf "first-$b")
done
rm -rf "$GPUEXT_CACHE_PATH"
step done
