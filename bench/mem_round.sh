#!/usr/bin/env bash
# mem_round.sh - one GPU round of the memory-policy comparison (issue 8),
# for a machine reached through a time-limited call: run from a copy of the
# repository layout (build/gpuext, build/libgpuext-agent.so, build/bpf,
# build/examples/uvm_workload, bench/) as
#
#   OUT=DIR bash bench/mem_round.sh PART...
#
# PART (each has its own time limit; a step's failure is logged and the
# next one runs; prints a short summary):
#   baseline  CUPTI signal, as main had it before the device signal
#   device    the device signal, the simulator replaying every run
#   cupy, cupy2  bench/python/cupy_layers.py (CuPy on managed memory)
#   overhead  the signal's cost where nothing is evicted
#   full      every pattern, the policies that differ, 1.5x and 2x
#   records   the driver's unified-memory records as the only signal
#   base      seq, random, decode with the build in $BASE (main's), beside
#   ahead     the same with this build and seq-ahead
#   sweep     dnn: sweep-ahead beside lru
#   async     seq (ASYNC_PATTERNS) with GPUEXT_MEM_ASYNC_HINTS=1
#   the final comparison, four parts that fit one call together, 1.5x and
#   2x of a 256 MiB budget, 3 passes, each run replayed by the simulator:
#   fseqrand  seq, random: none, mru, seq-ahead
#   fdnn      dnn: none, lru, sweep-ahead
#   fmoedec   moe, decode: none, lru, mru
#   fcupy     cupy_layers at 1.5x: none, lru, sweep-ahead
#   hthread   seq, dnn at 1.5x with the hints sent by a thread of the
#             agent's (GPUEXT_MEM_ASYNC_HINTS=1)
#   asnap     seq, dnn with the snapshots and the hints off the launching
#             thread (GPUEXT_MEM_SNAPSHOT_ASYNC=1 GPUEXT_MEM_ASYNC_HINTS=1)
set -u
OUT=${OUT:-build/mem-round-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/.." || exit 1
[ -d ../gpu-libs ] && export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_CACHE_DISABLE=1
P=build/bpf/policies
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader 2>&1
	cat COMMIT 2>/dev/null
} > "$OUT/machine.txt"
step() { echo "--- $* ($(date +%T))"; }
bench() { # bench NAME LIMIT VAR=VALUE...
	local name=$1 limit=$2
	shift 2
	mkdir -p "$OUT/$name"
	env OUT="$OUT/$name" "$@" timeout "$limit" bash bench/mem_policy_bench.sh > "$OUT/$name/stdout.log" 2>&1
	echo "$name: rc=$? ($(grep -c '^| ' "$OUT/$name/mem-policy-bench.md" 2>/dev/null) table rows)"
	tar czf "$OUT/$name-logs.tgz" -C "$OUT/$name" logs 2>/dev/null && rm -rf "$OUT/$name/logs"
}
for part in "$@"; do
	step "$part"
	case $part in
	baseline)
		bench baseline 30 SIGNAL=cupti BUDGET=256M ITERS=2 MULTS=1.5 PATTERNS="seq dnn" \
			POLICIES="none= mru=$P/mru.bpf.o" ;;
	device)
		bench device 70 SIGNAL=device SIM=1 BUDGET=256M ITERS=2 MULTS=1.5 \
			PATTERNS="seq dnn moe decode random" \
			POLICIES="none= mru=$P/mru.bpf.o lru=$P/lru.bpf.o" ;;
	cupy)
		bench cupy 35 W=bench/python/cupy_layers.py CUPY_COMPILE_WITH_PTX=1 SIGNAL=device SIM=1 \
			BUDGET=256M ITERS=2 MULTS=1.5 PATTERNS=layers POLICIES="none= mru=$P/mru.bpf.o" ;;
	overhead)
		# budget above the footprint: the signal runs, nothing is evicted
		f="$OUT/overhead.txt"
		for pat in seq random; do
			for k in 1; do
				timeout 8 build/examples/uvm_workload -pattern "$pat" -n 384 -iters 2 2>&1 |
					grep time_ms | sed "s/^/$pat plain: /" >> "$f"
				timeout 8 build/gpuext run --mem-budget 8G -- build/examples/uvm_workload \
					-pattern "$pat" -n 384 -iters 2 2>&1 |
					grep -E "time_ms|device signal|evictions" | sed "s/^/$pat signal: /" >> "$f"
			done
		done
		cat "$f" ;;
	full)
		# Must show 1 and 3: every pattern at 1.5x and 2x, the policies that
		# differ, each run replayed by the simulator
		bench full "${FULL_LIMIT:-100}" SIGNAL=device SIM=1 BUDGET=${FULL_BUDGET:-256M} \
			ITERS=${FULL_ITERS:-3} MULTS="1.5 2" PATTERNS="seq dnn moe decode random" \
			POLICIES="none= mru=$P/mru.bpf.o lru=$P/lru.bpf.o lfu=$P/lfu.bpf.o" ;;
	records)
		# the same without the device signal: the driver's unified-memory
		# records alone (the UVM tools queue; CUPTI where it cannot be opened)
		bench records 25 SIGNAL=cupti SIM=0 BUDGET=${FULL_BUDGET:-256M} ITERS=${FULL_ITERS:-3} \
			MULTS=1.5 PATTERNS="seq dnn" POLICIES="none= mru=$P/mru.bpf.o" ;;
	cupy2)
		bench cupy2 25 W=bench/python/cupy_layers.py CUPY_COMPILE_WITH_PTX=1 SIGNAL=device SIM=1 \
			BUDGET=${FULL_BUDGET:-256M} ITERS=${FULL_ITERS:-3} MULTS=1.5 PATTERNS=layers \
			POLICIES="none= mru=$P/mru.bpf.o lru=$P/lru.bpf.o" ;;
	base)
		bench base "${BASE_LIMIT:-55}" GPUEXT="${BASE:-base}/build/gpuext" SIGNAL=device SIM=1 \
			BUDGET=256M ITERS=3 MULTS="1.5 2" PATTERNS="seq random decode" \
			POLICIES="none= mru=$P/mru.bpf.o" ;;
	ahead)
		bench ahead "${AHEAD_LIMIT:-80}" SIGNAL=device SIM=1 BUDGET=256M ITERS=3 MULTS="1.5 2" \
			PATTERNS="seq random decode" \
			POLICIES="none= mru=$P/mru.bpf.o seq-ahead=$P/seq-ahead.bpf.o" ;;
	sweep)
		bench sweep "${SWEEP_LIMIT:-25}" SIGNAL=device SIM=1 BUDGET=256M ITERS=3 MULTS="1.5 2" \
			PATTERNS=dnn POLICIES="none= lru=$P/lru.bpf.o sweep-ahead=$P/sweep-ahead.bpf.o" ;;
	fseqrand)
		bench fseqrand "${FSEQRAND_LIMIT:-40}" SIGNAL=device SIM=1 BUDGET=256M ITERS=3 \
			MULTS="1.5 2" PATTERNS="seq random" \
			POLICIES="none= mru=$P/mru.bpf.o seq-ahead=$P/seq-ahead.bpf.o" ;;
	fdnn)
		bench fdnn "${FDNN_LIMIT:-25}" SIGNAL=device SIM=1 BUDGET=256M ITERS=3 MULTS="1.5 2" \
			PATTERNS=dnn POLICIES="none= lru=$P/lru.bpf.o sweep-ahead=$P/sweep-ahead.bpf.o" ;;
	fmoedec)
		bench fmoedec "${FMOEDEC_LIMIT:-35}" SIGNAL=device SIM=1 BUDGET=256M ITERS=3 \
			MULTS="1.5 2" PATTERNS="moe decode" \
			POLICIES="none= lru=$P/lru.bpf.o mru=$P/mru.bpf.o" ;;
	fcupy)
		bench fcupy "${FCUPY_LIMIT:-30}" W=bench/python/cupy_layers.py CUPY_COMPILE_WITH_PTX=1 \
			SIGNAL=device SIM=1 BUDGET=256M ITERS=3 MULTS=1.5 PATTERNS=layers \
			POLICIES="none= lru=$P/lru.bpf.o sweep-ahead=$P/sweep-ahead.bpf.o" ;;
	hthread)
		# the runtime's hints sent by a thread of the agent's
		bench hthread "${HTHREAD_LIMIT:-25}" GPUEXT_MEM_ASYNC_HINTS=1 SIGNAL=device SIM=0 \
			BUDGET=256M ITERS=3 MULTS=1.5 PATTERNS="seq dnn" \
			POLICIES="none= seq-ahead=$P/seq-ahead.bpf.o sweep-ahead=$P/sweep-ahead.bpf.o" ;;
	asnap)
		# the signal's snapshots and the hints off the launching thread
		bench asnap "${ASNAP_LIMIT:-35}" GPUEXT_MEM_SNAPSHOT_ASYNC=1 GPUEXT_MEM_ASYNC_HINTS=1 \
			SIGNAL=device SIM=1 BUDGET=256M ITERS=3 MULTS="1.5 2" PATTERNS="seq dnn" \
			POLICIES="none= seq-ahead=$P/seq-ahead.bpf.o sweep-ahead=$P/sweep-ahead.bpf.o" ;;
	async)
		bench async "${ASYNC_LIMIT:-30}" GPUEXT_MEM_ASYNC_HINTS=1 SIGNAL=device SIM=0 \
			BUDGET=256M ITERS=3 MULTS="1.5 2" PATTERNS="${ASYNC_PATTERNS:-seq}" \
			POLICIES="none= mru=$P/mru.bpf.o seq-ahead=$P/seq-ahead.bpf.o" ;;
	*) echo "unknown part $part" ;;
	esac
done
step done
for t in "$OUT"/*/mem-policy-bench.md; do
	[ -f "$t" ] && { echo "== $t"; grep -E '^\| [a-z]' "$t" | cut -c1-200; }
done
