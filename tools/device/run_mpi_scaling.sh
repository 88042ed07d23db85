#!/usr/bin/env bash
# Issue 33's scaling points, on the GPU machine, in the repository root (docs/performance.md, "Spread over
# processes"; docs/scale-out.md):
#   tools/device/run_mpi_scaling.sh [cpu | gpu | all]     (default: all)
# cpu: Kokkos (Serial + OpenMP, no CUDA) from the carried source into build/mpi-scaling/kokkos, the library with
#      RH_ENABLE_MPI=ON into build/mpi-scaling (targets rh_mpi_bench, rh_mpi_tests), then
#      - the bitwise check on 4 processes (rh_mpi_tests openmp streams, every corpus) and the exchange count (2),
#      - the collectives alone (rh_mpi_bench collectives) on 2, 4, 8 and 16 processes,
#      - ranks × threads 1×16, 2×8, 4×4, 8×2, 16×1 on the reference batch (32,768 × 90) and 1M × 90 (generated
#        data, rh_mpi_bench openmp), each batch timed (the slowest process), the first batch untimed.
# gpu: the CUDA build (tools/device/build_cuda13.sh, no tests), then the same build directory reconfigured with
#      RH_ENABLE_MPI=ON: whether the MPI library compiles with CUDA; when it does, one GPU shared by 1 and 2
#      processes (rh_mpi_tests cuda streams: the same bits as one CUDA process; rh_mpi_bench cuda on the reference
#      batch and 1M × 90): the path, not a speed-up.
# $OUT gets mpi-scaling.log (everything), mpi-scaling.json (the records, one object) and mpi-scaling.md (the table).
# Settings: RH_KOKKOS_SRC (default build/wt32/kokkos, Kokkos 4.6.01 source), RH_DEPS (default build/wt32/deps/usr:
# fmt, doctest, nlohmann_json headers when the machine lacks them), RH_JOBS (default nproc); for a trial elsewhere,
# RH_MPI_BUILD_DIR (a build with RH_ENABLE_MPI=ON whose rh_mpi_bench and rh_mpi_tests are built: no build here),
# RH_MPI_SHAPES ("N p batches;...") and RH_MPI_LAYOUTS ("processes threads;...").
# Open MPI: the machine's mpirun (as root: OMPI_ALLOW_RUN_AS_ROOT*); the script stops when there is none.
set -uo pipefail
what=${1:-all}
case $what in cpu|gpu|all) ;; *) echo "usage: $0 [cpu|gpu|all]" >&2; exit 2 ;; esac
root=$(pwd)
out=${OUT:-/tmp/rh-mpi-out}
mkdir -p "$out"
exec > >(tee -a "$out/mpi-scaling.log") 2>&1
kokkos_src=$(readlink -f "${RH_KOKKOS_SRC:-build/wt32/kokkos}")
deps=$(readlink -f "${RH_DEPS:-build/wt32/deps/usr}")
jobs=${RH_JOBS:-$(nproc)}
records=$out/records.jsonl
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_PROC_BIND=false RH_NO_INSTALL=1
export CMAKE_PREFIX_PATH=$deps${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
t_start=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t_start )) s] $*"; }

command -v mpirun >/dev/null || { echo "run_mpi_scaling: no mpirun on this machine" >&2; exit 2; }
stamp "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(. /etc/os-release && echo "$PRETTY_NAME")"
lscpu | grep -E 'Model name|Socket\(s\)|Core\(s\) per socket|Thread\(s\) per core|NUMA node\(s\)' | sed 's/  */ /g'
echo "mpirun: $(mpirun --version | head -1); compilers: $(g++ --version | head -1), $(cmake --version | head -1)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true

