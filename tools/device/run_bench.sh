#!/usr/bin/env bash
# Runs ON THE GPU MACHINE, in the repository root: the standard record of our CUDA space beside the reference
# project's own CuPy engine (renewable-huber backend="cupy"), both with host and device-resident input, and the
# Gram-pass record, then their plots.
#
#   tools/device/run_bench.sh BUNDLE.tar.xz OUT_DIR
#
# Needs: BUNDLE made here by tools/device/bundle.sh from a CUDA build (it holds perf/rh_perf_worker), and .whl/
# from tools/device/fetch_wheels.sh (both carried: carry [".device", ".whl"]); CuPy, NumPy and matplotlib are the
# machine's own. Writes OUT_DIR/h200-standard.json, h200-gram.json, their PNGs and environment.txt.
# The standard profile runs in parts (one per dtype, each well inside one 10-minute device command when called
# separately with RH_BENCH_PARTS) merged into one record by `rhperf merge`.
#
# Settings (environment): RH_BENCH_PYTHON (python3), RH_BENCH_SPACES (cuda), RH_BENCH_PEERS (cupy),
# RH_BENCH_PARTS ("f64 f32": the dtypes, one part each), RH_BENCH_GRAM (1: also the gram profile),
# RH_BENCH_NAME (h200); extra arguments go to every `rhperf bench` (e.g. --shapes latency --samples 9).
set -euo pipefail
pack=$(readlink -f "$1"); out=$(mkdir -p "$2" && cd "$2" && pwd); shift 2
root=$(pwd)
py=${RH_BENCH_PYTHON:-python3}
spaces=${RH_BENCH_SPACES:-cuda}
peers=${RH_BENCH_PEERS:-cupy}
parts=${RH_BENCH_PARTS:-f64 f32}
name=${RH_BENCH_NAME:-h200}

unpacked=$(mktemp -d)
tar -C "$unpacked" -xJf "$pack"
bin=$(echo "$unpacked"/*)/build
export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The reference's wheel, without dependencies (the machine has NumPy and CuPy).
site=$(mktemp -d)
if ls "$root"/.whl/*.whl >/dev/null 2>&1; then
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" "$root"/.whl/*.whl
fi
export PYTHONPATH="$root/perf:$site${PYTHONPATH:+:$PYTHONPATH}"
export OMP_PROC_BIND=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
rhperf() { "$py" -m rhperf "$@"; }

{
  echo "bundle: $(cat "$(dirname "$bin")/commit" 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,clocks.max.sm --format=csv 2>&1 || true
  "$py" -c 'import numpy, cupy; print("numpy", numpy.__version__, "cupy", cupy.__version__)' 2>&1 || true
  "$py" -c 'import renewable_huber; print("renewable_huber", renewable_huber.__version__)' 2>&1 || true
} > "$out/environment.txt"
cat "$out/environment.txt"

records=()
for dtype in $parts; do
  rhperf bench --profile standard --worker "$bin/perf/rh_perf_worker" --spaces "$spaces" --peers "$peers" \
    --peer-python "$py" --dtypes "$dtype" --out "$out/$name-standard-$dtype.json" "$@" > "$out/$name-standard-$dtype.txt"
  records+=("$out/$name-standard-$dtype.json")
done
rhperf merge "${records[@]}" --out "$out/$name-standard.json"
rhperf compare-spaces "$out/$name-standard.json" --all > "$out/$name-standard-spaces.txt"
rhperf plot "$out/$name-standard.json" --out-dir "$out" || echo "plot failed (matplotlib?)"
if [ "${RH_BENCH_GRAM:-1}" = 1 ]; then
  rhperf bench --profile gram --worker "$bin/perf/rh_perf_worker" --spaces "$spaces" --out "$out/$name-gram.json" \
    "$@" > "$out/$name-gram.txt"
  rhperf plot "$out/$name-gram.json" --out-dir "$out" || echo "plot failed (matplotlib?)"
fi
ls -la "$out"
