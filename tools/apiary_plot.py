#!/usr/bin/env python3
"""Scheduling plots of apiary traces (the plots of the thesis, section 7.1).

One lane per SM (sorted), each task a horizontal bar coloured by task type, phase boundaries as
labelled vertical lines at the time each phase instance started. Tasks that overlap on one SM
(several worker blocks or slots) are stacked into sub-rows of the SM's lane.

Usage:
    apiary_plot.py TRACE.json -o plot.png [--svg plot.svg] [--title TITLE]
    apiary_plot.py --compare A.json B.json [C.json ...] --labels "phases" "individual dependencies" \\
        -o cmp.png [--svg cmp.svg]

--compare stacks two or more traces (e.g. one tree under every scheduler) with one time axis.

TRACE.json is a Chrome trace written by apiary (save_chrome_trace, Config::trace, --trace FILE).
The output format follows the file suffix (.png, .svg, .pdf). Exit status: 0 ok, 2 bad input,
77 when matplotlib or numpy is not installed (python3 -m pip install -r tools/requirements.txt).
"""

from __future__ import annotations

import argparse
import heapq
import sys
from dataclasses import dataclass, field
from pathlib import Path

from trace_file import TraceError, read_trace_file

EXIT_BAD_INPUT = 2
EXIT_MISSING_MATPLOTLIB = 77  # ctest's "skipped"

# Above this many tasks the bars of an SVG/PDF are embedded as one raster image: a vector
# rectangle per task makes files of many megabytes that viewers render slowly.
RASTERIZE_ABOVE = 20_000
# Up to this many tasks, bars get a thin outline.
OUTLINE_UP_TO = 5_000
# Phase instances beyond this are drawn without labels (cyclic graphs have many epochs).
MAX_PHASE_LABELS = 24


@dataclass
class PlotTrace:
    """The parts of an apiary trace that a scheduling plot needs (times in ns from the origin)."""

    name: str
    queue_names: list[str]
    queue_phase: list[int]
    num_sms: int
    device: str
    scheduler: str
    sm: list[int] = field(default_factory=list)
    queue: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    phase: list[int] = field(default_factory=list)
    epoch: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.start)


