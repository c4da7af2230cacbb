#!/usr/bin/env bash
# devinline_round.sh - one GPU round of the inline mem probes (issue 6, Must
# show 3), from a stage folder beside the carried main build (the examples in
# ../build/examples, ../gpu-libs), with this branch's build in build/ and
# main's in base/ (gpuext, agent, bpf/):
#
#   OUT=DIR bash bench/devinline_round.sh [PART...]
#
# PARTS (default all, in this order, each with its own time limit, a failure
# logged and the next one run):
#   check     build/gpu/inject_check: instrumented kernels bit-identical and
#             exact probe counts, the mem probe called and inline (CHECKS:
#             more builds or settings)
#   cost      bench/memtrace_cost.sh: main vs branch (inline) vs branch with
#             GPUEXT_PTX_MEM_INLINE=0 (called), memtrace, memcost_none,
#             memcost_traffic on vecadd/gemm/reduce, ITERS=31 (COST_EXTRA:
#             other rows)
#   jit       the first launch of memtrace / mem-signal per example, each
#             build and form, no cache: the agent's verbose line (JIT ms)
#   signal    the mem-signal probe's cost with nothing evicted (uvm_workload
#             seq and random, --mem-budget 8G), main vs branch, REPS runs
#             each (SIGNAL_RUNS: other builds or settings)
#   tools     tests/gpu/tools.sh with the branch (memtrace bytes exact)
#   translator  tests/gpu/translator.sh with the branch
#   sass      cuobjdump -sass of the cubins staged in sass/ (instrumented
#             modules compiled by ptxas on the build machine), where the
#             machine has cuobjdump
# Prints a short summary at the end.
set -u
OUT=${OUT:-build/devinline-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 1
[ -d ../gpu-libs ] && export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_CACHE_DISABLE=1
[ -e build/examples ] || ln -s ../../build/examples build/examples
{
	date -u
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
	cat COMMIT 2>/dev/null
} > "$OUT/machine.txt"
summary="$OUT/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
declare -A args=([vecadd]="-n 16777216" [gemm]="-n 2048" [reduce]="-n 16777216")

# CHECKS: more inject_check runs, "NAME|FOLDER|ENV" separated by ';'
part_check() {
	local x name dir envv
	timeout 30 build/gpu/inject_check > "$OUT/inject_check.log" 2>&1
	note "check: rc=$? $(tail -1 "$OUT/inject_check.log")"
	grep FAIL "$OUT/inject_check.log" | head -5 | tee -a "$summary"
	IFS=';' read -r -a extra <<< "${CHECKS:-}"
	for x in "${extra[@]}"; do
		IFS='|' read -r name dir envv <<< "$x"
		[ -x "$dir/inject_check" ] || continue
		env $envv timeout 30 "$dir/inject_check" > "$OUT/inject_check.$name.log" 2>&1
		note "check $name: rc=$? $(tail -1 "$OUT/inject_check.$name.log")"
		grep FAIL "$OUT/inject_check.$name.log" | head -3 | tee -a "$summary"
	done
}

part_cost() {
	local b=build/bpf/tools/memtrace.bpf.o p=build/bpf/bench/progs
	# COST_EXTRA: the rows after main's and the branch's memtrace
	# (memtrace_cost.sh's EXTRA)
	mkdir -p "$OUT/cost"
	OUT="$OUT/cost" ITERS=31 TIMEOUT=25 TOOLS=memtrace \
		BUILDS="main=base branch=build" \
		VARIANTS="" \
		EXTRA="${COST_EXTRA:-main none|base|base/bpf/bench/progs/memcost_none.bpf.o|;main traffic|base|base/bpf/bench/progs/memcost_traffic.bpf.o|;branch none|build|$p/memcost_none.bpf.o|;branch traffic|build|$p/memcost_traffic.bpf.o|;branch memtrace called|build|$b|GPUEXT_PTX_MEM_INLINE=0;branch none called|build|$p/memcost_none.bpf.o|GPUEXT_PTX_MEM_INLINE=0}" \
		timeout 100 bash bench/memtrace_cost.sh > "$OUT/cost.log" 2>&1
	note "cost: rc=$?"
	grep '^| [a-z]' "$OUT/cost/memtrace_cost.md" 2>/dev/null | tee -a "$summary"
	cp "$OUT/cost/memtrace_cost.md" "$OUT/memtrace_cost.md" 2>/dev/null
	tar czf "$OUT/cost-logs.tgz" -C "$OUT" cost 2>/dev/null && rm -rf "$OUT/cost"
}

# first launches: the agent's line for each build/program/example
part_jit() {
	local f="$OUT/jit.txt" d c prog dir name
	: > "$f"
	for prog in tools/memtrace policies/mem-signal; do
		for d in "base|main" "build|branch"; do
			IFS='|' read -r dir name <<< "$d"
			for c in vecadd reduce; do
				env GPUEXT_AGENT_VERBOSE=1 GPUEXT_CACHE_DISABLE=1 \
					timeout 20 "$dir/gpuext" run -o /dev/null "$dir/bpf/$prog.bpf.o" -- \
					build/examples/$c ${args[$c]} -iters 2 > "$OUT/jit.tmp" 2>&1
				echo "$prog | $name | $c | rc=$? | $(grep -m1 'instrumented (' "$OUT/jit.tmp" | sed 's/^gpuext: kernel [^ ]* //')" >> "$f"
			done
		done
	done
	rm -f "$OUT/jit.tmp"
	note "jit:"
	sed 's/(device side.*JIT \([0-9.]*\),.*; \([0-9.]*\) ms)/JIT \1 ms, total \2 ms/' "$f" | tee -a "$summary"
}

# the device access signal where nothing is evicted (bench/mem_round.sh's overhead)
part_signal() {
	local f="$OUT/signal.txt" pat d dir envv name r
	: > "$f"
	for pat in seq random; do
		timeout 10 build/examples/uvm_workload -pattern "$pat" -n 384 -iters 2 2>&1 |
			grep time_ms | sed "s/^/$pat plain: /" >> "$f"
		# SIGNAL_RUNS: "FOLDER|ENV|NAME" separated by ';'; REPS runs each
		IFS=';' read -r -a runs <<< "${SIGNAL_RUNS:-base|X=0|main;build|X=0|branch inline;build|GPUEXT_PTX_MEM_INLINE=0|branch called}"
		for d in "${runs[@]}"; do
			IFS='|' read -r dir envv name <<< "$d"
			for ((r = 0; r < ${REPS:-1}; r++)); do
				env $envv timeout 15 "$dir/gpuext" run --mem-budget 8G -- \
					build/examples/uvm_workload -pattern "$pat" -n 384 -iters 2 2>&1 |
					grep -E "time_ms|checksum" | sed "s/^/$pat $name: /" >> "$f"
			done
		done
	done
	note "signal:"
	tee -a "$summary" < "$f"
}

part_tools() {
	OUT="$OUT/tools" timeout 60 bash tests/gpu/tools.sh > "$OUT/tools.log" 2>&1
	note "tools: rc=$? $(tail -1 "$OUT/tools.log")"
	grep '^FAIL' "$OUT/tools.log" | head -5 | tee -a "$summary"
	rm -f "$OUT/tools/tools.tgz"
	tar czf "$OUT/tools-logs.tgz" -C "$OUT" tools 2>/dev/null && rm -rf "$OUT/tools"
}

part_translator() {
	timeout 30 bash tests/gpu/translator.sh > "$OUT/translator.log" 2>&1
	note "translator: rc=$? $(tail -1 "$OUT/translator.log")"
	grep '^FAIL' "$OUT/translator.log" | head -5 | tee -a "$summary"
}

part_sass() {
	local cu f
	cu=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
	[ -n "$cu" ] || { note "sass: no cuobjdump"; return; }
	for f in sass/*.cubin; do
		[ -f "$f" ] || continue
		echo "=== $f"
		"$cu" -sass "$f" | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's/ *\/\* 0x[0-9a-f]* \*\/ *$//'
	done > "$OUT/sass.txt" 2>&1
	note "sass: $(grep -c '^===' "$OUT/sass.txt") cubins, $(wc -l < "$OUT/sass.txt") lines"
}

for p in ${*:-check cost jit signal tools sass}; do
	t0=$(date +%s)
	"part_$p"
	echo "($p: $(($(date +%s) - t0)) s)" | tee -a "$summary"
done
echo "---- summary"
cat "$summary"
