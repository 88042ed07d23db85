#!/usr/bin/env bash
# Run HERE (with PyPI), before a GPU run of tools/device/run_bench.sh: downloads the reference project's wheel
# (renewable-huber, pure Python, at the version pinned in tools/peer/requirements.txt) into .whl/, which is
# git-ignored (.git/info/exclude) and carried to the GPU machine (device tool: carry [".whl", ".device"]).
# The GPU machine already has NumPy, CuPy and threadpoolctl; the wheel is installed there without dependencies.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pin=$(grep -E '^renewable-huber==' "$root/tools/peer/requirements.txt")
exclude=$(git -C "$root" rev-parse --git-path info/exclude)  # also right in a git worktree
mkdir -p "$(dirname "$exclude")" "$root/.whl"
grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >> "$exclude"
rm -f "$root"/.whl/renewable_huber-*.whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$root/.whl" "$pin"
ls -la "$root"/.whl/
