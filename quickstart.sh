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
#   4. (GPU example: see below.)
set -euo pipefail
cd "$(dirname "$0")"

echo "== 1/3 dependencies"
scripts/install-deps.sh

echo "== 2/3 build"
make -j2

echo "== 3/3 example: examples/hello_maps.bpf.c"
build/gpuext test-run build/bpf/examples/hello_maps.bpf.o uprobe/cuLaunchKernel \
	--data examples/hello_maps.data

# == GPU example ==============================================================
# Once the device backend lands, the main GPU example runs here when a GPU is
# present (nvidia-smi succeeds) and is skipped, saying so, otherwise:
#   if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
#       build/gpuext run --tool ... -- <bundled CUDA program>
#   fi
