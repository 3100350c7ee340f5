#!/usr/bin/env python3
"""Registers per thread of the kernels in a CUDA binary, and a budget check for them.

Why: the schedulers' kernels (megakernel, timesliced, device-controller workers) run every
task, so their register count sets how many blocks stay resident. On an H200 two changes that
looked free cost exactly that: loading 8 queue fill levels at once took the megakernel from
40 to 52 registers (6 -> 4 resident 256-thread blocks per SM, 20-30% of the empty-task
throughput), and running the timesliced control step in the worker kernel took it to 94
(half the throughput). A budget check in the tests catches that before a GPU run does.

  kernel_registers.py --list BINARY [REGEX]           kernels (demangled-ish name) and registers
  kernel_registers.py --check BINARY --budget REGEX=MAX [--budget ...]
                                                      exit 1 if a matching kernel needs more
                                                      than MAX registers, 77 if no cuobjdump
  kernel_registers.py --fetch                         download cuobjdump (PyPI wheel) into the cache

cuobjdump comes from $CUOBJDUMP, the PATH, /usr/local/cuda/bin, or the cache filled by
--fetch (${XDG_CACHE_HOME:-~/.cache}/apiary/cuobjdump; the CUDA 13.0 toolkit here ships
without it).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "nvidia-cuda-cuobjdump==13.5.37"
SKIP = 77


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "apiary" / "cuobjdump"


def find_cuobjdump():
    candidates = [os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"]
    candidates += [str(p) for p in sorted(cache_dir().glob("**/bin/cuobjdump"))]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def fetch() -> int:
    found = find_cuobjdump()
    if found:
        print(f"kernel_registers: cuobjdump found at {found}")
        return 0
    target = cache_dir()
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", tmp]
        if subprocess.run(cmd).returncode != 0:
            print(f"kernel_registers: could not download {WHEEL} from PyPI", file=sys.stderr)
            return 1
        wheels = list(Path(tmp).glob("*.whl"))
        if not wheels:
            print(f"kernel_registers: pip downloaded no wheel for {WHEEL}", file=sys.stderr)
            return 1
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(target)
    for binary in target.glob("**/bin/cuobjdump"):
        binary.chmod(0o755)
    found = find_cuobjdump()
    if not found:
        print(f"kernel_registers: the wheel {WHEEL} holds no bin/cuobjdump", file=sys.stderr)
        return 1
    print(f"kernel_registers: cuobjdump installed at {found}")
    return 0


def registers(cuobjdump: str, binary: str):
    """[(kernel name, registers)] for every function of every sm_* cubin in the binary."""
    out = subprocess.run([cuobjdump, "-res-usage", binary], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"kernel_registers: cuobjdump -res-usage {binary} failed: {out.stderr.strip()}")
    result, name = [], None
    for line in out.stdout.splitlines():
        m = re.match(r"\s*Function (\S+?):?$", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"REG:(\d+)", line)
        if m and name is not None:
            result.append((name, int(m.group(1))))
            name = None
    return result


def parse_budget(text: str):
    regex, sep, limit = text.rpartition("=")
    if not sep or not regex or not limit.isdigit():
        raise SystemExit(f"kernel_registers: --budget takes REGEX=MAX, not '{text}'")
    return re.compile(regex), int(limit)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fetch", action="store_true", help="download cuobjdump into the cache")
    p.add_argument("--list", nargs="+", metavar=("BINARY", "REGEX"), help="list kernels and registers")
    p.add_argument("--check", metavar="BINARY", help="check --budget entries against BINARY")
    p.add_argument("--budget", action="append", default=[], metavar="REGEX=MAX")
    a = p.parse_args()
    if a.fetch:
        return fetch()
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        print("kernel_registers: no cuobjdump (set CUOBJDUMP, or run tools/kernel_registers.py --fetch); skipped")
        return SKIP
    if a.list:
        pattern = re.compile(a.list[1]) if len(a.list) > 1 else None
        for name, regs in registers(cuobjdump, a.list[0]):
            if pattern is None or pattern.search(name):
                print(f"{regs:4d}  {name}")
        return 0
    if not a.check or not a.budget:
        p.error("give --fetch, --list BINARY, or --check BINARY with at least one --budget")
    kernels = registers(cuobjdump, a.check)
    failed = over_budget = False
    for text in a.budget:
        pattern, limit = parse_budget(text)
        matched = [(n, r) for n, r in kernels if pattern.search(n)]
        if not matched:
            print(f"FAIL {text}: no kernel of {a.check} matches (renamed? update the budget)")
            failed = True
            continue
        for name, regs in matched:
            ok = regs <= limit
            over_budget |= not ok
            print(f"{'ok  ' if ok else 'FAIL'} {regs:4d} registers (budget {limit})  {name}")
    if over_budget:
        print("\nA scheduler kernel needs more registers than its budget: fewer blocks stay resident and "
              "every task pays for it. Find what added them (kernel_registers.py --list against the "
              "previous build); raise the budget only with a GPU measurement that shows the change is worth it.")
    return 1 if failed or over_budget else 0


if __name__ == "__main__":
    sys.exit(main())
