#!/usr/bin/env bash
# devmem-r1b.sh - the extra round: where memtrace's time goes, this branch
# only: memtrace, its halves, and variants (bench/progs/memcost_*), on
# vecadd, gemm and reduce (ITERS=31).  Run from the stage folder:
#   cd stage-devmem && OUT=DIR timeout 170 bash gpu.sh
set -u
OUT=${OUT:-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")" || exit 1
[ -d ../gpu-libs ] && export LD_LIBRARY_PATH=$PWD/../gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUDA_CACHE_DISABLE=1
[ -e build/examples ] || ln -s ../../build/examples build/examples
start=$SECONDS
OUT="$OUT/cost" ITERS=31 BUILDS="branch=build" TOOLS=memtrace TIMEOUT=12 timeout 150 bash bench/memtrace_cost.sh \
	> "$OUT/cost.log" 2>&1
echo "cost: exit $? ($((SECONDS - start)) s)"
cp "$OUT/cost/memtrace_cost.md" "$OUT/" 2>/dev/null
rm -f "$OUT"/cost/*.out
tar -C "$OUT" -czf "$OUT/cost-logs.tgz" cost 2>/dev/null && rm -rf "$OUT/cost"
cat "$OUT/memtrace_cost.md"
