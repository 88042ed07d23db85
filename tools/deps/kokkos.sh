# Sourced by tools/rh. Fetches Kokkos 3.4.01 + Kokkos Kernels 3.4.01 from Debian's trilinos 13.2 source
# package, verifies it, and builds it into the user's cache. No registry host is written here: the mirror is
# read from this machine's apt configuration.

TRILINOS_DEB_VERSION="13.2.0-4"
TRILINOS_ORIG="trilinos_13.2.0.orig.tar.gz"
# SHA-256 of the upstream tarball, as listed in trilinos_13.2.0-4.dsc (checked again after apt's own check).
TRILINOS_ORIG_SHA256="0ddb47784ba7b8a6b9a07a4822b33be508feb4ccd54301b2a5d10c9e54524b90"
KOKKOS_VERSION="3.4.01"

rh_cache_dir() { echo "${RH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/renewable-huber}"; }

# The C++ compiler that the Kokkos installed at $1 was built with (its CMake package records it). Code that
# includes Kokkos' CUDA headers must be compiled with it.
kokkos_cxx_compiler() {
  sed -n 's/^set(Kokkos_CXX_COMPILER "\(.*\)")$/\1/Ip' "$1"/lib*/cmake/Kokkos/KokkosConfigCommon.cmake | head -n 1
}

# The Debian mirror URIs this machine already uses (deb822 .sources files and one-line sources.list).
apt_mirror_uris() {
  {
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      # Keep URIs of stanzas that serve Debian's main archive suites (not -security, not third parties).
      awk 'BEGIN{RS=""; FS="\n"} /Suites:[^\n]*bookworm( |$|\n| bookworm-updates)/ && !/bookworm-security/ {
             for (i=1;i<=NF;i++) if ($i ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", $i); print $i } }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] || continue
      awk '$1=="deb" && $0 ~ / bookworm main/ { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
    done
  } | tr ' ' '\n' | sed '/^$/d' | awk '!seen[$0]++'
}

# A private apt configuration (lists and cache under $1) with deb-src (and, with $2=non-free, deb non-free) lines
# built from this machine's own mirror URIs.
private_apt_setup() {
  local dir=$1 extra=${2:-}
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
  local uris; uris=$(apt_mirror_uris)
  [ -n "$uris" ] || { echo "rh setup: found no Debian mirror in /etc/apt" >&2; return 1; }
  : > "$dir/sources.list"
  local u
  for u in $uris; do
    echo "deb-src $u bookworm main" >> "$dir/sources.list"
    if [ "$extra" = non-free ]; then
      echo "deb $u bookworm main non-free" >> "$dir/sources.list"
    fi
  done
  APT_PRIVATE_OPTS=(-o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
                    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o "APT::Sandbox::User=root")
  apt-get "${APT_PRIVATE_OPTS[@]}" update -qq
}

fetch_trilinos_source() {
  local dl; dl="$(rh_cache_dir)/downloads"
  mkdir -p "$dl"
  if [ -f "$dl/$TRILINOS_ORIG" ] && echo "$TRILINOS_ORIG_SHA256  $dl/$TRILINOS_ORIG" | sha256sum -c --status; then
    return 0
  fi
  echo "rh setup: downloading Debian source package trilinos $TRILINOS_DEB_VERSION (≈166 MB)" >&2
  private_apt_setup "$dl/apt" >&2
  # apt verifies the signed Sources index and every file's hash before it keeps the download.
  (cd "$dl" && apt-get "${APT_PRIVATE_OPTS[@]}" source --download-only -qq "trilinos=$TRILINOS_DEB_VERSION") >&2
  # Second, independent check: the tarball's hash as pinned here and as listed in the .dsc.
  grep -q "$TRILINOS_ORIG_SHA256 .* $TRILINOS_ORIG" "$dl/trilinos_$TRILINOS_DEB_VERSION.dsc" ||
    { echo "rh setup: $TRILINOS_ORIG hash in the .dsc differs from the pinned one" >&2; return 1; }
  echo "$TRILINOS_ORIG_SHA256  $dl/$TRILINOS_ORIG" | sha256sum -c --status ||
    { echo "rh setup: $TRILINOS_ORIG failed its SHA-256 check" >&2; rm -f "$dl/$TRILINOS_ORIG"; return 1; }
}

# Unpacks packages/kokkos and packages/kokkos-kernels once into the cache.
kokkos_source_dir() {
  local src; src="$(rh_cache_dir)/src/trilinos-13.2.0"
  if [ ! -f "$src/.unpacked" ]; then
    fetch_trilinos_source
    rm -rf "$src" && mkdir -p "$src"
    tar -xzf "$(rh_cache_dir)/downloads/$TRILINOS_ORIG" -C "$src" --strip-components=1 \
      --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
    touch "$src/.unpacked"
  fi
  echo "$src/packages"
}

# Builds and installs Kokkos core, then Kokkos Kernels, into a cache directory keyed by version and options.
# $1 = flavour name (cpu | cuda), remaining args = extra CMake options for Kokkos core.
# Prints the install prefix. Kokkos is built static and position-independent so that the shared C ABI library
# can carry it inside and export only its own symbols.
build_kokkos() {
  local flavour=$1; shift
  local core_opts=("$@")
  local key; key=$(printf '%s\n' "$KOKKOS_VERSION" "${core_opts[@]}" "${RH_KOKKOS_CXX:-c++}" "${RH_KK_EXTRA_OPTS[@]}" |
                   sha256sum | cut -c1-12)
  local prefix; prefix="$(rh_cache_dir)/kokkos-$KOKKOS_VERSION-$flavour-$key"
  if [ -f "$prefix/.complete" ]; then echo "$prefix"; return 0; fi
  local pk; pk=$(kokkos_source_dir)
  local bld; bld="$(rh_cache_dir)/build/kokkos-$flavour-$key"
  rm -rf "$bld" "$prefix"
  local jobs; jobs=$(nproc)
  echo "rh setup: building Kokkos $KOKKOS_VERSION ($flavour) into $prefix" >&2
  cmake -S "$pk/kokkos" -B "$bld/core" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF "${core_opts[@]}" >&2
  cmake --build "$bld/core" -j "$jobs" >&2
  cmake --install "$bld/core" >&2
  # Kokkos Kernels without explicit template instantiation: we use a handful of its header templates, and
  # instantiating the full ETI set costs ≈40 min on two cores.
  cmake -S "$pk/kokkos-kernels" -B "$bld/kernels" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ROOT="$prefix" -DCMAKE_CXX_STANDARD=17 \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF -DKokkosKernels_INST_LAYOUTLEFT=OFF \
    -DKokkosKernels_INST_LAYOUTRIGHT=OFF -DKokkosKernels_INST_OFFSET_INT=OFF \
    -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_INST_ORDINAL_INT=OFF \
    -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF "${RH_KK_EXTRA_OPTS[@]}" >&2
  cmake --build "$bld/kernels" -j "$jobs" >&2
  cmake --install "$bld/kernels" >&2
  touch "$prefix/.complete"
  rm -rf "$bld"
  echo "$prefix"
}
