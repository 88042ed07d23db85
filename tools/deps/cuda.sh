# Sourced by tools/rh after kokkos.sh, for the CUDA flavour. Installs Debian's CUDA 11.8 toolkit (the newest CUDA
# that Kokkos 3.4 builds with; the machine's own /usr/local/cuda is CUDA 13) and builds Kokkos 3.4.01 + Kokkos
# Kernels 3.4.01 with CUDA and the host spaces. Why each step is needed: docs/build.md, "CUDA 11.8 + Kokkos 3.4".
#
# Provides: build_kokkos_cuda (prints the install prefix), run_cuda_env CMD... (runs CMD with only the 11.8
# toolkit visible) and RH_CUDA_CMAKE_OPTS (what our own project needs to build against that Kokkos).
# Settings: RH_CUDA_ARCH (compute capability the device code is built for, default 90 = H200).

RH_DEPS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RH_CUDA_ARCH=${RH_CUDA_ARCH:-90}
RH_CUDA_TOOLKIT_VERSION=11.8                   # Debian's nvidia-cuda-toolkit (docs/support-matrix.md names it)
RH_CUDA_HOST_CXX=g++-11                        # newest g++ that CUDA 11.8 accepts
RH_CUDA_TOOLKIT_BIN=/usr/lib/nvidia-cuda-toolkit/bin
RH_CUDA_LIB_DIR=/usr/lib/x86_64-linux-gnu
RH_CUDA_APT_PACKAGES=(nvidia-cuda-toolkit "$RH_CUDA_HOST_CXX")
# The toolkit's packages that put headers in /usr/include (all dependencies of nvidia-cuda-toolkit).
RH_CUDA_HEADER_PACKAGES=(nvidia-cuda-dev libcupti-dev libnvidia-ml-dev libcub-dev libthrust-dev libcu++-dev)

# The compiler wrapper's path names the target architecture and a hash of what generates it (template, host
# compiler, write_cuda_compiler's code), so that the Kokkos cache key, which contains the compiler, changes
# whenever the generated compiler would.
rh_cuda_compiler() {
  local id
  id=$( { cat "$RH_DEPS_DIR/nvcc-arch-wrapper.in"; echo "$RH_CUDA_HOST_CXX"; declare -f write_cuda_compiler; } |
        sha256sum | cut -c1-8)
  echo "$(rh_cache_dir)/cuda-compiler-sm$RH_CUDA_ARCH-$id/nvcc-arch-wrapper"
}

# Runs "$@" (optionally preceded by NAME=VALUE settings) in a clean environment: only the 11.8 toolkit on PATH
# (not /usr/local/cuda/bin, nor /usr/local/bin, which links CUDA 13's nvcc and cudafe++ here), no CUDA_HOME, no
# LIBRARY_PATH with CUDA 13's stubs: with them, nvcc 11.8 picks up CUDA 13's cudafe++ and every KOKKOS_LAMBDA
# fails to compile, and CMake's FindCUDAToolkit finds CUDA 13. RH_* settings pass through, and the cache directory
# is pinned so that it resolves the same inside.
run_cuda_env() {
  local keep=(HOME="$HOME" PATH="$RH_CUDA_TOOLKIT_BIN:/usr/sbin:/usr/bin:/sbin:/bin"
              RH_CACHE_DIR="$(rh_cache_dir)")
  [ -n "${TMPDIR:-}" ] && keep+=(TMPDIR="$TMPDIR")
  local name
  for name in $(compgen -e); do
    case $name in RH_*) [ "$name" = RH_CACHE_DIR ] || keep+=("$name=${!name}") ;; esac
  done
  env -i "${keep[@]}" "$@"
}

cuda_toolkit_installed() {
  local p
  for p in "${RH_CUDA_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || return 1
  done
  dpkg-query -W -f='${Version}' nvidia-cuda-toolkit | grep -q "^${RH_CUDA_TOOLKIT_VERSION//./\\.}\."
}

# nvidia-cuda-toolkit depends on the NVIDIA driver's libcuda.so.1 and libnvidia-ml.so.1, whose Debian packages
# need `contrib` and would install driver 535 userland, which on a GPU machine would shadow the real driver.
# Building needs only the toolkit's link stubs, so a local empty package provides those two names instead.
driver_placeholder_deb() {
  local dir=$1/driver-placeholder
  rm -rf "$dir" && mkdir -p "$dir/pkg/DEBIAN" || return 1
  cat > "$dir/pkg/DEBIAN/control" <<'EOF' || return 1
Package: rh-cuda-driver-placeholder
Version: 1
Architecture: all
Maintainer: renewable-huber tools/deps/cuda.sh <root@localhost>
Provides: libcuda.so.1 (= 520), libnvidia-ml.so.1 (= 520)
Description: stands in for the NVIDIA driver libraries when building with nvidia-cuda-toolkit
 Installed by renewable-huber's tools/deps/cuda.sh. Programs link against the CUDA toolkit's stubs; the
 real libcuda.so.1 comes from the driver of the machine that runs them.
EOF
  dpkg-deb --root-owner-group --build "$dir/pkg" "$dir/rh-cuda-driver-placeholder.deb" >/dev/null || return 1
  echo "$dir/rh-cuda-driver-placeholder.deb"
}

