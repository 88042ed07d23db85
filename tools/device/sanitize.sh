#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every CUDA test of a build: each ctest entry labelled cuda,
# run with its own command, environment and working folder under each tool. Runs ON THE GPU MACHINE, in the repository
# root:
#
#   tools/device/sanitize.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR: a CUDA build (tools/rh build --cuda), or the build/ of an unpacked bundle whose CTestTestfile paths
# were re-pointed (tools/device/run_suite.sh does that, then calls this). OUT_DIR (default $OUT, else
# /tmp/rh-sanitize) gets sanitizer.txt (one verdict per test and tool) and sanitizer-full.log (the tools' output).
# A run is clean when the test itself passes and the tool reports 0 errors (racecheck's warnings are intra-warp
# hazards; its errors are races between warps). Exit status 1 when any run is not clean.
#
# Settings (environment): RH_SANITIZE_TOOLS ("memcheck racecheck synccheck"), RH_SANITIZE_TESTS (a ctest -R regular
# expression; default: every cuda test), RH_SANITIZE_TIMEOUT (seconds per run, default 3600).
set -uo pipefail
build=$(cd "${1:?usage: tools/device/sanitize.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-${OUT:-/tmp/rh-sanitize}}
mkdir -p "$out"
tools=${RH_SANITIZE_TOOLS:-memcheck racecheck synccheck}
command -v compute-sanitizer >/dev/null || { echo "sanitize.sh: compute-sanitizer is not on PATH" >&2; exit 2; }

# name, working folder, environment and command of each cuda test, one per line, fields and words separated by
# the unit separator (0x1f), from ctest's own description of the tests.
list=$(cd "$build" && ctest -L '^cuda$' ${RH_SANITIZE_TESTS:+-R "$RH_SANITIZE_TESTS"} --show-only=json-v1 |
  python3 -c '
import json, sys
sep = "\x1f"
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    env = props.get("ENVIRONMENT", [])
    print("\t".join([t["name"], props.get("WORKING_DIRECTORY", ""), sep.join(env), sep.join(t["command"])]))
') || { echo "sanitize.sh: ctest could not list the tests of $build" >&2; exit 2; }
[ -n "$list" ] || { echo "sanitize.sh: $build has no cuda tests${RH_SANITIZE_TESTS:+ matching $RH_SANITIZE_TESTS}" >&2; exit 2; }

status=0
: > "$out/sanitizer-full.log"
: > "$out/sanitizer.txt"
while IFS=$'\t' read -r name dir env cmd; do
  IFS=$'\x1f' read -r -a vars <<< "$env"
  IFS=$'\x1f' read -r -a argv <<< "$cmd"
  for tool in $tools; do
    log=$(mktemp)
    (cd "${dir:-$build}" && env OMP_PROC_BIND=false "${vars[@]}" timeout "${RH_SANITIZE_TIMEOUT:-3600}" \
       compute-sanitizer --tool "$tool" "${argv[@]}") > "$log" 2>&1
    rc=$?
    if [ "$tool" = racecheck ]; then summary='RACECHECK SUMMARY: .*(0 errors'; else summary='ERROR SUMMARY: 0 errors'; fi
    verdict=clean
    if [ $rc != 0 ] || ! grep -q "$summary" "$log"; then verdict="NOT CLEAN (exit $rc)"; status=1; fi
    echo "$tool $name: $verdict; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -n 1)" | tee -a "$out/sanitizer.txt"
    { echo "===== $tool: $name (exit $rc)"; head -c 4000000 "$log"; } >> "$out/sanitizer-full.log"
    rm -f "$log"
  done
done <<< "$list"
echo "sanitize.sh: $(grep -c ': clean;' "$out/sanitizer.txt") clean, $(grep -c 'NOT CLEAN' "$out/sanitizer.txt") not clean" |
  tee -a "$out/sanitizer.txt"
exit $status
