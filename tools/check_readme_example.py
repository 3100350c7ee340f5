#!/usr/bin/env python3
"""Checks that apps/examples/readme_example.cu carries the README's first-screen example."""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
readme = (root / "README.md").read_text()
start = readme.index("```cpp\n#include <apiary/apiary.cuh>") + len("```cpp\n")
example = readme[start:readme.index("```", start)]
source = (root / "apps/examples/readme_example.cu").read_text()
missing = [line for line in example.splitlines() if line.strip() and line not in source]
if missing:
    print("README example and apps/examples/readme_example.cu differ; lines missing from the .cu:")
    print("\n".join(missing))
    sys.exit(1)
print("README example matches apps/examples/readme_example.cu")
