"""Helpers shared by the report scripts that turn benchmark JSON lines into docs/ tables."""
import json
import math
import re
import sys


def load_jsonl(path):
    """One JSON object per non-empty line; a malformed line stops with file:line."""
    records = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: bad JSON: {e}")
    return records


def slug(device):
    """File-name form of a device name: 'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-") or "unknown-device"


def fmt(v, digits=2, thousands=False):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return f"{v:,.{digits}f}" if thousands else f"{v:.{digits}f}"


def sci(v):
    return "–" if v is None else f"{v:.3g}"


def median_records(records, key, value="median_ms"):
    """Runs of one benchmark appended to one file, merged: per `key(record)` (None: kept as
    is), the record whose `value` is the median over the runs (the lower middle for an even
    count), with "runs" set to how many runs it had. Records without `value` (failed checks,
    errors) are kept as they are."""
    groups, out = {}, []
    for r in records:
        k = key(r)
        if k is None or value not in r:
            out.append(r)
        else:
            groups.setdefault(k, []).append(r)
    for rs in groups.values():
        rs = sorted(rs, key=lambda r: r[value])
        chosen = dict(rs[(len(rs) - 1) // 2])
        chosen["runs"] = len(rs)
        out.append(chosen)
    return out


def spmv_key(r):
    """Merge key of apiary-spmv measurements: one per matrix, precision and schedule."""
    if r.get("bench") in ("spmv", "spmv_floor"):
        return (r["bench"], r.get("matrix"), r.get("precision"), r.get("schedule"))
    return None
