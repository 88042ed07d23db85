// What spreading a batch over MPI processes costs (docs/performance.md, "Spread over processes"): a stream of
// synthetic batches of N rows (every process holds N / size of them, the last its remainder), timed per batch, with
// the time and bytes of each MPI collective the library makes (counted here through the MPI profiling interface,
// PMPI_*), and beside them what MPI_Allreduce(MPI_SUM) of one Gram (q(q+1)/2 + q values) per sharing of the
// chunk Grams would have taken on the same processes. Run under mpirun:
//   rh_mpi_bench SPACE N P BATCHES
// prints on process 0 one line per run: seconds per batch (the slowest process), and the collectives' shares; then
// the same as one JSON object on a line of its own that starts with "record " (tools/device/run_mpi_scaling.sh).
//   rh_mpi_bench collectives [CHUNKS]
// the exchange's price alone (docs/performance.md, "Spread over processes"): for q in a sweep, the ordered sharing
// of CHUNKS (default 64) chunk partials of (q² + q) doubles as the library makes it (MPI_Allgatherv, every process
// an equal share of the chunks) beside MPI_Allreduce(MPI_SUM) of one Gram (q(q+1)/2 + q doubles), each the median
// of 51 runs after a barrier (the slowest process's median); one "record " JSON line per q.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rh/mpi.hpp"

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
struct Count {
  double seconds = 0, bytes = 0;
  long long calls = 0;
};
Count allgatherv, alltoallv, allreduce, allgather;
// The largest sharing of chunk partials (the Gram's), replayed alone at the end beside Allreduce of one Gram.
std::vector<int> largest_counts, largest_displs;
int largest_type = 0;
double largest_bytes = 0;
}  // namespace

extern "C" {
int MPI_Allgatherv(const void* s, int sc, MPI_Datatype st, void* r, const int rc[], const int d[], MPI_Datatype rt,
                   MPI_Comm c) {
  const double t = now();
  const int out = PMPI_Allgatherv(s, sc, st, r, rc, d, rt, c);
  allgatherv.seconds += now() - t;
  int size = 0, n = 0, type_bytes = 0;
  PMPI_Comm_size(c, &size);
  PMPI_Type_size(rt, &type_bytes);
  for (int i = 0; i < size; ++i) n += rc[i];
  allgatherv.bytes += static_cast<double>(n) * type_bytes;
  if (static_cast<double>(n) * type_bytes > largest_bytes) {
    largest_bytes = static_cast<double>(n) * type_bytes;
    largest_counts.assign(rc, rc + size);
    largest_displs.assign(d, d + size);
    largest_type = type_bytes;
  }
  ++allgatherv.calls;
  return out;
}
int MPI_Alltoallv(const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r, const int rc[],
                  const int rd[], MPI_Datatype rt, MPI_Comm c) {
  const double t = now();
  const int out = PMPI_Alltoallv(s, sc, sd, st, r, rc, rd, rt, c);
  alltoallv.seconds += now() - t;
  ++alltoallv.calls;
  return out;
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  const double t0 = now();
  const int out = PMPI_Allreduce(s, r, n, t, op, c);
  allreduce.seconds += now() - t0;
  ++allreduce.calls;
  return out;
}
int MPI_Allgather(const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c) {
  const double t = now();
  const int out = PMPI_Allgather(s, sc, st, r, rc, rt, c);
  allgather.seconds += now() - t;
  ++allgather.calls;
  return out;
}
}

