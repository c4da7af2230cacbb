#!/usr/bin/env bash
# sched_bench.sh - latency-critical vs best-effort tenants on one GPU
# (issue 9), on a GPU machine with build/examples/tenant and the agent built:
#
#   OUT=DIR [REQUESTS=2000] [BE_SECONDS=8] [BE_WORK=400000] [BE_BLOCKS=528] \
#       [VARIANTS="default be-ts250 ..."] bench/sched_bench.sh
#
# Runs, each with its own processes (own CUDA contexts), in one call:
#   lc-alone  2 latency-critical tenants (REQUESTS requests each: an 8-block
#             50 us kernel, launched and waited for, 1 ms apart), no other work;
#   be-alone  4 best-effort tenants (kernels of BE_BLOCKS blocks of 256
#             threads, BE_WORK hash iterations per thread, two in flight)
#             for BE_SECONDS;
#   VARIANT   the 4 best-effort tenants, and after 1 s the 2 latency-critical
#             ones, with the scheduling mechanism VARIANT names (see
#             variant_wraps below: the agent preloaded with its
#             GPUEXT_SCHED_* settings on one class or both; mps*: a raw
#             MPS server; sess-POLICY: every tenant started by
#             `gpuext run --session --class lc|be --policy
#             build/bpf/policies/sched_POLICY.bpf.o` (sess-none: a session
#             without a policy), which starts and stops the session's MPS
#             server itself; default: none).
# Reports P50/P99 request latency of each latency-critical tenant and their
# mean, and best-effort kernels per second, summed, with the ratio to
# be-alone.  Writes $OUT/sched_bench.md; logs (with the agent's messages)
# in $OUT/logs.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/sched-bench}
REQUESTS=${REQUESTS:-2000}
BE_SECONDS=${BE_SECONDS:-8}
BE_WORK=${BE_WORK:-400000}
BE_BLOCKS=${BE_BLOCKS:-528}
VARIANTS=${VARIANTS:-default}
AGENT=$PWD/build/libgpuext-agent.so
GPUEXT=$PWD/build/gpuext
T=${TENANT:-build/examples/tenant}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
[ -x "$T" ] || { echo "sched_bench: $T not built (make cuda-examples)" >&2; exit 1; }

lc() { # lc RUN I WRAP
	$3 "$T" lc -requests "$REQUESTS" -kernel-us 50 -gap-us 1000 \
		-out "$LOGS/$1.lc$2.lat" > "$LOGS/$1.lc$2.log" 2>&1
}
be() { # be RUN I WRAP
	$3 "$T" be -seconds "$BE_SECONDS" -work "$BE_WORK" -blocks "$BE_BLOCKS" > "$LOGS/$1.be$2.log" 2>&1
}
field() { # field KEY FILES... -> values of KEY=V, one per line
	local k=$1
	shift
	cat "$@" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$k=//p"
}
mean() { awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "-" }'; }
sum() { awk '{ s += $1 } END { printf "%.2f", s }'; }

# variant_wraps NAME: sets LC_WRAP and BE_WRAP, the command prefixes of the
# two classes' tenants in that variant.
variant_wraps() {
	local agent="env LD_PRELOAD=$AGENT GPUEXT_AGENT_VERBOSE=1"
	LC_WRAP="" BE_WRAP=""
	case $1 in
	default) ;;
	be-ts250) BE_WRAP="$agent GPUEXT_SCHED_TIMESLICE_US=250" ;;
	be-ts1000) BE_WRAP="$agent GPUEXT_SCHED_TIMESLICE_US=1000" ;;
	be-ts100000) BE_WRAP="$agent GPUEXT_SCHED_TIMESLICE_US=100000" ;;
	lc-high) LC_WRAP="$agent GPUEXT_SCHED_INTERLEAVE=high" ;;
	# One MPS server for the run's tenants (a private pipe directory: no
	# other process of the machine joins it), spatial sharing instead of
	# time slicing; mps-beN also caps each best-effort client at N% of the
	# SMs (4 x N% in all: below 100, SMs stay free for the LC tenants).
	mps) LC_WRAP="env $MPS_ENV" BE_WRAP="env $MPS_ENV" ;;
	mps-be[0-9]*)
		LC_WRAP="env $MPS_ENV"
		BE_WRAP="env $MPS_ENV CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=${1#mps-be}" ;;
	be-low-lc-high)
		BE_WRAP="$agent GPUEXT_SCHED_INTERLEAVE=low"
		LC_WRAP="$agent GPUEXT_SCHED_INTERLEAVE=high" ;;
	be-ts250-lc-high)
		BE_WRAP="$agent GPUEXT_SCHED_TIMESLICE_US=250"
		LC_WRAP="$agent GPUEXT_SCHED_INTERLEAVE=high GPUEXT_SCHED_TIMESLICE_US=8000" ;;
	# The product: tenants join one scheduling session; its first gpuext
	# starts the session's MPS server, the policy's gpu_task_init chooses
	# each tenant's settings, its gpu_launch_admit runs in the agent.
	sess-*)
		local policy="" session="sb$$-$1"
		[ "$1" = sess-none ] || policy="--policy $PWD/build/bpf/policies/sched_${1#sess-}.bpf.o"
		[ "$1" = sess-none ] || [ -f "${policy#--policy }" ] ||
			{ echo "sched_bench: no ${policy#--policy }" >&2; return 1; }
		LC_WRAP="$GPUEXT -v run --session $session --class lc $policy --"
		BE_WRAP="$GPUEXT -v run --session $session --class be $policy --" ;;
	*) echo "sched_bench: unknown variant '$1'" >&2; return 1 ;;
	esac
}

