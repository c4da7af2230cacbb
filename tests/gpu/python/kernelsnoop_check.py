# Checks of kernelsnoop on one PyTorch workload (torch_train or torch_infer),
# for tests/gpu/hosttools.sh: prints one "PASS|FAIL name kernelsnoop: detail"
# line.
#
#   python3 kernelsnoop_check.py NAME STDOUT_LOG JSON_LOG
#
# STDOUT_LOG: the workload's output under `gpuext run --tool kernelsnoop
# --json -o JSON_LOG` (its last line gives marker_launches and steps).
# Checks: one kernel record per launch of the marker kernel (erfinv, which
# no other op of the scripts uses), every duration > 0, the summary's
# kernel count equal to the records, cuBLAS/cuDNN kernels (SASS only, no
# PTX) named among the records at least once per step, and every kernel
# joined with its launching API call.
import json
import re
import sys

name, out_log, json_log = sys.argv[1:4]
work = None
for line in open(out_log, errors="replace"):
    if line.startswith(name + ": steps="):
        work = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
recs, summary = [], None
for line in open(json_log, errors="replace"):
    if not line.startswith("{"):
        continue
    o = json.loads(line)
    if "kernel" in o:
        recs.append(o)
    elif "kernels" in o:
        summary = o
bad = []
if work is None:
    bad.append("no workload line")
    work = {"marker_launches": -1, "steps": -1}
marker = [r for r in recs if "erfinv" in r["kernel"]]
if len(marker) != work["marker_launches"]:
    bad.append(f"{len(marker)} erfinv records, {work['marker_launches']} launches")
if any(r["dur_ns"] <= 0 for r in recs):
    bad.append(f"{sum(r['dur_ns'] <= 0 for r in recs)} durations <= 0")
if summary is None or summary["kernels"] != len(recs):
    bad.append(f"summary {summary and summary['kernels']} != {len(recs)} records")
lib = [r for r in recs if re.search(r"gemm|gemv|cublas|cutlass|xmma|cudnn|conv|implicit", r["kernel"], re.I)]
if len(lib) < work["steps"]:
    bad.append(f"{len(lib)} cuBLAS/cuDNN kernels for {work['steps']} steps")
unjoined = sum(1 for r in recs if "api_start_ns" not in r)
if unjoined:
    bad.append(f"{unjoined} kernels without their launching call")
names = len({r["kernel"] for r in recs})
libnames = sorted({r["kernel"][:60] for r in lib})[:3]
med = sorted(r["dur_ns"] for r in recs)[len(recs) // 2] / 1e3 if recs else 0
detail = (f"{len(recs)} kernels ({names} names), {len(marker)} erfinv for "
          f"{work['marker_launches']} launches, {len(lib)} cuBLAS/cuDNN (e.g. {', '.join(libnames)}), "
          f"median {med:.1f} us, {unjoined} unjoined")
print(f"{'FAIL' if bad else 'PASS'} {name} kernelsnoop: {detail}" + ("; " + "; ".join(bad) if bad else ""))
sys.exit(1 if bad else 0)
