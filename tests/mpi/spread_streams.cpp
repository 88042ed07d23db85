// Batches spread over MPI processes give, to the bit, the state of one process (rh/mpi.hpp). Run under mpirun
// with any number of processes:
//   rh_mpi_tests SPACE streams CORPUS...   every case of every corpus: each batch split over the processes in
//                                           uneven pieces (one process empty, the cuts moving from batch to batch),
//                                           the state, diagnostics and predictions after each batch compared bitwise
//                                           with a plain rh::Regressor fed the whole batch on this process
//   rh_mpi_tests SPACE bad-input            one process's NaN, wrong p, bad weights, memory: one status everywhere,
//                                           every model unchanged
//   rh_mpi_tests SPACE checkpoint DIR       process 0 writes after half a stream; every communicator of 1..size
//                                           processes loads it and finishes the stream: the same bits
//   rh_mpi_tests SPACE exchanges CORPUS...  the MPI collectives of each batch (counted through MPI's profiling
//                                           interface): one MPI_Allgatherv per Newton iteration on a stream whose
//                                           steps are full Newton steps, and the totals over every corpus
// Prints one summary line per process; exits 1 when anything differed.
#include <fmt/format.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/same_state.hpp"
#include "golden_replay.hpp"
#include "rh/checkpoint.hpp"
#include "rh/mpi.hpp"

using nlohmann::json;

// The library's MPI collectives, counted through MPI's profiling interface (these definitions take the place of
// the MPI library's; each calls its PMPI_ twin).
struct Collectives {
  long long allgatherv = 0;  // the passes' chunk exchanges (one per exchange)
  long long other = 0;       // MPI_Allgather, MPI_Allreduce, MPI_Alltoallv: the per-batch agreements and counts
};
Collectives counted;

extern "C" {
int MPI_Allgatherv(const void* send, int send_count, MPI_Datatype send_type, void* recv, const int recv_counts[],
                   const int displs[], MPI_Datatype recv_type, MPI_Comm comm) {
  ++counted.allgatherv;
  return PMPI_Allgatherv(send, send_count, send_type, recv, recv_counts, displs, recv_type, comm);
}
int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm comm) {
  ++counted.other;
  return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
}
int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++counted.other;
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}
int MPI_Alltoallv(const void* send, const int send_counts[], const int send_displs[], MPI_Datatype send_type,
                  void* recv, const int recv_counts[], const int recv_displs[], MPI_Datatype recv_type,
                  MPI_Comm comm) {
  ++counted.other;
  return PMPI_Alltoallv(send, send_counts, send_displs, send_type, recv, recv_counts, recv_displs, recv_type, comm);
}
}  // extern "C"

namespace {

int rank = 0, size = 1;
long long checks = 0, failures = 0;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    if (failures <= 20) std::fprintf(stderr, "process %d: FAILED %s\n", rank, what.c_str());
  }
}

template <class S>
struct Rows {
  long long n = 0, p = 0;
  std::vector<S> x, y, w;
  // Rows [a, b) (X column-major on odd batches: the layouts are staged alike).
  Rows slice(long long a, long long b, bool col_major) const {
    Rows r;
    r.n = b - a;
    r.p = p;
    r.x.resize(static_cast<size_t>(r.n * p));
    for (long long i = a; i < b; ++i)
      for (long long j = 0; j < p; ++j)
        r.x[static_cast<size_t>(col_major ? j * r.n + (i - a) : (i - a) * p + j)] = x[static_cast<size_t>(i * p + j)];
    r.y.assign(y.begin() + a, y.begin() + b);
    if (!w.empty()) r.w.assign(w.begin() + a, w.begin() + b);
    return r;
  }
  rh::Batch batch(bool col_major = false) const {
    rh::Batch b;
    b.x = rh::MatrixRef{x.data(), n, p, 0, col_major ? rh::Layout::col_major : rh::Layout::row_major};
    b.y = y.data();
    b.weights = w.empty() ? nullptr : w.data();
    b.dtype = rh::dtype_of<S>();
    return b;
  }
};

