#!/usr/bin/env bash
# batch.sh - several GPU checks and benchmarks in one call of the lent GPU
# machine, from the repository root with the build folder carried (and
# gpu-cases/, a copy of shared/conformance/tests, and gpu-libs/, libbpf and
# libcmocka for that machine, where the parts need them):
#
#   OUT=DIR tests/gpu/batch.sh PART...
#
# PART is one of the names below; each runs under its own time limit with
# its logs in $OUT/PART/.  Prints one line per part (PASS/FAIL, seconds,
# the part's own summary line) and writes everything into $OUT/batch.tgz
# (what comes back from the machine is a handful of files: one archive).
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-build/batch-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
[ -d gpu-libs ] && export LD_LIBRARY_PATH=$PWD/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
SUMMARY="$OUT/batch-summary.txt"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
	lscpu | grep 'Model name'
	git log -1 --oneline 2>/dev/null
} > "$SUMMARY"

# part NAME: the command line of a part (run with OUT=$OUT/NAME).
part() {
	case $1 in
	conformance) echo "tests/gpu/run.sh gpu-cases" ;;
	agent) echo "tests/gpu/agent.sh" ;;
	tools) echo "tests/gpu/tools.sh" ;;
	python) echo "tests/gpu/python.sh" ;;
	cupti) echo "tests/gpu/cupti.sh" ;;
	hosttools) echo "tests/gpu/hosttools.sh" ;;
	attach) echo "tests/gpu/attach.sh" ;;
	sched) echo "tests/gpu/sched.sh" ;;
	probe-cost) echo "tests/gpu/probe_cost.sh" ;;
	devmaps) echo "tests/gpu/devmaps.sh" ;;
	mem) echo "tests/gpu/mem.sh" ;;
	translator) echo "tests/gpu/translator.sh" ;;
	first-launch) echo "tests/gpu/first_launch.sh" ;;
	first-launch-sm90) echo "env CASES='vecadd@sm90 -n 1048576;gemm@sm90 -n 512;reduce@sm90 -n 1048576;imbalance@sm90 -n 64' tests/gpu/first_launch.sh" ;;
	launch-id) echo "tests/gpu/launch_id.sh" ;;
	block-ctx) echo "tests/gpu/block_ctx.sh" ;;
	memtrace-cost) echo "env ITERS=31 TOOLS='memtrace memtrace_block' VARIANTS='build/bpf/bench/progs/memcost_none.bpf.o' bench/memtrace_cost.sh" ;;
	overhead) echo "env ITERS=31 bench/gpu_overhead.sh" ;;
	tools-overhead) echo "env ITERS=31 bench/gpu_tools_overhead.sh" ;;
	cupti-overhead) echo "env STEPS=200 ROUNDS=3 bench/cupti_overhead.sh" ;;
	cpubench) echo "build/bench/cpu_bench --out \$OUT" ;;
	jit) echo "bench/jit_vs_ubpf.sh 3" ;;
	mem-bench) echo "env BUDGET=1G ITERS=2 bench/mem_policy_bench.sh" ;;
	mem-seq) echo "env BUDGET=256M ITERS=3 MULTS=1.5 PATTERNS=seq SIM=1 POLICIES='none= mru=build/bpf/policies/mru.bpf.o seq-ahead=build/bpf/policies/seq-ahead.bpf.o' bench/mem_policy_bench.sh" ;;
	*) return 1 ;;
	esac
}

limit=${PART_TIMEOUT:-420}
for name in "$@"; do
	cmd=$(part "$name") || { echo "FAIL $name: unknown part" | tee -a "$SUMMARY"; continue; }
	dir="$OUT/$name"
	mkdir -p "$dir"
	t0=$(date +%s)
	OUT=$dir timeout "$limit" bash -c "$cmd" > "$dir/stdout.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	last=$(grep -v '^$' "$dir/stdout.log" | tail -1 | cut -c1-160)
	if [ "$rc" = 0 ]; then
		echo "PASS $name (${secs} s): $last" | tee -a "$SUMMARY"
	else
		echo "FAIL $name (rc=$rc, ${secs} s): $last" | tee -a "$SUMMARY"
	fi
done
(cd "$OUT" && tar czf batch.tgz --exclude=batch.tgz --exclude='*.sock' . 2>/dev/null)
