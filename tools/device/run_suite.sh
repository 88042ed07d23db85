#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, over a bundle made by tools/device/bundle.sh:
#   tools/device/run_suite.sh [BUNDLE_DIR] [OUT_DIR]
# 1. environment record (GPU, driver, toolkit), 2. the whole ctest suite of the bundle (every label except the
# tests that need this machine's compilers or Python packages), 3. compute-sanitizer memcheck and racecheck
# over the CUDA unit tests and the CUDA replays. Logs go to OUT_DIR; the exit code is non-zero on any failure.
set -uo pipefail
root=$(pwd)
bundle=$(cd "${1:-.device}" && pwd)
out=${2:-${OUT:-/tmp/rh-device-out}}
mkdir -p "$out"
build_origin=$(sed -n 1p "$bundle/origin")
root_origin=$(sed -n 2p "$bundle/origin")
cmake_origin=$(sed -n 3p "$bundle/origin")
# Re-point the recorded absolute paths at this checkout.
find "$bundle/build" -name CTestTestfile.cmake -exec sed -i \
  -e "s|$build_origin|$bundle/build|g" \
  -e "s|$root_origin/../shared/reference/golden|$bundle/reference|g" \
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
} 2>&1 | tee "$out/environment.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

# Tests that build or install against this machine's toolchain, or need NumPy/SciPy, stay on the CPU machine.
exclude='golden_generate_check|golden_oracle_crosscheck|consumer|install'
(cd "$bundle/build" && OMP_PROC_BIND=false ctest --output-on-failure -E "$exclude" 2>&1) | tee "$out/ctest.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

for f in "$root"/golden/*.json "$bundle"/reference/*.json; do
  "$bundle/build/tools/rh_replay" "$f" --space cuda
done 2>&1 | tee "$out/replay.txt"
grep -q ' failed$' "$out/replay.txt" && ! grep -q '[1-9][0-9]* failed$' "$out/replay.txt" || status=1
# For the record only: the same replays held to each case's own tolerance (what the CUDA floors must cover).
for f in "$root"/golden/*.json "$bundle"/reference/*.json; do
  "$bundle/build/tools/rh_replay" "$f" --space cuda --no-floor
done > "$out/replay-no-floor.txt" 2>&1

sanitize() {  # tool, label, command...
  local tool=$1 label=$2; shift 2
  echo "== compute-sanitizer --tool $tool: $label"
  local log; log=$(mktemp)
  RH_TEST_SPACE=cuda compute-sanitizer --tool "$tool" --error-exitcode 99 "$@" > "$log" 2>&1
  local rc=$?
  tail -n 4 "$log"
  { echo "===== $tool: $label (exit $rc)"; head -c 4000000 "$log"; } >> "$out/sanitizer-full.log"
  rm -f "$log"
  return $rc
}
{
  for tool in memcheck racecheck; do
    sanitize $tool unit "$bundle/build/tests/rh_unit_tests" || status=1
    sanitize $tool replay "$bundle/build/tools/rh_replay" "$bundle/reference/native_core_v1.json" --space cuda || status=1
  done
} | tee "$out/sanitizer.txt"
echo "device suite exit status: $status"
exit $status
