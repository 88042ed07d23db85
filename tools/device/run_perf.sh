#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root: kernel-by-kernel profiles of CUDA bundles made by
# tools/device/bundle.sh (the records themselves: tools/device/run_bench.sh).
#   tools/device/run_perf.sh OUT_FILE PACK...
# For each pack: the demo, and rh_perf_worker --kernel-profile of one reference and one wide stream (the standard
# profile's data, written by perf/rhperf: the same bytes as the records).
set -uo pipefail
out=$1; shift
data=$(mktemp -d)
PYTHONPATH=perf python3 -m rhperf write-data --profile standard --shapes reference,wide "$data" >> "$out" 2>&1
for pack in "$@"; do
  unpacked=$(mktemp -d)
  tar -C "$unpacked" -xJf "$pack"
  bin=$(echo "$unpacked"/*)/build
  export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  {
    echo "===== $(basename "$pack"): $("$bin/tools/rh_spaces" 2>/dev/null | head -1)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
    OMP_PROC_BIND=false "$bin/tools/rh_demo"
    for shape in reference wide; do
      for dtype in f64 f32; do
        OMP_PROC_BIND=false "$bin/perf/rh_perf_worker" "$data/$shape.bin" --space cuda --dtype "$dtype" \
          --penalty none --reps 3 --kernel-profile
      done
    done
  } 2>&1 | grep -v 'OMP_PROC_BIND\|For best performance\|For unit testing\|In general, for best' >> "$out"
done
