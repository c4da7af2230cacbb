#!/usr/bin/env bash
# launch_id.sh - launch ids on the GPU (bpf_gpu_launch_id, the launch table):
# run from the repository root with the build folder carried.
#
#   [EX=build/examples] [OUT=DIR] tests/gpu/launch_id.sh
#
# Checks, each instrumented run's checksum bit-identical to the plain run's:
#   - drv_launches (every launch path of the driver API: kernelParams,
#     `extra`, cuLaunchKernelEx, cooperative, a graph kernel node and a
#     stream capture, each graph run twice) under blockretsnoop: 6 launch
#     ids, each with its row in the launch table of the right kind, and
#     grid blocks per id (twice that for the two graphs, which repeat
#     their id);
#   - vecadd -iters 3, gemm -iters 2 under blockretsnoop, vecadd -n 65536
#     -iters 3 under warpretsnoop, vecadd -iters 3 under kernelretsnoop
#     (per-launch histograms on the GPU): as many launches as the example
#     made, each with the example's grid and its blocks (warps) counted;
#     drv_launches under kernelretsnoop as under blockretsnoop.
# Prints PASS/FAIL lines and a summary; exits 1 on any failure.  ~30 s.
set -u
OUT=${OUT:-build/launch-id-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=${GPUEXT:-build/gpuext}
EX=${EX:-build/examples}
SUMMARY="$OUT/launch-id-summary.txt"
: > "$SUMMARY"
gpu_machine_info > "$OUT/machine.txt"
pass=0 fail=0
checksum() { grep '^checksum:' "$1" | tail -1; }

# check NAME TOOL BIN ARGS...: the run under TOOL (JSON), then the checker
# with the example's first line (launches, grid, block; paths for
# drv_launches).
check() {
	local name=$1 tool=$2 bin=$3
	shift 3
	if [ ! -x "$bin" ]; then
		result FAIL "$name: $bin not built"
		return
	fi
	timeout 30 "$bin" "$@" > "$OUT/$name.plain.log" 2>&1
	timeout 60 env GPUEXT_AGENT_VERBOSE=1 "$GPUEXT" run --tool "$tool" --json \
		-o "$OUT/$name.json" -- "$bin" "$@" > "$OUT/$name.app.log" 2> "$OUT/$name.err"
	local rc=$?
	if [ $rc -ne 0 ] || [ -z "$(checksum "$OUT/$name.plain.log")" ] ||
		[ "$(checksum "$OUT/$name.app.log")" != "$(checksum "$OUT/$name.plain.log")" ]; then
		result FAIL "$name: exit $rc, checksum '$(checksum "$OUT/$name.app.log")' vs plain '$(checksum "$OUT/$name.plain.log")' (see $name.err)"
		return
	fi
	local got
	got=$(python3 - "$OUT/$name.json" "$OUT/$name.plain.log" "$tool" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
first = dict(kv.split("=", 1) for kv in open(sys.argv[2]).readline().split()[1:] if "=" in kv)
def dims(v):
    d = [int(x) for x in v.split("x")]
    return d + [1] * (3 - len(d))
grid, block = dims(first.get("grid", first.get("blocks", "0"))), dims(first["block"])
nblocks = grid[0] * grid[1] * grid[2]
per = nblocks * ((block[0] * block[1] * block[2] + 31) // 32) if sys.argv[3] == "warpretsnoop" else nblocks
rows = {r["launch"]: r for r in lines if "host_ns" in r}
summ = {r["launch"]: r for r in lines if "launch" in r and "dur_ns" in r and "start_ns" not in r}
recs = [r for r in lines if "block" in r and "start_ns" in r]
ids = {}
if sys.argv[3] == "kernelretsnoop": # per-launch histograms, no record carries the id
    ids = {i: s["blocks"] for i, s in summ.items()}
else:
    for r in recs:
        ids[r["launch"]] = ids.get(r["launch"], 0) + 1
bad = []
if 0 in ids:
    bad.append("%d records without a launch id" % ids[0])
if "paths" in first: # drv_launches: 6 ids; the graphs' twice
    want_kinds = sorted(["kernel", "kernel", "ex", "cooperative", "graph-node", "kernel"])
    kinds = sorted(rows[i]["kind"] for i in ids if i in rows)
    counts = sorted(ids.values())
    if len(ids) != int(first["paths"]) or kinds != want_kinds:
        bad.append("ids %s kinds %s" % (sorted(ids), kinds))
    if counts != sorted([per] * 4 + [2 * per] * 2):
        bad.append("records per id %s" % counts)
    graph = [i for i in ids if i in rows and rows[i]["kind"] == "graph-node"]
    if not graph or ids[graph[0]] != 2 * per:
        bad.append("graph node id %s" % graph)
else:
    if len(ids) != int(first["launches"]):
        bad.append("%d launch ids for %s launches" % (len(ids), first["launches"]))
    for i, n in ids.items():
        r = rows.get(i)
        if not r or r["grid"] != grid or r["block"] != block or n != per:
            bad.append("launch %d: row %s, %d records for %d" % (i, r and (r["grid"], r["block"]), n, per))
        s = summ.get(i)
        if not s or s["grid"] != grid or s.get("blocks", s.get("warps")) != per:
            bad.append("launch %d: summary %s" % (i, s))
print("ok" if not bad else "; ".join(bad[:4]), len(ids), len(rows), len(recs))
PY
)
	read -r verdict nids nrows nrecs <<< "$got"
	[ "$verdict" = ok ] && result PASS "$name/$tool: $nids launch ids, $nrows launch rows, $nrecs records, each launch with its grid" \
		|| result FAIL "$name/$tool: $got"
}

if [ ! -x "$GPUEXT" ] || ! command -v python3 > /dev/null; then
	result FAIL "$GPUEXT or python3 missing"
else
	check drv_launches blockretsnoop "$EX/drv_launches"
	check vecadd3 blockretsnoop "$EX/vecadd" -iters 3
	check gemm2 blockretsnoop "$EX/gemm" -n 512 -iters 2
	check vecadd3w warpretsnoop "$EX/vecadd" -n 65536 -iters 3
	check vecadd3k kernelretsnoop "$EX/vecadd" -iters 3
	check drv_launches_k kernelretsnoop "$EX/drv_launches"
fi
echo "launch-id: $pass passed, $fail failed" | tee -a "$SUMMARY"
[ "$fail" -eq 0 ]
