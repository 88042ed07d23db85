# Sourced by tools/rh: what the Windows check (tools/rh test --windows) builds against. Debian's MinGW-w64 and wine
# come from apt (tools/rh); here Kokkos 3.4.01 is built for MinGW-w64 from the same Debian source as the Linux build,
# with tools/deps/kokkos-3.4-mingw.patch (why: its header), and Debian's header-only fmt, doctest and nlohmann_json
# are offered to the cross build through a prefix of their own (their Debian CMake files point the compiler at
# /usr/include, whose glibc headers must not reach MinGW-w64).

# The folder where the mingw runtime DLLs (libstdc++, libgcc_s, libwinpthread) of the compiler live: WINEPATH.
mingw_runtime_path() {
  local gcc; gcc=$(dirname "$(x86_64-w64-mingw32-g++-posix -print-libgcc-file-name)")
  echo "$gcc;/usr/x86_64-w64-mingw32/lib"
}

# Prints the prefix holding fmt, doctest and nlohmann_json for the cross build (headers linked from /usr/include).
mingw_header_packages() {
  local prefix; prefix="$(rh_cache_dir)/mingw-headers"
  local name
  mkdir -p "$prefix/include"
  for name in fmt doctest nlohmann; do ln -sfn "/usr/include/$name" "$prefix/include/$name"; done
  local fmt_version json_version
  fmt_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' /usr/lib/*/cmake/fmt/fmt-config-version.cmake | head -n1)
  json_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' /usr/share/cmake/nlohmann_json/nlohmann_jsonConfigVersion.cmake | head -n1)
  write_header_package "$prefix" fmt fmt::fmt-header-only "$fmt_version" FMT_HEADER_ONLY=1
  write_header_package "$prefix" doctest doctest::doctest 0 ""
  write_header_package "$prefix" nlohmann_json nlohmann_json::nlohmann_json "$json_version" ""
  echo "$prefix"
}

# write_header_package PREFIX NAME TARGET VERSION DEFINE: a CMake package NAME with one header-only target.
write_header_package() {
  local dir="$1/lib/cmake/$2"
  mkdir -p "$dir"
  cat > "$dir/$2Config.cmake" <<CMAKE
# Written by tools/deps/mingw.sh: Debian's header-only $2 for the MinGW-w64 cross build.
if(NOT TARGET $3)
  add_library($3 INTERFACE IMPORTED)
  set_target_properties($3 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "\${CMAKE_CURRENT_LIST_DIR}/../../../include"
                        INTERFACE_COMPILE_DEFINITIONS "$5")
endif()
CMAKE
  cat > "$dir/$2ConfigVersion.cmake" <<CMAKE
set(PACKAGE_VERSION "$4")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
if(PACKAGE_FIND_VERSION AND PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
CMAKE
}

# Builds Kokkos 3.4.01 (Serial + Threads, static) with MinGW-w64 into the cache; prints its prefix.
build_kokkos_mingw() {
  local patch="$RH_ROOT/tools/deps/kokkos-3.4-mingw.patch"
  local key; key=$(cat "$patch" "$RH_ROOT/cmake/toolchains/mingw-w64-x86_64.cmake" | sha256sum | cut -c1-12)
  local prefix; prefix="$(rh_cache_dir)/kokkos-$KOKKOS_VERSION-mingw-$key"
  if [ -f "$prefix/.complete" ]; then echo "$prefix"; return 0; fi
  local pk; pk=$(kokkos_source_dir)
  local work; work="$(rh_cache_dir)/build/kokkos-mingw-$key"
  local src="$work/src" bld="$work/build"
  rm -rf "$work" "$prefix"
  mkdir -p "$src"
  cp -r "$pk/kokkos/." "$src"
  patch -d "$src" -p1 --quiet < "$patch"
  echo "rh setup: building Kokkos $KOKKOS_VERSION for MinGW-w64 (Serial, Threads) into $prefix" >&2
  cmake -S "$src" -B "$bld" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$RH_ROOT/cmake/toolchains/mingw-w64-x86_64.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_PTHREAD=ON -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF >&2
  cmake --build "$bld" -j "$(nproc)" >&2
  cmake --install "$bld" >&2
  touch "$prefix/.complete"
  rm -rf "$work"
  echo "$prefix"
}
