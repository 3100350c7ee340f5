#!/usr/bin/env python3
"""Turns the JSON lines of apiary-bench-runtime into committed results:

  docs/results/<device-slug>-runtime.json   the raw records of one device (one file per device)
  docs/benchmarks.md                         tables between the runtime-results markers, rendered
                                             from every docs/results/*-runtime.json (so H100 and
                                             H200 results stand side by side); the rest is kept
  docs/img/bench_runtime.png                 ns per task, apiary against the baselines

Only measured numbers are written; the device and commit come from the records.

usage: python3 tools/bench_report.py OUT/bench_runtime.jsonl [more.jsonl ...]
                                     [--doc docs/benchmarks.md] [--results docs/results] [--img docs/img]
"""
import argparse
import glob
import json
import math
import os
import re
import sys
from collections import defaultdict
from results_common import fmt, load_jsonl, sci, slug

BEGIN = "<!-- runtime-results:begin -->"
END = "<!-- runtime-results:end -->"
GOAL = 1e9  # empty tasks per second at worker size 32 (the goal)










def ratio(v):
    """apiary ns over baseline ns, shown as 'x times cheaper' when below 1."""
    if v is None or v <= 0:
        return "–"
    return f"{1 / v:,.0f}× cheaper" if v < 1 else f"{v:.2f}× dearer"


def save_results(records, results_dir):
    """One file per device; returns the written paths."""
    by_device = defaultdict(list)
    for r in records:
        if "device" in r:
            by_device[r["device"]].append(r)
    if not by_device:
        sys.exit("no record names a device (did the benchmark run on a GPU?)")
    os.makedirs(results_dir, exist_ok=True)
    paths = []
    for device, recs in by_device.items():
        path = os.path.join(results_dir, f"{slug(device)}-runtime.json")
        with open(path, "w") as f:
            json.dump({"device": device, "commits": sorted({r.get("commit", "unknown") for r in recs}),
                       "records": recs}, f, indent=1)
            f.write("\n")
        paths.append(path)
    return paths


def pick(records, benchmark):
    # Megakernel records only (records without "scheduler" predate the scheduler comparison and
    # are the megakernel's); tools/bench_schedulers_report.py renders the other schedulers.
    return [r for r in records if r.get("benchmark") == benchmark and "median_ms" in r
            and r.get("scheduler", "megakernel") == "megakernel"]


def best_empty(records):
    best = {}
    for r in pick(records, "empty_tasks"):
        w = r["config"]["worker_size"]
        if w not in best or r["tasks_per_second"] > best[w]["tasks_per_second"]:
            best[w] = r
    return best


