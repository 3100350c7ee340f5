#!/usr/bin/env python3
"""tools/gpu/slim_build.py on a fake build tree: object files, static libraries, CMake's and
ninja's state and the host tests left out, except the host areas' CTestTestfile.cmake files and
the find_package consumer's built programs; --drop leaves out a named file; ELF files are
stripped; a missing source is refused with exit status 2."""
import os
import random
import shutil
import subprocess
import sys
import tempfile

root = sys.argv[1]
tool = os.path.join(root, "tools/gpu/slim_build.py")
work = tempfile.mkdtemp()
source = os.path.join(work, "release")
target = os.path.join(work, "c1", "release")
rng = random.Random()
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def write(rel, data=b"x", executable=False):
    path = os.path.join(source, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if executable:
        os.chmod(path, 0o755)


# An ELF program to strip: a copy of a system binary (strip shrinks it or leaves it as it is).
elf = shutil.which("true") or "/bin/true"
with open(os.path.realpath(elf), "rb") as f:
    elf_bytes = f.read()

kept = {
    "CTestTestfile.cmake": b"subdirs(tests)",
    "tests/gpu/runtime/apiary_runtime_gpu_tests": elf_bytes,
    "tests/gpu/runtime/CTestTestfile.cmake": b"add_test(x)",
    "tests/host/runtime/CTestTestfile.cmake": b"add_test(y)",
    "tests/host/consumer/CTestTestfile.cmake": b"add_test(consumer_run)",
    "tests/host/consumer/work/build/fibonacci_tasks": elf_bytes,
    "apps/synthetic/apiary-synth": elf_bytes,
    "apps/synthetic/configs/tree.json": b"{}",
}
executables = {"tests/gpu/runtime/apiary_runtime_gpu_tests", "tests/host/consumer/work/build/fibonacci_tasks",
               "apps/synthetic/apiary-synth"}
dropped = {
    "runtime/libapiary_runtime.a": b"lib",
    "runtime/CMakeFiles/apiary_runtime.dir/src/run.cpp.o": b"obj",
    "apps/bench/main.cpp.o": b"obj",
    "_deps/catch2-src/README.md": b"dep",
    ".ninja_deps": b"deps",
    ".ninja_log": b"log",
    "tests/host/runtime/apiary_runtime_tests": elf_bytes,
    "tests/host/consumer/work/build/CMakeCache.txt": b"cache",
    "apps/jacobi/apiary-jacobi": elf_bytes,
}
for rel, data in {**kept, **dropped}.items():
    write(rel, data, executable=rel in executables or rel.endswith(("_tests", "apiary-jacobi")))
# Random extra files that stay (any name that is not one of the skipped kinds).
for i in range(rng.randint(3, 8)):
    rel = f"apps/extra{i}/file{rng.randint(0, 999)}.txt"
    kept[rel] = b"e" * rng.randint(1, 100)
    write(rel, kept[rel])
os.makedirs(target)  # an old copy: replaced
with open(os.path.join(target, "stale.txt"), "w") as f:
    f.write("old")

r = subprocess.run([sys.executable, tool, source, target, "--drop", "apps/jacobi/apiary-jacobi"],
                   capture_output=True, text=True)
check(r.returncode == 0, f"exit status {r.returncode}: {r.stderr}")
check("files" in r.stdout and "MiB" in r.stdout, f"no summary line: {r.stdout!r}")
found = set()
for folder, _, names in os.walk(target):
    for name in names:
        found.add(os.path.relpath(os.path.join(folder, name), target))
check(found == set(kept), f"kept {sorted(found)}, expected {sorted(kept)}")
for rel, data in kept.items():
    path = os.path.join(target, rel)
    if not os.path.exists(path):
        continue
    if rel in executables:
        check(os.access(path, os.X_OK), f"{rel} lost its executable bit")
        check(os.path.getsize(path) <= len(data), f"{rel} grew")
    else:
        with open(path, "rb") as f:
            check(f.read() == data, f"{rel} changed")

r = subprocess.run([sys.executable, tool, os.path.join(work, "missing"), target], capture_output=True, text=True)
check(r.returncode == 2 and "not a build folder" in r.stderr, f"a missing source: status {r.returncode}, {r.stderr!r}")

shutil.rmtree(work)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("slim_build: all checks passed")
