#!/usr/bin/env python3
"""Jacobi benchmark report: JSON lines from apiary-jacobi -> a markdown table (ms per solve for
each version x scheduler x matrix, like thesis Tables 8.5-8.7, with the baselines) and a plot.

usage: jacobi_report.py RESULTS.jsonl [--precision fp64] [--plot docs/img/jacobi.png] [--md OUT.md]

Goals (issue 5) are evaluated from the same records: the best apiary version vs kernel-by-kernel
(>= 2x) and vs the CUDA-graph WHILE loop (>= 1.3x) on matrices up to 1e6 non-zeros, and the
roofline fraction per iteration of the best version on the largest matrix (>= 80%).
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_common import fmt, load_jsonl  # noqa: E402

TASK_VERSIONS = ["stages_phases", "stages_deps", "checkpoints", "autonomous", "stages_inline"]
BASELINES = ["kbk", "graph", "cusparse"]
SHORT = {"megakernel": "MK", "timesliced": "TSK", "timesliced_graph": "TSK-graph", "device_controller": "PDC",
         "device_controller_wave": "PDC-wave", "stages_phases": "stages (p)", "stages_deps": "stages (id)",
         "checkpoints": "cp (id)", "autonomous": "aut (id)", "stages_inline": "stages (inl)"}


def collect(records, precision, check_every):
    """matrix -> {(version, scheduler): record}, in first-seen matrix order."""
    table = {}
    for r in records:
        c = r["config"]
        if c.get("precision") != precision or c.get("check_every", 1) != check_every:
            continue
        key = (c["version"], c.get("scheduler", "none"))
        table.setdefault(c["matrix"], {})[key] = r
    return table


def best_task(entries):
    cands = [(r["metrics"]["time_ms"], k, r) for k, r in entries.items() if k[0] in TASK_VERSIONS]
    return min(cands, key=lambda x: x[0]) if cands else None


def markdown(table, schedulers):
    lines = []
    for sched in schedulers:
        lines.append(f"\n**{SHORT.get(sched, sched)}** (ms per solve; baselines repeated in every table)\n")
        head = "| matrix | rows | nnz | iterations | " + " | ".join(SHORT[v] for v in TASK_VERSIONS) + " | kbk | graph | cuSPARSE |"
        lines += [head, "|" + "---|" * (head.count("|") - 1)]
        for m, e in table.items():
            # The matrix's row count: records before e17c8e4 put a task version's row mapping
            # under "rows" (now "row_mapping"), so take it from a record where it is a number.
            any_r = next((r for r in e.values() if isinstance(r["config"].get("rows"), int)), next(iter(e.values())))
            c, met = any_r["config"], any_r["metrics"]
            cells = []
            for v in TASK_VERSIONS:
                r = e.get((v, sched))
                cells.append(fmt(r["metrics"]["time_ms"], 2, True) + ("" if r["metrics"]["check_ok"] else " ✗") if r else "–")
            for v in BASELINES:
                r = e.get((v, "none"))
                cells.append(fmt(r["metrics"]["time_ms"], 2, True) if r else "–")
            lines.append(f"| {m} | {c['rows']:,} | {c['nnz']:,} | {met['iterations']:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def floor_cell(r):
    """The iteration against the matrix's gather floor (apiary-jacobi: the SpMV gather floor plus
    the row traffic), where the run measured one."""
    ratio = r["metrics"].get("floor_ratio")
    return f"{100 * ratio:.0f}%" if ratio is not None else "–"


def goals(table):
    lines = ["\n| matrix | nnz | best apiary (version / scheduler) | ms | vs kbk | vs graph | ms/it | roofline | gather floor |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    small_kbk, small_graph = [], []
    largest = max(table.items(), key=lambda kv: next(iter(kv[1].values()))["config"]["nnz"], default=None)
    for m, e in table.items():
        b = best_task(e)
        if not b:
            continue
        ms, (v, s), r = b
        kbk, graph = e.get(("kbk", "none")), e.get(("graph", "none"))
        vs_kbk = kbk["metrics"]["time_ms"] / ms if kbk else None
        vs_graph = graph["metrics"]["time_ms"] / ms if graph else None
        nnz = r["config"]["nnz"]
        if nnz <= 1_000_000:
            if vs_kbk:
                small_kbk.append(vs_kbk)
            if vs_graph:
                small_graph.append(vs_graph)
        lines.append(f"| {m} | {nnz:,} | {SHORT[v]} / {SHORT.get(s, s)} | {fmt(ms, 2, True)} | {fmt(vs_kbk)}x | "
                     f"{fmt(vs_graph)}x | {fmt(r['metrics']['ms_per_iter'], 4)} | {100 * r['metrics']['roofline_ratio']:.0f}% | "
                     f"{floor_cell(r)} |")
    def geo(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    summary = [f"\nMatrices up to 1e6 non-zeros: best apiary version vs kbk: geomean {geo(small_kbk):.2f}x "
               f"(min {min(small_kbk, default=float('nan')):.2f}x, goal >= 2x); vs graph WHILE: geomean "
               f"{geo(small_graph):.2f}x (min {min(small_graph, default=float('nan')):.2f}x, goal >= 1.3x)."]
    if largest:
        b = best_task(largest[1])
        if b:
            summary.append(f"Largest ({largest[0]}): best apiary version at "
                           f"{100 * b[2]['metrics']['roofline_ratio']:.0f}% of the bandwidth roofline per iteration (goal >= 80%)"
                           + (f", {floor_cell(b[2])} of its gather floor." if "floor_ratio" in b[2]["metrics"] else "."))
    return "\n".join(lines + summary)


def plot(table, path, precision):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mats = list(table)
    series = [("kbk", lambda e: e.get(("kbk", "none"))), ("graph WHILE", lambda e: e.get(("graph", "none"))),
              ("cuSPARSE loop", lambda e: e.get(("cusparse", "none")))]
    for v in TASK_VERSIONS:
        series.append((f"{SHORT[v]} (best scheduler)",
                       lambda e, v=v: min((r for k, r in e.items() if k[0] == v), key=lambda r: r["metrics"]["time_ms"],
                                          default=None)))
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(mats)), 4.8))
    width = 0.8 / len(series)
    for i, (label, pick) in enumerate(series):
        ys = []
        for m in mats:
            r = pick(table[m])
            ys.append(r["metrics"]["ms_per_iter"] * 1e3 if r else float("nan"))
        ax.bar([j + i * width for j in range(len(mats))], ys, width, label=label)
    ax.set_yscale("log")
    ax.set_ylabel("µs per iteration")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(mats))])
    ax.set_xticklabels(mats, rotation=30, ha="right", fontsize=8)
    dev = next(iter(next(iter(table.values())).values()))["device"]["name"]
    ax.set_title(f"Jacobi, {precision}: time per iteration ({dev})")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--precision", default="fp64")
    ap.add_argument("--check-every", type=int, default=1)
    ap.add_argument("--plot")
    ap.add_argument("--md")
    a = ap.parse_args()
    table = collect(load_jsonl(a.results), a.precision, a.check_every)
    if not table:
        sys.exit(f"{a.results}: no {a.precision} records with check_every {a.check_every}")
    schedulers = []
    for e in table.values():
        for (v, s) in e:
            if v in TASK_VERSIONS and s not in schedulers:
                schedulers.append(s)
    text = markdown(table, schedulers) + "\n" + goals(table) + "\n"
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    print(text)
    if a.plot:
        plot(table, a.plot, a.precision)


if __name__ == "__main__":
    main()
