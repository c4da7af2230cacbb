#!/usr/bin/env bash
# codegen_round.sh - one GPU round of the emitter's code for device programs
# (issue 6, Must show 3: memtrace <= 1.5x), from a stage folder beside the
# carried main build (the examples in ../build/examples, ../gpu-libs), with
# this branch's build in build/ and main's in base/ (gpuext, agent, bpf/):
#
#   OUT=DIR bash bench/codegen_round.sh [PART...]
#
# PARTS (default all, in this order, each with its own time limit, a failure
# logged and the next one run):
#   sass        the SASS of the cubins staged in sass/ (instrumented kernels
#               compiled by ptxas on the build machine: bench/sass_size.sh),
#               disassembled with the cuobjdump that triton's wheel ships
#   cost        bench/memtrace_cost.sh: main vs branch memtrace and the
#               branch's halves (memcost_*) on vecadd/gemm/reduce, ITERS=31
#               (COST_EXTRA: other rows, memtrace_cost.sh's EXTRA; COST_MORE:
#               rows before the default ones, ';'-terminated)
#   heat        the heat maps of main's and the branch's memtrace on vecadd
#               (from the cost part's outputs): the same regions and counts
#   tools       tests/gpu/tools.sh, memtrace only, with the branch (bytes =
#               the analytic counts, checksums bit-identical)
#   translator  tests/gpu/translator.sh with the branch
#   conformance the ISA conformance cases on the GPU (gpu-cases/, a copy of
#               shared/conformance/tests) and build/gpu/inject_check
#               (instrumented kernels bit-identical, exact probe counts)
#   ncu         instructions executed (ncu's smsp__inst_executed.sum) by
#               vecadd plain, under main's and the branch's memtrace (ncu
#               run by `gpuext run`, as the lead found works; NCU_RUNS: more,
#               "NAME|FOLDER|OBJECT|ENV" separated by ';'); not in the
#               default list
# Prints a short summary at the end.
set -u
OUT=${OUT:-build/codegen-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 1
[ -d ../gpu-libs ] && export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -e build/examples ] || ln -s ../../build/examples build/examples
{
	date -u
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
	cat COMMIT 2>/dev/null
} > "$OUT/machine.txt"
summary="$OUT/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

part_sass() {
	local bin d f
	bin=$(python3 -c 'import triton,os;print(os.path.dirname(triton.__file__))' 2>/dev/null)/backends/nvidia/bin
	mkdir -p "$OUT/sass"
	for f in sass/*.cubin; do
		[ -f "$f" ] || continue
		"$bin/cuobjdump" -sass "$f" > "$OUT/sass/$(basename "$f" .cubin).sass" 2>&1 ||
			note "sass: cuobjdump failed on $f"
	done
	note "sass: $(ls "$OUT/sass" | wc -l) listings"
	tar czf "$OUT/sass.tgz" -C "$OUT" sass 2>/dev/null && rm -rf "$OUT/sass"
}

part_cost() {
	local p=build/bpf/bench/progs
	mkdir -p "$OUT/cost"
	OUT="$OUT/cost" ITERS=31 TIMEOUT=25 TOOLS=memtrace \
		BUILDS="main=base branch=build" VARIANTS="" \
		EXTRA="${COST_EXTRA:-branch memtrace, map values generic|build|build/bpf/tools/memtrace.bpf.o|GPUEXT_PTX_MAP_GENERIC=1;${COST_MORE:-}main traffic|base|base/bpf/bench/progs/memcost_traffic.bpf.o|;branch traffic|build|$p/memcost_traffic.bpf.o|;branch heat|build|$p/memcost_heat.bpf.o|}" \
		timeout 125 bash bench/memtrace_cost.sh > "$OUT/cost.log" 2>&1
	note "cost: rc=$?"
	grep '^| [a-z]' "$OUT/cost/memtrace_cost.md" 2>/dev/null | tee -a "$summary"
	cp "$OUT/cost/memtrace_cost.md" "$OUT/memtrace_cost.md" 2>/dev/null
}

# The heat map of a memtrace summary (text) with each region's address made
# an offset from the first region's (each process's allocations land at
# other addresses): the region count, then "offset count" per bar.
heat_lines() {
	sed -n '/regions of 2 MiB touched/,$p' "$1" | awk '
		/regions of 2 MiB/ {print; next}
		/^@accesses_per_2MiB\[/ {
			a = $0; sub(/^@accesses_per_2MiB\[0x/, "", a); sub(/\].*/, "", a)
			n = $0; sub(/^[^:]*: */, "", n); sub(/ .*/, "", n)
			v = 0; for (i = 1; i <= length(a); i++) v = v * 16 + index("0123456789abcdef", substr(a, i, 1)) - 1
			if (!seen++) base = v
			printf "+%d MiB %s\n", (v - base) / 1048576, n; next}
		{print}'
}

