#!/usr/bin/env python3
"""Turns the JSON lines of tools/gpu/bench_schedulers.sh into committed results:

  docs/results/<device-slug>-schedulers.json   the raw records of one device
  docs/results/<device-slug>-thesis11_individual_<scheduler>.trace.json   (with --traces)
  docs/benchmarks.md                           tables between the scheduler-results markers,
                                               rendered from every docs/results/*-schedulers.json
  docs/img/bench_schedulers.png                per-scheduler bar charts with the baselines
  docs/img/thesis11_schedulers.png             the 11-type tree (individual mode) under each
                                               scheduler, stacked (with --traces; apiary_plot.py)

Only measured numbers are written; the device and commit come from the records. Goals (the
issue's): megakernel dependency-chain latency <= 1 us per link; timesliced and device-controller
rounds < 10 us; the best scheduler's span on the 11-type tree within 1.1x its critical-path bound.

usage: python3 tools/bench_schedulers_report.py OUT/bench_schedulers.jsonl [more.jsonl ...]
           [--traces OUT] [--doc docs/benchmarks.md] [--results docs/results] [--img docs/img]
"""
import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from results_common import load_jsonl, sci, slug
from results_common import fmt as plain_fmt


def fmt(v, digits=2):
    return plain_fmt(v, digits, thousands=True)

BEGIN = "<!-- scheduler-results:begin -->"
END = "<!-- scheduler-results:end -->"
ORDER = ["megakernel", "timesliced", "timesliced_graph", "device_controller", "device_controller_wave"]
SHORT = {"megakernel": "MK", "timesliced": "TSK", "timesliced_graph": "TSK graph", "device_controller": "PDC spin",
         "device_controller_wave": "PDC wave"}
GOAL_CHAIN_NS = 1000.0
GOAL_ROUND_US = 10.0
GOAL_SPAN_OVER_BOUND = 1.1
HERE = os.path.dirname(os.path.abspath(__file__))










def schedulers_of(records):
    seen = {r["scheduler"] for r in records if r.get("scheduler")}
    return [s for s in ORDER if s in seen] + sorted(seen - set(ORDER))


def measured(records, benchmark, scheduler=None):
    return [r for r in records if r.get("benchmark") == benchmark and "median_ms" in r
            and (scheduler is None or r.get("scheduler") == scheduler)]


def save_results(records, results_dir):
    devices = {r["device"] for r in records if r.get("device")}
    if not devices:
        sys.exit("no record names a device (did the benchmark run on a GPU?)")
    if len(devices) > 1:
        sys.exit(f"records of several devices in one run: {sorted(devices)}")
    device = devices.pop()
    for r in records:  # e.g. the script's timeout records
        r.setdefault("device", device)
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"{slug(device)}-schedulers.json")
    with open(path, "w") as f:
        json.dump({"device": device, "commits": sorted({r.get("commit", "unknown") for r in records if "commit" in r}),
                   "records": records}, f, indent=1)
        f.write("\n")
    return device, path


# ---- numbers per scheduler ---------------------------------------------------------------

def metrics(records, s):
    """The headline numbers of scheduler s (None where not measured)."""
    m = {}
    best = {}
    for r in measured(records, "empty_tasks", s):
        w = r["config"]["worker_size"]
        if w not in best or r["tasks_per_second"] > best[w]:
            best[w] = r["tasks_per_second"]
    for w in (1, 32, 256):
        m[f"empty{w}"] = best.get(w)
    spawned = measured(records, "empty_tasks_spawned", s)
    m["spawned"] = max((r["tasks_per_second"] for r in spawned), default=None)
    for r in measured(records, "dependency_resolution", s):
        if r["config"]["fan_in"] == 1:
            m["resolve_ns"] = r["ns_per_task"]
    for r in measured(records, "dependency_chain", s):
        mode = r["config"]["mode"] + ("_queued" if r["config"].get("handoff") == "off" else "")
        m[f"chain_{mode}_ns"] = r["ns_per_task"]
        m[f"chain_{mode}_links"] = r["config"]["links"]
        if "us_per_round" in r:
            m[f"round_{mode}_us"] = r["us_per_round"]
            m[f"rounds_{mode}"] = r["rounds"]
    for r in measured(records, "fan_tree", s):
        c = r["config"]
        if c["kind"] == "latency":
            m["fan_level_us"] = r["us_per_level"]
            m["fan_latency_cfg"] = f"F={c['fan_out']}, D={c['depth']}"
        else:
            m[f"fan_tput_{c['fan_out']}"] = r["tasks_per_second"]
    for r in measured(records, "phase_rounds", s):
        m["phase_change_us"] = r["us_per_phase_change"]
        if r.get("rounds"):
            m["phase_rounds"] = r["rounds"]
            m["phase_round_us"] = r["median_ms"] * 1e3 / r["rounds"]
    for r in measured(records, "synthetic_tree", s):
        mode = r["config"]["mode"] + ("_queued" if r["config"].get("handoff") == "off" else "")
        m[f"syn_{mode}"] = r
    return m


