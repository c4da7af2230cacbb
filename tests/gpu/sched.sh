#!/usr/bin/env bash
# The scheduling batch (issue 9): run on a GPU machine from the repository
# root with the build folder (built by `make`, nvcc examples included)
# carried along, nvidia-cuda-mps-control on PATH, no other MPS server of
# this user running:
#
#   tests/gpu/sched.sh
#
# 1. Must show 2: 4 best-effort and 2 latency-critical tenants
#    (build/examples/tenant) join one session with the sched_lc_be policy
#    through `gpuext run --session --class --policy`; 2 s in, the session's
#    first gpuext (the one that started the MPS server) is killed with -9.
#    PASS when every tenant ends with its normal output (its result line,
#    exit 0), the MPS server was up, and at the end no MPS control daemon
#    and no session segment is left.
# 2. Must show 1: bench/sched_bench.sh with default, the raw MPS variant
#    mps-be25 and every shipped policy through sessions (sess-lc_be,
#    sess-fixed_priority, sess-token_bucket, sess-timeslice_by_name).  PASS
#    when each variant's tenants all finish, and for sess-lc_be when the LC
#    p99 is >= 10x lower than default's with >= 90% of default's BE
#    throughput (issue 9's target).  The table is $OUT/bench/sched_bench.md.
# Logs under $OUT (default build/sched-gpu-out).  PASS/FAIL lines, a summary
# line; exits 1 on any failure.  About 2 minutes.
set -u
OUT=${OUT:-build/sched-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=$PWD/build/gpuext
T=${TENANT:-$PWD/build/examples/tenant} # TENANT: a stand-in, to try the script without a GPU
POLICY=$PWD/build/bpf/policies/sched_lc_be.bpf.o
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/sched-summary.txt"
: > "$SUMMARY"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1
	git log -1 --oneline 2>/dev/null
	command -v nvidia-cuda-mps-control
} > "$OUT/machine.txt"

pass=0 fail=0
# MPS control daemons and servers of this user (comm is cut to 15 characters:
# "nvidia-cuda-mps" names both).
mps_daemons() { pgrep -x -u "$(id -u)" nvidia-cuda-mps | wc -l; }

for f in "$GPUEXT" "$T" "$POLICY" build/libgpuext-agent.so; do
	[ -e "$f" ] || { result FAIL "$f not built"; echo "sched: $pass passed, $fail failed"; exit 1; }
done
command -v nvidia-cuda-mps-control > /dev/null ||
	result FAIL "nvidia-cuda-mps-control not on PATH (the session runs without MPS)"
before=$(mps_daemons)
[ "$before" = 0 ] || result FAIL "MPS processes of this user run already ($before)"

# ---- 1. the session's first gpuext killed -9 mid-run ----------------------
SESSION=kill9-$$
declare -a pids names
start() { # start NAME CLASS TENANT-ARGS...
	local name=$1 class=$2
	shift 2
	"$GPUEXT" -v run --session "$SESSION" --class "$class" --policy "$POLICY" -- "$T" "$@" \
		> "$LOGS/$name.log" 2>&1 &
	pids+=($!)
	names+=("$name")
}
start be1 be be -seconds 6 -work 400000 -blocks 528
sleep 0.5 # be1's gpuext creates the session and starts the MPS server
for i in 2 3 4; do start "be$i" be be -seconds 6 -work 400000 -blocks 528; done
sleep 1
for i in 1 2; do start "lc$i" lc lc -requests 2000 -kernel-us 50 -gap-us 1000 -out "$LOGS/lc$i.lat"; done
sleep 2
holder=${pids[0]}
if kill -9 "$holder" 2> /dev/null; then
	result PASS "killed the session's first gpuext (pid $holder, tenant be1) with -9 mid-run"
else
	result FAIL "the session's first gpuext (pid $holder) had already ended at 3.5 s"
fi
t0=$(date +%s)
for k in "${!pids[@]}"; do
	[ "$k" = 0 ] && continue
	if timeout 120 tail --pid="${pids[$k]}" -f /dev/null; then
		wait "${pids[$k]}"
		rc=$?
		[ "$rc" = 0 ] || result FAIL "tenant ${names[$k]}: gpuext run exit $rc (see $LOGS/${names[$k]}.log)"
	else
		result FAIL "tenant ${names[$k]} did not end in 120 s (wedged)"
	fi
