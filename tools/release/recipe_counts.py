#!/usr/bin/python3
"""Keeps docs/architecture.md's recipes true: the files a new penalty, space or state field touches.

  tools/release/recipe_counts.py            check the working tree
  tools/release/recipe_counts.py --measure  print what each recipe's grep finds (also: --rev COMMIT, a commit's tree)

For each recipe ("### Add a penalty ... — N files"): N is the number of files its list names, every file it names
exists (a path with <name> in it: its folder exists), and the Counts table's "files now" column gives the same N.

The counts are measured, not only stated: every tracked file that names all the existing members together (LISTERS
below: the penalties none and L1, the spaces serial, openmp and cuda, the state fields) is a place a new member
would have to join, so it must be in the recipe's list; a file that starts listing them fails this check until the
recipe names it (and its count grows). History (CHANGELOG.md, docs/evidence/, perf/baselines/, the generated golden
corpora and checkpoint samples) and this doc are not places to add a member.

Also: no code file (C, C++, Python, CMake) of the repository is over 800 lines. Prints one line per check and
exits 1 on any failure (ctest recipe_counts, label cpu).
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_CODE_LINES = 800
RECIPES = {"a penalty": "Add a penalty", "an execution space": "Add an execution space", "a state field": "Add a state field"}


# How a file names every existing member "together": for spaces and penalties (common words) all within WINDOW lines
# (an enumeration: a list, an enum, a table row, a dict); the state fields' names are distinctive: anywhere in the file.
LISTERS = {
    "a penalty": ([r"\b(RH_PENALTY_NONE|Penalty::none|none)\b", r"\b(RH_PENALTY_L1|Penalty::l1|l1)\b"], 1),
    "an execution space": ([r"\bserial\b", r"\bopenmp\b", r"\bcuda\b"], 2),
    "a state field": ([r"\bn_samples_seen\b", r"\bbatch_count\b", r"\bprevious_lambda\b", r"\bweight_sum\b"], 0),
}
NOT_PLACES = re.compile(r"^(CHANGELOG\.md|docs/architecture\.md|tools/release/recipe_counts\.py|docs/evidence/|perf/baselines/|golden/.*\.json$|"
                        r"tests/checkpoints/.*\.rhck$)")


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, check=True).stdout


def working_files():
    """The repository's files: git's list in a clone; in a copy of the tracked files without .git (what CI's standalone
    run tests), every file but hidden folders, build/ and caches, which is the same list."""
    if os.path.isdir(os.path.join(ROOT, ".git")) or os.path.isfile(os.path.join(ROOT, ".git")):
        return git("ls-files").split("\n")
    out = []
    for folder, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(folder, ROOT)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__" and (rel != "." or d != "build")]
        out += [os.path.normpath(os.path.join(rel, f)) for f in files if not f.endswith(".pyc")]
    return sorted(out)


def tree_files(rev):
    """(path, text) of every tracked file (of the working tree, or of commit rev) that could be a place."""
    paths = git("ls-tree", "-r", "--name-only", rev).split("\n") if rev else working_files()
    for path in filter(None, paths):
        if NOT_PLACES.match(path):
            continue
        if rev:
            data = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], capture_output=True).stdout
        else:
            full = os.path.join(ROOT, path)
            if not os.path.isfile(full):
                continue
            data = open(full, "rb").read()
        if b"\0" in data[:8192]:
            continue
        yield path, data.decode("utf-8", errors="replace")


# A record's section of a doc, between <!-- record:NAME:begin --> and <!-- record:NAME:end -->, is written by
# `tools/rh doc` from the record it names (its fingerprint names the spaces that run had): a new member changes it
# only through a new record, never by hand, so it is not a place to add one.
GENERATED_SECTION = re.compile(r"<!-- record:([\w-]+):begin.*?<!-- record:\1:end[^\n]*", re.DOTALL)
# A doc's "What we tried" section is history (each row a past try, cited by its commit), as CHANGELOG.md is.
HISTORY_SECTION = re.compile(r"^## What we tried\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)


def measure(rev=None):
    """For each recipe, the sorted files that name all its existing members together."""
    found = {change: [] for change in LISTERS}
    for path, text in tree_files(rev):
        text = HISTORY_SECTION.sub("", GENERATED_SECTION.sub("", text))
        lines = text.splitlines()
        for change, (patterns, window) in LISTERS.items():
            regexes = [re.compile(p, re.IGNORECASE if window else 0) for p in patterns]
            if window == 0:
                hit = all(r.search(text) for r in regexes)
            else:
                hit = any(all(r.search(" ".join(lines[i:i + window])) for r in regexes) for i in range(len(lines)))
            if hit:
                found[change].append(path)
    return {change: sorted(paths) for change, paths in found.items()}


def recipe_files(section):
    """The files a recipe's numbered list names: each `N. `path`` (several may share a line)."""
    return re.findall(r"(?:^|,\s)\d+\. `([^`]+)`", section, re.MULTILINE)


def exists(path):
    if "<" in path:
        return os.path.isdir(os.path.join(ROOT, os.path.dirname(path.split("<")[0]) or "."))
    return os.path.exists(os.path.join(ROOT, path))


def main():
    if "--measure" in sys.argv:
        rev = sys.argv[sys.argv.index("--rev") + 1] if "--rev" in sys.argv else None
        for change, paths in measure(rev).items():
            print(f"{change}: {len(paths)} files\n  " + "\n  ".join(paths))
        return 0
    doc = open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8").read()
    failed = 0

    def record(ok, name, detail):
        nonlocal failed
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
        failed += not ok

    measured = measure()
    table = dict(re.findall(r"^\| (a penalty|an execution space|a state field) \| [^|]* \| (\d+)", doc, re.MULTILINE))
    for change, heading in RECIPES.items():
        match = re.search(rf"^### {re.escape(heading)}[^\n]* — (\d+) files[^\n]*\n(.*?)(?=^#)", doc,
                          re.MULTILINE | re.DOTALL)
        if not match:
            record(False, change, f"no '### {heading} ... — N files' section")
            continue
        stated, files = int(match.group(1)), recipe_files(match.group(2))
        missing = [f for f in files if not exists(f)]
        unlisted = [f for f in measured[change] if f not in files]
        # The list under "Measured by" holds exactly what the grep finds beyond the hand-written list: a file that
        # stops listing the members must leave it, so the count falls with it.
        hand, _, found_part = match.group(2).partition("Measured by")
        stale = [f for f in recipe_files(found_part) if f not in measured[change] or f in recipe_files(hand)]
        unlisted += [f"{f} (stale: no longer found, or also in the list above)" for f in stale]
        record(stated == len(files) and not missing and table.get(change) == str(stated), change,
               f"heading {stated}, list {len(files)}, Counts table {table.get(change, 'missing')}"
               + (f"; not in the tree: {', '.join(missing)}" if missing else ""))
        record(not unlisted, f"{change}: measured", f"{len(measured[change])} files name every existing member"
               + (f"; not in the recipe: {', '.join(unlisted)}" if unlisted else ", all in the recipe"))

    code = (".c", ".h", ".cpp", ".hpp", ".py", ".cmake")
    tracked = [p for p in working_files() if p.endswith(code)]
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
