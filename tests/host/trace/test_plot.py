#!/usr/bin/env python3
"""ctest driver for tools/apiary_plot.py.

Usage: test_plot.py FIXTURE_EXE PLOT_SCRIPT OUTDIR

Writes sample traces with FIXTURE_EXE, renders a single plot (PNG + SVG) and a comparison
(PNG + SVG), and checks that the files are non-empty images; a malformed trace must exit 2.
Exits 77 (ctest: skipped) when matplotlib or numpy cannot be imported.
"""

import shutil
import subprocess
import sys
from pathlib import Path

SKIPPED = 77


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True)


def require_image(path: Path, signature: bytes) -> None:
    if not path.is_file() or path.stat().st_size == 0:
        sys.exit(f"FAIL: {path} missing or empty")
    head = path.read_bytes()[:512]
    if signature not in head:
        sys.exit(f"FAIL: {path} does not look like the expected image ({head[:16]!r})")


def main() -> int:
    fixture, plot, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (python3 -m pip install -r tools/requirements.txt)")
        return SKIPPED
    shutil.rmtree(out, ignore_errors=True)
    done = run(fixture, out, 50)
    if done.returncode != 0:
        sys.exit(f"FAIL: fixture writer: {done.stderr}")

    single = run(sys.executable, plot, out / "phases.json", "-o", out / "single.png",
                 "--svg", out / "single.svg", "--title", "test")
    if single.returncode != 0:
        sys.exit(f"FAIL: single plot exited {single.returncode}: {single.stderr}")
    require_image(out / "single.png", b"\x89PNG")
    require_image(out / "single.svg", b"<svg")

    compare = run(sys.executable, plot, "--compare", out / "phases.json", out / "dependencies.json",
                  "--labels", "phases", "individual dependencies", "-o", out / "cmp.png",
                  "--svg", out / "cmp.svg")
    if compare.returncode != 0:
        sys.exit(f"FAIL: comparison plot exited {compare.returncode}: {compare.stderr}")
    require_image(out / "cmp.png", b"\x89PNG")
    require_image(out / "cmp.svg", b"<svg")
    if "individual dependencies" not in (out / "cmp.svg").read_text(encoding="utf-8"):
        sys.exit("FAIL: comparison SVG lacks its panel label")

    bad = run(sys.executable, plot, out / "malformed.json", "-o", out / "bad.png")
    if bad.returncode != 2 or "malformed.json" not in bad.stderr:
        sys.exit(f"FAIL: malformed trace: exit {bad.returncode}, stderr {bad.stderr!r}")
    print("plot test ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
