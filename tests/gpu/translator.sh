#!/usr/bin/env bash
# translator.sh - what the eBPF -> PTX translator writes without a memory
# frame or a runtime call, checked on the GPU (about 10 seconds), from the
# repository root with the build folder carried:
#
#   tests/gpu/translator.sh
#
#   - tests/ptx_stack: stack slots kept in registers (several widths, reads
#     through a copied pointer after later stores, a loop) and frames that
#     must stay in memory, through gpu_conformance;
#   - tests/progs/array_update: inline bpf_map_update_elem on an array and
#     a per-SM array (values from the stack and from map memory, every
#     error result): `run-gpu` gives the r0 `test-run` gives on the host;
#   - examples/gpu_helpers: the GPU helpers written inline, packed into r0:
#     0xf000100111 for one thread of one block.
# Prints PASS/FAIL lines and "translator: N passed, M failed"; exit 1 on a
# failure.
set -u
cd "$(dirname "$0")/../.." || exit 1
[ -d gpu-libs ] && export LD_LIBRARY_PATH=$PWD/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
pass=0 fail=0
result() {
	echo "$1 $2"
	if [ "$1" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
out=$(timeout 30 build/gpu/gpu_conformance tests/ptx_stack 2>&1 | grep '^conformance (')
case $out in
*", 0 failed, 0 skipped") result PASS "tests/ptx_stack: $out" ;;
*) result FAIL "tests/ptx_stack: '$out'" ;;
esac
obj=build/bpf/tests/progs/array_update.bpf.o
want=$(build/gpuext test-run "$obj" update 2>&1 | sed -n 's/^update: r0 = \([0-9]*\) .*/\1/p')
got=$(timeout 30 build/gpuext run-gpu "$obj" update 2>&1 | sed -n 's/^r0 = \([0-9]*\) .*/\1/p')
[ -n "$want" ] && [ "$got" = "$want" ] && result PASS "array_update: r0 = $got on the GPU and the host" \
	|| result FAIL "array_update: r0 = '$got' on the GPU, '$want' on the host"
got=$(timeout 30 build/gpuext run-gpu build/bpf/examples/gpu_helpers.bpf.o helpers 2>&1 | sed -n 's/^r0 = [0-9]* (\(0x[0-9a-f]*\)).*/\1/p')
[ "$got" = 0xf000100111 ] && result PASS "gpu_helpers: r0 = $got" \
	|| result FAIL "gpu_helpers: r0 = '$got', want 0xf000100111"
echo "translator: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