def baselines(records):
    b = {}
    for r in measured(records, "host_launch"):
        b["host_launch_ns"] = r["ns_per_task"]
    graph = measured(records, "graph_node")
    if graph:
        b["graph_node_ns"] = max(graph, key=lambda r: r["tasks"])["ns_per_task"]
    for r in measured(records, "graph_while"):
        b["graph_while_ns"] = r["ns_per_task"]
        b["graph_while_iterations"] = r["config"]["iterations"]
    for r in measured(records, "host_round_trip"):
        b["round_trip_" + ("tsk_round" if r["config"]["shape"] == "tsk_round" else r["config"]["wait"])] = r["ns_per_task"]
    for r in measured(records, "device_graph_relaunch"):
        b["device_graph_" + r["config"]["shape"].replace(" ", "_")] = r["ns_per_task"]
    for r in measured(records, "plain_kernel"):
        if r["config"]["worker_size"] == 32:
            b["plain32_tps"] = r["tasks_per_second"]
    return b


def goals(per):
    """[(goal, value text, met)] from the per-scheduler metrics."""
    out = []
    mk = per.get("megakernel", {})
    if mk.get("chain_dependency_ns") is not None:
        v = mk["chain_dependency_ns"]
        out.append(("MK dependency-chain latency ≤ 1 µs per link (each link parks the next, then resolves)",
                    f"{v / 1000:.2f} µs", v <= GOAL_CHAIN_NS))
    if mk.get("chain_parked_ns") is not None:
        v = mk["chain_parked_ns"]
        out.append(("MK dependency-chain latency ≤ 1 µs per link (links parked ahead; resolve, release, run)",
                    f"{v / 1000:.2f} µs", v <= GOAL_CHAIN_NS))
    if mk.get("chain_held_ns") is not None:
        v = mk["chain_held_ns"]
        out.append(("MK dependency-chain latency ≤ 1 µs per link (each link holds the next with spawn_next_when, then resolves)",
                    f"{v / 1000:.2f} µs", v <= GOAL_CHAIN_NS))
    # A round is measured where every round does one phase change (the cyclic ping-pong);
    # older result files only have the dependency chain, which may need a single round.
    for s, m in per.items():
        v = m.get("phase_round_us", m.get("round_dependency_us"))
        if s == "megakernel" or v is None:
            continue
        out.append((f"{SHORT.get(s, s)} round < 10 µs", f"{v:.2f} µs", v < GOAL_ROUND_US))
    for mode in ("phases", "individual"):
        cands = [(m[f"syn_{mode}"]["span_over_bound"], s) for s, m in per.items()
                 if m.get(f"syn_{mode}") and m[f"syn_{mode}"].get("span_over_bound", 0) > 0]
        if cands:
            v, s = min(cands)
            out.append((f"11-type tree ({mode}): best span ≤ 1.1 × bound", f"{v:.2f} ({SHORT.get(s, s)})",
                        v <= GOAL_SPAN_OVER_BOUND))
    return out


# ---- markdown ------------------------------------------------------------------------------

