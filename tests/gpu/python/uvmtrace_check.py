# Checks of uvmtrace on one run (tests/gpu/cupti.sh, hosttools.sh): prints
# one "PASS|FAIL uvmtrace NAME: detail" line.
#
#   python3 uvmtrace_check.py NAME JSON_LOG AGENT_ERR [--managed MIB] [--touched BYTES]
#
# JSON_LOG: `gpuext run --tool uvmtrace --json -o JSON_LOG` (event lines and
# the summary); AGENT_ERR: the run's stderr with GPUEXT_AGENT_VERBOSE=1,
# whose "UVM driver:" line gives the driver's own counters (never dropped)
# and the events it dropped.
#
# Always (exact): no event dropped; the HtoD and DtoH bytes of the events
# equal the driver's byte counters, the GPU-fault records its fault
# counter, the CPU-fault records its CPU fault counter; the per-block map
# adds up to the same totals.
# --managed MIB (build/examples/managed: MIB MiB written on the host, read
# and written once by one kernel, read back by the host): exactly MIB/2
# blocks moved each way, each block 2 MiB host->device and 2 MiB back, and
# every one of them with GPU faults (exact: the data is on the host
# before the kernel and on the GPU after it).
# --touched BYTES (a workload that touches BYTES of managed memory on the
# GPU after writing them on the host): HtoD >= BYTES (a bound: the driver
# may migrate more than is touched, whole 64 KiB groups or prefetches).
import json
import re
import sys

name, json_log, err_log = sys.argv[1:4]
opts = sys.argv[4:]
managed = int(opts[opts.index("--managed") + 1]) if "--managed" in opts else None
touched = int(opts[opts.index("--touched") + 1]) if "--touched" in opts else None

summary, ev = None, {"htod": 0, "dtoh": 0, "gpu": 0, "gpu_entries": 0, "cpu": 0, "n": 0}
for line in open(json_log, errors="replace"):
    if line.startswith('{"kind"'):
        o = json.loads(line)
        ev["n"] += 1
        if o["kind"] == 1:
            ev["htod"] += o["bytes"]
        elif o["kind"] == 2:
            ev["dtoh"] += o["bytes"]
        elif o["kind"] == 3:
            ev["cpu"] += 1
        elif o["kind"] == 4:
            ev["gpu"] += 1
            ev["gpu_entries"] += o["count"]
    elif line.startswith('{"totals"'):
        summary = json.loads(line)
drv = None
for line in open(err_log, errors="replace"):
    m = re.search(r"UVM driver: (\d+) records .* (\d+) dropped; driver counters: htod_bytes (\d+) "
                  r"dtoh_bytes (\d+) gpu_faults (\d+) cpu_faults (\d+)", line)
    if m:
        drv = dict(zip(["records", "dropped", "htod", "dtoh", "gpu", "cpu"], map(int, m.groups())))
bad = []
if summary is None:
    bad.append("no uvmtrace summary")
    summary = {"by_block": [], "blocks": 0}
if drv is None:
    bad.append("no 'UVM driver:' line from the agent (GPUEXT_AGENT_VERBOSE=1?)")
else:
    if drv["dropped"]:
        bad.append(f"the driver dropped {drv['dropped']} events")
    for k, what in (("htod", "HtoD bytes"), ("dtoh", "DtoH bytes"), ("gpu", "GPU faults"), ("cpu", "CPU faults")):
        if ev[k] != drv[k]:
            bad.append(f"{what}: events {ev[k]} != driver counter {drv[k]}")
blocks = summary["by_block"]
sums = {k: sum(b[k] for b in blocks) for k in ("htod_bytes", "dtoh_bytes", "gpu_faults", "cpu_faults")}
if (sums["htod_bytes"], sums["dtoh_bytes"], sums["gpu_faults"], sums["cpu_faults"]) != (ev["htod"], ev["dtoh"], ev["gpu"], ev["cpu"]):
    bad.append(f"per-block sums {sums} != events")
if managed is not None:
    nblk, two = managed // 2, 2 << 20
    hb = [b for b in blocks if b["htod_bytes"]]
    db = [b for b in blocks if b["dtoh_bytes"]]
    if len(hb) != nblk or any(b["htod_bytes"] != two for b in hb):
        bad.append(f"{len(hb)} blocks moved to the GPU ({sorted({b['htod_bytes'] for b in hb})[:4]} bytes), "
                   f"{nblk} blocks of 2 MiB expected")
    if len(db) != nblk or any(b["dtoh_bytes"] != two for b in db):
        bad.append(f"{len(db)} blocks moved back ({sorted({b['dtoh_bytes'] for b in db})[:4]} bytes), "
                   f"{nblk} expected")
    if sum(1 for b in hb if b["gpu_faults"]) != nblk:
        bad.append(f"{sum(1 for b in hb if b['gpu_faults'])} of {nblk} blocks with GPU faults")
if touched is not None and ev["htod"] < touched:
    bad.append(f"HtoD {ev['htod']} < {touched} bytes the GPU touched")
detail = (f"htod {ev['htod'] / 2**20:.1f} MiB, dtoh {ev['dtoh'] / 2**20:.1f} MiB, "
          f"{ev['gpu']} GPU faults ({ev['gpu_entries']} entries), {ev['cpu']} CPU faults, "
          f"{summary['blocks']} blocks; driver {drv}")
print(f"{'FAIL' if bad else 'PASS'} uvmtrace {name}: {detail}" + ("; " + "; ".join(bad) if bad else ""))
sys.exit(1 if bad else 0)
