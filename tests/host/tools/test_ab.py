#!/usr/bin/env python3
"""tools/gpu/ab_rounds.sh and tools/ab_report.py on fake programs: every round's lines tagged
with its side, build and round; the report's ratios, geomean and versus-baseline speedups; a
failed check left out and named; bad arguments refused with exit status 2."""
import json
import os
import random
import subprocess
import sys
import tempfile

root = sys.argv[1]
ab_rounds = os.path.join(root, "tools/gpu/ab_rounds.sh")
ab_report = os.path.join(root, "tools/ab_report.py")
rng = random.Random()
work = tempfile.mkdtemp()


def fake_program(name, times, failed_matrix=None):
    """A program that writes Jacobi-like lines (version, matrix -> time) to the file after --json."""
    lines = []
    for (version, matrix), t in times.items():
        ok = matrix != failed_matrix
        lines.append(json.dumps({"app": "jacobi", "config": {"version": version, "scheduler": "none" if version == "graph" else "megakernel",
                                 "precision": "fp64", "matrix": matrix}, "metrics": {"time_ms": t, "check_ok": ok}}))
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write("#!/usr/bin/env bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = --json ] && out=$2; shift; done\n")
        f.write("cat >> \"$out\" <<'JSON'\n" + "\n".join(lines) + "\nJSON\n")
    os.chmod(path, 0o755)
    return path


def run(*args, env=None):
    return subprocess.run(list(args), capture_output=True, text=True, env={**os.environ, **(env or {})})


matrices = [f"m{i}" for i in range(4)]
base_t = {m: rng.uniform(1, 10) for m in matrices}
speedup = {m: rng.uniform(0.5, 1.5) for m in matrices}
graph_t = {m: base_t[m] * rng.uniform(1.2, 2.0) for m in matrices}
base_times = {("stages_inline", m): base_t[m] for m in matrices} | {("graph", m): graph_t[m] for m in matrices}
new_times = {("stages_inline", m): base_t[m] * speedup[m] for m in matrices} | {("graph", m): graph_t[m] for m in matrices}
base = fake_program("base", base_times)
new = fake_program("new", new_times, failed_matrix="m3")
result = os.path.join(work, "ab.jsonl")

r = run("bash", ab_rounds, result, f"base={base}", f"new={new}", "--", "--suite", "x",
        env={"AB_RUN": "t", "AB_ORDER": "base new new base", "AB_BUILD_new": "commit 123"})
assert r.returncode == 0, r.stderr
rows = [json.loads(l) for l in open(result)]
assert len(rows) == 4 * 2 * len(matrices), len(rows)
assert [r["ab_round"] for r in rows[::2 * len(matrices)]] == [1, 2, 3, 4]
assert [r["ab_side"] for r in rows[::2 * len(matrices)]] == ["base", "new", "new", "base"]
assert all(r["ab_run"] == "t" for r in rows)
assert {r["ab_build"] for r in rows if r["ab_side"] == "new"} == {"commit 123"}
assert {r["ab_build"] for r in rows if r["ab_side"] == "base"} == {base}

r = run(sys.executable, ab_report, result, "--run", "t", "--versus", "graph")
assert r.returncode == 0, r.stderr
out = r.stdout
assert "check failed: side new, m3, stages_inline" in out, out
for m in matrices[:3]:
    row = next(l for l in out.splitlines() if l.startswith(f"| {m} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == f"{speedup[m]:.3f}x", (row, speedup[m])
    assert cells[4] == f"{graph_t[m] / base_t[m]:.2f}x", row
    assert cells[5] == f"{graph_t[m] / (base_t[m] * speedup[m]):.2f}x", row
m3 = next(l for l in out.splitlines() if l.startswith("| m3 |"))
assert "| - |" in m3, m3   # the failed check has no value on its side
geo = 1.0
for m in matrices[:3]:
    geo *= speedup[m]
geo **= 1 / 3
assert f"**{geo:.3f}x**" in out, (out, geo)

assert run("bash", ab_rounds, result, f"base={base}", "--", "x").returncode == 2       # one side
assert run("bash", ab_rounds, result, f"a={base}", "b=/no/such", "--").returncode == 2  # no program
assert run("bash", ab_rounds, result, f"a={base}", f"b={new}", "--", env={"AB_ORDER": "a c"}).returncode == 2
assert run(sys.executable, ab_report, result, "--base", "nobody").returncode != 0
print("ab tools: ok")
