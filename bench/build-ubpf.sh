#!/usr/bin/env bash
# Builds uBPF's VM library (interpreter + x86-64 JIT) from a uBPF source tree
# that is kept OUTSIDE this repository, for the uBPF columns of `make bench`.
#
# gpuext never copies or vendors uBPF code; the harness only links the built
# library when UBPF_DIR is given:   make bench UBPF_DIR=/path/to/ubpf
#
# Get the source (this script does not download anything):
#   git clone https://github.com/iovisor/ubpf /work/ext/ubpf
# or export a snapshot you already have:
#   git --git-dir=SNAPSHOT.git archive HEAD | tar -x -C /work/ext/ubpf
# Only vm/ is built: no git submodules are needed (they serve uBPF's own tests,
# conformance runner and fuzzers, all switched off here).
#
# Usage: bench/build-ubpf.sh UBPF_SOURCE_DIR
# Result: UBPF_SOURCE_DIR/build/lib/libubpf.a and UBPF_SOURCE_DIR/build/vm/ubpf_config.h
set -euo pipefail
if [ $# -ne 1 ] || [ ! -f "$1/vm/inc/ubpf.h" ]; then
	echo "usage: $0 UBPF_SOURCE_DIR   (a uBPF checkout: it must contain vm/inc/ubpf.h)" >&2
	exit 2
fi
src=$(cd "$1" && pwd)
command -v cmake >/dev/null || { echo "$0: cmake is required (apt-get install cmake)" >&2; exit 1; }
# -O2 like gpuext's own build (uBPF's defaults otherwise: retpolines on, which only
# matters for helper calls, and the bench programs make none).
cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-O2 \
	-DUBPF_ENABLE_TESTS=OFF -DUBPF_SKIP_EXTERNAL=ON -DUBPF_INSTALL_GIT_HOOKS=OFF \
	>/dev/null
cmake --build "$src/build" --target ubpf -j2
ls -l "$src/build/lib/libubpf.a"
