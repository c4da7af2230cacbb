#!/usr/bin/env bash
# mem_inline_ptxas.sh - what pasting a mem probe at every access costs the
# compiler (the size rule of docs/ptx-inject.md, "Mem probes inline"), on
# the build machine, no GPU:
#
#   [OUT=DIR] [PROGS="..."] [SITES="16 64 256 1024"] bench/mem_inline_ptxas.sh
#
# For each mem program (default memtrace, mem-signal, memcost_none) and each
# kernel (the examples' vecadd, gemm, reduce, and synthetic kernels of N
# global loads), the agent instruments the kernel through the fake driver
# (tests/fakecuda) twice, GPUEXT_PTX_MEM_INLINE=0 (a call per access) and =1
# (the probe pasted at each access), and ptxas -O3 compiles each module for
# sm_90: the module's bytes, ptxas's own compile time (-v, the kernel) and
# its registers.  Writes $OUT/mem_inline_ptxas.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/mem-inline-ptxas}
PROGS=${PROGS:-"build/bpf/tools/memtrace.bpf.o build/bpf/policies/mem-signal.bpf.o build/bpf/bench/progs/memcost_none.bpf.o"}
SITES=${SITES:-"16 64 256 1024"}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
mkdir -p "$OUT"

# A kernel of n global loads (a sum of n neighbours), as nvcc would write it.
synth() {
	local n=$1 i
	printf '.version 7.8\n.target sm_75\n.address_size 64\n'
	printf '.visible .entry synth%d(.param .u64 p, .param .u64 q)\n{\n' "$n"
	printf '\t.reg .f32 %%f<3>;\n\t.reg .b32 %%r<3>;\n\t.reg .b64 %%rd<6>;\n'
	printf '\tld.param.u64 %%rd1, [p];\n\tcvta.to.global.u64 %%rd1, %%rd1;\n'
	printf '\tld.param.u64 %%rd4, [q];\n\tcvta.to.global.u64 %%rd4, %%rd4;\n'
	printf '\tmov.u32 %%r1, %%tid.x;\n\tmul.wide.u32 %%rd2, %%r1, 4;\n'
	printf '\tadd.s64 %%rd3, %%rd1, %%rd2;\n\tmov.f32 %%f1, 0f00000000;\n'
	for ((i = 0; i < n; i++)); do
		printf '\tld.global.f32 %%f2, [%%rd3+%d];\n\tadd.f32 %%f1, %%f1, %%f2;\n' $((i * 512))
	done
	printf '\tadd.s64 %%rd5, %%rd4, %%rd2;\n\tst.global.f32 [%%rd5], %%f1;\n\tret;\n}\n'
}

kernels=("build/examples/ref/vecadd.compute_75.ptx vecadd"
	 "build/examples/ref/gemm.compute_75.ptx _Z10gemm_tiledPKfS0_Pfi"
	 "build/examples/ref/reduce.compute_75.ptx _Z10reduce_sumPKilPy")
for n in $SITES; do
	synth "$n" > "$OUT/synth$n.ptx"
	kernels+=("$OUT/synth$n.ptx synth$n")
done

md="$OUT/mem_inline_ptxas.md"
{
	echo "# Mem probes called vs inline: ptxas on the instrumented module"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
	echo "- ptxas: $("$PTXAS" --version | tail -1)"
	echo "- command: \`bench/mem_inline_ptxas.sh\` (ptxas -O3 -arch=sm_90 -v; compile time: ptxas's own, the kernel's)"
	echo
	echo "| program | kernel | accesses | probe bytes | x accesses | called: module bytes | ptxas ms | regs | inline: module bytes | ptxas ms | regs |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} > "$md"

fail=0
for prog in $PROGS; do
	pname=$(basename "$prog" .bpf.o)
	for k in "${kernels[@]}"; do
		read -r ptx kernel <<< "$k"
		row="| $pname | $kernel |"
		for mode in 0 1; do
			d="$OUT/$pname.$kernel.$mode"
			rm -rf "$d" && mkdir -p "$d"
			GPUEXT_AGENT_VERBOSE=1 GPUEXT_PTX_MEM_INLINE=$mode FAKECUDA_DUMP="$d" \
				GPUEXT_AGENT=build/libgpuext-agent.so build/gpuext run "$prog" -- \
				build/fakecuda/app "$ptx" "$kernel" "$kernel" > "$d/run.log" 2>&1 || fail=1
			mod=$(grep -l "$kernel" "$d"/mod-*.ptx 2>/dev/null | xargs -r grep -l 'mem probe of program' | head -1)
			if [ -z "$mod" ]; then
				row+=" - | - | - |"
				fail=1
				continue
			fi
			if [ $mode = 0 ]; then # "mem probes called at N accesses (M bytes)"
				read -r sites bytes < <(sed -n 's/.*mem probes called at \([0-9]*\) accesses (\([0-9]*\) bytes).*/\1 \2/p' "$d/run.log" | head -1)
				row+=" ${sites:--} | ${bytes:--} | $((${sites:-0} * ${bytes:-0})) |"
			fi
			timeout "${PTXAS_TIMEOUT:-120}" "$PTXAS" -O3 -arch=sm_90 -v "$mod" -o /dev/null > "$d/ptxas.log" 2>&1 || fail=1
			ms=$(sed -n "/Compiling entry function '$kernel'/,\$ s/.*Compile time = \([0-9.]*\) ms.*/\1/p" "$d/ptxas.log" | head -1)
			regs=$(sed -n "/Function properties for $kernel\$/,\$ s/.*Used \([0-9]*\) registers.*/\1/p" "$d/ptxas.log" | head -1)
			row+=" $(wc -c < "$mod") | ${ms:--} | ${regs:--} |"
		done
		echo "$row" >> "$md"
	done
done
cat "$md"
exit $fail
