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
import bisect
import json
import statistics
import sys
from collections import defaultdict
from itertools import accumulate

from trace_file import TraceError, read_trace_file


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
    """Per dependency id, its resolution times and its releases (time, releasing task), each in
    time order: an id is reused only one wait after another (as the trace checker assumes)."""
    resolves = defaultdict(list)
    releases = defaultdict(list)
    for e in events:
        if e.get("cat") != "dependency":
            continue
        a = e.get("args", {})
        if e.get("name") == "resolve":
            resolves[a["dependency"]].append(a["time_ns"])
        elif e.get("name") == "release":
            releases[a["dependency"]].append((a["time_ns"], a.get("task")))
    for times in resolves.values():
        times.sort()
    for r in releases.values():
        r.sort()
    return resolves, releases


class BlockHistory:
    """The latest end among a block's tasks that started before a given time."""

    def __init__(self, tasks):
        by_block = defaultdict(list)
        for t in tasks:
            by_block[t["block"]].append((t["start"], t["end"]))
        self.starts, self.latest_end = {}, {}
        for block, spans in by_block.items():
            spans.sort()
            self.starts[block] = [s for s, _ in spans]
            self.latest_end[block] = list(accumulate((e for _, e in spans), max))

    def busy_until(self, block, before):
        i = bisect.bisect_left(self.starts[block], before)
        return self.latest_end[block][i - 1] if i > 0 else None


def waits(tasks, resolves, releases):
    """(released task, release time, releasing task id, last resolution or None) for every wait:
    a dependency's k-th release released its k-th task (in start order); its last resolution is
    the latest one after the previous release and not after this one."""
    by_dependency = defaultdict(list)
    for t in tasks.values():
        if t["dependency"] != "0x0":
            by_dependency[t["dependency"]].append(t)
    for dep, released in by_dependency.items():
        released.sort(key=lambda t: t["start"])
        times = resolves.get(dep, [])
        previous = None
        for t, (at, releaser) in zip(released, releases.get(dep, [])):
            i = bisect.bisect_right(times, at)
            last = times[i - 1] if i > 0 and (previous is None or times[i - 1] > previous) else None
            previous = at
            yield t, at, releaser, last


def gaps(path):
    _, events = read_trace_file(path)
    tasks = task_records(events, path)
    resolves, releases = dependency_times(events)
    history = BlockHistory(tasks.values())
    by_type = defaultdict(lambda: defaultdict(list))
    for t, released_at, releaser_id, last_resolve in waits(tasks, resolves, releases):
        g = by_type[t["type"]]
        if last_resolve is not None:
            g["resolve_to_release"].append(released_at - last_resolve)
        releaser = tasks.get(releaser_id)
        if releaser is not None and releaser["block"] == t["block"]:
            g["release_to_start_same_block"].append(t["start"] - released_at)
            g["start_after_releaser_end"].append(t["start"] - releaser["end"])
            g["start_after_block_busy"].append(t["start"] - history.busy_until(t["block"], t["start"]))
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