part_heat() {
	local m=$OUT/cost/vecadd.main_memtrace.out b=$OUT/cost/vecadd.branch_memtrace.out
	if [ ! -s "$m" ] || [ ! -s "$b" ] || heat_lines "$b" | grep -q '^0 regions'; then
		note "heat: FAIL no heat map in the outputs ($m, $b)"
	elif diff <(heat_lines "$m") <(heat_lines "$b") > "$OUT/heat.diff"; then
		note "heat: PASS main and branch heat maps identical on vecadd ($(heat_lines "$b" | head -1); offsets from the first region)"
	else
		note "heat: FAIL heat maps differ (heat.diff)"
	fi
	heat_lines "$b" > "$OUT/heat.branch.txt"
	tar czf "$OUT/cost-logs.tgz" -C "$OUT" cost 2>/dev/null && rm -rf "$OUT/cost"
}

# (with TOOLS=memtrace the script's smload check on imbalance -n 64 has no
# smload run to read: that line is not memtrace's)
part_tools() {
	OUT="$OUT/tools" TOOLS=memtrace timeout 120 bash tests/gpu/tools.sh > "$OUT/tools.log" 2>&1
	note "tools: rc=$? $(tail -1 "$OUT/tools.log")"
	grep -E '^(PASS|FAIL) .*memtrace' "$OUT/tools.log" | tee -a "$summary"
}

part_translator() {
	timeout 60 bash tests/gpu/translator.sh > "$OUT/translator.log" 2>&1
	note "translator: rc=$? $(tail -1 "$OUT/translator.log")"
	grep FAIL "$OUT/translator.log" | head -5 | tee -a "$summary"
}

part_conformance() {
	timeout 60 build/gpu/gpu_conformance gpu-cases > "$OUT/conformance.log" 2>&1
	note "conformance: rc=$? $(grep '^conformance (' "$OUT/conformance.log" | tail -1)"
	grep -E '^(FAIL|SKIP) ' "$OUT/conformance.log" | head -5 | tee -a "$summary"
	timeout 40 build/gpu/inject_check > "$OUT/inject_check.log" 2>&1
	note "inject_check: rc=$? $(tail -1 "$OUT/inject_check.log")"
	grep FAIL "$OUT/inject_check.log" | head -5 | tee -a "$summary"
}

part_ncu() {
	local ncu x name dir obj envv v=(build/examples/vecadd -n 16777216 -iters 2)
	ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
	[ -x "$ncu" ] || { note "ncu: not found"; return; }
	local m=smsp__inst_executed.sum,gpu__time_duration.sum
	timeout 20 "$ncu" --metrics $m -c 2 "${v[@]}" > "$OUT/ncu.plain.txt" 2>&1
	note "ncu plain: $(grep -E 'inst_executed|time_duration' "$OUT/ncu.plain.txt" | tail -2 | awk '{print $1, $(NF)}' | tr '\n' ' ')"
	IFS=';' read -r -a runs <<< "${NCU_RUNS:-main|base|base/bpf/tools/memtrace.bpf.o|;branch|build|build/bpf/tools/memtrace.bpf.o|}"
	for x in "${runs[@]}"; do
		IFS='|' read -r name dir obj envv <<< "$x"
		[ "$SECONDS" -lt "${NCU_UNTIL:-130}" ] || { note "ncu $name: not run (time)"; continue; }
		env $envv timeout 20 "$dir/gpuext" run "$obj" -- "$ncu" --metrics $m -c 2 "${v[@]}" \
			> "$OUT/ncu.$name.txt" 2>&1
		note "ncu $name: $(grep -E 'inst_executed|time_duration' "$OUT/ncu.$name.txt" | tail -2 | awk '{print $1, $(NF)}' | tr '\n' ' ')"
	done
}

for p in ${@:-sass cost heat tools translator}; do
	t0=$SECONDS
	"part_$p"
	note "($p: $((SECONDS - t0)) s)"
done
echo "== summary"
cat "$summary"