def device_section(device, records):
    scheds = schedulers_of(records)
    per = {s: metrics(records, s) for s in scheds}
    b = baselines(records)
    out = [f"### {device}\n"]
    commits = ", ".join(sorted({r.get("commit", "unknown") for r in records if "commit" in r}))
    repeats = sorted({r["repeats"] for r in records if "repeats" in r})
    out.append(f"Commit {commits}; median of {', '.join(map(str, repeats))} timed runs after one warm-up "
               "(kernel time from CUDA events; the synthetic tree's span and bound come from its trace).\n")
    for e in (r for r in records if "error" in r):
        where = f" under {e['scheduler']}" if e.get("scheduler") else ""
        out.append(f"**Failed:** `{e.get('benchmark')}`{where}: {str(e['error']).splitlines()[0]}\n")

    g = goals(per)
    if g:
        out.append("**Goals**\n")
        out.append("| goal | measured | met |")
        out.append("|---|---:|:---:|")
        for name, value, met in g:
            out.append(f"| {name} | {value} | {'yes' if met else '**no**'} |")
        out.append("")

    if b:
        out.append("**Baselines** (measured in the same run)\n")
        out.append("| baseline | ns per task / iteration |")
        out.append("|---|---:|")
        if "host_launch_ns" in b:
            out.append(f"| one host launch per task | {fmt(b['host_launch_ns'], 0)} |")
        if "graph_node_ns" in b:
            out.append(f"| one CUDA graph node per task | {fmt(b['graph_node_ns'], 0)} |")
        if "graph_while_ns" in b:
            out.append(f"| CUDA graph WHILE loop, 1-kernel body ({b['graph_while_iterations']} iterations) | "
                       f"{fmt(b['graph_while_ns'], 0)} |")
        for key, name in (("round_trip_event", "host round trip: launch an empty kernel, spin on its event"),
                          ("round_trip_mapped", "host round trip: launch an empty kernel, spin on a mapped word it writes"),
                          ("round_trip_tsk_round", "the timesliced round's launch shape with empty kernels"),
                          ("device_graph_one_node", "a one-node device graph launching itself again from the device"),
                          ("device_graph_pdc_wave", "the PDC wave's graph shape with empty kernels (controller, worker node set from the device)")):
            if key in b:
                out.append(f"| {name} | {fmt(b[key], 0)} |")
        out.append("")

    if not scheds:
        return "\n".join(out)
    head = "| | " + " | ".join(SHORT.get(s, s) for s in scheds) + " |"
    rule = "|---|" + "---:|" * len(scheds)

    def row(label, key, f):
        vals = [per[s].get(key) for s in scheds]
        if all(v is None for v in vals):
            return None
        return f"| {label} | " + " | ".join(f(v) if v is not None else "–" for v in vals) + " |"

    us = lambda v: fmt(v / 1000, 2)  # noqa: E731  ns -> µs
    rows = [
        row("empty tasks/s, worker 1", "empty1", sci),
        row("empty tasks/s, worker 32", "empty32", sci),
        row("empty tasks/s, worker 256", "empty256", sci),
        row("spawned tasks/s (worker 32)", "spawned", sci),
        row("resolve + release, k = 1 (ns per resolution)", "resolve_ns", lambda v: fmt(v, 2)),
        row("chain hop, spawn (µs per link)", "chain_spawn_ns", us),
        row("chain hop, dependency (µs per link)", "chain_dependency_ns", us),
        row("chain hop, parked links (µs per link)", "chain_parked_ns", us),
        row("chain hop, held (spawn_next_when; µs per link)", "chain_held_ns", us),
        row("chain hop, spawn_next (µs per link)", "chain_next_ns", us),
        row("chain hop, spawn_next, hand-off off (µs per link)", "chain_next_queued_ns", us),
        row("chain hop, dependency, hand-off off (µs per link)", "chain_dependency_queued_ns", us),
        row("chain hop, parked links, hand-off off (µs per link)", "chain_parked_queued_ns", us),
        row("rounds of the dependency chain", "rounds_dependency", lambda v: f"{v:,}"),
        row("µs per round (dependency chain)", "round_dependency_us", lambda v: fmt(v, 2)),
        row("phase change, cyclic ping-pong (µs)", "phase_change_us", lambda v: fmt(v, 2)),
        row("rounds of the ping-pong", "phase_rounds", lambda v: f"{v:,}"),
        row("µs per round (ping-pong)", "phase_round_us", lambda v: fmt(v, 2)),
        row("fan tree, one tree: µs per level", "fan_level_us", lambda v: fmt(v, 2)),
        row("fan trees, F = 32: tasks/s", "fan_tput_32", sci),
        row("fan trees, F = 256: tasks/s", "fan_tput_256", sci),
    ]
    out.append("**Per scheduler**\n")
    out.append(head)
    out.append(rule)
    out += [r for r in rows if r]
    out.append("")

    syn_rows = []
    for mode in ("phases", "individual"):
        if not any(per[s].get(f"syn_{mode}") for s in scheds):
            continue
        for label, key, f in (("span (ms)", "span_ms_median", lambda v: fmt(v, 3)),
                              ("critical-path bound (ms)", "bound_ms_median", lambda v: fmt(v, 3)),
                              ("span / bound", "span_over_bound", lambda v: fmt(v, 2)),
                              ("span / chain sum", "span_over_chain_sum", lambda v: fmt(v, 2)),
                              ("wall time, CUDA events (ms)", "median_ms", lambda v: fmt(v, 3))):
            vals = [per[s].get(f"syn_{mode}", {}).get(key) for s in scheds]
            syn_rows.append(f"| {mode}: {label} | " + " | ".join(f(v) if v is not None else "–" for v in vals) + " |")
        chains = {per[s][f"syn_{mode}"].get("critical_chain") for s in scheds if per[s].get(f"syn_{mode}")}
        syn_rows.append(f"| {mode}: bounding chain | " + " | ".join(
            f"`{per[s][f'syn_{mode}'].get('critical_chain', '')}`" if per[s].get(f"syn_{mode}") else "–"
            for s in scheds) + " |")
        del chains
    if syn_rows:
        out.append("**11-type synthetic tree** (tracing on; `~` spawned at the start of, `>` after the end of)\n")
        out.append(head)
        out.append(rule)
        out += syn_rows
        out.append("")
    return "\n".join(out)


