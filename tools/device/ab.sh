#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (the device tool), in the repository root: A/B of revisions on CUDA, each step of
# REV1 -> REV2 -> ... an A/B of its own (`tools/rh ab --cuda … --chain`, docs/performance.md "A/B between two
# builds"). The GPU machine's copy of the tree has no git history, so the history travels as a bundle, made here:
#
#   git bundle create .device/repo.bundle --all          # .device/ is git-ignored (tools/device/bundle.sh)
#   # device tool, carry [".device", KOKKOS_SRC, "build/wt32/deps"]:
#   tools/device/ab.sh KOKKOS_SRC OUT_DIR REV1 REV2 [REV3 ...] -- [rhperf ab options, e.g. --profile standard
#                      --spaces cuda --inputs device --dtypes f64 --rounds 9]
#
# Kokkos (CUDA, Kokkos_ARCH_HOPPER90 unless RH_AB_ARCH) is built from KOKKOS_SRC by build_cuda13.sh --kokkos-only
# (reused from the cache on a warm machine); the bundle is cloned into a folder of its own, and tools/rh of that
# clone builds every revision side by side (the harness of the clone's HEAD copied into each), then measures.
# Writes OUT_DIR/ab.log and, per step, OUT_DIR/<base sha>-<cand sha>/{base,cand,ab}.json. Settings: RH_AB_CLONE
# (default a new folder under ${TMPDIR:-/tmp}), CMAKE_PREFIX_PATH where fmt, doctest and nlohmann_json are when the
# machine lacks them (default build/wt32/deps/usr when it exists).
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kokkos_src=$(cd "$1" && pwd) || exit 2
out=$(mkdir -p "$2" && cd "$2" && pwd) || exit 2
shift 2
revs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do revs+=("$1"); shift; done
[ $# -gt 0 ] && shift
[ ${#revs[@]} -ge 2 ] || { echo "tools/device/ab.sh: give at least two revisions" >&2; exit 2; }
bundle=$root/.device/repo.bundle
[ -f "$bundle" ] || { echo "tools/device/ab.sh: no $bundle (git bundle create .device/repo.bundle --all, here)" >&2; exit 2; }
exec > >(tee "$out/ab.log") 2>&1
start=$(date +%s)
cd "$root"
[ -z "${CMAKE_PREFIX_PATH:-}" ] && [ -d build/wt32/deps/usr ] && export CMAKE_PREFIX_PATH=$root/build/wt32/deps/usr
export RH_NO_INSTALL=1
prefix=$(tools/device/build_cuda13.sh "$kokkos_src" --arch "${RH_AB_ARCH:-HOPPER90}" --kokkos-only \
           --log-dir "$out/kokkos" | tail -n 1) || { tail -n 20 "$out/kokkos/build.log"; exit 1; }
echo "== Kokkos: $prefix ($(( $(date +%s) - start )) s)"
clone=${RH_AB_CLONE:-$(mktemp -d "${TMPDIR:-/tmp}/rh-ab.XXXXXX")/repo}
git clone -q "$bundle" "$clone" || exit 1
echo "== clone of $(git -C "$clone" rev-parse --short=12 HEAD) in $clone"
cd "$clone"
Kokkos_ROOT=$prefix KokkosKernels_ROOT=$prefix tools/rh ab --cuda "${revs[0]}" "${revs[1]}" \
  ${revs[2]:+--chain "${revs[@]:2}"} --out-dir "$out" "$@"
status=$?
echo "== done in $(( $(date +%s) - start )) s (exit $status)"
exit $status
