#!/usr/bin/env bash
# Fails when a tracked file names a path outside the repository: the sibling folder ../shared that development
# machines have, a machine's absolute paths, or a path that climbs above the repository root. A user's clone has
# nothing beside it. Run by `tools/rh standalone` before it copies the tree.
# Usage: tools/release/outside_paths.sh [REV]   (default: the tracked files as they are in the working tree)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
patterns=(
  '\.\./shared([/"'"'"' ]|$)'                                          # the sibling folder
  '(^|[^[:alnum:]_.~$-])/(work|home|root|Users|mnt)/[[:alnum:]_.-]'    # absolute paths of a machine
  '(CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR|RH_ROOT|REPO_ROOT|\$root|\{root)\}?"?/\.\.'  # the repository root, then up
  'REPO_ROOT, *"\.\."'                                                 # the same in Python's os.path.join
)
args=()
for p in "${patterns[@]}"; do args+=(-e "$p"); done
# This file spells the patterns out, so it is the one file not scanned.
if git -C "$root" grep -n -I -E "${args[@]}" ${1:+"$1"} -- . ':(exclude)tools/release/outside_paths.sh'; then
  echo "outside_paths: the lines above name paths outside the repository (a clone has nothing beside it)" >&2
  exit 1
fi
echo "outside_paths: no tracked file names a path outside the repository${1:+ (at $1)}"