install_cuda_toolkit() {
  cuda_toolkit_installed && return 0
  echo "rh setup: installing Debian's CUDA 11.8 toolkit and $RH_CUDA_HOST_CXX (≈1.6 GB download)" >&2
  local dir; dir="$(rh_cache_dir)/downloads/apt-cuda"
  private_apt_setup "$dir" non-free >&2 || return 1
  local placeholder; placeholder=$(driver_placeholder_deb "$dir") || return 1
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get "${APT_PRIVATE_OPTS[@]}" install -y -qq \
    --no-install-recommends "$placeholder" "${RH_CUDA_APT_PACKAGES[@]}" >&2 || return 1
  # The downloaded .deb files (≈1.6 GB) are of no further use.
  $sudo apt-get "${APT_PRIVATE_OPTS[@]}" clean
  cuda_toolkit_installed || { echo "rh setup: CUDA 11.8 toolkit still missing after install" >&2; return 1; }
}

# Writes the compiler wrapper (from nvcc-arch-wrapper.in) next to a copy of Kokkos' nvcc_wrapper and cuda-include/,
# links to every top-level /usr/include entry of the 11.8 toolkit's header packages (the wrapper puts it in front
# of /usr/local/include, where this machine links CUDA 13's headers). The wrapper is written last: its presence
# means the directory is complete.
write_cuda_compiler() {
  local cxx; cxx=$(rh_cuda_compiler)
  local dir; dir=$(dirname "$cxx")
  [ -x "$cxx" ] && return 0
  # On its first run kokkos_source_dir also prints download messages on stdout: the path is the last line.
  local pk; pk=$(kokkos_source_dir | tail -n 1) || return 1
  rm -rf "$dir" && mkdir -p "$dir/cuda-include" || return 1
  install -m 755 "$pk/kokkos/bin/nvcc_wrapper" "$dir/nvcc_wrapper" || return 1
  local headers; headers=$(dpkg -L "${RH_CUDA_HEADER_PACKAGES[@]}" | sed -n 's#^/usr/include/\([^/]*\)$#\1#p' | sort -u)
  local name
  for name in $headers; do ln -s "/usr/include/$name" "$dir/cuda-include/$name" || return 1; done
  [ -e "$dir/cuda-include/cuda_runtime.h" ] || { echo "rh setup: no CUDA 11.8 headers in /usr/include" >&2; return 1; }
  sed -e "s|@CUDA_ARCH@|$RH_CUDA_ARCH|g" -e "s|@HOST_CXX@|$RH_CUDA_HOST_CXX|g" \
    "$RH_DEPS_DIR/nvcc-arch-wrapper.in" > "$cxx.tmp" && chmod 755 "$cxx.tmp" && mv "$cxx.tmp" "$cxx"
}

# Prints the prefix of Kokkos + Kokkos Kernels built for CUDA (sm_$RH_CUDA_ARCH) and the host spaces; logs go to
# stderr. The build itself runs in run_cuda_env, so kokkos.sh is sourced again in that clean shell.
build_kokkos_cuda() {
  install_cuda_toolkit || return 1
  write_cuda_compiler || return 1
  local cxx; cxx=$(rh_cuda_compiler)
  local core_opts=(
    -DCMAKE_CXX_COMPILER="$cxx"
    -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ENABLE_OPENMP=ON
    -DKokkos_ARCH_AMPERE80=ON                  # newest that Kokkos 3.4 knows; the wrapper retargets it
    # FindCUDAToolkit would look for headers next to nvcc, in /usr/lib/nvidia-cuda-toolkit.
    -DCUDAToolkit_ROOT=/usr -DCUDAToolkit_INCLUDE_DIR=/usr/include
    # Kokkos' CMake config records this library for CUDA::cudart; the shared one is absent on the GPU machine.
    -DCUDA_cudart_LIBRARY="$RH_CUDA_LIB_DIR/libcudart_static.a"
  )
  # Kokkos Kernels: same compiler; no cuBLAS/cuSPARSE (CUDA 11 libraries that the GPU machine lacks).
  run_cuda_env RH_KOKKOS_CXX="$cxx" bash -c '
    set -euo pipefail; shopt -s inherit_errexit
    source "$1/kokkos.sh"; shift
    RH_KK_EXTRA_OPTS=(-DCMAKE_CXX_COMPILER="$RH_KOKKOS_CXX"
                      -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF)
    build_kokkos cuda "$@"' build_kokkos_cuda "$RH_DEPS_DIR" "${core_opts[@]}"
}

# For our own project. Kokkos' CMake config brings the CUDA flags (-arch=sm_80, rewritten by the wrapper) and
# the CUDA libraries: static cudart, and libcuda's link stub (cudart loads the GPU machine's libcuda.so.1 at run
# time). Static libstdc++/libgcc: the binaries must run on the GPU machine, which has no g++-11 runtime.
# Should the project ever call find_package(CUDAToolkit), add the CUDAToolkit_* hints and CUDA_cudart_LIBRARY of
# build_kokkos_cuda (unused options only draw a CMake warning, hence not here).
# Set last: rh_cuda_compiler hashes write_cuda_compiler, which must be defined by then.
RH_CUDA_CMAKE_OPTS=(
  -DCMAKE_CXX_COMPILER="$(rh_cuda_compiler)"
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc"
  "-DCMAKE_SHARED_LINKER_FLAGS=-static-libstdc++ -static-libgcc"
)
