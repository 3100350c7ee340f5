#!/usr/bin/env python3
"""tools/trace_gaps.py on fresh random traces built here: the medians, counts and extremes it
reports for released tasks (on the releasing block and elsewhere) against the same values
computed from the generated times, with dependency ids reused one wait after another; tasks that
waited for nothing are left out; a missing file, one that is not JSON and one that is not an
apiary trace exit with status 2."""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

root = sys.argv[1]
tool = os.path.join(root, "tools/trace_gaps.py")
work = tempfile.mkdtemp()
rng = random.Random()
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def run(*args):
    return subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)


events = [{"args": {"name": "apiary megakernel"}, "name": "process_name", "ph": "M", "pid": 1}]
expected = {"resolve_to_release": [], "release_to_start_same_block": [], "start_after_releaser_end": [],
            "start_after_block_busy": [], "release_to_start_elsewhere": []}
same_block_tasks = []
next_task = 0


def task(name, start, end, block, dependency="0x0"):
    global next_task
    next_task += 1
    events.append({"args": {"block": block, "dependency": dependency, "end_ns": end, "start_ns": start,
                            "task": next_task, "queue": 0, "sm": block // 2},
                   "cat": "phaseless", "dur": (end - start) / 1e3, "name": name, "ph": "X", "pid": 1, "tid": next_task,
                   "ts": start / 1e3})
    return next_task


waits = rng.randint(20, 60)
for d in range(waits):
    # Ids reused one wait after another: wait d uses the id of wait d mod 7, in time windows
    # 100 us apart, so each earlier wait of an id ends before the next begins.
    dep = hex(0x1000 + 16 * (d % 7))
    releaser_block = rng.randrange(8)
    r_start = 100_000 * (d // 7) + 3_000 + rng.randrange(0, 50_000)
    r_end = r_start + rng.randrange(1_000, 9_000)
    resolutions = sorted(rng.randrange(r_start - 3_000, r_end) for _ in range(rng.randint(1, 4)))
    released = resolutions[-1] + rng.randrange(100, 2_000)
    releaser = task("R", r_start, max(r_end, released + 1), releaser_block)
    for t in resolutions:
        events.append({"args": {"dependency": dep, "kind": 1, "task": releaser, "time_ns": t}, "cat": "dependency",
                       "name": "resolve", "ph": "i", "pid": 1})
    events.append({"args": {"dependency": dep, "kind": 2, "task": releaser, "time_ns": released}, "cat": "dependency",
                   "name": "release", "ph": "i", "pid": 1})
    same = rng.random() < 0.5
    start = released + rng.randrange(500, 8_000)
    block = releaser_block if same else (releaser_block + 1 + rng.randrange(7)) % 8
    task("J", start, start + 4_000, block, dep)
    expected["resolve_to_release"].append(released - resolutions[-1])
    if same:
        expected["release_to_start_same_block"].append(start - released)
        expected["start_after_releaser_end"].append(start - max(r_end, released + 1))
        same_block_tasks.append(next_task)
    else:
        expected["release_to_start_elsewhere"].append(start - released)
for _ in range(rng.randint(5, 20)):  # tasks that waited for nothing
    s = rng.randrange(0, 100_000 * (waits // 7 + 1))
    task("C", s, s + 3_000, rng.randrange(8))

# The block's earlier tasks: every task of its block that started before it (all types).
records = {e["args"]["task"]: e["args"] for e in events if e.get("ph") == "X"}
for t in same_block_tasks:
    a = records[t]
    before = [o["end_ns"] for o in records.values() if o["block"] == a["block"] and o["start_ns"] < a["start_ns"]]
    expected["start_after_block_busy"].append(a["start_ns"] - max(before))

trace = os.path.join(work, "trace.json")
with open(trace, "w") as f:
    json.dump({"traceEvents": events, "otherData": {"format": "apiary-trace"}}, f)
out = os.path.join(work, "gaps.json")
p = run(trace, "--json", out)
check(p.returncode == 0, f"exit status {p.returncode}: {p.stderr}")
if p.returncode == 0:
    with open(out) as f:
        types = json.load(f)["types"]
    check(set(types) == {"J"}, f"types reported: {sorted(types)} (only J waited for a dependency)")
    for key, values in expected.items():
        got = types.get("J", {}).get(key)
        if not values:
            check(got is None, f"{key}: reported without tasks")
            continue
        check(got is not None, f"{key}: missing")
        if got:
            check(got["n"] == len(values), f"{key}: n {got['n']} != {len(values)}")
            check(got["median_ns"] == statistics.median(values), f"{key}: median {got['median_ns']} != {statistics.median(values)}")
            check(got["min_ns"] == min(values) and got["max_ns"] == max(values), f"{key}: extremes")
    check("release -> start" in p.stdout, "text report lacks the release -> start rows")

# Bad inputs: status 2 and a message naming the file.
missing = os.path.join(work, "missing.json")
p = run(missing)
check(p.returncode == 2 and "missing.json" in p.stderr, f"missing file: {p.returncode} {p.stderr!r}")
bad = os.path.join(work, "bad.json")
with open(bad, "w") as f:
    f.write('{"traceEvents": [')
p = run(bad)
check(p.returncode == 2 and "not JSON" in p.stderr, f"malformed JSON: {p.returncode} {p.stderr!r}")
other = os.path.join(work, "other.json")
with open(other, "w") as f:
    json.dump({"rows": []}, f)
p = run(other)
check(p.returncode == 2 and "traceEvents" in p.stderr, f"not a trace: {p.returncode} {p.stderr!r}")
foreign = os.path.join(work, "foreign.json")
with open(foreign, "w") as f:
    json.dump({"traceEvents": [], "otherData": {"format": "something-else"}}, f)
p = run(foreign)
check(p.returncode == 2 and "not an apiary trace" in p.stderr, f"another tool's trace: {p.returncode} {p.stderr!r}")
broken = os.path.join(work, "broken.json")
with open(broken, "w") as f:
    json.dump({"traceEvents": [{"ph": "X", "name": "A", "args": {"task": 1}}], "otherData": {"format": "apiary-trace"}}, f)
p = run(broken)
check(p.returncode == 2 and "start_ns" in p.stderr, f"task without times: {p.returncode} {p.stderr!r}")
check(run().returncode == 2, "no arguments: status 2")

for f in failures:
    print("FAIL:", f)
print(f"{'ok' if not failures else 'failed'}: trace_gaps on a random trace of {next_task} tasks")
sys.exit(1 if failures else 0)
