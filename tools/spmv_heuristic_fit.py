#!/usr/bin/env python3
"""Evaluates schedule-selector rules for apiary-spmv on recorded results (no GPU needed).

For every (matrix, precision) of a results file (docs/results/<device>-spmv.json, or the JSON
lines apiary-spmv writes), a rule picks a schedule from the row statistics alone (rows, cols,
nnz, mean, std, max row length); the *predicted* time of the rule is the recorded median time
of that schedule on that matrix (its own fixed-schedule record, not the "heuristic" record).
Printed per precision: geomean speedup over the better cuSPARSE algorithm of the per-matrix
best schedule, of each rule, and the rule against the best. These are predictions from the
recorded times, in-sample for the suite the file holds, not new measurements.

  python3 tools/spmv_heuristic_fit.py                       # fitted and seed rules
  python3 tools/spmv_heuristic_fit.py --rule fitted -v      # per-matrix choices
  python3 tools/spmv_heuristic_fit.py --search              # the threshold grid behind 'fitted'

A new candidate is a function stats -> schedule name added to RULES.
"""
import argparse
import collections
import itertools
import json
import math
import sys

from results_common import median_records, spmv_key

DEFAULT_RESULTS = "docs/results/nvidia-h200-spmv.json"


def load(path):
    with open(path) as f:
        text = f.read()
    try:
        data = json.loads(text)
        records = data["records"] if isinstance(data, dict) else data
    except json.JSONDecodeError:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    records = median_records(records, spmv_key)  # several suite runs: the median run of each
    device = next((r.get("device") for r in records if r.get("device")), "?")
    table = collections.defaultdict(dict)  # (matrix, precision) -> schedule -> record
    for r in records:
        if r.get("bench") == "spmv" and "median_ms" in r and r.get("check", {}).get("ok", True):
            table[(r["matrix"], r["precision"])][r["schedule"]] = r
    return device, table


def stats_of(rec):
    mean = rec["row_mean"]
    return {"rows": rec["rows"], "cols": rec["cols"], "nnz": rec["nnz"], "mean": mean, "std": rec["row_std"],
            "max": rec["row_max"], "cv": rec["row_std"] / mean if mean > 0 else 0.0,
            # absent from records before the rule used it: scattered, as the selector assumed
            "spread": rec.get("column_spread", 1.0),
            "value_bytes": 8 if rec["precision"] == "fp64" else 4}


# --- rules (keep 'fitted' in step with select_schedule() in apps/spmv/src/spmv_plan.cu) ---

def rule_seed(s):
    """The selector as first written (before any measurement)."""
    if (s["rows"] < 500 or s["cols"] < 500) and s["nnz"] < 10000:
        return "warp_mapped" if s["mean"] > 16 else "thread_mapped"
    if s["cv"] <= 0.5 and s["max"] <= 4 * s["mean"] + 16:
        return "dynamic_virtual_warp"
    return "multi_phase"


FITTED = {"cv_irregular": 0.5, "nnz_multi_phase": 1e5, "nnz_large": 1e7, "mean_warp": 32.0, "mean_virtual_warp": 8.0}
BANDED_SPREAD = 0.1  # column spread below this: banded (x read with locality)
MEAN_WARP_SCATTERED = 16.0  # even rows this long with scattered columns: a warp per row (below nnz_large)
# The former fp64-only rule (4b022cf .. 9e8b201), kept to evaluate against: where the shape
# rules say multi-phase on >= nnz_large non-zeros, dynamic virtual warps unless max row > this
# x mean. It stopped paying once fp64 multi-phase dropped its warp-edge atomics.
MAX_OVER_MEAN_DOUBLE_LARGE = 2000.0


def make_fitted(cv_irregular, nnz_multi_phase, nnz_large, mean_warp, mean_virtual_warp, scattered_rules=True):
    def by_shape(s):
        if s["cv"] > cv_irregular:  # skewed: balance by non-zeros once there is enough work
            return "multi_phase" if s["nnz"] >= nnz_multi_phase else "warp_mapped"
        if s["mean"] >= mean_warp:  # long, even rows: a warp per row
            return "warp_mapped"
        scattered = s["spread"] >= BANDED_SPREAD
        if s["mean"] >= mean_virtual_warp:  # medium rows: multi-phase when large and scattered, else 4 lanes
            if s["nnz"] >= nnz_large:
                return "multi_phase" if scattered else "virtual_warp"
            if scattered_rules and scattered and s["mean"] >= MEAN_WARP_SCATTERED:
                return "warp_mapped"
            return "virtual_warp"
        if scattered_rules and scattered and s["nnz"] >= nnz_large:  # short rows, scattered: 4 lanes
            return "virtual_warp"
        return "thread_mapped"  # short, even rows: a thread per row
    return by_shape