corpora=(golden/reference/native_core_v1.json golden/reference/native_core_v2.json
         golden/reference/numpy_streams_v1.json golden/*.json)
# N p batches (the first batch of each run is not timed), and processes × threads.
IFS=';' read -ra shapes <<< "${RH_MPI_SHAPES:-32768 90 9;1000000 90 4}"
IFS=';' read -ra layouts <<< "${RH_MPI_LAYOUTS:-1 16;2 8;4 4;8 2;16 1}"

# mpirun for P processes of T threads each, stopped after LIMIT seconds: each process bound to T cores when Open MPI
# can map them so, else unbound.
launch() {
  local limit=$1 P=$2 T=$3; shift 3
  local bind=(--map-by "slot:PE=$T" --bind-to core)
  if ! mpirun -np "$P" "${bind[@]}" true >/dev/null 2>&1; then bind=(--bind-to none --oversubscribe); fi
  echo "   mpirun -np $P ${bind[*]} OMP_NUM_THREADS=$T $*" >&2
  OMP_NUM_THREADS=$T timeout "$limit" mpirun -np "$P" "${bind[@]}" -x OMP_NUM_THREADS -x OMP_PROC_BIND "$@"
}
# Runs a command, keeps its "record " lines (with the layout) in $records, prints the rest.
record() {
  local label=$1; shift
  "$@" 2>&1 | while IFS= read -r line; do
    case $line in
      "record "*) echo "{\"label\": \"$label\", ${line#record \{}" >> "$records"; echo "$line" ;;
      *) echo "$line" ;;
    esac
  done
}

if [ "$what" != gpu ]; then
  bld=${RH_MPI_BUILD_DIR:-$root/build/mpi-scaling} prefix=$root/build/mpi-scaling/kokkos
  if [ -n "${RH_MPI_BUILD_DIR:-}" ]; then
    stamp "cpu: the build in $bld"
  else
    stamp "cpu: Kokkos (Serial + OpenMP) from $kokkos_src"
    if [ ! -f "$prefix/.rh-complete" ]; then
      RH_JOBS=$jobs RH_USER_KOKKOS_BUILD=$prefix.build tools/deps/user-kokkos.sh "$kokkos_src" - "$prefix" \
        > "$out/kokkos-cpu.log" 2>&1 || { tail -30 "$out/kokkos-cpu.log"; exit 1; }
      touch "$prefix/.rh-complete"
    fi
    stamp "cpu: the library with MPI"
    cmake -S . -B "$bld" --preset linux-cpu -DKokkos_ROOT="$prefix" -DKokkosKernels_ROOT="$prefix" \
      -DRH_ENABLE_MPI=ON -DPython3_EXECUTABLE="$(command -v python3)" > "$out/configure-cpu.log" 2>&1 ||
      { tail -30 "$out/configure-cpu.log"; exit 1; }
    cmake --build "$bld" -j "$jobs" --target rh_mpi_bench rh_mpi_tests > "$out/build-cpu.log" 2>&1 ||
      { tail -40 "$out/build-cpu.log"; exit 1; }
  fi
  stamp "cpu: the same bits on 4 processes (every corpus), and the exchanges on 2"
  OMP_NUM_THREADS=4 timeout 240 mpirun -np 4 --oversubscribe -x OMP_NUM_THREADS -x OMP_PROC_BIND \
    "$bld/tests/rh_mpi_tests" openmp streams "${corpora[@]}" 2>&1 | tail -3
  OMP_NUM_THREADS=8 timeout 120 mpirun -np 2 --oversubscribe -x OMP_NUM_THREADS -x OMP_PROC_BIND \
    "$bld/tests/rh_mpi_tests" openmp exchanges "${corpora[@]}" 2>&1 | grep -E '^exchanges|checks'
  stamp "cpu: the collectives alone"
  for P in 2 4 8 16; do
    record "collectives P=$P" launch 60 "$P" 1 "$bld/perf/rh_mpi_bench" collectives 64
  done
  for shape in "${shapes[@]}"; do
    read -r N p B <<< "$shape"
    for layout in "${layouts[@]}"; do
      read -r P T <<< "$layout"
      stamp "cpu: $N x $p, $P processes x $T threads"
      record "cpu ${P}x${T} ${N}x${p}" launch 150 "$P" "$T" "$bld/perf/rh_mpi_bench" openmp "$N" "$p" "$B"
    done
  done
fi

if [ "$what" != cpu ]; then
  cbld=$root/build/cuda-sm_90
  stamp "gpu: the CUDA build (build_cuda13.sh, no tests)"
  RH_JOBS=$jobs tools/device/build_cuda13.sh "$kokkos_src" --arch HOPPER90 --no-test --log-dir "$out/cuda" \
    > "$out/build-cuda.log" 2>&1 || { tail -30 "$out/build-cuda.log"; exit 1; }
  stamp "gpu: the MPI library with CUDA"
  if cmake -S . -B "$cbld" -DRH_ENABLE_MPI=ON > "$out/configure-cuda-mpi.log" 2>&1 &&
     cmake --build "$cbld" -j "$jobs" --target rh_mpi_bench rh_mpi_tests > "$out/build-cuda-mpi.log" 2>&1; then
    echo "gpu: the MPI library compiles with CUDA"
    for P in 1 2; do
      stamp "gpu: one GPU, $P processes: the same bits as one CUDA process (every corpus)"
      OMP_NUM_THREADS=4 timeout 240 mpirun -np "$P" --oversubscribe -x OMP_NUM_THREADS -x OMP_PROC_BIND \
        "$cbld/tests/rh_mpi_tests" cuda streams "${corpora[@]}" 2>&1 | tail -3
      for shape in "${shapes[@]}"; do
        read -r N p B <<< "$shape"
        record "gpu ${P}x8 ${N}x${p}" launch 150 "$P" 8 "$cbld/perf/rh_mpi_bench" cuda "$N" "$p" "$B"
      done
    done
  else
    echo "gpu: the MPI library does NOT compile with CUDA here; the first errors:"
    grep -m 20 -E 'error|Error' "$out/configure-cuda-mpi.log" "$out/build-cuda-mpi.log"
  fi
fi

stamp "records"
python3 - "$records" "$out/mpi-scaling.json" "$out/mpi-scaling.md" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])] if __import__("os").path.exists(sys.argv[1]) else []
json.dump({"records": rows}, open(sys.argv[2], "w"), indent=1)
md = ["| run | N × p | processes × threads | s per batch | iterations | Allgatherv per batch | its time | Gram sharing alone | Allreduce of one Gram alone |",
      "|---|---|---|---:|---:|---:|---:|---:|---:|"]
for r in rows:
    if r["kind"] == "stream":
        md.append(f"| {r['label'].split()[0]} | {r['n']} × {r['p']} | {r['processes']} × {r['threads']} | "
                  f"{r['seconds_per_batch']:.4f} | {r['iterations_per_batch']:.1f} | {r['allgatherv_calls_per_batch']:.1f} | "
                  f"{1e3 * r['allgatherv_s_per_batch']:.2f} ms | {1e3 * r['gram_share_alone_s']:.3f} ms "
                  f"({r['gram_share_bytes'] / 1e6:.2f} MB) | {1e3 * r['allreduce_one_gram_alone_s']:.3f} ms |")
md += ["", "| processes | q | Allgatherv of 64 chunk partials | Allreduce(SUM) of one Gram |", "|---:|---:|---:|---:|"]
for r in rows:
    if r["kind"] == "collectives":
        md.append(f"| {r['processes']} | {r['q']} | {1e3 * r['allgatherv_s']:.4f} ms ({r['allgatherv_bytes'] / 1e6:.3f} MB) | "
                  f"{1e3 * r['allreduce_s']:.4f} ms ({r['allreduce_bytes'] / 1e6:.4f} MB) |")
open(sys.argv[3], "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
stamp "end"
