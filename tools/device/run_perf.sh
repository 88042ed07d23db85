#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root: GPU timings of the bundles made by tools/device/bundle.sh.
#   tools/device/run_perf.sh OUT_FILE PACK...
# For each pack: rh_bench's standard profile on the CUDA space (both dtypes, both penalties, cold and steady),
# the demo, and a kernel-by-kernel profile of one reference and one wide stream (data written with NumPy by
# tools/peer/compare.py --write-data, the same generator as the peer comparison).
set -uo pipefail
out=$1; shift
data=$(mktemp -d)
python3 tools/peer/compare.py --write-data "$data" --profile standard --shapes reference,wide --engines none \
  >> "$out" 2>&1
for pack in "$@"; do
  unpacked=$(mktemp -d)
  tar -C "$unpacked" -xJf "$pack"
  bin=$(echo "$unpacked"/*)/build
  export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  {
    echo "===== $(basename "$pack"): $("$bin/tools/rh_spaces" 2>/dev/null | head -1)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
    OMP_PROC_BIND=false "$bin/perf/rh_bench" --benchmark_filter='^standard/.*/cuda/' --rh_quiet_wait=0
    OMP_PROC_BIND=false "$bin/tools/rh_demo"
    for shape in reference wide; do
      for dtype in f64 f32; do
        OMP_PROC_BIND=false "$bin/perf/rh_stream_file" "$data/$shape.bin" --space cuda --dtype "$dtype" \
          --penalty none --reps 3 --kernel-profile
      done
    done
  } 2>&1 | grep -v 'OMP_PROC_BIND\|For best performance\|For unit testing\|In general, for best' >> "$out"
done
