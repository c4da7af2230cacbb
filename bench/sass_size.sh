#!/usr/bin/env bash
# sass_size.sh - how much machine code a mem probe's eBPF program becomes
# where it is pasted into a kernel, on the build machine, no GPU:
#
#   [OUT=DIR] [BUILD=build] [PROGS="a.bpf.o ..."] [KERNELS="vecadd gemm reduce"]
#       [ENVS="NAME=VAR=VALUE ..."] [ARCH=sm_90] [SMS=132] [CUBINS=DIR]
#       bench/sass_size.sh
#
# For each kernel of the examples (their compute_75 PTX, build/examples/ref)
# and each program (default memtrace and memtrace's halves,
# bench/progs/memcost_*), the agent instruments the kernel through the fake
# driver (tests/fakecuda, which writes the module it is given; a device of
# SMS multiprocessors, the H200's 132 by default) and ptxas -O3
# compiles that module for ARCH: the kernel's SASS bytes (its .text section;
# and instructions) and its registers, beside the plain kernel's.  On a
# short memory-bound kernel the instructions a warp issues per access are
# the cost (docs/ptx-translate.md), so this table tracks the emitter's code
# size without a GPU.  ENVS adds columns: each NAME=VAR=VALUE[,VAR=VALUE]
# runs every cell again with those in the agent's environment (for example
# generic=GPUEXT_PTX_MAP_GENERIC=1, the code before map values were
# followed).  BUILD: the folder of the gpuext, agent and bpf/ objects to
# measure (another build's, to compare; the fake driver and examples come
# from build/).  CUBINS: a folder to keep each cell's cubin in, as
# KERNEL.PROGRAM[.NAME].cubin (to disassemble where a cuobjdump is).
# Writes $OUT/sass_size.md and prints it.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/sass-size}
BUILD=${BUILD:-build}
PROGS=${PROGS:-"$BUILD/bpf/tools/memtrace.bpf.o $BUILD/bpf/bench/progs/memcost_traffic.bpf.o $BUILD/bpf/bench/progs/memcost_heat.bpf.o $BUILD/bpf/bench/progs/memcost_none.bpf.o"}
KERNELS=${KERNELS:-"vecadd gemm reduce"}
ENVS=${ENVS:-}
ARCH=${ARCH:-sm_90}
CUBINS=${CUBINS:-}
export FAKECUDA_SMS=${SMS:-132}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
mkdir -p "$OUT"
fail=0

# The kernel (the first .entry) of an example's PTX.
entry() { grep -m1 -o '\.entry [A-Za-z0-9_$]*' "$1" | cut -d' ' -f2; }

