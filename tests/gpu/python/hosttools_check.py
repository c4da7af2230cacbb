# Checks of tests/gpu/hosttools.sh for one workload (torch_train or
# torch_infer): reads the runs' logs from LOGDIR and prints one
# "PASS|FAIL name: detail" line per check.
#
#   python3 hosttools_check.py NAME LOGDIR
#
# LOGDIR/NAME.{cudatrace,syncsnoop,launchlat}.log: stdout of
# `gpuext run --tool T --json -- python3 NAME.py` (the workload's own lines
# and the tool's JSON summary); LOGDIR/NAME.trace.json: cudatrace's --trace.
import json
import sys

name, logdir = sys.argv[1], sys.argv[2]
results = []


def result(ok, what, detail):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name} {what}: {detail}")


def read(tool):
    """The workload's numbers and the tool's JSON summary of one run."""
    work, summary = None, None
    try:
        with open(f"{logdir}/{name}.{tool}.log") as f:
            for line in f:
                if line.startswith(name + ": steps="):
                    work = dict(kv.split("=") for kv in line.split()[1:])
                    work = {k: int(v) for k, v in work.items()}
                elif line.startswith('{"tool":"%s"' % tool):
                    summary = json.loads(line)
    except OSError as e:
        print(f"  {e}")
    return work, summary


def check_trace(path):
    """Perfetto's needs: traceEvents; name/ph/pid/tid; ts on timed events,
    non-decreasing per track; B/E matched per track; X with dur."""
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    stacks, last, begins, xs, launches = {}, {}, 0, 0, 0
    for i, e in enumerate(events):
        for k in ("name", "ph", "pid", "tid"):
            if k not in e:
                return f"event {i} has no {k}"
        if e["ph"] == "M":
            continue
        track = (e["pid"], e["tid"])
        if e["ts"] < last.get(track, -1):
            return f"event {i}: ts goes back on track {track}"
        last[track] = e["ts"]
        if e["ph"] == "B":
            stacks.setdefault(track, []).append(e["name"])
            begins += 1
            launches += e["name"].startswith("cuLaunchKernel")
        elif e["ph"] == "E":
            if not stacks.get(track) or stacks[track].pop() != e["name"]:
                return f"event {i}: E {e['name']} does not match its B"
        elif e["ph"] == "X":
            if e.get("dur", -1) < 0:
                return f"event {i}: X without dur"
            xs += 1
        else:
            return f"event {i}: phase {e['ph']}"
    open_ = sum(len(s) for s in stacks.values())
    if open_:
        return f"{open_} B events without E"
    return (begins, xs, launches, len(last))


# cudatrace: launches of the marker kernel, copied bytes, the planted leak
work, ct = read("cudatrace")
if not work or not ct:
    result(False, "cudatrace", f"no workload line or no summary (see {name}.cudatrace.*)")
else:
    marker = sum(k["launches"] for k in ct["kernels"] if "erfinv" in k["name"])
    result(marker == work["marker_launches"], "cudatrace launches",
           f"erfinv kernel launched {marker} times, the script made {work['marker_launches']} "
           f"calls ({ct['launches']} launches of {len(ct['kernels'])} kernels in all)")
    c = ct["copies"]
    exact = c["HtoD"]["bytes"] == work["htod_bytes"] and c["DtoH"]["bytes"] == work["dtoh_bytes"]
    total = c["HtoD"]["bytes"] + c["DtoH"]["bytes"] + c["default"]["bytes"]
    result(exact or total == work["htod_bytes"] + work["dtoh_bytes"], "cudatrace copies",
           f"HtoD {c['HtoD']['bytes']} (script {work['htod_bytes']}), DtoH {c['DtoH']['bytes']} "
           f"(script {work['dtoh_bytes']}), default {c['default']['bytes']}"
           + ("" if exact else " (matched as a total: cudart used unified cuMemcpy)"))
    sizes = [l["size"] for l in ct["leaks"]["list"]]
    for key, via in (("leak_bytes", "cudaMalloc"), ("driver_leak_bytes", "cuMemAlloc_v2")):
        n = work[key]
        if not n:  # no libcudart in the process: the driver leak only
            continue
        result(n in sizes and work["freed_bytes"] not in sizes, f"cudatrace leak ({via})",
               f"{n} bytes {'reported' if n in sizes else 'NOT reported'} among {len(sizes)}"
               f" leaks ({ct['leaks']['bytes']} bytes: PyTorch's cached blocks too); freed "
               f"{work['freed_bytes']} {'wrongly listed' if work['freed_bytes'] in sizes else 'not listed'}")
    try:
        got = check_trace(f"{logdir}/{name}.trace.json")
    except (OSError, ValueError, KeyError) as e:
        got = f"{type(e).__name__}: {e}"
    if isinstance(got, str):
        result(False, "trace", got)
    else:
        begins, xs, launches, tracks = got
        result(begins > 0 and launches >= work["marker_launches"], "trace",
               f"{begins} host calls (B/E, {launches} launches), {xs} GPU events (X), "
               f"{tracks} tracks; structure valid")

# syncsnoop: the script's torch.cuda.synchronize() calls are cuCtxSynchronize
work, ss = read("syncsnoop")
if not work or not ss:
    result(False, "syncsnoop", f"no workload line or no summary (see {name}.syncsnoop.*)")
else:
    calls = {c["call"]: c for c in ss["calls"]}
    ctx = calls.get("cuCtxSynchronize", {"count": 0})["count"]
    hist_ok = all(sum(b["count"] for b in c["hist"]["buckets"]) == c["count"]
                  for c in ss["calls"])
    result(ctx >= work["sync_calls"] and hist_ok and ss["callers"], "syncsnoop",
           f"cuCtxSynchronize {ctx} (script {work['sync_calls']} synchronize calls); "
           + ", ".join(f"{c['call']} {c['count']} x {c['ns'] // max(c['count'], 1)} ns"
                       for c in ss["calls"])
           + f"; {len(ss['callers'])} call sites")

# launchlat: every kernel from CUPTI, joined with its launch call
work, ll = read("launchlat")
if not work or not ll:
    result(False, "launchlat", f"no workload line or no summary (see {name}.launchlat.*)")
elif not ll["cupti"]:
    result(False, "launchlat", "no CUPTI kernel records (CUPTI absent or refused: see the log)")
else:
    marker = sum(k["records"] for k in ll["kernels"] if "erfinv" in k["name"])
    buckets = [b for b in ll["latency_ns"]["buckets"] if b["count"]]
    # a GPU start before its call is clock error (CUPTI's conversion): at most 1%
    result(marker == work["marker_launches"] and ll["joined"] > 0
           and ll["negative"] * 100 <= ll["joined"],
           "launchlat",
           f"{ll['api_launches']} launch calls, {ll['kernel_records']} kernel records, "
           f"{ll['joined']} joined, {ll['negative']} negative; erfinv {marker} "
           f"(script {work['marker_launches']}); latency from {buckets[0]['min'] if buckets else '-'}"
           f" to {buckets[-1]['max'] if buckets else '-'} ns; {len(ll['kernels'])} kernels")
sys.exit(0 if all(results) else 1)
