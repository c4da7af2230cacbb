#!/usr/bin/env bash
# sched_bench.sh - latency-critical vs best-effort tenants on one GPU
# (issue 9), on a GPU machine with build/examples/tenant built:
#
#   OUT=DIR [REQUESTS=2000] [BE_SECONDS=8] [LC_WRAP="cmd --"] [BE_WRAP="cmd --"] \
#       bench/sched_bench.sh
#
# Three runs, each its own processes (own CUDA contexts), in one call:
#   lc-alone  2 latency-critical tenants (REQUESTS requests each: an 8-block
#             50 us kernel, launched and waited for, 1 ms apart), no other work;
#   be-alone  4 best-effort tenants (20 ms kernels over every SM, two in
#             flight) for BE_SECONDS;
#   mixed     the 4 best-effort tenants, and after 1 s the 2 latency-critical
#             ones.
# LC_WRAP / BE_WRAP prefix the tenants' command lines in the mixed run (a
# scheduling policy under test, e.g. `build/gpuext run --class lc ... --`).
# Reports P50/P99 request latency of each latency-critical tenant and their
# mean, and best-effort kernels per second, summed, with the ratio to
# be-alone.  Writes $OUT/sched_bench.md; logs in $OUT/logs.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/sched-bench}
REQUESTS=${REQUESTS:-2000}
BE_SECONDS=${BE_SECONDS:-8}
LC_WRAP=${LC_WRAP:-}
BE_WRAP=${BE_WRAP:-}
T=build/examples/tenant
LOGS="$OUT/logs"
mkdir -p "$LOGS"
[ -x "$T" ] || { echo "sched_bench: $T not built (make cuda-examples)" >&2; exit 1; }

lc() { # lc RUN I WRAP
	$3 "$T" lc -requests "$REQUESTS" -kernel-us 50 -gap-us 1000 \
		-out "$LOGS/$1.lc$2.lat" > "$LOGS/$1.lc$2.log" 2>&1
}
be() { # be RUN I WRAP
	$3 "$T" be -seconds "$BE_SECONDS" -kernel-ms 20 > "$LOGS/$1.be$2.log" 2>&1
}
field() { # field KEY FILES... -> values of KEY=V, one per line
	local k=$1
	shift
	cat "$@" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$k=//p"
}
mean() { awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "-" }'; }
sum() { awk '{ s += $1 } END { printf "%.2f", s }'; }

run() { # run NAME: lc, be or both
	local name=$1 pids=()
	case $name in
	lc-alone)
		for i in 1 2; do lc "$name" "$i" "" & pids+=($!); done ;;
	be-alone)
		for i in 1 2 3 4; do be "$name" "$i" "" & pids+=($!); done ;;
	mixed)
		for i in 1 2 3 4; do be "$name" "$i" "$BE_WRAP" & pids+=($!); done
		sleep 1
		for i in 1 2; do lc "$name" "$i" "$LC_WRAP" & pids+=($!); done ;;
	esac
	local rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	[ "$rc" = 0 ] || echo "sched_bench: a tenant of $name failed (see $LOGS/$name.*)" >&2
	return $rc
}

status=0
for r in lc-alone be-alone mixed; do run "$r" || status=1; done

be_alone=$(field per_s "$LOGS"/be-alone.be*.log | sum)
{
	echo "# LC/BE tenants on one GPU"
	echo
	echo "$(date -u +%F\ %T) UTC, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
	echo "REQUESTS=$REQUESTS BE_SECONDS=$BE_SECONDS LC_WRAP='$LC_WRAP' BE_WRAP='$BE_WRAP'"
	echo
	echo "| run | LC p50 us (each) | LC p99 us (each) | LC p99 mean us | BE kernels/s | BE vs alone |"
	echo "|---|---|---|---|---|---|"
	for r in lc-alone mixed be-alone; do
		p50=$(field p50_us "$LOGS/$r".lc*.log | tr '\n' ' ')
		p99=$(field p99_us "$LOGS/$r".lc*.log | tr '\n' ' ')
		p99m=$(field p99_us "$LOGS/$r".lc*.log | mean)
		bes=$(field per_s "$LOGS/$r".be*.log | sum)
		ratio=$(awk -v a="$bes" -v b="$be_alone" 'BEGIN { if (b > 0 && a > 0) printf "%.3f", a / b; else print "-" }')
		echo "| $r | ${p50:--} | ${p99:--} | $p99m | $bes | $ratio |"
	done
} > "$OUT/sched_bench.md"
cat "$OUT/sched_bench.md"
exit $status
