#!/usr/bin/env bash
# Builds cuda_baseline against the Kokkos (with CUDA) at KOKKOS_ROOT, with the C++ compiler that Kokkos was
# built with (recorded in its CMake package), into BUILD_DIR. Extra arguments go to CMake, e.g.
# -DRH_CUSOLVER_STATIC_DIR=/usr/lib/x86_64-linux-gnu (Debian's CUDA 11.8 static cuSOLVER).
# Usage: backends/cuda/baseline/build.sh KOKKOS_ROOT BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../../../tools/deps/kokkos.sh"
kokkos=$1 build=$2; shift 2
cxx=$(kokkos_cxx_compiler "$kokkos")
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos" -DCMAKE_CXX_COMPILER="$cxx" \
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" "$@"
cmake --build "$build"