def load_trace(path: Path) -> PlotTrace:
    """Reads the task events of an apiary Chrome trace; raises TraceError on malformed input."""
    other, events = read_trace_file(path)
    try:
        trace = PlotTrace(
            name=path.name,
            queue_names=[str(n) for n in other["queue_names"]],
            queue_phase=[int(p) for p in other["queue_phase"]],
            num_sms=int(other["num_sms"]),
            device=str(other.get("device", "")),
            scheduler=str(other.get("scheduler", "")),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise TraceError(f"{path}: /otherData: missing or mistyped field ({e})") from e
    for i, event in enumerate(events):
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        try:
            args = event["args"]
            trace.sm.append(int(args["sm"]))
            trace.queue.append(int(args["queue"]))
            trace.start.append(int(args["start_ns"]))
            trace.end.append(int(args["end_ns"]))
            trace.phase.append(int(args["phase"]))
            trace.epoch.append(int(args["epoch"]))
        except (KeyError, TypeError, ValueError) as e:
            raise TraceError(f"{path}: /traceEvents/{i}/args: missing or mistyped field ({e})") from e
    return trace


def assign_rows(trace: PlotTrace) -> tuple[list[int], dict[int, int]]:
    """Stacks overlapping tasks of one SM into sub-rows.

    Tasks are taken in start order and reuse the lowest free sub-row (end <= start). Returns each
    task's sub-row and the number of sub-rows per SM.
    """
    order = sorted(range(len(trace)), key=lambda i: (trace.sm[i], trace.start[i]))
    rows = [0] * len(trace)
    rows_per_sm: dict[int, int] = {}
    busy: list[tuple[int, int]] = []  # (end, row)
    free: list[int] = []
    current_sm = None
    count = 0
    for i in order:
        if trace.sm[i] != current_sm:
            if current_sm is not None:
                rows_per_sm[current_sm] = count
            current_sm, busy, free, count = trace.sm[i], [], [], 0
        while busy and busy[0][0] <= trace.start[i]:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            row = heapq.heappop(free)
        else:
            row, count = count, count + 1
        rows[i] = row
        heapq.heappush(busy, (max(trace.end[i], trace.start[i]), row))
    if current_sm is not None:
        rows_per_sm[current_sm] = count
    return rows, rows_per_sm


def phase_starts(trace: PlotTrace) -> list[tuple[int, int, int]]:
    """(start ns, epoch, phase) of every phase instance, in instance order."""
    starts: dict[tuple[int, int], int] = {}
    for i in range(len(trace)):
        if trace.phase[i] < 0:
            continue
        key = (trace.epoch[i], trace.phase[i])
        starts[key] = min(starts.get(key, trace.start[i]), trace.start[i])
    return [(t, epoch, phase) for (epoch, phase), t in sorted(starts.items())]


def queue_label(trace: PlotTrace, queue: int) -> str:
    name = trace.queue_names[queue] if queue < len(trace.queue_names) else f"queue {queue}"
    phase = trace.queue_phase[queue] if queue < len(trace.queue_phase) else -1
    return f"{name} (phase {phase})" if phase >= 0 else name


def draw(ax, trace: PlotTrace, colors, title: str | None) -> None:
    """Draws one scheduling plot on `ax`."""
    import numpy as np
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    sms = sorted(set(trace.sm))
    lane_of = {sm: lane for lane, sm in enumerate(sms)}
    rows, rows_per_sm = assign_rows(trace)

    n = len(trace)
    start_us = np.asarray(trace.start, dtype=np.float64) / 1000.0
    end_us = np.maximum(np.asarray(trace.end, dtype=np.float64) / 1000.0, start_us)
    lane = np.asarray([lane_of[s] for s in trace.sm], dtype=np.float64)
    sub = np.asarray([rows_per_sm[s] for s in trace.sm], dtype=np.float64)
    row = np.asarray(rows, dtype=np.float64)
    # Each SM owns the band [lane, lane + 0.9); its sub-rows split the band evenly.
    height = 0.9 / np.maximum(sub, 1)
    y0 = lane + row * height
    y1 = y0 + height * 0.92
    verts = np.empty((n, 4, 2))
    verts[:, 0, 0] = verts[:, 1, 0] = start_us
    verts[:, 2, 0] = verts[:, 3, 0] = end_us
    verts[:, 0, 1] = verts[:, 3, 1] = y0
    verts[:, 1, 1] = verts[:, 2, 1] = y1
    queues = np.asarray(trace.queue, dtype=np.int64)
    # Thin white edges keep neighbouring tasks apart; with many tasks they would hide the bars.
    few = n <= OUTLINE_UP_TO
    bars = PolyCollection(verts, facecolors=colors[queues % len(colors)],
                          edgecolors="white" if few else "none", linewidths=0.3 if few else 0,
                          antialiaseds=few, rasterized=n > RASTERIZE_ABOVE)
    ax.add_collection(bars)

    span = float(end_us.max()) if n else 1.0
    ax.set_xlim(0, span * 1.01 if span > 0 else 1.0)
    ax.set_ylim(len(sms), -0.1)  # SM 0 at the top
    step = max(1, len(sms) // 32)
    ax.set_yticks([lane_of[s] + 0.45 for s in sms[::step]])
    ax.set_yticklabels([f"SM {s}" for s in sms[::step]], fontsize=7)
    ax.set_ylabel("SM")
    ax.grid(axis="x", linewidth=0.3, alpha=0.5)

    boundaries = phase_starts(trace)
    for k, (t, epoch, phase) in enumerate(boundaries):
        x = t / 1000.0
        ax.axvline(x, color="black", linestyle="--", linewidth=0.8, alpha=0.8)
        if len(boundaries) <= MAX_PHASE_LABELS:
            label = f"phase {phase}" if epoch == phase else f"phase {phase} (epoch {epoch})"
            ax.annotate(label, (x, 0), xycoords=("data", "axes fraction"), xytext=(2, 2),
                        textcoords="offset points", fontsize=7, rotation=90, va="bottom")

    present = sorted(set(trace.queue))
    handles = [Patch(facecolor=colors[q % len(colors)], label=queue_label(trace, q)) for q in present]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False, title="task type", title_fontsize=8)
    if title:
        ax.set_title(title, fontsize=10, loc="left")


def task_colors(count: int):
    """One colour per task type: tab10, or tab20 for more types, repeating beyond 20."""
    import matplotlib
    import numpy as np

    cmap = matplotlib.colormaps["tab10" if count <= 10 else "tab20"]
    return np.asarray([cmap(i % cmap.N) for i in range(max(count, 1))])


def default_title(trace: PlotTrace) -> str:
    parts = [p for p in (trace.scheduler, trace.device) if p]
    return f"{trace.name}: {len(trace)} tasks" + (f" ({', '.join(parts)})" if parts else "")


def render(traces: list[PlotTrace], titles: list[str], outputs: list[Path]) -> None:
    """Draws one panel per trace, stacked with a shared time axis, and saves every output."""
    import matplotlib.pyplot as plt

    queues = max(max(len(t.queue_names), max(t.queue, default=-1) + 1) for t in traces)
    colors = task_colors(queues)
    lanes = [max(len(set(t.sm)), 1) for t in traces]
    # Many stacked panels get shorter ones so that the figure stays readable.
    cap = 12.0 if len(traces) <= 2 else max(4.0, 24.0 / len(traces))
    heights = [min(max(1.2 + 0.18 * n, 2.5), cap) for n in lanes]
    fig, axes = plt.subplots(len(traces), 1, sharex=True, squeeze=False,
                             figsize=(12, sum(heights) + 0.6),
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, trace, title in zip(axes[:, 0], traces, titles):
        draw(ax, trace, colors, title)
    # Same x scale for all panels: the longest run decides.
    span = max((max(t.end, default=0) for t in traces), default=0) / 1000.0
    axes[0, 0].set_xlim(0, span * 1.01 if span > 0 else 1.0)
    axes[-1, 0].set_xlabel("time (µs since the first timestamp)")
    for out in outputs:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=150)
    plt.close(fig)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Scheduling plot of apiary traces: one lane per SM, bars coloured by task "
                    "type, phase boundaries marked.")
    parser.add_argument("trace", nargs="?", type=Path, help="trace JSON written by apiary")
    parser.add_argument("--compare", nargs="+", type=Path, metavar="TRACE",
                        help="two or more traces drawn as stacked panels with the same time axis")
    parser.add_argument("--labels", nargs="+", metavar="LABEL",
                        help="panel titles for --compare (default: file names)")
    parser.add_argument("-o", "--output", type=Path, required=True,
                        help="output file; the suffix picks the format (.png, .svg, .pdf)")
    parser.add_argument("--svg", type=Path, help="also write an SVG here")
    parser.add_argument("--title", help="title (single trace) or figure title (--compare)")
    args = parser.parse_args(argv)
    if (args.trace is None) == (args.compare is None):
        parser.error("give either one TRACE or --compare A B [C ...]")
    if args.compare is not None and len(args.compare) < 2:
        parser.error("--compare needs at least two traces")
    if args.labels and not args.compare:
        parser.error("--labels goes with --compare")
    if args.labels and len(args.labels) != len(args.compare):
        parser.error(f"--labels needs one label per compared trace ({len(args.compare)})")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        import matplotlib
        import numpy  # noqa: F401  (used by draw)
    except ImportError as e:
        print(f"apiary_plot: {e}; install with: python3 -m pip install -r tools/requirements.txt",
              file=sys.stderr)
        return EXIT_MISSING_MATPLOTLIB
    matplotlib.use("Agg")

    try:
        if args.compare:
            traces = [load_trace(p) for p in args.compare]
            titles = args.labels or [default_title(t) for t in traces]
            if args.title:
                titles[0] = f"{args.title}\n{titles[0]}"
        else:
            traces = [load_trace(args.trace)]
            titles = [args.title or default_title(traces[0])]
    except TraceError as e:
        print(f"apiary_plot: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    outputs = [args.output] + ([args.svg] if args.svg else [])
    render(traces, titles, outputs)
    for out in outputs:
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