namespace {
// The median of `runs` timings of f() (each after a barrier): the slowest process's median.
template <class F>
double median_time(int runs, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    PMPI_Barrier(MPI_COMM_WORLD);
    const double t = now();
    f();
    times.push_back(now() - t);
  }
  std::sort(times.begin(), times.end());
  double mine = times[times.size() / 2], slowest = 0;
  PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int collectives(int rank, int size, long long chunks) {
  for (const long long q : {2LL, 5LL, 11LL, 17LL, 33LL, 65LL, 91LL, 129LL, 257LL}) {
    const long long per_chunk = q * q + q, gram = q * (q + 1) / 2 + q;
    std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) {
      displs[r] = static_cast<int>(chunks * r / size);
      counts[r] = static_cast<int>(chunks * (r + 1) / size) - displs[r];
    }
    MPI_Datatype chunk;
    PMPI_Type_contiguous(static_cast<int>(per_chunk), MPI_DOUBLE, &chunk);
    PMPI_Type_commit(&chunk);
    std::vector<double> all(static_cast<size_t>(chunks * per_chunk), 1.0), g(static_cast<size_t>(gram), 1.0),
        r(g.size());
    const double gather = median_time(51, [&] {
      PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), counts.data(), displs.data(), chunk,
                      MPI_COMM_WORLD);
    });
    const double reduce = median_time(51, [&] {
      PMPI_Allreduce(g.data(), r.data(), static_cast<int>(gram), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    });
    PMPI_Type_free(&chunk);
    if (rank == 0) {
      const double gather_bytes = static_cast<double>(chunks * per_chunk * 8);
      std::printf("collectives processes=%d q=%lld: Allgatherv of %lld chunks (%.4f MB) %.4f ms; Allreduce(SUM) of "
                  "one Gram (%.4f MB) %.4f ms\n",
                  size, q, chunks, gather_bytes / 1e6, 1e3 * gather, static_cast<double>(gram * 8) / 1e6, 1e3 * reduce);
      std::printf("record {\"kind\": \"collectives\", \"processes\": %d, \"q\": %lld, \"chunks\": %lld, "
                  "\"allgatherv_bytes\": %.0f, \"allgatherv_s\": %.9f, \"allreduce_bytes\": %lld, "
                  "\"allreduce_s\": %.9f}\n",
                  size, q, chunks, gather_bytes, gather, gram * 8, reduce);
    }
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc >= 2 && std::string(argv[1]) == "collectives") {
    const int status = collectives(rank, size, argc > 2 ? std::atoll(argv[2]) : 64);
    MPI_Finalize();
    return status;
  }
  if (argc != 5) {
    if (rank == 0) std::fprintf(stderr, "usage: rh_mpi_bench SPACE N P BATCHES | rh_mpi_bench collectives [CHUNKS]\n");
    MPI_Finalize();
    return 2;
  }
  const rh::Space space = rh::space_from_name(argv[1]);
  const long long n = std::atoll(argv[2]), p = std::atoll(argv[3]);
  const int batches = std::atoi(argv[4]);
  const long long lo = n * rank / size, hi = n * (rank + 1) / size, mine = hi - lo;
  std::vector<double> x(static_cast<size_t>(std::max(1LL, mine * p))), y(static_cast<size_t>(std::max(1LL, mine)));
  rh::mpi::Regressor model(MPI_COMM_WORLD, space, rh::Dtype::f64);
  double worst = 0, total_iterations = 0;
  std::vector<double> batch_seconds;  // every batch's, the slowest process's (the first allocates)
  for (int b = 0; b < batches; ++b) {
    unsigned s = 1234567u * static_cast<unsigned>(b + 1) + static_cast<unsigned>(lo);
    for (long long i = 0; i < mine; ++i) {
      double yi = 0;
      for (long long j = 0; j < p; ++j) {
        s = s * 1103515245u + 12345u;
        const double v = static_cast<double>((s >> 8) % 20001) / 10000.0 - 1.0;
        x[static_cast<size_t>(i * p + j)] = v;
        yi += v * static_cast<double>(j % 5);
      }
      s = s * 1103515245u + 12345u;
      y[static_cast<size_t>(i)] = yi + ((s >> 8) % 100 == 0 ? 20.0 : 0.0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t = now();
    const rh::Diagnostics& d = model.partial_fit(rh::host_batch(x.data(), y.data(), mine, p));
    double spent = now() - t, slowest = 0;
    MPI_Reduce(&spent, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    batch_seconds.push_back(slowest);
    if (b > 0) worst += slowest;  // the first batch allocates
    if (b > 0) total_iterations += d.iterations;
  }
  // The largest sharing (the chunk Grams) replayed alone, and Allreduce(SUM) of one Gram (its upper triangle and the
  // gradient: q(q+1)/2 + q values), each the median of 21 runs after a barrier: the exchange's own price, without
  // the wait for the slowest process that the in-stream times include.
  const long long q = p + 1, gram = q * (q + 1) / 2 + q;
  std::vector<double> g(static_cast<size_t>(gram), 1.0), r(g.size());
  const auto median_of = [&](auto&& f) { return median_time(21, f); };
  double share_alone = 0;
  if (size > 1 && largest_type > 0) {
    MPI_Datatype chunk;
    PMPI_Type_contiguous(largest_type, MPI_BYTE, &chunk);
    PMPI_Type_commit(&chunk);
    long long elements = 0;
    for (int i = 0; i < size; ++i) elements = std::max<long long>(elements, largest_displs[i] + largest_counts[i]);
    std::vector<char> buffer(static_cast<size_t>(elements * largest_type));
    share_alone = median_of([&] {
      PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer.data(), largest_counts.data(), largest_displs.data(),
                      chunk, MPI_COMM_WORLD);
    });
    PMPI_Type_free(&chunk);
  }
  const double reduce_alone = median_of(
      [&] { PMPI_Allreduce(g.data(), r.data(), static_cast<int>(gram), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); });
  if (rank == 0) {
    const int timed = std::max(1, batches - 1);
    std::printf(
        "%s N=%lld p=%lld processes=%d threads=%s: %.4f s per batch (%.1f Newton iterations); per batch: Allgatherv "
        "%.2f ms (%lld calls, %.2f MB), Alltoallv %.2f ms, Allreduce %.2f ms, Allgather %.2f ms; alone: the chunk "
        "Grams' Allgatherv (%.2f MB) %.3f ms, Allreduce(SUM) of one Gram (%.3f MB) %.3f ms\n",
        argv[1], n, p, size, std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "-", worst / timed,
        total_iterations / timed, 1e3 * allgatherv.seconds / batches, allgatherv.calls / batches,
        allgatherv.bytes / batches / 1e6, 1e3 * alltoallv.seconds / batches, 1e3 * allreduce.seconds / batches,
        1e3 * allgather.seconds / batches, largest_bytes / 1e6, 1e3 * share_alone, gram * 8 / 1e6,
        1e3 * reduce_alone);
    const char* threads = std::getenv("OMP_NUM_THREADS");
    std::string seconds;
    for (const double t : batch_seconds) seconds += (seconds.empty() ? "" : ", ") + std::to_string(t);
    std::printf("record {\"kind\": \"stream\", \"space\": \"%s\", \"n\": %lld, \"p\": %lld, \"processes\": %d, "
                "\"threads\": %s, \"batches\": %d, \"seconds_per_batch\": %.6f, \"iterations_per_batch\": %.2f, "
                "\"batch_seconds\": [%s], \"allgatherv_calls_per_batch\": %.2f, \"allgatherv_s_per_batch\": %.6f, "
                "\"allgatherv_bytes_per_batch\": %.0f, \"other_collectives_s_per_batch\": %.6f, "
                "\"gram_share_alone_s\": %.9f, \"gram_share_bytes\": %.0f, \"allreduce_one_gram_alone_s\": %.9f}\n",
                argv[1], n, p, size, threads ? threads : "null", batches, worst / timed, total_iterations / timed,
                seconds.c_str(), static_cast<double>(allgatherv.calls) / batches, allgatherv.seconds / batches,
                allgatherv.bytes / batches, (alltoallv.seconds + allreduce.seconds + allgather.seconds) / batches,
                share_alone, largest_bytes, reduce_alone);
  }
  MPI_Finalize();
  return 0;
}
