#!/usr/bin/env python3
"""Where released tasks wait, from an apiary Chrome/Perfetto trace (apiary-synth --trace,
Runtime traces exported with export_chrome_trace).

For every task that waited in the waiting storage (its record names a dependency, and the trace
has that dependency's release event), per task type:
  resolve->release  the dependency's last resolution to its release (the task moved to a queue
                    or to the releasing block's hand-off slot),
  release->start    the release to the task's start, split by where the task ran: on the block
                    of the task that released it, or elsewhere,
  after releaser    for those on the releasing block: the task's start minus the releasing
                    task's end,
  after block idle  and minus the latest end of the tasks that started before it on that block
                    (what the block's batch end and next pick cost; in a traced run also the
                    record writes).
Times are medians in nanoseconds, with the count, minimum and maximum.

usage: trace_gaps.py TRACE.json [--json OUT.json]
Exit status 0, or 2 for a file that is missing, not JSON or not an apiary trace.
"""
import json
import statistics
import sys
from collections import defaultdict


class TraceError(Exception):
    pass


def load_events(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror}")
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})")
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise TraceError(f"{path}: no 'traceEvents' list: not a Chrome trace written by apiary")
    return events


def summary(values):
    if not values:
        return None
    return {"n": len(values), "median_ns": statistics.median(values), "min_ns": min(values), "max_ns": max(values)}


def task_records(events, path):
    tasks = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        a = e.get("args", {})
        try:
            tasks[a["task"]] = {"type": e["name"], "start": a["start_ns"], "end": a["end_ns"], "block": a["block"],
                                "dependency": a.get("dependency", "0x0")}
        except KeyError as k:
            raise TraceError(f"{path}: task event without {k} in its args: not written by apiary")
    return tasks


def dependency_times(events):
    resolves = defaultdict(list)  # dependency -> resolution times
    releases = {}                 # dependency -> (time, releasing task)
    for e in events:
        if e.get("cat") != "dependency":
            continue
        a = e.get("args", {})
        if e.get("name") == "resolve":
            resolves[a["dependency"]].append(a["time_ns"])
        elif e.get("name") == "release":
            releases[a["dependency"]] = (a["time_ns"], a.get("task"))
    return resolves, releases


def gaps(path):
    events = load_events(path)
    tasks = task_records(events, path)
    resolves, releases = dependency_times(events)
    on_block = defaultdict(list)
    for t in tasks.values():
        on_block[t["block"]].append(t)
    by_type = defaultdict(lambda: defaultdict(list))
    for t in tasks.values():
        dep = t["dependency"]
        if dep in ("0x0", None) or dep not in releases:
            continue
        released_at, releaser_id = releases[dep]
        g = by_type[t["type"]]
        if resolves.get(dep):
            g["resolve_to_release"].append(released_at - max(resolves[dep]))
        releaser = tasks.get(releaser_id)
        if releaser is not None and releaser["block"] == t["block"]:
            g["release_to_start_same_block"].append(t["start"] - released_at)
            g["start_after_releaser_end"].append(t["start"] - releaser["end"])
            before = [o["end"] for o in on_block[t["block"]] if o["start"] < t["start"]]
            g["start_after_block_busy"].append(t["start"] - max(before))
        else:
            g["release_to_start_elsewhere"].append(t["start"] - released_at)
    return {ty: {k: summary(v) for k, v in g.items()} for ty, g in sorted(by_type.items())}


def print_report(path, result):
    print(f"{path}: tasks released from the waiting storage")
    if not result:
        print("  none (no task waited for a dependency, or the trace has no dependency events)")
    for ty, g in result.items():
        print(f"  {ty}")
        for key, label in (("resolve_to_release", "last resolve -> release"),
                           ("release_to_start_same_block", "release -> start, on the releasing block"),
                           ("start_after_releaser_end", "start after the releasing task's end"),
                           ("start_after_block_busy", "start after the block's earlier tasks ended"),
                           ("release_to_start_elsewhere", "release -> start, elsewhere")):
            s = g.get(key)
            if s:
                print(f"    {label:44s} n={s['n']:5d}  median {s['median_ns']:8.0f} ns"
                      f"  (min {s['min_ns']:.0f}, max {s['max_ns']:.0f})")


def main(argv):
    args = argv[1:]
    out = None
    if "--json" in args:
        i = args.index("--json")
        if i + 1 >= len(args):
            print("error: --json needs a file name", file=sys.stderr)
            return 2
        out = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print("usage: trace_gaps.py TRACE.json [--json OUT.json]", file=sys.stderr)
        return 2
    try:
        result = gaps(args[0])
    except TraceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print_report(args[0], result)
    if out:
        with open(out, "w") as f:
            json.dump({"trace": args[0], "types": result}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