def make_precision_aware(shape_rule, nnz_large, max_over_mean):
    def rule(s):
        choice = shape_rule(s)
        if (s["value_bytes"] >= 8 and choice == "multi_phase" and s["nnz"] >= nnz_large
                and s["max"] <= max_over_mean * s["mean"]):
            return "dynamic_virtual_warp"
        return choice
    return rule


RULES = {"seed": rule_seed, "fitted": make_fitted(**FITTED),
         # before the two scattered-column rules (674c3e6 and earlier)
         "shape_only": make_fitted(**FITTED, scattered_rules=False),
         "fp64_dvw": make_precision_aware(make_fitted(**FITTED), FITTED["nnz_large"], MAX_OVER_MEAN_DOUBLE_LARGE)}


def is_baseline(schedule):
    return schedule.startswith("cusparse")


def evaluate(table, rule, precision, verbose=False):
    """(geomean speedup of the rule, geomean of the best schedule, matrices, worst rule/best)."""
    rule_s, best_s, worst = [], [], (math.inf, "")
    for (matrix, p), res in sorted(table.items(), key=lambda kv: next(iter(kv[1].values()))["nnz"]):
        if p != precision:
            continue
        base = [r["median_ms"] for k, r in res.items() if is_baseline(k)]
        mine = {k: r["median_ms"] for k, r in res.items() if not is_baseline(k) and k != "heuristic"}
        if not base or not mine:
            continue
        cs = min(base)
        best_name = min(mine, key=mine.get)
        choice = rule(stats_of(next(iter(res.values()))))
        if choice not in mine:
            raise SystemExit(f"{matrix} {p}: no record for schedule {choice}")
        rule_s.append(cs / mine[choice])
        best_s.append(cs / mine[best_name])
        ratio = mine[best_name] / mine[choice]
        worst = min(worst, (ratio, matrix))
        if verbose:
            s = stats_of(next(iter(res.values())))
            print(f"  {matrix:24s} nnz {s['nnz']:>11,} mean {s['mean']:6.1f} cv {s['cv']:5.2f}  "
                  f"choice {choice:21s} {ratio:5.2f} of best ({best_name})")
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
    return g(rule_s), g(best_s), len(rule_s), worst


def search(table, precisions):
    grid = {"cv_irregular": [0.5, 0.75, 1.0, 1.5, 2.0], "nnz_multi_phase": [3e4, 1e5, 3e5, 1e6],
            "nnz_large": [1e6, 3e6, 1e7, 3e7, math.inf],
            "mean_warp": [16.0, 24.0, 32.0, 48.0, 1e9], "mean_virtual_warp": [4.0, 6.0, 8.0, 12.0, 1e9]}
    rows = []
    for values in itertools.product(*grid.values()):
        params = dict(zip(grid, values))
        rule = make_fitted(**params)
        gs = [evaluate(table, rule, p)[0] / evaluate(table, rule, p)[1] for p in precisions]
        rows.append((math.exp(sum(map(math.log, gs)) / len(gs)), gs, params))
    rows.sort(key=lambda r: -r[0])
    print("Top threshold sets (objective: geomean over precisions of rule/best geomean):")
    for obj, gs, params in rows[:10]:
        print(f"  {obj:.3f}  " + " ".join(f"{p} {g:.3f}" for p, g in zip(precisions, gs)) + f"  {params}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=DEFAULT_RESULTS)
    ap.add_argument("--rule", action="append", choices=sorted(RULES), help="rules to evaluate (default: all)")
    ap.add_argument("--search", action="store_true", help="grid search over the thresholds of the fitted rule")
    ap.add_argument("-v", "--verbose", action="store_true", help="per-matrix choices")
    args = ap.parse_args()
    device, table = load(args.results)
    precisions = sorted({p for _, p in table})
    print(f"Results: {args.results} ({device}); {len(table)} matrix x precision pairs.")
    print("PREDICTION from the recorded times (in-sample, this suite), not a new measurement.")
    for name in args.rule or sorted(RULES):
        print(f"rule '{name}':")
        for p in precisions:
            g, best, n, worst = evaluate(table, RULES[name], p, args.verbose)
            print(f"  {p}: predicted geomean speedup over best cuSPARSE {g:.2f}x; best schedule per matrix "
                  f"{best:.2f}x; rule/best {g / best:.3f}; worst {worst[0]:.2f} ({worst[1]}); {n} matrices")
    if args.search:
        search(table, precisions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
