#!/usr/bin/env bash
# mem_inline_ptxas.sh - what pasting a mem probe into kernels costs the
# compiler and the code (the size rule of docs/ptx-inject.md, "Mem probes
# inline"), on the build machine, no GPU:
#
#   [OUT=DIR] [PROGS="..."] [SITES="16 64 256"] [BASE=DIR] bench/mem_inline_ptxas.sh
#
# For each mem program (default memtrace, mem-signal, memcost_none) and each
# kernel (the examples' vecadd, gemm, reduce, and synthetic kernels of N
# global loads in a row), the agent instruments the kernel through the fake
# driver (tests/fakecuda): this build with GPUEXT_PTX_MEM_INLINE=0 (a call
# per access) and =1 (pasted), and BASE's build (a build folder: its
# gpuext and agent, e.g. main's) pasted; ptxas -O3 compiles each module for
# sm_90: the module's PTX bytes, ptxas's wall time (the whole module: a
# called probe is a function of its own), the kernel's SASS bytes (its
# .text section) and registers.  Writes $OUT/mem_inline_ptxas.md.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/mem-inline-ptxas}
PROGS=${PROGS:-"build/bpf/tools/memtrace.bpf.o build/bpf/policies/mem-signal.bpf.o build/bpf/bench/progs/memcost_none.bpf.o"}
SITES=${SITES:-"16 64 256"}
BASE=${BASE:-}
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
cols="called (this build) inline"
[ -n "$BASE" ] && cols="called (this build) base inline, inline (this build)"
{
	echo "# Mem probes called vs inline: ptxas on the instrumented module"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
	echo "- ptxas: $("$PTXAS" --version | tail -1)"
	echo "- command: \`BASE=$BASE bench/mem_inline_ptxas.sh\` (ptxas -O3 -arch=sm_90 -v; ms: ptxas's wall time on the whole module; SASS: the kernel's .text bytes)"
	echo "- columns: $cols; regions: where this build pasted the probe (one per run of accesses)"
	echo
	h="| program | kernel | accesses | regions | probe bytes |"
	a="| --- | --- | ---: | ---: | ---: |"
	for c in called ${BASE:+base} inline; do
		h+=" $c: PTX bytes | ms | SASS bytes | regs |"
		a+=" ---: | ---: | ---: | ---: |"
	done
	echo "$h"
	echo "$a"
} > "$md"

# run NAME BUILD_DIR INLINE: instrument into $d, compile; appends to $row
fail=0
run() {
	local name=$1 b=$2 mode=$3 mod t0 ms sass regs
	d="$OUT/$pname.$kernel.$name"
	rm -rf "$d" && mkdir -p "$d"
	GPUEXT_AGENT_VERBOSE=1 GPUEXT_CACHE_DISABLE=1 GPUEXT_PTX_MEM_INLINE=$mode FAKECUDA_DUMP="$d" \
		GPUEXT_AGENT="$b/libgpuext-agent.so" "$b/gpuext" run "$prog" -- \
		build/fakecuda/app "$ptx" "$kernel" "$kernel" > "$d/run.log" 2>&1 || fail=1
	mod=$(grep -l "$kernel" "$d"/mod-*.ptx 2>/dev/null | xargs -r grep -l 'mem probe of program' | head -1)
	if [ -z "$mod" ]; then
		row+=" - | - | - | - |"
		fail=1
		return
	fi
	t0=$(date +%s%N)
	timeout "${PTXAS_TIMEOUT:-120}" "$PTXAS" -O3 -arch=sm_90 -v "$mod" -o "$d/x.cubin" > "$d/ptxas.log" 2>&1 || fail=1
	ms=$((($(date +%s%N) - t0) / 1000000))
	sass=$(readelf -SW "$d/x.cubin" 2>/dev/null |
		sed -n "s/.* \.text\.$kernel  *PROGBITS  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p")
	[ -n "$sass" ] && sass=$((16#$sass))
	regs=$(sed -n "/Function properties for $kernel\$/,\$ s/.*Used \([0-9]*\) registers.*/\1/p" "$d/ptxas.log" | head -1)
	row+=" $(wc -c < "$mod") | $ms | ${sass:--} | ${regs:--} |"
}

for prog in $PROGS; do
	pname=$(basename "$prog" .bpf.o)
	for k in "${kernels[@]}"; do
		read -r ptx kernel <<< "$k"
		row=""
		run called build 0
		# "mem probes called at N accesses (M bytes)"
		read -r sites bytes < <(sed -n 's/.*mem probes called at \([0-9]*\) accesses (\([0-9]*\) bytes).*/\1 \2/p' "$d/run.log" | head -1)
		[ -n "$BASE" ] && run base "$BASE" 1
		run inline build 1
		# "mem probes inline at N accesses in R regions (M bytes)"
		regions=$(sed -n 's/.*mem probes inline at [0-9]* accesses in \([0-9]*\) regions.*/\1/p' "$d/run.log" | head -1)
		echo "| $pname | $kernel | ${sites:--} | ${regions:--} | ${bytes:--} |$row" >> "$md"
	done
done
cat "$md"
exit $fail
