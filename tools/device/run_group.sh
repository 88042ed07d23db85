#!/usr/bin/env bash
# Runs ON THE GPU MACHINE (the device tool), in the repository root: builds this tree with the CUDA 13 route
# (tools/device/build_cuda13.sh, without its tests) and records the group profile (issue 34, docs/performance.md,
# "Model groups"): each model group on CUDA and on OpenMP, our single model looped on both, and the reference's
# NumPy engine looped, one part per shape and dtype merged into one record; then its plot and table.
#
#   tools/device/run_group.sh KOKKOS_SRC OUT_DIR [rhperf bench options, e.g. --dtypes f64]
#
# Carry: KOKKOS_SRC (Kokkos 4.6.01 source, e.g. build/wt32/kokkos), build/wt32/deps (fmt/doctest/json headers, used
# when the image lacks them) and .whl (the reference's wheel, tools/device/fetch_wheels.sh; without it the NumPy
# loop is recorded as unavailable). Writes OUT_DIR/<gpu>-group.json, <gpu>-group-times.png, <gpu>-group.md, the
# parts' tables and logs. Settings: RH_GROUP_THREADS (OpenMP threads, default: every core), RH_GROUP_SECONDS (the
# whole run's deadline from its start, build included, default 330: a part that would pass it is cut or not run,
# and the merged record holds the parts that finished), RH_GROUP_PARTS (the parts in the order they run, default
# "many-small:f64 many-small:f32 few-large:f64 few-large:f32"). RH_GROUP_WORKER (an rh_perf_worker already built: no
# build) and RH_GROUP_SPACES (default cuda,openmp) try the script elsewhere.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
kokkos=$(cd "$1" && pwd) || exit 2
out=$(mkdir -p "$2" && cd "$2" && pwd) || exit 2
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
exec > >(tee "$out/run_group.log") 2>&1
start=$(date +%s)
echo "== machine: $(nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader | head -1); $(nproc) cores"

if [ -z "${RH_GROUP_WORKER:-}" ]; then
  # Debian packages the build needs: the image's own, else the headers carried in build/wt32/deps.
  if ! Kokkos_ROOT=/nonexistent timeout 60 tools/rh setup > "$out/setup.log" 2>&1; then
    export CMAKE_PREFIX_PATH=$root/build/wt32/deps/usr
    Kokkos_ROOT=/nonexistent RH_NO_INSTALL=1 tools/rh setup >> "$out/setup.log" 2>&1 || { tail "$out/setup.log"; exit 1; }
  fi
  export RH_NO_INSTALL=1
  s=$(date +%s)
  tools/device/build_cuda13.sh "$kokkos" --arch HOPPER90 --no-test --log-dir "$out/build" ||
    { tail -20 "$out/build/build.log"; exit 1; }
  echo "== built in $(( $(date +%s) - s )) s"
fi
worker=${RH_GROUP_WORKER:-$root/build/cuda-sm_90/perf/rh_perf_worker}
spaces=${RH_GROUP_SPACES:-cuda,openmp}

# The reference's wheel, without dependencies (the machine's NumPy serves it).
site=$(mktemp -d)
if ls .whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl
else
  echo "== no .whl/: the reference's NumPy engine will be recorded as unavailable"
fi
export PYTHONPATH="$root/perf:$site${PYTHONPATH:+:$PYTHONPATH}"
export OMP_PROC_BIND=false OMP_NUM_THREADS=${RH_GROUP_THREADS:-$(nproc)}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -o 'H[0-9]00' | tr A-Z a-z)
name=${gpu:-gpu}-group
# One part per shape and dtype, each given the time left before the deadline: a slow part costs itself only.
deadline=$(( start + ${RH_GROUP_SECONDS:-330} - 20 ))  # 20 s kept for the merge, the table and the plot
parts=()
for part in ${RH_GROUP_PARTS:-many-small:f64 many-small:f32 few-large:f64 few-large:f32}; do
  shape=${part%%:*} dtype=${part#*:}
  left=$(( deadline - $(date +%s) ))
  [ "$left" -ge 20 ] || { echo "== $shape $dtype: not run (the deadline is near)"; continue; }
  s=$(date +%s)
  timeout "$left" python3 -m rhperf bench --profile group --worker "$worker" --spaces "$spaces" --peers numpy \
    --peer-python python3 --shapes "$shape" --dtypes "$dtype" --quiet-wait 2 --out "$out/$name-$shape-$dtype.json" \
    "$@" > "$out/$name-$shape-$dtype.txt"
  echo "== $shape $dtype: exit $? in $(( $(date +%s) - s )) s"
  [ -f "$out/$name-$shape-$dtype.json" ] && parts+=("$out/$name-$shape-$dtype.json")
done
[ ${#parts[@]} -gt 0 ] || { echo "no part was recorded"; exit 1; }
python3 -m rhperf merge "${parts[@]}" --out "$out/$name.json"
python3 -m rhperf doc "$out/$name.json" > "$out/$name.md"
python3 -m rhperf plot "$out/$name.json" --out-dir "$out" || echo "plot failed (matplotlib?)"
cat "$out/$name.md"
echo "== done in $(( $(date +%s) - start )) s"
