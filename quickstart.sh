#!/usr/bin/env bash
# quickstart.sh - set up, build and run the bundled example, end to end.
#
#   1. installs the Debian 12 packages gpuext needs, if missing
#      (scripts/install-deps.sh; uses sudo when not root)
#   2. builds gpuext (make -j2)
#   3. runs examples/hello_maps.bpf.c on the host: a program attached to
#      cuLaunchKernel that counts launches into an array map and a hash map
#      and returns the launch's block count; `gpuext test-run` feeds it one
#      recorded call (examples/hello_maps.data) and prints r0 and both maps.
#   4. on a GPU machine: threadhist injected into build/examples/vecadd
set -euo pipefail
cd "$(dirname "$0")"

echo "== 1/3 dependencies"
scripts/install-deps.sh

echo "== 2/3 build"
make -j2

# == GPU example ==============================================================
# With a GPU (nvidia-smi answers) and the CUDA examples built (nvcc), the main
# example: threadhist injected into the kernels of an unmodified CUDA program.
if [ -x build/examples/vecadd ] && command -v nvidia-smi >/dev/null &&
	nvidia-smi -L >/dev/null 2>&1; then
	echo "== GPU example: gpuext run --tool threadhist -- build/examples/vecadd"
	build/gpuext run --tool threadhist -- build/examples/vecadd
else
	echo "== GPU example: skipped (no GPU here; on a GPU machine this runs"
	echo "   build/gpuext run --tool threadhist -- build/examples/vecadd)"
fi

echo "== 3/3 example: examples/hello_maps.bpf.c"
build/gpuext test-run build/bpf/examples/hello_maps.bpf.o uprobe/cuLaunchKernel \
	--data examples/hello_maps.data
