// Throughput of one model per thread through the C ABI (issue 15, item 8): T threads, each with a model of its own,
// each streaming the same number of batches of its own data; batches per second over all threads, for every T, in
// interleaved rounds (T = 1, 2, 4, 1, 2, 4, ...), with the load other processes put on the machine during each
// sample. Every thread's final state is compared bit for bit with its stream run alone first (a mismatch fails).
//
//   rh_threads_bench [--space serial] [--threads 1,2,4] [--rows 4096] [--cols 16] [--batches 100] [--rounds 5]
//
// Prints one line per sample and a summary: the median batches/s per T and its ratio to T = 1.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "machine_load.hpp"
#include "rh/rh.h"

namespace {

struct Options {
  std::string space = "serial";
  std::vector<int> threads = {1, 2, 4};
  std::int64_t rows = 4096, cols = 16;
  int batches = 100, rounds = 5;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "rh_threads_bench: %s (%s)\n", what.c_str(), rh_last_error());
  std::exit(1);
}

void check(rh_status s, const char* what) {
  if (s != RH_SUCCESS) die(what);
}

std::vector<int> int_list(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    out.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    if (end == p || out.back() < 1) die(std::string("bad list ") + text);
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) die("option " + a + " needs a value");
    const char* v = argv[++i];
    if (a == "--space") o.space = v;
    else if (a == "--threads") o.threads = int_list(v);
    else if (a == "--rows") o.rows = std::atoll(v);
    else if (a == "--cols") o.cols = std::atoll(v);
    else if (a == "--batches") o.batches = std::atoi(v);
    else if (a == "--rounds") o.rounds = std::atoi(v);
    else die("unknown option " + a);
  }
  if (o.rows < 1 || o.cols < 1 || o.batches < 1 || o.rounds < 1) die("sizes must be positive");
  return o;
}

std::int32_t space_code(const std::string& name) {
  std::int32_t count = 0;
  check(rh_space_count(&count), "rh_space_count");
  for (std::int32_t i = 0; i < count; ++i) {
    rh_space_info info;
    RH_STRUCT_INIT(&info);
    check(rh_space_get(i, &info), "rh_space_get");
    if (name == info.name) return info.space;
  }
  die("no compiled space named " + name);
}

// A contaminated linear stream of one thread: y = x·β + heavy-tailed noise, its own seed.
struct Stream {
  std::vector<double> x, y;
};
Stream make_stream(const Options& o, std::uint64_t seed) {
  Stream s;
  s.x.resize(static_cast<std::size_t>(o.rows * o.cols));
  s.y.resize(static_cast<std::size_t>(o.rows));
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(seed >> 11) * 0x1.0p-53 - 0.5;
  };
  for (double& v : s.x) v = next();
  for (std::int64_t i = 0; i < o.rows; ++i) {
    double fit = 0;
    for (std::int64_t j = 0; j < o.cols; ++j) fit += s.x[static_cast<std::size_t>(i * o.cols + j)] * (j % 3 - 1.0);
    const double u = next();
    s.y[static_cast<std::size_t>(i)] = fit + (i % 17 == 0 ? 50 * u : 0.1 * u);
  }
  return s;
}

// Streams `batches` partial_fits of the thread's data (the batch itself each time) into a new model; returns its
// checkpoint.
std::vector<std::uint8_t> run_stream(const Options& o, std::int32_t space, const Stream& s) {
  rh_config c;
  RH_STRUCT_INIT(&c);
  check(rh_config_init(&c), "rh_config_init");
  c.space = space;
  rh_model* m = nullptr;
  check(rh_model_create(RH_ABI_VERSION, &c, &m), "rh_model_create");
  rh_batch b;
  RH_STRUCT_INIT(&b);
  b.x = s.x.data();
  b.y = s.y.data();
  b.rows = o.rows;
  b.cols = o.cols;
  b.layout = RH_LAYOUT_ROW_MAJOR;
  b.dtype = RH_DTYPE_F64;
  b.memory = RH_MEMORY_HOST;
  for (int i = 0; i < o.batches; ++i) check(rh_model_partial_fit(m, &b, nullptr), "rh_model_partial_fit");
  std::int64_t size = 0;
  check(rh_model_save_checkpoint(m, nullptr, 0, &size), "rh_model_save_checkpoint");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  check(rh_model_save_checkpoint(m, bytes.data(), size, &size), "rh_model_save_checkpoint");
  check(rh_model_destroy(m), "rh_model_destroy");
  return bytes;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  check(rh_init(RH_ABI_VERSION, 0, -1), "rh_init");
  const std::int32_t space = space_code(o.space);
  const int most = *std::max_element(o.threads.begin(), o.threads.end());
  std::vector<Stream> streams;
  std::vector<std::vector<std::uint8_t>> alone;
  for (int t = 0; t < most; ++t) {
    streams.push_back(make_stream(o, 1000 + static_cast<std::uint64_t>(t)));
    alone.push_back(run_stream(o, space, streams.back()));  // the reference, and a warm-up
  }
  std::printf("rh_threads_bench: space %s, f64, %lld x %lld, %d partial_fit per thread, library %s, "
              "%.0f logical CPUs\n",
              o.space.c_str(), static_cast<long long>(o.rows), static_cast<long long>(o.cols), o.batches,
              rh_library_version(), rh_perf::machine_cores());
  std::printf("%6s %8s %10s %12s %12s\n", "round", "threads", "wall_s", "batches/s", "other_cores");
  std::vector<std::vector<double>> rates(o.threads.size());
  bool identical = true;
  for (int r = 0; r < o.rounds; ++r) {
    for (std::size_t k = 0; k < o.threads.size(); ++k) {
      const int t_count = o.threads[k];
      std::vector<std::vector<std::uint8_t>> got(static_cast<std::size_t>(t_count));
      std::atomic<int> ready{0};
      std::atomic<bool> go{false};
      std::vector<std::thread> workers;
      for (int t = 0; t < t_count; ++t)
        workers.emplace_back([&, t] {
          ++ready;
          while (!go) std::this_thread::yield();
          got[static_cast<std::size_t>(t)] = run_stream(o, space, streams[static_cast<std::size_t>(t)]);
        });
      while (ready < t_count) std::this_thread::yield();
      const rh_perf::CpuSnapshot before = rh_perf::cpu_snapshot();
      go = true;
      for (std::thread& w : workers) w.join();
      const rh_perf::CpuSnapshot after = rh_perf::cpu_snapshot();
      const double wall = std::chrono::duration<double>(after.when - before.when).count();
      const double rate = t_count * o.batches / wall;
      rates[k].push_back(rate);
      for (int t = 0; t < t_count; ++t) identical = identical && got[static_cast<std::size_t>(t)] == alone[static_cast<std::size_t>(t)];
      std::printf("%6d %8d %10.3f %12.1f %12.2f\n", r, t_count, wall, rate, rh_perf::other_cores(before, after));
      std::fflush(stdout);
    }
  }
  const double base = median(rates[0]);
  std::printf("summary (median of %d rounds):\n", o.rounds);
  for (std::size_t k = 0; k < o.threads.size(); ++k)
    std::printf("  %d thread(s): %.1f batches/s, %.2fx %d thread(s)\n", o.threads[k], median(rates[k]),
                median(rates[k]) / base, o.threads[0]);
  std::printf("every thread's state bit for bit its stream's alone: %s\n", identical ? "yes" : "NO");
  return identical ? 0 : 1;
}