def render_doc(doc, sections, images):
    block = [BEGIN, "<!-- generated by tools/bench_schedulers_report.py from docs/results/*-schedulers.json; "
             "do not edit -->", ""]
    if sections:
        block += sections
        for alt, rel in images:
            block.append(f"![{alt}]({rel})\n")
    else:
        block.append("No results yet.\n")
    block.append(END)
    text = open(doc).read() if os.path.exists(doc) else "# Benchmarks\n\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + "\n".join(block) + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Scheduler results\n\n" + "\n".join(block) + "\n"
    with open(doc, "w") as f:
        f.write(text)


# ---- plots ---------------------------------------------------------------------------------

def short_device(name):
    """'NVIDIA H100 80GB HBM3' -> 'H100': the model alone, so that bar labels of several devices fit."""
    m = re.search(r"\b([A-Z]+\d{2,4}[A-Za-z]*)\b", name.replace("NVIDIA", ""))
    return m.group(1) if m else name


def plot(per_device, path):
    """Four panels, one bar per scheduler (and device): chain latency with the baselines as
    lines, empty-task throughput, fan-tree level time, synthetic span over bound."""
    try:
        import matplotlib
    except ImportError:
        print("warning: matplotlib missing, no bar chart (pip install -r tools/requirements.txt)", file=sys.stderr)
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("dependency-chain hop (µs per link)", lambda m: m.get("chain_dependency_ns"), 1e-3, True),
        ("empty tasks/s, worker 32", lambda m: m.get("empty32"), 1, True),
        ("fan tree: µs per level (F = 32)", lambda m: m.get("fan_level_us"), 1, True),
        ("11-type tree (individual): span / bound", lambda m: (m.get("syn_individual") or {}).get("span_over_bound"),
         1, False),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(16, 4.2))
    any_bar = False
    for ax, (title, get, scale, log) in zip(axes, panels):
        labels, values, colors = [], [], []
        for i, (device, records) in enumerate(per_device.items()):
            for s in schedulers_of(records):
                v = get(metrics(records, s))
                if v is None:
                    continue
                labels.append(SHORT.get(s, s) + (f"\n{short_device(device)}" if len(per_device) > 1 else ""))
                values.append(v * scale)
                colors.append(f"C{ORDER.index(s) if s in ORDER else 4}")
        if values:
            any_bar = True
            ax.bar(range(len(values)), values, color=colors)
            ax.set_xticks(range(len(values)))
            ax.set_xticklabels(labels, fontsize=7)
            if log:
                ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        if title.startswith("dependency"):
            for i, (device, records) in enumerate(per_device.items()):
                b = baselines(records)
                for key, name, style in (("host_launch_ns", "host launch", "--"), ("graph_node_ns", "graph node", ":"),
                                         ("graph_while_ns", "graph WHILE iteration", "-.")):
                    if key in b:
                        ax.axhline(b[key] * 1e-3, color="gray", linestyle=style, linewidth=1, label=name)
                break
            ax.axhline(GOAL_CHAIN_NS * 1e-3, color="red", linewidth=1, label="goal (MK)")
            ax.legend(fontsize=7)
        if title.startswith("11-type"):
            ax.axhline(GOAL_SPAN_OVER_BOUND, color="red", linewidth=1, label="goal 1.1")
            ax.axhline(1.0, color="gray", linewidth=0.8)
            ax.legend(fontsize=7)
    if not any_bar:
        plt.close(fig)
        return False
    fig.suptitle("apiary schedulers (MK megakernel, TSK timesliced, PDC device controller)", fontsize=11)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def collect_traces(traces_dir, device, results_dir):
    """Copies thesis11_individual_<scheduler>.trace.json into docs/results; returns
    [(scheduler, path)] in scheduler order for the committed copies of this device."""
    if traces_dir:
        for path in glob.glob(os.path.join(traces_dir, "thesis11_individual_*.trace.json")):
            dest = os.path.join(results_dir, f"{slug(device)}-{os.path.basename(path)}")
            shutil.copyfile(path, dest)
            print(f"wrote {dest}")
    found = {}
    prefix = f"{slug(device)}-thesis11_individual_"
    for path in glob.glob(os.path.join(results_dir, prefix + "*.trace.json")):
        found[os.path.basename(path)[len(prefix):-len(".trace.json")]] = path
    return [(s, found[s]) for s in ORDER if s in found] + sorted((s, p) for s, p in found.items() if s not in ORDER)


