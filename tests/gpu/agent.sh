#!/usr/bin/env bash
# The agent's GPU batch: run on a GPU machine from the repository root with
# the build folder (built by `make`, nvcc examples included) carried along.
#
#   tests/gpu/agent.sh
#
# For each CUDA example (and the loading-path variants of vecadd): run it
# plainly, then under `gpuext run build/bpf/examples/gpu_count.bpf.o`
# (entry+exit probes on every kernel, counting warps and threads) and check
#   - the instrumented run's checksum is bit-identical to the plain run's;
#   - threads counted at entry and at exit both equal grid x block x launches
#     as the example prints them, entry warps equal the launched warps;
#   - the agent printed no message (or, for the fail-open cases, exactly one
#     and the program still ran correctly).
# Logs go to $OUT (default build/agent-gpu-out), everything is also tarred
# into $OUT/agent.tgz.  Prints PASS/FAIL lines and a summary; exits 1 on any
# failure.  Takes well under 3 minutes.
set -u
OUT=${OUT:-build/agent-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=build/gpuext
PROG=build/bpf/examples/gpu_count.bpf.o
EX=${EX:-build/examples}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/agent-summary.txt"
: > "$SUMMARY"
gpu_machine_info > "$OUT/machine.txt"

pass=0 fail=0

# Threads and warps the example launched, from its first output line:
# "NAME: ... launches=L grid=GxH block=BxC" (or grid=G, blocks=G, block=B).
launched() { # launched LOG -> "threads warps"
	head -1 "$1" | tr ' ' '\n' | awk -F= '
		function prod(v,  a, n, i, p) { n = split(v, a, "x"); p = 1; for (i = 1; i <= n; i++) p *= a[i]; return p }
		$1 == "launches" { l = $2 } $1 == "grid" || $1 == "blocks" { g = prod($2) } $1 == "block" { b = prod($2) }
		END { w = int((b + 31) / 32); printf "%d %d\n", g * b * l, g * w * l }'
}
count() { # count LOG KEY -> value printed in the map summary ("  KEY: V")
	awk -v k="$2" '$1 == k":" { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
checksum() { grep '^checksum:' "$1" | tail -1; }

instrumented() { # instrumented NAME BIN ARGS...
	local name=$1 bin=$2
	shift 2
	if [ ! -x "$bin" ]; then
		result FAIL "$name: $bin not built"
		return
	fi
	timeout 60 "$bin" "$@" > "$LOGS/$name.plain.log" 2>&1
	local rc0=$?
	timeout 60 env GPUEXT_AGENT_VERBOSE=1 "$GPUEXT" -v run "$PROG" -- "$bin" "$@" \
		> "$LOGS/$name.run.log" 2> "$LOGS/$name.run.err"
	local rc1=$?
	local want
	want=$(launched "$LOGS/$name.plain.log")
	local threads=${want% *} warps=${want#* }
	local c0 c1 c3 cs0 cs1
	c0=$(count "$LOGS/$name.run.log" 0)
	c1=$(count "$LOGS/$name.run.log" 1)
	c3=$(count "$LOGS/$name.run.log" 3)
	cs0=$(checksum "$LOGS/$name.plain.log")
	cs1=$(checksum "$LOGS/$name.run.log")
	local msgs
	msgs=$(grep '^gpuext: ' "$LOGS/$name.run.err" | grep -vc 'instrumented (.* ms)$\|before its first launch$\|compiled ahead of its first launch, \|^gpuext: agent attached\|^gpuext: device side made ahead of the first launch (\|^gpuext: device maps at 0x[0-9a-f]* (\|: mem probes pasted from launch [0-9]* on (')
	local why=""
	[ "$rc0" = 0 ] || why+=" plain rc=$rc0"
	[ "$rc1" = 0 ] || why+=" instrumented rc=$rc1"
	[ -n "$cs0" ] && [ "$cs0" = "$cs1" ] || why+=" checksum '$cs0' vs '$cs1'"
	[ "$c1" = "$threads" ] || why+=" entry threads $c1 != $threads"
	[ "$c3" = "$threads" ] || why+=" exit threads $c3 != $threads"
	[ "$c0" = "$warps" ] || why+=" entry warps $c0 != $warps"
	[ "$msgs" = 0 ] || why+=" $msgs agent messages"
	local first_ms
	first_ms=$(sed -n 's/^gpuext: kernel .* instrumented (\(.*\) ms)$/\1/p' "$LOGS/$name.run.err" | tr '\n' ' ')
	if [ -z "$why" ]; then
		result PASS "$name: $cs1 identical; threads $threads, warps $warps counted at entry; exit threads $c3; first-launch instrumentation ms: $first_ms"
	else
		result FAIL "$name:$why (logs/$name.*)"
	fi
}

# A run the agent cannot instrument: the program must still run correctly,
# with exactly one agent message matching PATTERN.
fail_open() { # fail_open NAME PATTERN ENV... -- BIN ARGS...
	local name=$1 pattern=$2
	shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local bin=$1
	timeout 60 "$@" > "$LOGS/$name.plain.log" 2>&1
	timeout 60 env "${envs[@]}" "$GPUEXT" run "$PROG" -- "$@" \
		> "$LOGS/$name.run.log" 2> "$LOGS/$name.run.err"
	local rc=$? cs0 cs1 msgs
	cs0=$(checksum "$LOGS/$name.plain.log")
	cs1=$(checksum "$LOGS/$name.run.log")
	msgs=$(grep -c '^gpuext: ' "$LOGS/$name.run.err")
	if [ "$rc" = 0 ] && [ -n "$cs0" ] && [ "$cs0" = "$cs1" ] && [ "$msgs" = 1 ] &&
	   grep -q "$pattern" "$LOGS/$name.run.err"; then
		result PASS "$name: runs unchanged ($cs1) with one message: $(grep '^gpuext: ' "$LOGS/$name.run.err")"
	else
		result FAIL "$name: rc=$rc checksum '$cs0' vs '$cs1', $msgs messages (logs/$name.*)"
	fi
}

instrumented vecadd "$EX/vecadd" -iters 3
instrumented gemm "$EX/gemm"
instrumented reduce "$EX/reduce"
instrumented imbalance "$EX/imbalance"
for v in vecadd_shared vecadd_nocompress vecadd_lz4 vecadd_compress_all vecadd_multi vecadd_debug; do
	instrumented "$v" "$EX/$v"
done
instrumented drv_vecadd "$EX/drv_vecadd"
instrumented link_vecadd "$EX/link_vecadd"
# -rdc: the kernel's PTX is in __nv_relfatbin, the loaded fatbin has none
fail_open vecadd_rdc "runs unchanged" -- "$EX/vecadd_rdc"
# preloaded with a session name that does not exist
timeout 60 env LD_PRELOAD="$PWD/build/libgpuext-agent.so" GPUEXT_SESSION=/gpuext-none \
	"$EX/vecadd" > "$LOGS/nosession.log" 2>&1
if [ $? = 0 ] && [ "$(grep -c '^gpuext: agent disabled' "$LOGS/nosession.log")" = 1 ]; then
	result PASS "no session: vecadd runs, one message"
else
	result FAIL "no session (logs/nosession.log)"
fi

echo "$pass passed, $fail failed" | tee -a "$SUMMARY"
tar -czf "$OUT/agent.tgz" -C "$OUT" machine.txt agent-summary.txt logs 2>/dev/null
[ "$fail" = 0 ]
