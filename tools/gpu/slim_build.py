#!/usr/bin/env python3
"""A slim copy of a build tree for a lent GPU machine, which takes at most 64 MiB per call (the
working tree counted in): what `ctest -L gpu` and the apps need, nothing that only rebuilds.

  python3 tools/gpu/slim_build.py build/release build/c1/release [--drop apps/jacobi/apiary-jacobi ...]

Kept: every file but object files and static libraries (*.o, *.a), CMake's and ninja's own
state (CMakeFiles/ folders, _deps/, .ninja_deps, .ninja_log) and the host tests (tests/host/),
of which only the CTestTestfile.cmake files stay (ctest reads every area's, and the
find_package consumer's GPU run is registered there) and the consumer's built programs
(tests/host/consumer/work/build/, executable files), which that run starts. `--drop PATH`
leaves out one more file (relative to the build tree; may repeat), e.g. an app a call does not
run. ELF executables are stripped with `strip` where it exists. The target is replaced.
Prints the files and bytes kept. The build tree's absolute paths stay in its CTest files: on
the device, link the copy to the build's original path (ln -sfn c1/release build/release).
Exit status: 0, or 2 for a missing source or an unknown argument.
"""
import argparse
import os
import shutil
import subprocess
import sys

SKIPPED_DIRS = {"CMakeFiles", "_deps"}
SKIPPED_FILES = {".ninja_deps", ".ninja_log"}
SKIPPED_SUFFIXES = (".o", ".a")
CONSUMER_BUILD = os.path.join("tests", "host", "consumer", "work", "build")


def keeps(rel, full):
    """Whether the file at `rel` (relative to the build tree) goes into the slim copy."""
    parts = rel.split(os.sep)
    name = parts[-1]
    if name in SKIPPED_FILES or name.endswith(SKIPPED_SUFFIXES):
        return False
    if parts[:2] == ["tests", "host"]:
        if name == "CTestTestfile.cmake":
            return True
        return rel.startswith(CONSUMER_BUILD + os.sep) and os.access(full, os.X_OK)
    return True


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--drop", action="append", default=[], metavar="PATH")
    args = parser.parse_args()
    if not os.path.isdir(args.source):
        print(f"slim_build: {args.source} is not a build folder", file=sys.stderr)
        return 2
    drop = {os.path.normpath(p) for p in args.drop}
    if os.path.exists(args.target):
        shutil.rmtree(args.target)
    strip = shutil.which("strip")
    files = kept_bytes = 0
    for folder, dirs, names in os.walk(args.source):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(names):
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, args.source)
            if rel in drop or os.path.islink(full) or not keeps(rel, full):
                continue
            out = os.path.join(args.target, rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            shutil.copy2(full, out)
            if strip and os.access(out, os.X_OK) and is_elf(out):
                subprocess.run([strip, out], check=False, capture_output=True)
            files += 1
            kept_bytes += os.path.getsize(out)
    print(f"slim_build: {files} files, {kept_bytes / 2**20:.1f} MiB in {args.target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