def device_section(device, records):
    out = []
    commits = ", ".join(sorted({r.get("commit", "unknown") for r in records}))
    repeats = sorted({r["repeats"] for r in records if "repeats" in r})
    out.append(f"### {device}\n")
    out.append(f"Commit {commits}; median of {', '.join(map(str, repeats))} timed runs after one warm-up; "
               "kernel time from CUDA events (host seeding excluded).\n")
    errors = [r for r in records if "error" in r]
    for e in errors:
        out.append(f"**Failed:** `{e.get('benchmark')}`: {e['error'].splitlines()[0]}\n")

    best = best_empty(records)
    if best:
        out.append("**Empty-task throughput (best block size per worker size)**\n")
        out.append("| worker size | tasks/s | ns per task | block threads | vs host launch | vs graph node | "
                   "÷ plain kernel | launch |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---|")
        for w in sorted(best):
            r = best[w]
            out.append(f"| {w} | {sci(r['tasks_per_second'])} | {fmt(r['ns_per_task'], 3)} | "
                       f"{r['config']['block_threads']} | {ratio(r.get('ratio_to_host_launch'))} | "
                       f"{ratio(r.get('ratio_to_graph_node'))} | {fmt(r.get('ratio_to_plain_kernel'))}× | "
                       f"{r.get('launch', '')} |")
        if 32 in best:
            met = best[32]["tasks_per_second"] >= GOAL
            out.append(f"\nGoal ≥ {GOAL:.0e} empty tasks/s at worker size 32: **{'met' if met else 'not met'}** "
                       f"({sci(best[32]['tasks_per_second'])}/s).")
        out.append("")

    base = pick(records, "host_launch") + pick(records, "graph_node") + pick(records, "plain_kernel")
    if base:
        out.append("**Baselines (same run)**\n")
        out.append("| baseline | config | median ms | ns per task |")
        out.append("|---|---|---:|---:|")
        for r in base:
            cfg = ", ".join(f"{k}={v}" for k, v in r["config"].items())
            out.append(f"| {r['benchmark']} | {cfg} | {fmt(r['median_ms'], 3)} | {fmt(r['ns_per_task'], 3)} |")
        out.append("")

    empty = pick(records, "empty_tasks")
    if empty:
        out.append("**Empty tasks seeded from the host, every block size**\n")
        out.append("| worker size | block threads | tasks | median ms | min ms | tasks/s | ns per task | host seed ms |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in sorted(empty, key=lambda r: (r["config"]["worker_size"], r["config"]["block_threads"])):
            out.append(f"| {r['config']['worker_size']} | {r['config']['block_threads']} | {r['tasks']:,} | "
                       f"{fmt(r['median_ms'], 3)} | {fmt(r['min_ms'], 3)} | {sci(r['tasks_per_second'])} | "
                       f"{fmt(r['ns_per_task'], 3)} | {fmt(r.get('seed_ms_median'), 1)} |")
        out.append("")

    spawned = pick(records, "empty_tasks_spawned")
    if spawned:
        out.append("**Empty tasks spawned on the device (roots of worker size 32 spawn `fan_out` children)**\n")
        out.append("| fan-out | block threads | tasks (roots + children) | median ms | tasks/s | children/s | ns per task |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|")
        for r in sorted(spawned, key=lambda r: (r["config"]["fan_out"], r["config"]["block_threads"])):
            out.append(f"| {r['config']['fan_out']} | {r['config']['block_threads']} | {r['tasks']:,} | "
                       f"{fmt(r['median_ms'], 3)} | {sci(r['tasks_per_second'])} | {sci(r.get('children_per_second'))} | "
                       f"{fmt(r['ns_per_task'], 3)} |")
        out.append("")

    deps = pick(records, "dependency_resolution")
    if deps:
        out.append("**Dependency resolution (producers of worker size 1 resolve; waiters parked with spawn_when)**\n")
        out.append("| fan-in | waiters | resolutions | median ms | resolutions/s | releases/s | base ms (no dependencies) | "
                   "marginal ns per resolution | marginal ns per waiter |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in sorted(deps, key=lambda r: r["config"]["fan_in"]):
            out.append(f"| {r['config']['fan_in']} | {r['config']['waiters']:,} | {r['tasks']:,} | "
                       f"{fmt(r['median_ms'], 3)} | {sci(r.get('resolutions_per_second'))} | "
                       f"{sci(r.get('releases_per_second'))} | {fmt(r.get('base_median_ms'), 3)} | "
                       f"{fmt(r.get('marginal_ns_per_resolution'), 3)} | {fmt(r.get('marginal_ns_per_waiter'), 3)} |")
        out.append("")

    chain = pick(records, "dependency_chain")
    if chain:
        out.append("**Chain latency (one task at a time, each spawns the next)**\n")
        out.append("| mode | links | median ms | µs per link | vs graph node |")
        out.append("|---|---:|---:|---:|---:|")
        for r in chain:
            out.append(f"| {r['config']['mode']} | {r['config']['links']:,} | {fmt(r['median_ms'], 3)} | "
                       f"{fmt(r['ns_per_task'] / 1e3, 3)} | {fmt(r.get('ratio_to_graph_node'))}× |")
        out.append("")
    return "\n".join(out)


def render_doc(doc, sections, image_rel):
    block = [BEGIN, "<!-- generated by tools/bench_report.py from docs/results/*-runtime.json; do not edit -->", ""]
    if sections:
        block += sections
        if image_rel:
            block.append(f"![ns per task, apiary against the baselines]({image_rel})\n")
    else:
        block.append("No results yet.\n")
    block.append(END)
    text = open(doc).read() if os.path.exists(doc) else "# Benchmarks\n\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + "\n".join(block) + tail
    else:
        text = text.rstrip("\n") + "\n\n## Runtime results\n\n" + "\n".join(block) + "\n"
    with open(doc, "w") as f:
        f.write(text)


def plot(per_device, path):
    """ns per task on a log axis: baselines and apiary's mechanisms, one bar group per device."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def bars(records):
        b = {}
        for r in pick(records, "host_launch"):
            b["host launch"] = r["ns_per_task"]
        graph = pick(records, "graph_node")
        if graph:
            b["CUDA graph node"] = max(graph, key=lambda r: r["tasks"])["ns_per_task"]
        for r in pick(records, "plain_kernel"):
            if r["config"]["worker_size"] == 32:
                b["plain kernel (32)"] = r["ns_per_task"]
        for w, r in sorted(best_empty(records).items()):
            b[f"apiary empty ({w})"] = r["ns_per_task"]
        spawned = pick(records, "empty_tasks_spawned")
        if spawned:
            b["apiary spawned (32)"] = min(r["ns_per_task"] for r in spawned)
        for r in pick(records, "dependency_resolution"):
            if r["config"]["fan_in"] == 1:
                b["apiary resolve (k=1)"] = r["ns_per_task"]
        for r in pick(records, "dependency_chain"):
            b[f"apiary chain hop ({r['config']['mode']})"] = r["ns_per_task"]
        return b

    series = {device: bars(recs) for device, recs in per_device.items()}
    labels = list(dict.fromkeys(k for s in series.values() for k in s))
    if not labels:
        return False
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(labels)), 4.5))
    width = 0.8 / len(series)
    for i, (device, s) in enumerate(series.items()):
        xs = [j + i * width for j, label in enumerate(labels) if label in s]
        ys = [s[label] for label in labels if label in s]
        ax.bar(xs, ys, width, label=device)
    ax.set_yscale("log")
    ax.set_ylabel("ns per task (log)")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(labels))])
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.axhline(1e9 / GOAL, color="gray", linestyle="--", linewidth=1)
    ax.text(-0.4, 1e9 / GOAL, "goal (worker size 32): 1 ns per task", ha="left", va="bottom", fontsize=8, color="gray")
    ax.set_title("What scheduling a task costs (lower is better)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", nargs="+")
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--results", default="docs/results")
    ap.add_argument("--img", default="docs/img")
    args = ap.parse_args()

    records = [r for path in args.jsonl for r in load_jsonl(path)]
    for path in save_results(records, args.results):
        print(f"wrote {path}")

    per_device = {}
    for path in sorted(glob.glob(os.path.join(args.results, "*-runtime.json"))):
        with open(path) as f:
            data = json.load(f)
        per_device[data["device"]] = data["records"]
    image = os.path.join(args.img, "bench_runtime.png")
    image_rel = None
    if plot(per_device, image):
        print(f"wrote {image}")
        image_rel = os.path.relpath(image, os.path.dirname(os.path.abspath(args.doc)) or ".")
    render_doc(args.doc, [device_section(d, recs) for d, recs in per_device.items()], image_rel)
    print(f"wrote {args.doc}")
    failed = [r for recs in per_device.values() for r in recs if "error" in r]
    if failed:
        print(f"warning: {len(failed)} failed measurement(s) recorded", file=sys.stderr)


if __name__ == "__main__":
    main()
