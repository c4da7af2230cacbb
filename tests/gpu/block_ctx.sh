#!/usr/bin/env bash
# block_ctx.sh - the block probes' record (struct gpuext_block_ctx) on the
# GPU, every field, in each form the block code gives it: run from the
# repository root with the build folder carried.
#
#   [EX=build/examples] [OUT=DIR] [GPUEXT=build/gpuext] tests/gpu/block_ctx.sh
#
# examples/gpu_block_fields.bpf.c checks each field of its record against the
# GPU helpers in a block_entry and a block_exit program and counts the
# blocks that were right and wrong.  For vecadd (the block's last exit by
# the barrier), gemm and reduce (by the counter: they have __syncthreads)
# and imbalance, each run three ways: the record's words in registers (the
# default: the programs only read fields), the record in shared memory
# (GPUEXT_PTX_BLOCK_RECORD=1), and the counted exit everywhere
# (GPUEXT_BLOCK_EXIT_COUNTED=1).  Each must give right = the blocks
# launched (grid x launches) at entry and at exit, wrong = 0, and the
# example's checksum bit-identical to the plain run's.  Prints PASS/FAIL
# lines and a summary; exits 1 on any failure.  ~30 s.
set -u
OUT=${OUT:-build/block-ctx-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=${GPUEXT:-build/gpuext}
EX=${EX:-build/examples}
PROG=${PROG:-build/bpf/examples/gpu_block_fields.bpf.o}
SUMMARY="$OUT/block-ctx-summary.txt"
: > "$SUMMARY"
gpu_machine_info > "$OUT/machine.txt"
pass=0 fail=0
checksum() { grep '^checksum:' "$1" | tail -1; }

# blocks launched: grid x launches, from the example's first line
# ("NAME: ... launches=L grid=GxH ..." or grid=G / blocks=G).
blocks() {
	head -1 "$1" | tr ' ' '\n' | awk -F= '
		function prod(v,  a, n, i, p) { n = split(v, a, "x"); p = 1; for (i = 1; i <= n; i++) p *= a[i]; return p }
		$1 == "launches" { l = $2 } $1 == "grid" || $1 == "blocks" { g = prod($2) }
		END { print g * l }'
}

for c in "vecadd -n 1048576 -iters 3" "gemm -n 512 -iters 2" "reduce -n 1048576 -iters 2" \
	"imbalance -iters 2"; do
	set -- $c
	ex=$1
	shift
	bin=$EX/$ex
	if [ ! -x "$bin" ]; then
		result FAIL "$ex: $bin not built"
		continue
	fi
	plain="$OUT/$ex.plain.log"
	timeout 30 "$bin" "$@" > "$plain" 2>&1 || { result FAIL "$ex: plain run failed (see $plain)"; continue; }
	want=$(blocks "$plain")
	for form in regs record counted; do
		envv=
		[ $form = record ] && envv=GPUEXT_PTX_BLOCK_RECORD=1
		[ $form = counted ] && envv=GPUEXT_BLOCK_EXIT_COUNTED=1
		log="$OUT/$ex.$form.json" app="$OUT/$ex.$form.app.log"
		timeout 60 env $envv GPUEXT_AGENT_VERBOSE=1 "$GPUEXT" run --json -o "$log" "$PROG" \
			-- "$bin" "$@" > "$app" 2> "$OUT/$ex.$form.err"
		rc=$?
		if [ $rc -ne 0 ] || [ -z "$(checksum "$plain")" ] ||
			[ "$(checksum "$app")" != "$(checksum "$plain")" ]; then
			result FAIL "$ex/$form: exit $rc, checksum '$(checksum "$app")' vs plain '$(checksum "$plain")' (see $ex.$form.err)"
			continue
		fi
		# checks[0..3] (entry right, wrong, exit right, wrong), failed[0..1]
		got=$(python3 - "$log" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
maps = {m["name"]: {e["key"]: e["value"] for e in m.get("entries", [])} for m in d["maps"]}
c, f = maps.get("checks", {}), maps.get("failed", {})
print(*(c.get(k, 0) for k in range(4)), *("%#x" % f.get(k, 0) for k in range(2)))
PY
)
		read -r er ew xr xw ef xf <<< "$got"
		if [ "${er:-}" = "$want" ] && [ "${xr:-}" = "$want" ] && [ "$ew" = 0 ] && [ "$xw" = 0 ]; then
			result PASS "$ex/$form: $want blocks, every field right at entry and exit"
		else
			result FAIL "$ex/$form: want $want blocks right; entry right $er wrong $ew (fields $ef), exit right $xr wrong $xw (fields $xf)"
		fi
	done
done
echo "block_ctx: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ "$fail" -eq 0 ]
