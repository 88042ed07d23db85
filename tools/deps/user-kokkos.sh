#!/usr/bin/env bash
# Builds a Kokkos + Kokkos Kernels source tree that YOU point at (nothing is downloaded) into PREFIX, the way this
# project wants it: static and position-independent (the C ABI library carries Kokkos inside), C++17, Serial +
# OpenMP, and CUDA for one architecture when --arch is given; Kokkos Kernels without explicit instantiation.
# Then: Kokkos_ROOT=PREFIX KokkosKernels_ROOT=PREFIX tools/rh build (docs/build.md). KERNELS_SRC `-`: Kokkos alone
# (the library and its tests need no Kokkos Kernels; only the benchmarks rh_gram_bench and rh_lu_bench do).
#
# Usage: tools/deps/user-kokkos.sh KOKKOS_SRC KERNELS_SRC PREFIX [--arch ARCH] [--cuda-root DIR | --debian-cuda]
#                                  [--cxx CXX] [-- EXTRA_KOKKOS_CMAKE_OPTIONS...]
#   --arch ARCH      Kokkos_ARCH_<ARCH> with CUDA: BLACKWELL120 (RTX 50xx, CUDA >= 12.8), HOPPER90 (H100/H200), ...
#   --cuda-root DIR  the CUDA toolkit to build with (DIR/bin/nvcc); default: the nvcc on PATH
#   --debian-cuda    Debian's CUDA 11.8 as `tools/rh setup --cuda` installs it (SM <= 9.0 only)
#   --cxx CXX        the C++ compiler (default with --arch: a script written into PREFIX; see below)
# Settings: RH_USER_KOKKOS_BUILD (build directory, default PREFIX.build), RH_JOBS (default nproc).
set -euo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 3 ] || usage
kokkos_src=$(cd "$1" && pwd); kernels_src=$2; prefix=$3; shift 3
[ "$kernels_src" = - ] || kernels_src=$(cd "$kernels_src" && pwd)
deps=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
arch="" cuda_root="" debian=0 cxx="" extra=() run=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=$2; shift ;;
    --cuda-root) cuda_root=$(cd "$2" && pwd); shift ;;
    --debian-cuda) debian=1 ;;
    --cxx) cxx=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    *) usage ;;
  esac
  shift
done
[ -x "$kokkos_src/bin/nvcc_wrapper" ] && { [ "$kernels_src" = - ] || [ -f "$kernels_src/CMakeLists.txt" ]; } ||
  { echo "user-kokkos: $kokkos_src is not a Kokkos source tree, or $kernels_src not Kokkos Kernels" >&2; exit 2; }
mkdir -p "$prefix"; prefix=$(cd "$prefix" && pwd)
bld=${RH_USER_KOKKOS_BUILD:-$prefix.build}
jobs=${RH_JOBS:-$(nproc)}