MPS_ENV="CUDA_MPS_PIPE_DIRECTORY=$OUT/mps/pipe CUDA_MPS_LOG_DIRECTORY=$OUT/mps/log"
mps_start() {
	mkdir -p "$OUT/mps/pipe" "$OUT/mps/log"
	env $MPS_ENV nvidia-cuda-mps-control -d
}
mps_stop() { echo quit | env $MPS_ENV nvidia-cuda-mps-control; sleep 1; }

run() { # run NAME: lc-alone, be-alone or a variant of the mixed run
	local name=$1 pids=()
	case $name in mps*) mps_start || return 1 ;; esac
	case $name in
	lc-alone)
		for i in 1 2; do lc "$name" "$i" "" & pids+=($!); done ;;
	be-alone)
		for i in 1 2 3 4; do be "$name" "$i" "" & pids+=($!); done ;;
	*)
		variant_wraps "$name" || return 1
		for i in 1 2 3 4; do be "$name" "$i" "$BE_WRAP" & pids+=($!); done
		sleep 1
		for i in 1 2; do lc "$name" "$i" "$LC_WRAP" & pids+=($!); done ;;
	esac
	local rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	case $name in mps*) mps_stop ;; esac
	[ "$rc" = 0 ] || echo "sched_bench: a tenant of $name failed (see $LOGS/$name.*)" >&2
	return $rc
}

status=0
for r in lc-alone be-alone $VARIANTS; do run "$r" || status=1; done

be_alone=$(field per_s "$LOGS"/be-alone.be*.log | sum)
be_default=$(field per_s "$LOGS"/default.be*.log | sum)
lc_default=$(field p99_us "$LOGS"/default.lc*.log | mean)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a > 0) printf "%.3f", a / b; else print "-" }'; }
{
	echo "# LC/BE tenants on one GPU"
	echo
	echo "$(date -u +%F\ %T) UTC, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
	echo "REQUESTS=$REQUESTS BE_SECONDS=$BE_SECONDS BE_WORK=$BE_WORK BE_BLOCKS=$BE_BLOCKS VARIANTS='$VARIANTS'"
	echo
	echo "| run | LC p50 us (each) | LC p99 us (each) | LC p99 mean us | LC p99 vs default | BE kernels/s | BE vs default | BE vs alone |"
	echo "|---|---|---|---|---|---|---|---|"
	for r in lc-alone $VARIANTS be-alone; do
		p50=$(field p50_us "$LOGS/$r".lc*.log | tr '\n' ' ')
		p99=$(field p99_us "$LOGS/$r".lc*.log | tr '\n' ' ')
		p99m=$(field p99_us "$LOGS/$r".lc*.log | mean)
		bes=$(field per_s "$LOGS/$r".be*.log | sum)
		echo "| $r | ${p50:--} | ${p99:--} | $p99m | $(ratio "$p99m" "$lc_default") | $bes |" \
			"$(ratio "$bes" "$be_default") | $(ratio "$bes" "$be_alone") |"
	done
	echo
	echo "What the agent said (count, message):"
	echo
	grep -h '^gpuext: ' "$LOGS"/*.log 2>/dev/null | sed -e 's/channel group 0x[0-9a-f]*/channel group G/' \
		-e 's/session sb[0-9]*-/session sbPID-/; s/tenant [0-9]* (/tenant N (/; s/process [0-9]*/process P/' |
		sort | uniq -c | sed 's/^/    /'
} > "$OUT/sched_bench.md"
cat "$OUT/sched_bench.md"
exit $status