template <class S>
Rows<S> rows_of(const json& batch) {
  Rows<S> r;
  const auto& x = batch.at("X");
  r.n = static_cast<long long>(x.size());
  r.p = static_cast<long long>(x.at(0).size());
  for (const auto& row : x)
    for (const auto& v : row) r.x.push_back(static_cast<S>(v.get<double>()));
  for (const auto& v : batch.at("y")) r.y.push_back(static_cast<S>(v.get<double>()));
  if (!batch.at("sample_weight").is_null())
    for (const auto& v : batch.at("sample_weight")) r.w.push_back(static_cast<S>(v.get<double>()));
  return r;
}

// The cut of batch b's n rows over the processes: uneven pieces, process b mod size empty (with more than one).
std::vector<long long> cuts(long long n, size_t b) {
  std::vector<long long> weight(static_cast<size_t>(size));
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    weight[r] = size > 1 && r == static_cast<int>(b % size) ? 0 : (r * 7 + static_cast<long long>(b) * 3) % 5 + 1;
    total += weight[r];
  }
  std::vector<long long> at(static_cast<size_t>(size) + 1, 0);
  long long acc = 0;
  for (int r = 0; r < size; ++r) {
    acc += weight[r];
    at[r + 1] = n * acc / total;
  }
  return at;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <class S>
void stream_case(const json& c, rh::Space space, const std::string& label) {
  rh::Config config = rh::golden::config_from(c.at("config"));
  const auto& states = c.at("expected").at("states");
  config.inference = !states.empty() && states[0].contains("score_variance");
  rh::Regressor one(space, rh::dtype_of<S>(), config);
  rh::mpi::Regressor spread(MPI_COMM_WORLD, space, rh::dtype_of<S>(), config);
  const auto& batches = c.at("batches");
  for (size_t b = 0; b < batches.size(); ++b) {
    const Rows<S> all = rows_of<S>(batches[b]);
    const rh::Diagnostics d1 = one.partial_fit(all.batch());
    const std::vector<long long> at = cuts(all.n, b);
    const bool col_major = b % 2 == 1;
    const Rows<S> mine = all.slice(at[rank], at[rank + 1], col_major);
    const rh::Diagnostics d2 = spread.partial_fit(mine.batch(col_major));
    const std::string where = fmt::format("{} batch {} ({} processes)", label, b + 1, size);
    expect(rh::test::same_state(one.state(), spread.local().state()), where + ": state");
    expect(d1.iterations == d2.iterations && same_bits(d1.objective, d2.objective), where + ": diagnostics");
    const std::vector<S> p1 = one.predict(all.x.data(), all.n, all.p);
    const std::vector<S> p2 = spread.local().predict(all.x.data(), all.n, all.p);
    expect(p1.size() == p2.size() && std::memcmp(p1.data(), p2.data(), p1.size() * sizeof(S)) == 0,
           where + ": predictions");
  }
}

void streams(rh::Space space, const std::vector<std::string>& files) {
  for (const auto& path : files) {
    std::ifstream in(path);
    const json doc = json::parse(in);
    for (const auto& c : doc.at("cases")) {
      const std::string label =
          fmt::format("{}:{}", path.substr(path.find_last_of('/') + 1), c.at("id").get<std::string>());
      if (c.at("config").at("dtype").get<std::string>() == "float32")
        stream_case<float>(c, space, label);
      else
        stream_case<double>(c, space, label);
    }
  }
}

// A small deterministic stream: batch b of n rows of p features, with an outlier every 17 rows.
Rows<double> synthetic(long long n, long long p, unsigned seed, bool weights) {
  Rows<double> r;
  r.n = n;
  r.p = p;
  unsigned s = seed;
  const auto next = [&] {
    s = s * 1103515245u + 12345u;
    return static_cast<double>((s >> 8) % 20001) / 10000.0 - 1.0;
  };
  for (long long i = 0; i < n; ++i) {
    double yi = 0.5;
    for (long long j = 0; j < p; ++j) {
      const double v = next();
      r.x.push_back(v);
      yi += (j + 1) * 0.25 * v;
    }
    r.y.push_back(yi + 0.1 * next() + (i % 17 == 0 ? 8.0 : 0.0));
    if (weights) r.w.push_back(1.0 + 0.5 * (next() + 1.0));
  }
  return r;
}