# "BYTES INSTRUCTIONS REGS MS" of kernel $2 in the PTX module $1 compiled
# by ptxas, or "- - - -": the .text section's bytes (padded to 128 with
# NOPs), its instructions other than those NOPs (16 bytes each; a NOP's
# low 12 bits are 0x918 on sm_70 and later), registers, ptxas's compile
# time of the kernel (ms; noisy on a shared machine).
sass() {
	local ptx=$1 name=$2 cubin=${1%.ptx}.cubin regs sec
	regs=$("$PTXAS" -O3 -arch="$ARCH" -v "$ptx" -o "$cubin" 2>&1 |
		awk -v k="$name" '/Compiling entry function/ {on = index($0, "'"'"'" k "'"'"'") > 0}
			on && /Used [0-9]+ registers/ {for (i = 1; i <= NF; i++) if ($i == "Used") r = $(i + 1)}
			on && /Compile time =/ {for (i = 1; i <= NF; i++) if ($i == "=") print r, $(i + 1); exit}')
	sec=$(readelf -SW "$cubin" 2>/dev/null |
		awk -v s=".text.$name" '{for (i = 1; i < NF; i++) if ($i == s) {print $(i + 3), $(i + 4); exit}}')
	[ -n "$regs" ] && [ -n "$sec" ] || { echo "- - - -"; return 1; }
	read -r off size <<< "$sec"
	local n
	n=$(od -A n -v -t x8 -j $((16#$off)) -N $((16#$size)) "$cubin" | tr -s ' ' '\n' | grep . |
		awk 'NR % 2 == 1 && substr($1, length($1) - 2) != "918" {n++} END {print n + 0}')
	echo "$((16#$size)) $n $regs"
}

# Keep cubin $1 as CUBINS/$2.cubin, where asked.
keep() { [ -z "$CUBINS" ] || { mkdir -p "$CUBINS" && cp "$1" "$CUBINS/$2.cubin"; }; }

# One cell: program $1 (or "plain") pasted into example $2 with env $3
# (named $4 in a kept cubin's name).
cell() {
	local obj=$1 ex=$2 envv=$3 tag=$2.$(basename "$1" .bpf.o)${4:+.$4}
	local ptx=build/examples/ref/$2.compute_75.ptx name dir f
	name=$(entry "$ptx")
	if [ "$obj" = plain ]; then
		cp "$ptx" "$OUT/$ex.plain.ptx"
		sass "$OUT/$ex.plain.ptx" "$name" && keep "$OUT/$ex.plain.cubin" "$tag"
		return
	fi
	dir=$(mktemp -d "$OUT/dump.XXXXXX")
	env ${envv//,/ } FAKECUDA_DUMP="$dir" GPUEXT_AGENT="$BUILD/libgpuext-agent.so" \
		"$BUILD/gpuext" run "$obj" -- build/fakecuda/app "$ptx" "$name" "$name" \
		> "$dir/run.log" 2>&1
	# the pasted form where the agent also wrote the called one (its
	# fallback, loaded first or not depending on timing)
	f=$(grep -l '// mem probes of' "$dir"/mod-*.ptx 2>/dev/null | head -1)
	[ -n "$f" ] || f=$(grep -l 'gxp_' "$dir"/mod-*.ptx 2>/dev/null | head -1)
	if [ -z "$f" ]; then
		echo "sass_size: $obj on $ex: no instrumented module (see $dir/run.log)" >&2
		echo "- - - -"
		return 1
	fi
	sass "$f" "$name" && keep "${f%.ptx}.cubin" "$tag"
}


md="$OUT/sass_size.md"
{
	echo "# Mem probe code size: SASS of the instrumented kernel"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); $("$PTXAS" --version | tail -1); -O3 -arch=$ARCH"
	echo "- command: \`BUILD=$BUILD PROGS=\"$PROGS\" KERNELS=\"$KERNELS\" ENVS=\"$ENVS\" bench/sass_size.sh\`"
	echo "- bytes of the kernel's .text (padded to 128 with NOPs), its instructions"
	echo "  (NOPs not counted), registers; the probe pasted at every global access"
	echo "  (GPUEXT_PTX_MEM_INLINE's default)"
	echo
	hdr="| program | kernel | bytes | instructions | registers | ptxas ms |"
	sep="| --- | --- | ---: | ---: | ---: | ---: |"
	for e in $ENVS; do
		hdr+=" ${e%%=*} bytes | instructions | registers | ptxas ms |"
		sep+=" ---: | ---: | ---: | ---: |"
	done
	echo "$hdr"
	echo "$sep"
} > "$md"
for p in plain $PROGS; do
	for k in $KERNELS; do
		read -r b n r ms <<< "$(cell "$p" "$k" "")" || fail=1
		[ "$b" = - ] && fail=1
		row="| $(basename "$p" .bpf.o) | $k | $b | $n | $r | $ms |"
		for e in $ENVS; do
			[ "$p" = plain ] && { row+=" | | | |"; continue; }
			read -r b n r ms <<< "$(cell "$p" "$k" "${e#*=}" "${e%%=*}")"
			[ "$b" = - ] && fail=1
			row+=" $b | $n | $r | $ms |"
		done
		echo "$row" >> "$md"
	done
done
rm -rf "$OUT"/dump.*
cat "$md"
exit $fail