done
wait "$holder" 2> /dev/null
echo "the other tenants ended $(($(date +%s) - t0)) s after the kill" >> "$SUMMARY"
# every tenant's normal output, be1's too (it ran on without its gpuext)
for n in "${names[@]}"; do
	case $n in
	be*) key=per_s= ;;
	*) key=p99_us= ;;
	esac
	if grep -q "$key" "$LOGS/$n.log"; then
		result PASS "tenant $n finished with its result ($(tr ' ' '\n' < "$LOGS/$n.log" | grep -m1 "$key"))"
	else
		result FAIL "tenant $n: no $key line (see $LOGS/$n.log)"
	fi
done
if grep -q "mps up" "$LOGS/be1.log"; then
	result PASS "the session's MPS server was up (be1: $(grep -m1 -o 'SM share [0-9]*%' "$LOGS/be1.log"))"
else
	result FAIL "the session ran without MPS (see $LOGS/be1.log)"
fi
# wait_mps_gone: up to 5 s for the session's MPS daemon and server to exit
# after the last tenant asked them to quit.
wait_mps_gone() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(mps_daemons)" = "$before" ] && return
		sleep 0.5
	done
}
wait_mps_gone
left=$(mps_daemons)
if [ "$left" = "$before" ]; then
	result PASS "no MPS control daemon left after the session"
else
	result FAIL "$((left - before)) MPS daemon(s) left after the session: $(pgrep -a -x -u "$(id -u)" nvidia-cuda-mps | tr '\n' ';')"
	pgrep -a -x nvidia-cuda-mps >> "$SUMMARY"
fi
if [ -e "/dev/shm/gpuext-sched-$(id -u)-$SESSION" ]; then
	result FAIL "the session's segment /dev/shm/gpuext-sched-$(id -u)-$SESSION is left"
else
	result PASS "the session's segment is removed"
fi
grep -h '^gpuext: sched' "$LOGS"/*.log | sort | uniq -c >> "$SUMMARY"

# ---- 2. the benchmark: default, raw MPS, every policy through sessions -----
VARIANTS="default mps-be25 sess-lc_be sess-fixed_priority sess-token_bucket sess-timeslice_by_name"
if OUT="$OUT/bench" REQUESTS=400 BE_SECONDS=6 VARIANTS="$VARIANTS" bench/sched_bench.sh \
	> "$LOGS/bench.out" 2>&1; then
	result PASS "sched_bench: every variant's tenants finished"
else
	result FAIL "sched_bench: a tenant failed (see $LOGS/bench.out)"
fi
row() { grep "^| $1 |" "$OUT/bench/sched_bench.md" 2> /dev/null; }
col() { awk -F'|' -v c="$2" '{ gsub(/ /, "", $c); print $c }' <<< "$1"; }
lcbe=$(row sess-lc_be)
p99r=$(col "$lcbe" 6)
ber=$(col "$lcbe" 8)
if awk -v p="$p99r" -v b="$ber" 'BEGIN { exit !(p != "-" && b != "-" && p > 0 && p <= 0.1 && b >= 0.9) }'; then
	result PASS "sess-lc_be: LC p99 ${p99r}x default's, BE throughput ${ber}x default's"
else
	result FAIL "sess-lc_be: LC p99 ${p99r:-?}x default's (want <= 0.1), BE ${ber:-?}x (want >= 0.9)"
fi
for v in $VARIANTS; do
	r=$(row "$v")
	echo "  $v: LC p99 mean $(col "$r" 5) us (x$(col "$r" 6)), BE $(col "$r" 7)/s (x$(col "$r" 8))" |
		tee -a "$SUMMARY"
done
wait_mps_gone
[ "$(mps_daemons)" = "$before" ] ||
	result FAIL "MPS daemon(s) left after the benchmark: $(pgrep -a -x -u "$(id -u)" nvidia-cuda-mps | tr '\n' ';')"

tar -czf "$OUT/sched.tgz" -C "$OUT" logs bench machine.txt sched-summary.txt 2> /dev/null
echo "sched: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ "$fail" = 0 ]
