#!/usr/bin/env bash
# The tools' GPU batch: run on a GPU machine from the repository root with
# the build folder (built by `make`, nvcc examples and the agent included)
# carried along.
#
#   [EX=build/examples] [TOOLS="..."] tests/gpu/tools.sh
#
# For every shipped tool (gpuext tools) and every CUDA example (vecadd, gemm,
# reduce, imbalance), run the example plainly and under
# `gpuext run --tool NAME --json` and check:
#   - the instrumented run's checksum is bit-identical to the plain run's;
#   - threadhist: threads = grid x block x launches, warps = launched warps;
#   - memtrace, memtrace_block: load/store/atomic bytes = the example's
#     analytic count;
#   - kernelretsnoop: one record per block index (the last launch's), none
#     ending before it started, each in its duration histogram, each placed
#     by its launch's row (block x,y,z; threads and warps the example's); every
#     duration > 0 on imbalance (long blocks);
#     blockretsnoop likewise with one record per launched block,
#     warpretsnoop with one per launched warp; all three: one per-launch
#     summary (launch ids) per launch, with the example's grid;
#   - launchlate: one latency per launch, each in (0, 1 s);
#   - smload: warps = launched warps; on `imbalance -n 64` (fewer blocks than
#     SMs: every 8th block does 16x the work) the SM warp-time max/mean is
#     >= 3 and above vecadd's; on `imbalance` (all blocks resident at once)
#     warpretsnoop's heavy warps (and the other two's heavy blocks) (every heavy_every-th block, heavy_factor
#     times the work: both printed by the example) last heavy_factor/8 to
#     heavy_factor x 1.25 times the light ones.  Not heavy_factor itself:
#     while light warps share an SM's schedulers with the heavy ones, all
#     progress at the shared issue rate; once they have left, the heavy warps
#     run alone, latency-bound and several times faster per iteration (16
#     warps a scheduler at the start, 2 at the end), so durations compress
#     the work ratio by up to that factor (measured 3.4 with 16x the work).
# Logs go to $OUT (default build/tools-gpu-out), everything is also tarred
# into $OUT/tools.tgz.  Prints PASS/FAIL lines and a summary; exits 1 on any
# failure.  Takes about a minute.
set -u
OUT=${OUT:-build/tools-gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.." || exit 1
. tests/gpu/lib.sh # result, gpu_machine_info
GPUEXT=build/gpuext
EX=${EX:-build/examples}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
SUMMARY="$OUT/tools-summary.txt"
: > "$SUMMARY"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv 2>&1
	git log -1 --oneline 2>/dev/null
	$GPUEXT tools
} > "$OUT/machine.txt"

pass=0 fail=0
finish() {
	echo "tools: $pass passed, $fail failed" | tee -a "$SUMMARY"
	tar -C "$OUT" -czf "$OUT/tools.tgz" --exclude=tools.tgz . 2>/dev/null
	[ "$fail" -eq 0 ]
	exit $?
}

# "threads warps launches grid block" from the example's first line:
# "NAME: ... launches=L grid=GxH block=BxC" (or grid=G / blocks=G, block=B).
launched() {
	head -1 "$1" | tr ' ' '\n' | awk -F= '
		function prod(v,  a, n, i, p) { n = split(v, a, "x"); p = 1; for (i = 1; i <= n; i++) p *= a[i]; return p }
		$1 == "launches" { l = $2 } $1 == "grid" || $1 == "blocks" { g = prod($2) } $1 == "block" { b = prod($2) }
		$1 == "n" { n = $2 }
		END { w = int((b + 31) / 32); printf "%d %d %d %d %d %d\n", g * b * l, g * w * l, l, g, b, n }'
}
# Analytic global-memory bytes per launch: "load store atomic".
analytic() { # analytic EXAMPLE N GRID BLOCK
	case $1 in
	vecadd) echo "$((8 * $2)) $((4 * $2)) 0" ;;
	gemm) echo "$(($2 * $2 * $2 / 2)) $((4 * $2 * $2)) 0" ;;
	reduce) echo "$((4 * $2)) 0 $((8 * $3))" ;;
	imbalance) echo "0 $((4 * $3 * $4)) 0" ;;
	esac
}
checksum() { grep '^checksum:' "$1" | tail -1; }
# Last JSON line of the tool's output (the summary) -> value of a path.
jget() { # jget FILE EXPR  (python expression on d)
	python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print($2)" "$1" 2>/dev/null
}

