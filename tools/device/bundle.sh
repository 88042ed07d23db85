#!/usr/bin/env bash
# Packs a CUDA build for the GPU machine: its executables, shared libraries and CTest files (no object files),
# as .device/NAME.tar.xz (xz shrinks the CUDA fat binaries about tenfold; .device/ is git-ignored through
# .git/info/exclude). Carry .device to the GPU machine and run tools/device/run_suite.sh .device/NAME.tar.xz there,
# in a checkout of the same commit (the corpora, golden/ and golden/reference/, come from that checkout).
# Usage: tools/device/bundle.sh [BUILD_DIR] [NAME]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$root/build/cuda}" && pwd)
name=${2:-cuda}
mkdir -p "$root/.git/info" "$root/.device"
grep -qx '/.device/' "$root/.git/info/exclude" 2>/dev/null || echo '/.device/' >> "$root/.git/info/exclude"
stage=$(mktemp -d)
bundle=$stage/$name
mkdir -p "$bundle/build"
(cd "$build" && find . \( -name CTestTestfile.cmake -o -name '*.so*' -o -type f -perm -u+x \) \
   ! -path '*/CMakeFiles/*' ! -path './_deps/*') | while read -r f; do
  mkdir -p "$bundle/build/$(dirname "$f")"
  cp -P "$build/$f" "$bundle/build/$f"
done
find "$bundle/build" -type f -perm -u+x -exec strip --strip-unneeded {} + 2>/dev/null || true
# Google Benchmark is a shared library from Debian that the GPU machine lacks: it travels along.
if [ -e "$bundle/build/perf/rh_gram_bench" ]; then
  mkdir -p "$bundle/build/lib"
  cp -L "$(ldd "$build/perf/rh_gram_bench" | awk '/libbenchmark/{print $3}')" "$bundle/build/lib/"
fi
# A build against Kokkos >= 4 links the shared CUDA runtime (docs/evidence/sm120-build.md), which the GPU machine
# lacks: it travels along, into lib/ (run_bench.sh's library path) and abi/ (run_suite.sh's).
if [ -e "$build/tests/rh_unit_tests" ]; then
  for lib in $(ldd "$build/tests/rh_unit_tests" | awk '/libcudart/ && $3 ~ /^\//{print $3}'); do
    mkdir -p "$bundle/build/lib" "$bundle/build/abi"
    cp -L "$lib" "$bundle/build/lib/"
    cp -L "$lib" "$bundle/build/abi/"
  done
fi
# The paths CTest recorded here, to be rewritten to the GPU machine's checkout by run_suite.sh.
printf '%s\n%s\n%s\n' "$build" "$root" "$(command -v cmake)" > "$bundle/origin"
git -C "$root" rev-parse HEAD > "$bundle/commit"
git -C "$root" status --porcelain | grep -q . && echo "(with uncommitted changes)" >> "$bundle/commit"
tar -C "$stage" -cJf "$root/.device/$name.tar.xz" "$name"
rm -rf "$stage"
ls -la "$root/.device/$name.tar.xz"
