#!/usr/bin/env python3
"""Summarises a same-machine A/B written by tools/gpu/ab_rounds.sh (or any JSON lines tagged with
`ab_side`): per measurement the smallest value over a side's rounds, its ratio to the base side,
and the geometric mean of those ratios per group. Knows the two programs it is used with:

  apiary-jacobi          key (version, scheduler, precision, matrix), value metrics.time_ms (the
                         median solve); --versus graph adds, per side, how many times faster each
                         task version is than that baseline version on the same matrix.
  apiary-bench-runtime   key (benchmark, scheduler, config), value median_ms.

A result whose own check failed (metrics.check_ok false) is listed and left out.
  python3 tools/ab_report.py RESULT.jsonl [--run AB_RUN] [--base SIDE] [--versus graph]
"""
import argparse
import json
import math
from collections import defaultdict


def key_and_value(r):
    if r.get("app") == "jacobi":
        c, m = r["config"], r["metrics"]
        if not m.get("check_ok", True):
            return None, None
        return ("jacobi", c["version"], c["scheduler"], c["precision"], c["matrix"]), m["time_ms"]
    if "benchmark" in r and isinstance(r.get("config"), dict):
        value = r.get("median_ms")
        if value is None:
            return None, None
        label = ", ".join(f"{k}={v}" for k, v in sorted(r["config"].items()))
        return ("bench", r["benchmark"], r.get("scheduler"), label), value
    return None, None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def load(path, run):
    best, failed, sides = {}, [], []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if run and r.get("ab_run") != run:
                continue
            side = r.get("ab_side")
            if side is None:
                continue
            if side not in sides:
                sides.append(side)
            k, v = key_and_value(r)
            if k is None:
                if r.get("app") == "jacobi":
                    failed.append((side, r["config"]["matrix"], r["config"]["version"]))
                continue
            if (side, k) not in best or v < best[(side, k)]:
                best[(side, k)] = v
    return best, failed, sides


def group_of(k):
    return k[:4] if k[0] == "jacobi" else k[:3]


def label_of(k):
    return k[4] if k[0] == "jacobi" else k[3]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--run", help="only lines with this ab_run")
    ap.add_argument("--base", help="the side the others are compared with (default: the first in the file)")
    ap.add_argument("--versus", help="Jacobi: a baseline version each task version is compared with, per side")
    args = ap.parse_args()

    best, failed, sides = load(args.results, args.run)
    if not sides:
        raise SystemExit(f"{args.results}: no lines tagged with ab_side" + (f" and ab_run {args.run}" if args.run else ""))
    base = args.base or sides[0]
    if base not in sides:
        raise SystemExit(f"--base {base}: the sides are {', '.join(sides)}")
    others = [s for s in sides if s != base]
    for f in failed:
        print(f"check failed: side {f[0]}, {f[1]}, {f[2]} (left out)")

    keys = sorted({k for (_, k) in best}, key=lambda k: (group_of(k), label_of(k)))
    groups = defaultdict(list)
    for k in keys:
        groups[group_of(k)].append(k)
    for g, ks in groups.items():
        if args.versus and g[0] == "jacobi" and g[1] == args.versus:
            continue
        print("\n## " + " / ".join(str(x) for x in g[1:]))
        head = ["measurement"] + [f"{s}" for s in sides] + [f"{s} / {base}" for s in others]
        vs = args.versus and g[0] == "jacobi"
        if vs:
            head += [f"vs {args.versus}, {s}" for s in sides]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        ratios, speedups = defaultdict(list), defaultdict(list)

        def cell(numerator, denominator, collected, digits):
            """numerator / denominator (keys of `best`) as a cell, kept in `collected`; '-' where one is missing."""
            if numerator not in best or denominator not in best:
                return "-"
            collected.append(best[numerator] / best[denominator])
            return f"{collected[-1]:.{digits}f}x"

        for k in ks:
            row = [label_of(k)] + [f"{best[(s, k)]:.4g}" if (s, k) in best else "-" for s in sides]
            row += [cell((s, k), (base, k), ratios[s], 3) for s in others]
            if vs:  # the baseline versions run without a task scheduler ("none")
                ref = ("jacobi", args.versus, "none", k[3], k[4])
                row += [cell((s, ref), (s, k), speedups[s], 2) for s in sides]
            print("| " + " | ".join(row) + " |")
        tail = ["**geomean**"] + [""] * len(sides) + [f"**{geomean(ratios[s]):.3f}x**" if ratios[s] else "-" for s in others]
        if vs:
            tail += [f"**{geomean(speedups[s]):.2f}x** (min {min(speedups[s]):.2f}x)" if speedups[s] else "-" for s in sides]
        print("| " + " | ".join(tail) + " |")


if __name__ == "__main__":
    main()
