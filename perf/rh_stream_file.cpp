// rh_stream_file: streams a data file written by tools/peer/ (NumPy-generated, so every engine sees the same bytes)
// through rh::Regressor. Two modes:
//
//   rh_stream_file FILE --serve
//       a worker for tools/peer/compare: prints one "ready" JSON line, then answers each stdin line
//         run <space> <dtype> <penalty> <lifecycle> <reps>
//       with one JSON line: the seconds of each of <reps> timed operations, Σ iterations, all_converged, the
//       per-batch iterations and the final coefficients (intercept last). "quit" (or EOF) ends it.
//
//   rh_stream_file FILE [--space S] [--dtype f32|f64] [--penalty none|l1] [--lifecycle cold|steady] [--reps N]
//                       [--kernel-profile]
//       one-shot: times N operations and prints a summary; --kernel-profile adds, for one further steady
//       operation, every kernel label with its launches and time, and every deep_copy, per solver iteration.
//
// An operation streams every batch of the file through partial_fit, like the reference's partial_fit
// operation: cold = a new model inside the timed region (its destruction untimed); steady = one primed model,
// reset() outside the timed region before each operation.
//
// File format (little-endian): 8-byte magic "RHSTRM01", int64 samples, features, batch, then 4 reserved int64;
// then X as float64 row-major (samples × features), then y as float64 (samples). f32 runs round the values to
// float once at load, exactly as NumPy's astype(float32) does.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_profile.hpp"
#include "machine_load.hpp"
#include "rh/regressor.hpp"
#include "rh/version.hpp"

namespace {

struct Data {
  long long samples = 0, features = 0, batch = 0;
  std::vector<double> x, y;
  std::vector<float> xf, yf;
  template <class S>
  const S* xp() const {
    if constexpr (std::is_same_v<S, float>) return xf.data(); else return x.data();
  }
  template <class S>
  const S* yp() const {
    if constexpr (std::is_same_v<S, float>) return yf.data(); else return y.data();
  }
};

Data load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  char magic[8];
  std::int64_t head[7];
  in.read(magic, 8);
  in.read(reinterpret_cast<char*>(head), sizeof head);
  if (!in || std::memcmp(magic, "RHSTRM01", 8) != 0) throw std::runtime_error(path + " is not an RHSTRM01 file");
  Data d;
  d.samples = head[0];
  d.features = head[1];
  d.batch = head[2];
  if (d.samples <= 0 || d.features <= 0 || d.batch <= 0) throw std::runtime_error(path + ": bad header");
  d.x.resize(static_cast<size_t>(d.samples * d.features));
  d.y.resize(static_cast<size_t>(d.samples));
  in.read(reinterpret_cast<char*>(d.x.data()), static_cast<std::streamsize>(d.x.size() * sizeof(double)));
  in.read(reinterpret_cast<char*>(d.y.data()), static_cast<std::streamsize>(d.y.size() * sizeof(double)));
  if (!in) throw std::runtime_error(path + ": truncated");
  d.xf.assign(d.x.begin(), d.x.end());
  d.yf.assign(d.y.begin(), d.y.end());
  return d;
}

struct Op {
  rh::Space space = rh::Space::openmp;
  rh::Dtype dtype = rh::Dtype::f64;
  rh::Penalty penalty = rh::Penalty::none;
  bool steady = false;
};

struct StreamResult {
  long long iterations = 0;
  bool all_converged = true;
  std::vector<int> batch_iterations;
};

template <class S>
StreamResult stream(rh::Regressor& model, const Data& d) {
  StreamResult r;
  for (long long r0 = 0; r0 < d.samples; r0 += d.batch) {
    const long long n = std::min(d.batch, d.samples - r0);
    const auto& diag = model.partial_fit(rh::host_batch(d.xp<S>() + r0 * d.features, d.yp<S>() + r0, n, d.features));
    r.iterations += diag.iterations;
    r.all_converged = r.all_converged && diag.converged;
    r.batch_iterations.push_back(diag.iterations);
  }
  return r;
}

StreamResult stream_any(rh::Regressor& m, const Data& d) {
  return m.dtype() == rh::Dtype::f32 ? stream<float>(m, d) : stream<double>(m, d);
}

struct Measured {
  std::vector<double> seconds;
  StreamResult last;
  std::vector<double> coefficients;
};

class Runner {
 public:
  explicit Runner(const Data& d) : d_(d) {}

