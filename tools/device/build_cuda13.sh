#!/usr/bin/env bash
# The CUDA 13 route, built on the machine that runs it (nothing downloaded, no binary carried): Kokkos from a source
# tree you give (4.6.00/4.6.01 with our backport tools/device/kokkos-4.6-cuda13.patch applied to a copy, or
# >= 4.7.01 as it is) into a prefix, then this library with tools/rh against it, then — on a GPU of the compiled
# architecture — the ctest profile `cuda` and every golden corpus replayed on CUDA. docs/build.md, "CUDA 13".
#
# Usage: tools/device/build_cuda13.sh KOKKOS_SRC [--arch ARCH] [--cuda-root DIR] [--kernels KERNELS_SRC]
#                                     [--prefix DIR] [--build-dir DIR] [--test | --no-test] [--log-dir DIR]
#                                     [--kokkos-only]
#   --arch ARCH       Kokkos_ARCH_<ARCH>: HOPPER90 (H100/H200; the default), BLACKWELL120 (RTX 50xx), AMPERE80, ...
#   --cuda-root DIR   the CUDA toolkit (DIR/bin/nvcc); default: $CUDA_HOME, else the nvcc on PATH, else /usr/local/cuda
#   --kernels DIR     also build Kokkos Kernels (same release) from DIR; only rh_gram_bench and rh_lu_bench use it
#   --prefix DIR      Kokkos' install (default: the cache, kokkos-<version>-cuda<nvcc version>-<sm>; reused while
#                     the source version, our patch, nvcc and the architecture are the same)
#   --build-dir DIR   the library's build directory (default: build/cuda-<sm>, e.g. build/cuda-sm_90)
#   --test, --no-test run the ctest profile cuda and the CUDA replays, or not (default: when this machine's GPU has
#                     the compute capability of ARCH)
#   --log-dir DIR     build.log (every step's output) and summary.txt (default: <build dir>/logs)
#   --kokkos-only     step 1 alone: Kokkos into its prefix, whose path is the last line printed (for tools/rh ab
#                     --cuda, tools/device/ab.sh)
# Settings: RH_JOBS (default nproc), RH_CACHE_DIR, and tools/rh's: RH_NO_INSTALL=1 installs no Debian package,
# CMAKE_PREFIX_PATH where fmt, doctest and nlohmann_json are when not under /usr or /usr/local, RH_BUILD_TARGETS
# builds only those targets of the library's build (e.g. "rh_perf_worker"; the C ABI library's check then finds none).
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/tools/deps/kokkos.sh"   # rh_cache_dir
patch_file=$root/tools/device/kokkos-4.6-cuda13.patch

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
case $1 in -h|--help) usage ;; esac
src=$(cd "$1" && pwd) || usage; shift
arch=HOPPER90 cuda_root=${CUDA_HOME:-} kernels=- prefix="" bld="" test=auto logs="" kokkos_only=no
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=$2; shift ;;
    --cuda-root) cuda_root=$2; shift ;;
    --kernels) kernels=$(cd "$2" && pwd); shift ;;
    --prefix) prefix=$2; shift ;;
    --build-dir) bld=$2; shift ;;
    --test) test=yes ;;
    --no-test) test=no ;;
    --log-dir) logs=$2; shift ;;
    --kokkos-only) kokkos_only=yes ;;
    *) usage ;;
  esac
  shift
done

die() { echo "build_cuda13: $*" >&2; exit 2; }
sm=sm_$(echo "$arch" | tr -dc 0-9)
[ "$sm" != sm_ ] || die "--arch $arch names no compute capability"

# The toolkit.
if [ -z "$cuda_root" ]; then
  if command -v nvcc >/dev/null 2>&1; then cuda_root=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
  else cuda_root=/usr/local/cuda; fi