void bad_input(rh::Space space) {
  rh::Config config;
  rh::mpi::Regressor model(MPI_COMM_WORLD, space, rh::Dtype::f64, config);
  const Rows<double> first = synthetic(300, 4, 1, true);
  const std::vector<long long> at0 = cuts(first.n, 1);
  model.partial_fit(first.slice(at0[rank], at0[rank + 1], false).batch());
  const rh::State before = model.local().state();
  struct Bad {
    const char* name;
    rh::Errc want;
  };
  const Bad cases[] = {{"NaN in X", rh::Errc::invalid_argument},
                       {"Inf in y", rh::Errc::invalid_argument},
                       {"negative weight", rh::Errc::invalid_argument},
                       {"NaN weight", rh::Errc::invalid_argument},
                       {"wrong p", rh::Errc::invalid_argument},
                       {"weights on one process only", rh::Errc::invalid_argument},
                       {"dtype", rh::Errc::invalid_argument},
                       {"null y", rh::Errc::invalid_argument},
                       {"wrong p on an empty process", rh::Errc::invalid_argument},
                       {"memory limit on one process", rh::Errc::allocation_failed}};
  int k = 0;
  for (const Bad& bad : cases) {
    const std::string name = bad.name;
    const bool on_empty = name == "wrong p on an empty process";
    if (size == 1 && (on_empty || name == "weights on one process only")) continue;  // needs two processes
    // (the memory case: more rows than any process held before, so that its row views grow)
    Rows<double> next = synthetic(name == "memory limit on one process" ? 3000 : 200, 4, 7 + k++, true);
    // The last process spoils rows of its own, every process holding some; or an empty process its shape.
    std::vector<long long> at = cuts(next.n, 2);
    const int culprit = on_empty ? 2 % size : size - 1;
    if (!on_empty)
      for (int r = 0; r <= size; ++r) at[r] = next.n * r / size;
    Rows<double> mine = next.slice(at[rank], at[rank + 1], false);
    rh::Batch b = mine.batch();
    std::vector<double> wider;
    std::vector<float> narrow;
    if (rank == culprit) {
      if (name == "NaN in X") mine.x[1] = std::numeric_limits<double>::quiet_NaN();
      if (name == "Inf in y") mine.y[0] = std::numeric_limits<double>::infinity();
      if (name == "negative weight") mine.w[0] = -1.0;
      if (name == "NaN weight") mine.w[0] = std::numeric_limits<double>::quiet_NaN();
      if (name == "wrong p") b.x.cols = 3, b.x.ld = 4;
      if (name == "weights on one process only") b.weights = nullptr;
      if (name == "dtype") {
        narrow.assign(mine.x.begin(), mine.x.end());
        b.x.data = narrow.data();
        b.dtype = rh::Dtype::f32;
      }
      if (name == "null y") b.y = nullptr;
      if (on_empty) b.x.cols = 5;
      if (name == "memory limit on one process") rh::set_memory_limit(1024);  // its work views do not fit
    }
    rh::Errc got = rh::Errc::internal_error;
    bool threw = false;
    try {
      model.partial_fit(b);
    } catch (const rh::Error& e) {
      threw = true;
      got = e.code();
    }
    rh::set_memory_limit(0);
    const std::string where = fmt::format("bad input '{}' on process {} of {}", bad.name, culprit, size);
    expect(threw && got == bad.want, where + ": the same status on every process");
    int mine_code = static_cast<int>(got), lowest = 0, highest = 0;
    MPI_Allreduce(&mine_code, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine_code, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    expect(lowest == highest, where + ": one status over the processes");
    expect(rh::test::same_state(before, model.local().state()), where + ": model unchanged");
  }
  // An empty batch over every process, and a good batch after the bad ones: the stream goes on.
  Rows<double> none;
  none.p = 4;
  none.x.resize(1);
  none.y.resize(1);
  bool empty_refused = false;
  try {
    model.partial_fit(none.batch());
  } catch (const rh::Error& e) {
    empty_refused = e.code() == rh::Errc::invalid_argument;
  }
  expect(empty_refused, "a batch with no rows on any process: invalid_argument everywhere");
  rh::Regressor one(space, rh::Dtype::f64, config);
  one.partial_fit(first.batch());
  const Rows<double> good = synthetic(250, 4, 99, true);
  const std::vector<long long> at = cuts(good.n, 3);
  one.partial_fit(good.batch());
  model.partial_fit(good.slice(at[rank], at[rank + 1], false).batch());
  expect(rh::test::same_state(one.state(), model.local().state()), "the stream after the bad batches");
}

void checkpoint(rh::Space space, const std::string& dir) {
  rh::Config config;
  config.inference = true;
  std::vector<Rows<double>> stream;
  for (unsigned b = 0; b < 6; ++b) stream.push_back(synthetic(150 + 97 * b, 5, 100 + b, b % 2 == 0));
  rh::Regressor one(space, rh::Dtype::f64, config);
  for (const auto& r : stream) one.partial_fit(r.batch());
  const std::string path = fmt::format("{}/spread_{}_{}.rhc", dir, size, rh::space_name(space));
  {
    rh::mpi::Regressor model(MPI_COMM_WORLD, space, rh::Dtype::f64, config);
    for (size_t b = 0; b < 3; ++b) {
      const std::vector<long long> at = cuts(stream[b].n, b);
      model.partial_fit(stream[b].slice(at[rank], at[rank + 1], false).batch());
    }
    model.save_checkpoint_file(path);
    bool failed_everywhere = false;
    try {
      model.save_checkpoint_file(dir + "/no/such/dir/x.rhc");
    } catch (const rh::Error&) {
      failed_everywhere = true;
    }
    expect(failed_everywhere, "a checkpoint process 0 cannot write: an error on every process");
    const rh::State before = model.local().state();
    bool refused = false;
    try {
      model.load_checkpoint_file(dir + "/missing.rhc");
    } catch (const rh::Error&) {
      refused = true;
    }
    expect(refused && rh::test::same_state(before, model.local().state()),
           "a checkpoint that cannot be read: an error everywhere, the model unchanged");
  }
  // Every communicator of k = 1..size processes resumes from the file and finishes the stream.
  for (int k = 1; k <= size; ++k) {
    MPI_Comm part;
    MPI_Comm_split(MPI_COMM_WORLD, rank < k ? 0 : MPI_UNDEFINED, rank, &part);
    if (part != MPI_COMM_NULL) {
      int part_rank = 0, part_size = 1;
      MPI_Comm_rank(part, &part_rank);
      MPI_Comm_size(part, &part_size);
      rh::mpi::Regressor resumed(part, space, rh::Dtype::f64, config);
      resumed.load_checkpoint_file(path);
      for (size_t b = 3; b < stream.size(); ++b) {
        const long long n = stream[b].n;
        const long long lo = n * part_rank / part_size, hi = n * (part_rank + 1) / part_size;
        resumed.partial_fit(stream[b].slice(lo, hi, false).batch());
      }
      expect(rh::test::same_state(one.state(), resumed.local().state()),
             fmt::format("written by {} processes, resumed by {}", size, k));
      expect(resumed.local().standard_errors() == one.standard_errors(), fmt::format("inference, resumed by {}", k));
      MPI_Comm_free(&part);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// The collectives of one spread batch, and its Newton iterations.
struct BatchTraffic {
  Collectives calls;
  int iterations = 0;
};
BatchTraffic traffic_of(rh::mpi::Regressor& model, const rh::Batch& mine) {
  const Collectives before = counted;
  BatchTraffic t;
  t.iterations = model.partial_fit(mine).iterations;
  t.calls.allgatherv = counted.allgatherv - before.allgatherv;
  t.calls.other = counted.other - before.other;
  return t;
}

void exchanges(rh::Space space, const std::vector<std::string>& files) {
  if (size == 1) {  // one process exchanges nothing (no MPI call)
    if (rank == 0) std::printf("exchanges: one process, nothing to count\n");
    return;
  }
  // One Newton iteration per batch (max_iter 1), unweighted, without inference, from the third batch on (the first
  // two, from far away, take shorter steps: not counted), where the step is a full one, t = 1, decided by the line
  // search: the evaluation at the start carries the first Gram, the iteration's one exchange its line
  // search's sums with the Gram and gradient at the full step, and the commit needs none: 2 per batch (4 before
  // the exchanges were fused). Then the default configuration, whose last iteration's steps are within rounding of
  // F_b and evaluated directly (one fetch more), printed.
  for (const int max_iter : {1, 100}) {
    rh::Config config;
    config.max_iter = max_iter;
    rh::mpi::Regressor model(MPI_COMM_WORLD, space, rh::Dtype::f64, config);
    for (unsigned b = 0; b < 6; ++b) {
      const Rows<double> all = synthetic(1500 + 211 * b, 6, 300 + b, false);
      const std::vector<long long> at = cuts(all.n, b);
      const BatchTraffic t = traffic_of(model, all.slice(at[rank], at[rank + 1], false).batch());
      if (max_iter == 1 && b >= 2)
        expect(t.iterations == 1 && t.calls.allgatherv == 2,
               fmt::format("synthetic batch {}: {} chunk exchanges for {} Newton iteration (want 2)", b + 1,
                           t.calls.allgatherv, t.iterations));
      if (rank == 0)
        std::printf("exchanges: synthetic batch %u (max_iter %d): %d iterations, %lld MPI_Allgatherv, %lld other "
                    "collectives\n",
                    b + 1, max_iter, t.iterations, t.calls.allgatherv, t.calls.other);
    }
  }
  // Every corpus: the totals by penalty (the counts depend on the steps each batch takes).
  struct Totals {
    long long batches = 0, iterations = 0, gathers = 0, others = 0;
  };
  std::map<std::string, Totals> totals;
  for (const auto& path : files) {
    std::ifstream in(path);
    const json doc = json::parse(in);
    for (const auto& c : doc.at("cases")) {
      if (c.at("config").at("dtype").get<std::string>() != "float64") continue;
      rh::Config config = rh::golden::config_from(c.at("config"));
      const auto& states = c.at("expected").at("states");
      config.inference = !states.empty() && states[0].contains("score_variance");
      rh::mpi::Regressor model(MPI_COMM_WORLD, space, rh::Dtype::f64, config);
      Totals& sum = totals[c.at("config").value("penalty", std::string("none"))];
      const auto& list = c.at("batches");
      for (size_t b = 0; b < list.size(); ++b) {
        const Rows<double> all = rows_of<double>(list[b]);
        const std::vector<long long> at = cuts(all.n, b);
        const BatchTraffic t = traffic_of(model, all.slice(at[rank], at[rank + 1], false).batch());
        ++sum.batches;
        sum.iterations += t.iterations;
        sum.gathers += t.calls.allgatherv;
        sum.others += t.calls.other;
      }
    }
  }
  for (const auto& [penalty, t] : totals)
    if (rank == 0)
      std::printf("exchanges: corpora, float64, penalty %s: %lld batches, %lld iterations, %lld MPI_Allgatherv "
                  "(%.3f per iteration, %.2f per batch), %lld other collectives (%.2f per batch)\n",
                  penalty.c_str(), t.batches, t.iterations, t.gathers,
                  static_cast<double>(t.gathers) / static_cast<double>(t.iterations),
                  static_cast<double>(t.gathers) / static_cast<double>(t.batches), t.others,
                  static_cast<double>(t.others) / static_cast<double>(t.batches));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    if (argc < 3)
      throw std::runtime_error(
          "usage: rh_mpi_tests SPACE streams CORPUS... | exchanges CORPUS... | bad-input | checkpoint DIR");
    const std::string space_name = argv[1], mode = argv[2];
    const rh::Space space = rh::space_from_name(space_name);  // throws for a name it does not know
    if (mode == "streams")
      streams(space, std::vector<std::string>(argv + 3, argv + argc));
    else if (mode == "bad-input")
      bad_input(space);
    else if (mode == "exchanges")
      exchanges(space, std::vector<std::string>(argv + 3, argv + argc));
    else if (mode == "checkpoint" && argc > 3)
      checkpoint(space, argv[3]);
    else
      throw std::runtime_error("unknown mode " + mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "process %d: error: %s\n", rank, e.what());
    ++failures;
  }
  long long all[2] = {checks, failures}, sum[2] = {0, 0};
  MPI_Allreduce(all, sum, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("rh_mpi_tests %s %s on %d processes: %lld checks, %lld failed\n", argv[1], argc > 2 ? argv[2] : "",
                size, sum[0], sum[1]);
  status = sum[1] == 0 ? 0 : 1;
  MPI_Finalize();
  return status;
}