  Measured run(const Op& op, int reps) {
    rh::Config config;
    config.penalty = op.penalty;
    Measured m;
    using clock = std::chrono::steady_clock;
    if (!op.steady) {
      for (int r = 0; r < reps; ++r) {
        std::unique_ptr<rh::Regressor> model;
        const auto t0 = clock::now();
        model = std::make_unique<rh::Regressor>(op.space, op.dtype, config);
        m.last = stream_any(*model, d_);
        m.seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
        if (r + 1 == reps) m.coefficients = model->coefficients();
      }
    } else {
      rh::Regressor& model = steady_model(op, config);
      for (int r = 0; r < reps; ++r) {
        model.reset();
        const auto t0 = clock::now();
        m.last = stream_any(model, d_);
        m.seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
      }
      m.coefficients = model.coefficients();
    }
    return m;
  }

  rh::Regressor& steady_model(const Op& op, const rh::Config& config) {
    const int key = static_cast<int>(op.space) * 4 + static_cast<int>(op.dtype) * 2 + static_cast<int>(op.penalty);
    auto it = models_.find(key);
    if (it == models_.end()) {
      it = models_.emplace(key, std::make_unique<rh::Regressor>(op.space, op.dtype, config)).first;
      stream_any(*it->second, d_);  // prime
    }
    return *it->second;
  }

 private:
  const Data& d_;
  std::map<int, std::unique_ptr<rh::Regressor>> models_;
};

rh::Space parse_space(const std::string& s) {
  for (const auto& info : rh::compiled_spaces())
    if (info.name == s) return info.space;
  throw std::runtime_error("space '" + s + "' is not compiled");
}
rh::Dtype parse_dtype(const std::string& s) {
  if (s == "f32" || s == "float32") return rh::Dtype::f32;
  if (s == "f64" || s == "float64") return rh::Dtype::f64;
  throw std::runtime_error("dtype must be f32 or f64");
}
rh::Penalty parse_penalty(const std::string& s) { return rh::penalty_from_name(s); }
bool parse_lifecycle(const std::string& s) {
  if (s == "cold") return false;
  if (s == "steady") return true;
  throw std::runtime_error("lifecycle must be cold or steady");
}

std::string json_numbers(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += fmt::format("{}{:.17g}", i ? "," : "", v[i]);
  return out + "]";
}
std::string json_ints(const std::vector<int>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += fmt::format("{}{}", i ? "," : "", v[i]);
  return out + "]";
}
std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) { out += ' '; continue; }
    out += ch;
  }
  return out;
}

int serve(const Data& d) {
  std::string spaces;
  for (const auto& s : rh::compiled_spaces())
    spaces += fmt::format("{}{{\"name\":\"{}\",\"concurrency\":{},\"device_count\":{}}}", spaces.empty() ? "" : ",",
                          s.name, s.concurrency, s.device_count);
  fmt::print("{{\"ready\":true,\"rh_version\":\"{}\",\"git_revision\":\"{}\",\"kokkos\":\"{}\",\"native_arch\":{},"
             "\"spaces\":[{}]}}\n",
             rh::library_version(), RH_GIT_REVISION, rh::kokkos_version(), RH_PERF_NATIVE_ARCH ? "true" : "false",
             spaces);
  std::fflush(stdout);
  Runner runner(d);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd, space, dtype, penalty, lifecycle;
    int reps = 1;
    in >> cmd;
    if (cmd == "quit") break;
    if (cmd.empty()) continue;
    try {
      if (cmd != "run") throw std::runtime_error("unknown command '" + cmd + "'");
      in >> space >> dtype >> penalty >> lifecycle >> reps;
      if (!in || reps < 1) throw std::runtime_error("usage: run <space> <dtype> <penalty> <lifecycle> <reps>");
      const Op op{parse_space(space), parse_dtype(dtype), parse_penalty(penalty), parse_lifecycle(lifecycle)};
      const Measured m = runner.run(op, reps);
      fmt::print("{{\"seconds\":{},\"iterations\":{},\"all_converged\":{},\"batch_iterations\":{},"
                 "\"coefficients\":{}}}\n",
                 json_numbers(m.seconds), m.last.iterations, m.last.all_converged ? "true" : "false",
                 json_ints(m.last.batch_iterations), json_numbers(m.coefficients));
    } catch (const std::exception& e) {
      fmt::print("{{\"error\":\"{}\"}}\n", json_escape(e.what()));
    }
    std::fflush(stdout);
  }
  return 0;
}

