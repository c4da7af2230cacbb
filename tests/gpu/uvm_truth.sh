#!/usr/bin/env bash
# What the driver does with unified memory on this GPU, and what CUPTI and
# the nvidia-uvm tools queue report of it: tests/gpu/uvm_truth.cu (built as
# build/gpu/uvm_truth by make, see its header) in several configurations, one
# process each, from the repository root:
#
#   OUT=DIR tests/gpu/uvm_truth.sh
#
# Writes $OUT/uvm-truth.txt (every run's CONFIG/TIMES/SUM/COUNTERS lines and
# the first records of each kind) and $OUT/uvm-env.txt (driver, UVM module
# parameters, addressing mode).  About 30 s.
set -u
OUT=${OUT:-build/uvm-truth-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
BIN=${UVM_TRUTH:-build/gpu/uvm_truth}
CUPTI_DIR=${CUPTI_DIR:-/usr/local/cuda-13.0/targets/x86_64-linux/lib}
export LD_LIBRARY_PATH=$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv 2>&1
	nvidia-smi -q 2>/dev/null | grep -i -E 'addressing|driver version|cuda version'
	echo "--- /sys/module/nvidia_uvm/parameters"
	grep -H . /sys/module/nvidia_uvm/parameters/* 2>&1
	echo "--- /proc/driver/nvidia/params (hmm/ats/uvm)"
	grep -i -E 'hmm|ats|uvm' /proc/driver/nvidia/params 2>&1
	ls -la /dev/nvidia-uvm* 2>&1
	uname -r
} > "$OUT/uvm-env.txt" 2>&1

T="$OUT/uvm-truth.txt"
: > "$T"
run() { # run ARGS...: one configuration
	echo "=== uvm_truth $*" >> "$T"
	timeout 15 "$BIN" "$@" >> "$T" 2>&1
	echo "rc=$?" >> "$T"
}
run -cupti 1 -uvmt 0                       # CUPTI alone, as the agent configures it
run -cupti 1 -uvmt 0 -flush_ms 100         # with the agent's 100 ms flush
run -cupti 1 -uvmt 0 -flush_ms 1           # flushing 100x as often
run -cupti 1 -uvmt 0 -cupti_at ctx         # configured after the context exists
run -cupti 0 -uvmt 1                       # the tools queue alone (256 Ki entries)
run -cupti 0 -uvmt 1 -queue 4096           # a small queue: drops expected, and counted
run -cupti 1 -uvmt 1 -flush_ms 100 -dump 8 # both side by side, raw records
run -cupti 1 -uvmt 1 -pattern blocks       # one 2 MiB block per launch
run -cupti 1 -uvmt 1 -mib 32               # 32 MiB
run -cupti 0 -uvmt 1 -mib 1024 -uvmt_at init # 1 GiB, the queue bound right after cuInit
grep -E '^(===|CONFIG|TIMES|SUM|CUPTI|UVMT|COUNTERS|FDS|UVMT start)' "$T" | grep -v '^CONFIG' | cut -c1-220