fi
cuda_root=$(cd "$cuda_root" 2>/dev/null && pwd) || die "no CUDA toolkit at ${cuda_root}; give --cuda-root"
[ -x "$cuda_root/bin/nvcc" ] || die "no nvcc in $cuda_root/bin; give --cuda-root"
nvcc_version=$("$cuda_root/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
nvcc_major=${nvcc_version%%.*}

# The Kokkos release, and whether it needs our patch.
kokkos_part() { sed -n "s/^set(Kokkos_VERSION_$1 \([0-9]*\))/\1/p" "$src/CMakeLists.txt"; }
kv_major=$(kokkos_part MAJOR) kv_minor=$(kokkos_part MINOR) kv_patch=$(kokkos_part PATCH)
[ -n "$kv_major" ] && [ -x "$src/bin/nvcc_wrapper" ] || die "$src is not a Kokkos source tree"
kokkos_version=$kv_major.$kv_minor.$kv_patch
kv=$((kv_major * 10000 + kv_minor * 100 + kv_patch))
needs_patch=no
if [ "$nvcc_major" -ge 13 ]; then
  if [ "$kv" -ge 40701 ]; then needs_patch=no                      # upstream's own fix (PR 8298)
  elif [ "$kv" -ge 40600 ] && [ "$kv" -le 40601 ]; then needs_patch=yes
  else die "Kokkos $kokkos_version with CUDA $nvcc_version: use Kokkos 4.6.00/4.6.01 (patched here) or >= 4.7.01"
  fi
elif [ "$kv" -lt 40600 ]; then
  die "Kokkos $kokkos_version: this route needs Kokkos >= 4.6"
fi

prefix=${prefix:-$(rh_cache_dir)/kokkos-$kokkos_version-cuda$nvcc_version-$sm}
mkdir -p "$prefix"; prefix=$(cd "$prefix" && pwd)
bld=${bld:-$root/build/cuda-$sm}
logs=${logs:-$bld/logs}
mkdir -p "$logs"; logs=$(cd "$logs" && pwd)
log=$logs/build.log summary=$logs/summary.txt
: > "$log"; : > "$summary"
say() { echo "$*" | tee -a "$summary"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }

say "build_cuda13: Kokkos $kokkos_version ($src), CUDA $nvcc_version ($cuda_root), Kokkos_ARCH_$arch ($sm)"
say "  patch: $([ "$needs_patch" = yes ] && echo "tools/device/kokkos-4.6-cuda13.patch (sha256 $(sha256sum "$patch_file" | cut -c1-12))" || echo none)"
say "  host: $(nproc) cores, $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(g++ --version | head -n 1), cmake $(cmake --version | sed -n '1s/.* //p')"

# Applies $patch_file to the tree $1: with patch(1), or else with the few lines of Python below (exact context only).
apply_patch() {
  if command -v patch >/dev/null 2>&1; then
    patch -d "$1" -p1 --forward --batch < "$patch_file"
    return
  fi
  python3 - "$1" "$patch_file" <<'PY'
import re, sys
root, lines = sys.argv[1], open(sys.argv[2]).read().split("\n")
files, i = [], 0
while i < len(lines):
    if lines[i].startswith("+++ b/"):
        files.append((lines[i][6:], [])); i += 1; continue
    if lines[i].startswith("@@") and files:
        old, new = [], []; i += 1
        while i < len(lines) and lines[i][:1] in (" ", "-", "+") and not lines[i].startswith(("--- ", "+++ ")):
            tag, text = lines[i][:1], lines[i][1:]
            if tag != "+": old.append(text)
            if tag != "-": new.append(text)
            i += 1
        files[-1][1].append(("\n".join(old) + "\n", "\n".join(new) + "\n")); continue
    i += 1
for path, hunks in files:
    text = open(f"{root}/{path}").read()
    for old, new in hunks:
        if text.count(old) != 1: sys.exit(f"apply_patch: a hunk of {path} does not match exactly once")
        text = text.replace(old, new)
    open(f"{root}/{path}", "w").write(text)
    print(f"patched {path} ({len(hunks)} hunks)")
PY
}

# 1. Kokkos (CUDA for one architecture and the host spaces, static and position-independent; tools/deps/user-kokkos.sh).
stamp="kokkos=$kokkos_version src=$src patch=$([ "$needs_patch" = yes ] && sha256sum "$patch_file" | cut -c1-16)"
stamp="$stamp nvcc=$nvcc_version arch=$arch kernels=$kernels"
if [ -f "$prefix/.rh-complete" ] && [ "$(cat "$prefix/.rh-complete")" = "$stamp" ]; then
  say "1. Kokkos: reused $prefix"
else
  rm -rf "$prefix" "$prefix.build" "$prefix.src"
  kokkos_tree=$src
  if [ "$needs_patch" = yes ]; then
    kokkos_tree=$prefix.src   # a patched copy: the tree you gave stays as it is
    mkdir -p "$kokkos_tree" && cp -a "$src/." "$kokkos_tree/"
    apply_patch "$kokkos_tree" 2>&1 | tee -a "$log"
  fi
  t0=$(now)
  kokkos_log=$(mktemp)
  RH_USER_KOKKOS_BUILD=$prefix.build "$root/tools/deps/user-kokkos.sh" "$kokkos_tree" "$kernels" "$prefix" \
    --arch "$arch" --cuda-root "$cuda_root" > "$kokkos_log" 2>&1 ||
    { cat "$kokkos_log" >> "$log"; tail -n 40 "$kokkos_log" >&2; die "the Kokkos build failed (log: $log)"; }
  cat "$kokkos_log" >> "$log"
  say "1. Kokkos: built and installed into $prefix in $(elapsed "$t0") s; compiler warnings: $(grep -Eci 'warning[: ]' "$kokkos_log" || true)"
  rm -f "$kokkos_log"
  rm -rf "$prefix.build" "$prefix.src"
  echo "$stamp" > "$prefix/.rh-complete"
fi

if [ "$kokkos_only" = yes ]; then echo "$prefix"; exit 0; fi

# 2. The library, its tests and tools, with tools/rh (which builds with the compiler Kokkos recorded: PREFIX/bin/rh-nvcc).
export Kokkos_ROOT=$prefix KokkosKernels_ROOT=$prefix RH_BUILD_DIR=$bld
t0=$(now)
lib_log=$(mktemp)
"$root/tools/rh" build --cuda > "$lib_log" 2>&1 || { cat "$lib_log" >> "$log"; tail -n 40 "$lib_log" >&2; die "the library build failed (log: $log)"; }
cat "$lib_log" >> "$log"
warnings=$(grep -Eci 'warning[: ]' "$lib_log" || true)
rm -f "$lib_log"
say "2. library: built in $(elapsed "$t0") s into $bld; compiler warnings: $warnings"
abi_lib=$(ls "$bld"/abi/librenewable_huber.so.*.* 2>/dev/null | head -n 1 || true)
if [ -n "$abi_lib" ]; then
  say "   $(basename "$abi_lib") needs: $(readelf -d "$abi_lib" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
  if command -v cuobjdump >/dev/null 2>&1 || [ -x "$cuda_root/bin/cuobjdump" ]; then
    cuobjdump=$(command -v cuobjdump || echo "$cuda_root/bin/cuobjdump")
    elfs=$("$cuobjdump" --list-elf "$abi_lib" 2>/dev/null || true)
    say "   cuobjdump --list-elf: $(echo "$elfs" | grep -c 'ELF file') images, $(echo "$elfs" | grep -c "\.$sm\.cubin") of them $sm, $(echo "$elfs" | grep 'ELF file' | grep -vc "\.$sm\.cubin") other"
  else
    say "   (no cuobjdump here: the device code's architectures are not listed)"
  fi
fi

# 3. On a GPU of this architecture: the ctest profile cuda and every corpus on CUDA.
if [ "$test" = auto ]; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .' || true)
  if [ "sm_$cc" = "$sm" ]; then test=yes; else test=no; say "3. tests: not run (this machine's GPU: ${cc:+sm_}${cc:-none}; built for $sm)"; fi
fi
status=0
if [ "$test" = yes ]; then
  say "   GPU: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | head -n 1)"
  t0=$(now)
  test_log=$(mktemp)
  "$root/tools/rh" test --cuda --profile cuda > "$test_log" 2>&1 || status=1
  cat "$test_log" >> "$log"
  say "3. ctest -L cuda: $(grep -E 'tests passed|tests failed' "$test_log" | tail -n 1) ($(elapsed "$t0") s; $(sed -n 's/^Total Test time (real) = *//p' "$test_log"))"
  grep -E '^ *[0-9]+/[0-9]+ Test +#' "$test_log" | sed 's/^ */     /' >> "$summary" || true
  rm -f "$test_log"
  for f in "$root"/golden/*.json "$root"/golden/reference/*.json; do
    out=$(OMP_PROC_BIND=false "$bld/tools/rh_replay" "$f" --space cuda --max-worst 0.5 2>&1) || status=1
    echo "$out" >> "$log"
    say "   replay $(basename "$f") on cuda: $(echo "$out" | tail -n 2 | paste -sd ';')"
  done
fi
say "build_cuda13: $([ $status = 0 ] && echo done || echo FAILED) (log: $log)"
exit $status
