#!/usr/bin/python3
"""Keeps docs/architecture.md's recipes true: the files a new penalty, space or state field touches.

  tools/release/recipe_counts.py

For each recipe ("### Add a penalty ... — N files"): N is the number of files its list names, every file it names
exists (a path with <name> in it: its folder exists), and the Counts table's "files now" column gives the same N.
Also: no code file (C, C++, Python, CMake) of the repository is over 800 lines. Prints one line per check and
exits 1 on any failure (ctest recipe_counts, label cpu).

What this does not yet do (issue 29): measure the counts by grepping the places that list penalties, spaces and
state fields; it checks the doc against itself and the tree.
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_CODE_LINES = 800
RECIPES = {"a penalty": "Add a penalty", "an execution space": "Add an execution space", "a state field": "Add a state field"}


def recipe_files(section):
    """The files a recipe's numbered list names: each `N. `path`` (several may share a line)."""
    return re.findall(r"(?:^|,\s)\d+\. `([^`]+)`", section, re.MULTILINE)


def exists(path):
    if "<" in path:
        return os.path.isdir(os.path.join(ROOT, os.path.dirname(path.split("<")[0]) or "."))
    return os.path.exists(os.path.join(ROOT, path))


def main():
    doc = open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8").read()
    failed = 0

    def record(ok, name, detail):
        nonlocal failed
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
        failed += not ok

    table = dict(re.findall(r"^\| (a penalty|an execution space|a state field) \| [^|]* \| (\d+)", doc, re.MULTILINE))
    for change, heading in RECIPES.items():
        match = re.search(rf"^### {re.escape(heading)}[^\n]* — (\d+) files[^\n]*\n(.*?)(?=^#)", doc,
                          re.MULTILINE | re.DOTALL)
        if not match:
            record(False, change, f"no '### {heading} ... — N files' section")
            continue
        stated, files = int(match.group(1)), recipe_files(match.group(2))
        missing = [f for f in files if not exists(f)]
        record(stated == len(files) and not missing and table.get(change) == str(stated), change,
               f"heading {stated}, list {len(files)}, Counts table {table.get(change, 'missing')}"
               + (f"; not in the tree: {', '.join(missing)}" if missing else ""))

    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "*.c", "*.h", "*.cpp", "*.hpp", "*.py", "*.cmake"],
                             capture_output=True, text=True, check=True).stdout.split()
    long_files = []
    for path in tracked:
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as handle:
            lines = sum(1 for _ in handle)
        if lines > MAX_CODE_LINES:
            long_files.append(f"{path} ({lines})")
    record(not long_files, f"code files within {MAX_CODE_LINES} lines",
           f"all {len(tracked)}" if not long_files else ", ".join(long_files))
    print(f"{'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