if [ ! -x "$GPUEXT" ] || ! command -v python3 > /dev/null; then
	result FAIL "build/gpuext or python3 missing (the checks parse the JSON output with python3)"
	finish
fi

TOOLS=${TOOLS:-threadhist memtrace memtrace_block kernelretsnoop blockretsnoop warpretsnoop launchlate smload}
declare -A SMLOAD_IMB
for ex in vecadd gemm reduce imbalance; do
	bin=$EX/$ex
	if [ ! -x "$bin" ]; then
		result FAIL "$ex: $bin not built"
		continue
	fi
	plain="$LOGS/$ex.plain.log"
	timeout 25 "$bin" > "$plain" 2>&1 || { result FAIL "$ex: plain run failed (see $plain)"; continue; }
	read -r threads warps launches grid block n < <(launched "$plain")
	for tool in $TOOLS; do
		if [ "$SECONDS" -gt 100 ]; then # keep the batch under 2 minutes
			result FAIL "$ex/$tool: not run (batch time limit)"
			continue
		fi
		log="$LOGS/$ex.$tool.json" app="$LOGS/$ex.$tool.app.log"
		# the app's own output goes to $app, the tool's to $log
		timeout 25 "$GPUEXT" run --tool "$tool" --json -o "$log" -- "$bin" > "$app" 2> "$LOGS/$ex.$tool.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			result FAIL "$ex/$tool: exit $rc (see $LOGS/$ex.$tool.err)"
			continue
		fi
		if [ "$(checksum "$app")" != "$(checksum "$plain")" ] || [ -z "$(checksum "$plain")" ]; then
			result FAIL "$ex/$tool: checksum differs from the plain run ($(checksum "$app") vs $(checksum "$plain"))"
			continue
		fi
		case $tool in
		threadhist)
			got=$(jget "$log" '"%d %d" % (d["threads"], d["warps"])')
			[ "$got" = "$threads $warps" ] && result PASS "$ex/threadhist: $threads threads, $warps warps" \
				|| result FAIL "$ex/threadhist: got threads/warps '$got', launched $threads $warps" ;;
		memtrace | memtrace_block)
			read -r l s a < <(analytic "$ex" "$n" "$grid" "$block")
			want="$((l * launches)) $((s * launches)) $((a * launches))"
			got=$(jget "$log" '"%d %d %d" % (d["load"]["bytes"], d["store"]["bytes"], d["atomic"]["bytes"])')
			[ "$got" = "$want" ] && result PASS "$ex/$tool: load/store/atomic bytes $got" \
				|| result FAIL "$ex/$tool: load/store/atomic bytes '$got', analytic '$want'" ;;
		kernelretsnoop | blockretsnoop | warpretsnoop)
			# one record per warp (warpretsnoop), per launched block
			# (blockretsnoop), per block index (kernelretsnoop: the last
			# launch's, each in its histogram)
			case $tool in
			warpretsnoop) want=$warps unit=warps ;;
			blockretsnoop) want=$((grid * launches)) unit=blocks ;;
			kernelretsnoop) want=$grid unit="block indexes" ;;
			esac
			# the example's work split: "heavy_every=E heavy_factor=F" (imbalance)
			read -r every factor < <(head -1 "$plain" | tr ' ' '\n' | awk -F= '$1 == "heavy_every" {e = $2} $1 == "heavy_factor" {f = $2} END {print e + 0, f + 0}')
			got=$(python3 - "$log" "$ex" "$every" "$factor" "$grid" "$block" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"block"')]
# kernelretsnoop's block, threads and warps come from the launch table's
# row: every record placed ("block" not null), with the example's block
bsize = int(sys.argv[6])
unjoined = sum(1 for r in recs if r["block"] is None or
               ("warps" in r and (r["threads"], r["warps"]) != (bsize, (bsize + 31) // 32)))
recs = [r for r in recs if r["block"] is not None]
# per launch (launch ids): each with the example's grid
per = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"launch"') and '"start_ns"' not in l and '"dur_ns"' in l]
grids = sum(1 for p in per if p["grid"][0] * p["grid"][1] * p["grid"][2] == int(sys.argv[5]))
zero = sum(1 for r in recs if r["dur_ns"] == 0)
back = sum(1 for r in recs if r["end_ns"] < r["start_ns"])
every, factor = int(sys.argv[3]), int(sys.argv[4])
ratio, lo, hi = 0, 0, 0
if sys.argv[2] == "imbalance" and recs and every and factor:
    heavy = [r["dur_ns"] for r in recs if r["block"][0] % every == 0]
    light = [r["dur_ns"] for r in recs if r["block"][0] % every]
    if heavy and light and sum(light):
        ratio = (sum(heavy) / len(heavy)) / (sum(light) / len(light))
    lo, hi = factor / 8, factor * 1.25
print(len(recs), zero, back, "%.2f" % ratio, "%.2f" % lo, "%.2f" % hi, len(per), grids, unjoined)
PY
)
			read -r nrec zero back ratio lo hi nlaunch ngrid unjoined <<< "$got"
			records=$nrec
			ok=1
			[ "$nrec" = "$want" ] && [ "$back" = 0 ] || ok=0
			# one per-launch summary per launch, with the example's grid
			[ "$nlaunch" = "$launches" ] && [ "$ngrid" = "$launches" ] || ok=0
			nrec="$nrec ($nlaunch launches, $ngrid with the grid)"
			if [ "$tool" = kernelretsnoop ]; then
				all=$(jget "$log" 'sum(b["count"] for b in d["dur_ns"]["buckets"])')
				[ "$all" = "$records" ] && [ "$unjoined" = 0 ] || ok=0
				nrec="$nrec (histogram: $all blocks; $unjoined without the launch's block or threads)"
			fi
			[ "$ex" = imbalance ] && { [ "$zero" = 0 ] && python3 -c "import sys; sys.exit(not 0 < $lo <= $ratio <= $hi)" || ok=0; }
			[ $ok = 1 ] && result PASS "$ex/$tool: $nrec records (= $unit), $zero zero durations (timer resolution), heavy/light $ratio (expected $lo..$hi)" \
				|| result FAIL "$ex/$tool: $nrec records for $want $unit, $zero zero, $back backwards, heavy/light $ratio (expected $lo..$hi)" ;;
		launchlate)
			got=$(python3 - "$log" <<'PY'
import json, sys
lat = [json.loads(l)["latency_ns"] for l in open(sys.argv[1]) if l.startswith('{"launch"') and "latency_ns" in l]
print(len(lat), sum(1 for x in lat if 0 < x < 1e9), min(lat) if lat else -1, max(lat) if lat else -1)
PY
)
			read -r nl good lo hi <<< "$got"
			# host records seen and device records without a launch (summary line)
			seen=$(jget "$log" '"%d host launch records, %d unpaired, %d negative" % (d["launches"], d["lost"], d["negative"])')
			[ "$nl" = "$launches" ] && [ "$good" = "$nl" ] && result PASS "$ex/launchlate: $nl launches, latency ${lo}..${hi} ns" \
				|| result FAIL "$ex/launchlate: $nl latencies ($good in (0, 1 s), $lo..$hi ns) for $launches launches; $seen" ;;
		smload)
			got=$(jget "$log" '"%d %.3f" % (d["warps"], d["busy_max_over_mean"])')
			read -r w imb <<< "$got"
			SMLOAD_IMB[$ex]=$imb
			[ "$w" = "$warps" ] && result PASS "$ex/smload: $w warps, warp-time max/mean $imb" \
				|| result FAIL "$ex/smload: $w warps for $warps launched (max/mean $imb)" ;;
		esac
	done
done

# The deliberate imbalance on fewer blocks than SMs: the heavy blocks' SMs stand out.
if [ -x "$EX/imbalance" ]; then
	log="$LOGS/imbalance64.smload.json"
	timeout 25 "$GPUEXT" run --tool smload --json -o "$log" -- "$EX/imbalance" -n 64 > "$LOGS/imbalance64.app.log" 2>&1
	imb=$(jget "$log" '"%.3f" % d["busy_max_over_mean"]')
	base=${SMLOAD_IMB[vecadd]:-0}
	if [ -n "$imb" ] && python3 -c "import sys; sys.exit(not ($imb >= 3 and $imb > $base))"; then
		result PASS "imbalance -n 64/smload: warp-time max/mean $imb (vecadd $base)"
	else
		result FAIL "imbalance -n 64/smload: warp-time max/mean '$imb' (want >= 3 and > vecadd's $base)"
	fi
	"$GPUEXT" run --tool smload -o "$LOGS/imbalance64.smload.txt" -- "$EX/imbalance" -n 64 > /dev/null 2>&1
	"$GPUEXT" run --tool threadhist -o "$LOGS/vecadd.threadhist.txt" -- "$EX/vecadd" > /dev/null 2>&1
	"$GPUEXT" run --tool launchlate -o "$LOGS/vecadd.launchlate.txt" -- "$EX/vecadd" -iters 30 > /dev/null 2>&1
fi
finish