def compare_plot(device, traces, path):
    if len(traces) < 2:
        return False
    cmd = [sys.executable, os.path.join(HERE, "apiary_plot.py"), "--compare", *[p for _, p in traces],
           "--labels", *[f"{SHORT.get(s, s)} ({s})" for s, _ in traces],
           "--title", f"thesis11 (individual dependencies) on {device}", "-o", path]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"warning: apiary_plot.py failed ({done.returncode}): {done.stderr.strip()}", file=sys.stderr)
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", nargs="+")
    ap.add_argument("--traces", help="directory with thesis11_individual_<scheduler>.trace.json (the script's OUT)")
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--results", default="docs/results")
    ap.add_argument("--img", default="docs/img")
    args = ap.parse_args()

    records = [r for path in args.jsonl for r in load_jsonl(path)]
    device, path = save_results(records, args.results)
    print(f"wrote {path}")
    traces = collect_traces(args.traces, device, args.results)

    per_device = {}
    for p in sorted(glob.glob(os.path.join(args.results, "*-schedulers.json"))):
        with open(p) as f:
            data = json.load(f)
        per_device[data["device"]] = data["records"]
    doc_dir = os.path.dirname(os.path.abspath(args.doc)) or "."
    images = []
    bars = os.path.join(args.img, "bench_schedulers.png")
    if plot(per_device, bars):
        print(f"wrote {bars}")
        images.append(("per-scheduler benchmark results", os.path.relpath(bars, doc_dir)))
    cmp_png = os.path.join(args.img, "thesis11_schedulers.png")
    if compare_plot(device, traces, cmp_png):
        print(f"wrote {cmp_png}")
        images.append(("the 11-type tree under each scheduler", os.path.relpath(cmp_png, doc_dir)))
    render_doc(args.doc, [device_section(d, recs) for d, recs in per_device.items()], images)
    print(f"wrote {args.doc}")
    failed = [r for recs in per_device.values() for r in recs if "error" in r]
    if failed:
        print(f"warning: {len(failed)} failed measurement(s) recorded", file=sys.stderr)


if __name__ == "__main__":
    main()
