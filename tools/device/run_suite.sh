#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, over a bundle made by tools/device/bundle.sh:
#   tools/device/run_suite.sh .device/NAME.tar.xz [OUT_DIR]
# 1. environment record (GPU, driver), 2. the whole ctest suite of the bundle (every label except the tests
# that need this machine's compilers or Python packages), 3. every golden corpus replayed on CUDA (and, for the
# record, without the tolerance floors), 4. compute-sanitizer memcheck, racecheck and synccheck over the CUDA unit
# tests and the reference replay (tools/device/sanitize.sh; RH_SKIP_SANITIZERS=1 skips them). OUT_DIR gets suite.txt,
# sanitizer.txt and sanitizer-full.log; the exit code is non-zero on any failure.
set -uo pipefail
root=$(pwd)
pack=$(readlink -f "${1:-.device/cuda.tar.xz}")
out=${2:-${OUT:-/tmp/rh-device-out}}
mkdir -p "$out"
unpacked=$(mktemp -d)
tar -C "$unpacked" -xJf "$pack"
bundle=$(echo "$unpacked"/*)
build_origin=$(sed -n 1p "$bundle/origin")
root_origin=$(sed -n 2p "$bundle/origin")
cmake_origin=$(sed -n 3p "$bundle/origin")
# Re-point the recorded absolute paths at this checkout.
find "$bundle/build" -name CTestTestfile.cmake -exec sed -i \
  -e "s|$build_origin|$bundle/build|g" \
  -e "s|$root_origin|$root|g" -e "s|$cmake_origin|$(command -v cmake)|g" {} +
# Executables find the C ABI library by the build tree's RPATH here; there, by this path.
export LD_LIBRARY_PATH="$bundle/build/abi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
{
  echo "== commit: $(cat "$bundle/commit")"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
  nvidia-smi | head -4
  echo "== spaces"
  "$bundle/build/tools/rh_spaces" --require-profile cuda
} 2>&1 | tee -a "$out/suite.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

# Tests that build or install against this machine's toolchain, need NumPy/SciPy, or check the release files and
# the host build (release_check, portable_isa) stay on the CPU machine.
exclude='golden_generate_check|golden_oracle_crosscheck|consumer|install|release_check|portable_isa|perf_records'
echo "== ctest (all labels; excluded: $exclude)" | tee -a "$out/suite.txt"
(cd "$bundle/build" && OMP_PROC_BIND=false ctest --output-on-failure -E "$exclude" 2>&1) | tee -a "$out/suite.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

replay_log=$(mktemp)
for f in "$root"/golden/*.json "$root"/golden/reference/*.json; do
  echo "== replay $(basename "$f") on cuda"
  OMP_PROC_BIND=false "$bundle/build/tools/rh_replay" "$f" --space cuda
done 2>&1 | grep -v 'OMP_PROC_BIND\|For best performance\|For unit testing\|In general, for best' | tee "$replay_log" >> "$out/suite.txt"
grep -q ' failed$' "$replay_log" && ! grep -q '[1-9][0-9]* failed$' "$replay_log" || status=1
# For the record only: the same replays held to each case's own tolerance (what the CUDA floors must cover).
for f in "$root"/golden/*.json "$root"/golden/reference/*.json; do
  echo "== replay $(basename "$f") on cuda, no floor (for the record)"
  OMP_PROC_BIND=false "$bundle/build/tools/rh_replay" "$f" --space cuda --no-floor
done 2>&1 | grep -v 'OMP_PROC_BIND\|For best performance\|For unit testing\|In general, for best' >> "$out/suite.txt"

# compute-sanitizer memcheck, racecheck and synccheck (tools/device/sanitize.sh) over the CUDA unit tests and the
# reference replay; RH_SANITIZE_TESTS widens it (e.g. '_cuda$': every CUDA test, which takes much longer).
if [ "${RH_SKIP_SANITIZERS:-0}" != 1 ]; then
  RH_SANITIZE_TESTS=${RH_SANITIZE_TESTS:-'^(unit_cuda|replay_native_core_v1_cuda)$'} \
    "$root/tools/device/sanitize.sh" "$bundle/build" "$out" | tee -a "$out/suite.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
echo "device suite exit status: $status" | tee -a "$out/suite.txt"
exit $status