# One host-parallel backend per Kokkos build: OpenMP (RH_USER_KOKKOS_HOST=THREADS for Kokkos::Threads).
core_opts=(-DKokkos_ENABLE_SERIAL=ON "-DKokkos_ENABLE_${RH_USER_KOKKOS_HOST:-OPENMP}=ON")
kk_opts=()
if [ -n "$arch" ]; then
  sm=sm_$(echo "$arch" | tr -dc 0-9)
  [ "$sm" != sm_ ] || { echo "user-kokkos: --arch $arch names no compute capability" >&2; exit 2; }
  if [ "$debian" = 1 ]; then
    # The compiler wrapper of tools/deps/cuda.sh (11.8 toolkit only, its headers before the machine's CUDA 13
    # ones, g++-11), written into PREFIX around this Kokkos' nvcc_wrapper; every step runs in cuda.sh's clean
    # environment. write_cuda_compiler takes its path from rh_cuda_compiler and nvcc_wrapper from
    # kokkos_source_dir/kokkos: both are pointed here.
    source "$deps/kokkos.sh"; source "$deps/cuda.sh"
    cuda_toolkit_installed || { echo "user-kokkos: Debian's CUDA 11.8 is missing: run tools/rh setup --cuda" >&2; exit 2; }
    RH_CUDA_ARCH=${sm#sm_}
    wrapped=$(mktemp -d); ln -s "$kokkos_src" "$wrapped/kokkos"
    rh_cuda_compiler() { echo "$prefix/libexec/renewable-huber/nvcc-arch-wrapper"; }
    kokkos_source_dir() { echo "$wrapped"; }
    write_cuda_compiler
    [ -n "$cxx" ] || cxx=$(rh_cuda_compiler)
    core_opts+=(-DCUDAToolkit_ROOT=/usr -DCUDAToolkit_INCLUDE_DIR=/usr/include)
    run=(run_cuda_env)
  elif [ -n "$cuda_root" ]; then
    core_opts+=(-DCUDAToolkit_ROOT="$cuda_root")   # Kokkos' CMake package records it for its users
    nvcc_dir=$cuda_root/bin
  else
    nvcc_dir=$(dirname "$(command -v nvcc)") || { echo "user-kokkos: no nvcc on PATH; give --cuda-root" >&2; exit 2; }
  fi
  if [ -z "$cxx" ]; then
    # Kokkos records the compiler it was built with, and tools/rh builds this project with that same compiler. So
    # it is a script that pins what nvcc_wrapper otherwise takes from the caller's environment: which nvcc (the
    # first on PATH) and the architecture of commands that name none (nvcc_wrapper's default, sm_70, is refused
    # by CUDA 13).
    mkdir -p "$prefix/bin" "$prefix/libexec/renewable-huber"
    install -m 755 "$kokkos_src/bin/nvcc_wrapper" "$prefix/libexec/renewable-huber/nvcc_wrapper"
    cxx=$prefix/bin/rh-nvcc
    cat > "$cxx" <<EOF
#!/usr/bin/env bash
# Written by renewable-huber's tools/deps/user-kokkos.sh: Kokkos' nvcc_wrapper with $nvcc_dir/nvcc, default -arch=$sm.
export PATH="$nvcc_dir:\$PATH"
for arg in "\$@"; do
  case \$arg in -arch|-arch=*|-gencode|-gencode=*|--cuda-gpu-arch*) exec "$prefix/libexec/renewable-huber/nvcc_wrapper" "\$@" ;; esac
done
exec "$prefix/libexec/renewable-huber/nvcc_wrapper" "\$@" -arch=$sm
EOF
    chmod 755 "$cxx"
  fi
  core_opts+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_$arch=ON")
  # No vendor BLAS/sparse libraries: the solver does not use them, and the binaries stay free of CUDA's shared
  # math libraries.
  kk_opts+=(-DKokkosKernels_ENABLE_TPL_CUBLAS=OFF -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
            -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF)
fi
[ -n "$cxx" ] && core_opts+=(-DCMAKE_CXX_COMPILER="$cxx") && kk_opts+=(-DCMAKE_CXX_COMPILER="$cxx")

common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17
        -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON)
echo "user-kokkos: $kokkos_src -> $prefix (${arch:-no CUDA}; build in $bld)"
"${run[@]}" cmake -S "$kokkos_src" -B "$bld/core" "${common[@]}" -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF \
  "${core_opts[@]}" "${extra[@]}"
"${run[@]}" cmake --build "$bld/core" -j "$jobs"
"${run[@]}" cmake --install "$bld/core"
if [ "$kernels_src" = - ]; then
  echo "user-kokkos: done (Kokkos alone). Kokkos_ROOT=$prefix tools/rh build"
  exit 0
fi
# Without explicit instantiation: the project uses a few header templates only (as tools/deps/kokkos.sh).
"${run[@]}" cmake -S "$kernels_src" -B "$bld/kernels" "${common[@]}" -DKokkos_ROOT="$prefix" \
  -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF \
  -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF -DKokkosKernels_INST_LAYOUTLEFT=OFF \
  -DKokkosKernels_INST_LAYOUTRIGHT=OFF -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF \
  -DKokkosKernels_INST_ORDINAL_INT=OFF "${kk_opts[@]}"
"${run[@]}" cmake --build "$bld/kernels" -j "$jobs"
"${run[@]}" cmake --install "$bld/kernels"
echo "user-kokkos: done. Kokkos_ROOT=$prefix KokkosKernels_ROOT=$prefix tools/rh build"
