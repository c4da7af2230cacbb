#!/usr/bin/env bash
# stage.sh - lay out the devmem GPU round in STAGE (default
# /work/main/stage-devmem): this branch's build as build/, BASE (a build
# folder of main: gpuext, agent, bpf/tools) as base/, the scripts, the
# conformance cases; binaries stripped to keep it small.
set -eu
cd "$(dirname "$0")/../.."
STAGE=${STAGE:-/work/main/stage-devmem}
BASE=${BASE:-/tmp/devmem-base/build}
rm -rf "$STAGE"
mkdir -p "$STAGE/build/gpu" "$STAGE/build/bpf" "$STAGE/base/bpf" "$STAGE/bench" "$STAGE/tests/gpu" \
	"$STAGE/tests/ptx_corpus"
cp build/gpuext build/libgpuext-agent.so "$STAGE/build/"
cp build/gpu/gpu_probe_bench build/gpu/gpu_conformance build/gpu/inject_check "$STAGE/build/gpu/"
cp -r build/bpf/tools "$STAGE/build/bpf/"
mkdir -p "$STAGE/build/bpf/bench/progs"
cp build/bpf/bench/progs/memcost_*.bpf.o "$STAGE/build/bpf/bench/progs/"
cp "$BASE/gpuext" "$BASE/libgpuext-agent.so" "$STAGE/base/"
cp -r "$BASE/bpf/tools" "$STAGE/base/bpf/"
strip -g "$STAGE/build/gpuext" "$STAGE/build/libgpuext-agent.so" "$STAGE"/build/gpu/* \
	"$STAGE/base/gpuext" "$STAGE/base/libgpuext-agent.so"
cp bench/memtrace_cost.sh "$STAGE/bench/"
cp tests/gpu/tools.sh "$STAGE/tests/gpu/"
cp tests/ptx_corpus/checked.compute_75.ptx "$STAGE/tests/ptx_corpus/"
cp -r ../shared/conformance/tests "$STAGE/gpu-cases"
cp -r tests/ptx_stack "$STAGE/tests/"
mkdir -p "$STAGE/build/bpf/tests/progs"
cp build/bpf/tests/progs/array_update.bpf.o "$STAGE/build/bpf/tests/progs/"
mkdir -p "$STAGE/build/bpf/examples"
cp build/bpf/examples/gpu_helpers.bpf.o "$STAGE/build/bpf/examples/"
cp bench/rounds/devmem-gpu.sh "$STAGE/gpu.sh"
find "$STAGE" -name '*.d' -delete
du -sh "$STAGE"