void print_kernel_profile(Runner& runner, const Op& op, const Data& d) {
  rh::Config config;
  config.penalty = op.penalty;
  rh::Regressor& model = runner.steady_model(op, config);
  model.reset();
  auto& prof = rh_perf::KernelProfile::instance();
  rh_perf::wait_quiet(0.3, 20.0);
  const rh_perf::CpuSnapshot load0 = rh_perf::cpu_snapshot();
  prof.start();
  const auto t0 = std::chrono::steady_clock::now();
  const StreamResult r = stream_any(model, d);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  prof.stop();
  const double other = rh_perf::other_cores(load0, rh_perf::cpu_snapshot());
  const long long batches = (d.samples + d.batch - 1) / d.batch;
  const double iters = static_cast<double>(r.iterations);
  fmt::print("\nkernel profile of one steady operation: {} batches, {} solver iterations, {:.3f} ms in all "
             "(with the tool's per-launch fences); other processes used {:.2f} cores meanwhile{}\n",
             batches, r.iterations, 1e3 * total, other, other > 0.2 ? " (DISTURBED: run it again)" : "");
  fmt::print("  {:<34} {:>9} {:>10} {:>11} {:>10} {:>7}\n", "kernel", "launches", "per iter", "ms total",
             "ms/launch", "share");
  std::vector<std::pair<std::string, rh_perf::KernelStat>> rows(prof.kernels.begin(), prof.kernels.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double ksum = 0;
  for (const auto& [name, k] : rows) ksum += k.seconds;
  for (const auto& [name, k] : rows)
    fmt::print("  {:<34} {:>9} {:>10.2f} {:>11.3f} {:>10.4f} {:>6.1f}%\n", name.substr(0, 34), k.launches,
               static_cast<double>(k.launches) / iters, 1e3 * k.seconds, 1e3 * k.seconds / static_cast<double>(k.launches),
               100.0 * k.seconds / total);
  fmt::print("  {:<34} {:>9} {:>10.2f} {:>11.3f}\n", "all kernels", prof.total_launches(),
             static_cast<double>(prof.total_launches()) / iters, 1e3 * ksum);
  for (const auto& [key, c] : prof.copies)
    fmt::print("  deep_copy {:<24} {:>9} {:>10.2f} {:>11.3f}   {:.0f} bytes in all\n", key.substr(0, 24), c.copies,
               static_cast<double>(c.copies) / iters, 1e3 * c.seconds, c.bytes);
  fmt::print("  outside kernels and copies (host logic, launches, LU on host spaces is a kernel): {:.3f} ms\n",
             1e3 * (total - ksum));
}

int one_shot(const Data& d, const Op& op, int reps, bool kernel_profile) {
  Runner runner(d);
  rh_perf::wait_quiet(0.3, 20.0);
  const rh_perf::CpuSnapshot load0 = rh_perf::cpu_snapshot();
  const Measured m = runner.run(op, reps);
  const double other = rh_perf::other_cores(load0, rh_perf::cpu_snapshot());
  std::vector<double> s = m.seconds;
  std::sort(s.begin(), s.end());
  fmt::print("{} rows x {} features, batch {}: {} / {} / {} / {}\n", d.samples, d.features, d.batch,
             rh::space_name(op.space), op.dtype == rh::Dtype::f32 ? "f32" : "f64",
             rh::penalty_name(op.penalty), op.steady ? "steady" : "cold");
  fmt::print("  median {:.3f} ms, min {:.3f} ms over {} operations; iterations {} (per batch {}), all converged: {}; "
             "other processes used {:.2f} cores meanwhile\n",
             1e3 * s[s.size() / 2], 1e3 * s.front(), s.size(), m.last.iterations, json_ints(m.last.batch_iterations),
             m.last.all_converged ? "yes" : "no", other);
  if (kernel_profile) print_kernel_profile(runner, op, d);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string file;
    Op op;
    int reps = 5;
    bool serve_mode = false, kernel_profile = false;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--serve") serve_mode = true;
      else if (a == "--kernel-profile") kernel_profile = true;
      else if (a == "--space") op.space = parse_space(value());
      else if (a == "--dtype") op.dtype = parse_dtype(value());
      else if (a == "--penalty") op.penalty = parse_penalty(value());
      else if (a == "--lifecycle") op.steady = parse_lifecycle(value());
      else if (a == "--reps") reps = std::max(1, std::stoi(value()));
      else if (!a.empty() && a[0] != '-' && file.empty()) file = a;
      else throw std::runtime_error("unknown argument " + a);
    }
    if (file.empty())
      throw std::runtime_error("usage: rh_stream_file FILE [--serve] [--space S] [--dtype f32|f64] "
                               "[--penalty none|l1] [--lifecycle cold|steady] [--reps N] [--kernel-profile]");
    const Data d = load(file);
    return serve_mode ? serve(d) : one_shot(d, op, reps, kernel_profile);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rh_stream_file: %s\n", e.what());
    return 2;
  }
}
