// rh_perf_worker: our side of every performance measurement (tools/rh bench, ab; driven by perf/rhperf).
// It times operations on a data file written by perf/rhperf/data.py (one generator for every engine) and leaves
// everything else (calibration, interleaving, machine load, statistics, records) to the Python driver.
//
//   rh_perf_worker --serve
//       prints one JSON line describing the build (version, revision, compiler and flags, Kokkos, spaces,
//       threads, GPU), then answers each stdin line with one JSON line:
//         load FILE                                       load a data file (replaces the previous one)
//         run SPACE DTYPE PENALTY LIFECYCLE OPERATION INPUT REPS
//             REPS timed operations; returns their seconds, Σ iterations, all_converged and the coefficients.
//             SPACE "<space>+inference": the same with Config::inference on (docs/method.md §12)
//         gram SPACE DTYPE REPS                            the fused Gram pass alone (perf/gram_pass.hpp) on all
//             rows of the file as one batch; returns the mean seconds per pass of each of REPS calls
//         bandwidth SPACE MIB                              read bandwidth of the space's memory: the best of 5
//             sums over MIB MiB (the ceiling the Gram pass is drawn against)
//         group SPACE DTYPE PENALTY MODE INPUT MODELS REPS a group file (below): REPS streams of its group batches
//             into new models (created untimed before each stream); MODE group: one rh::RegressorGroup of every
//             model, one partial_fit per group batch; MODE loop: one rh::Regressor per model for the first MODELS
//             models, one partial_fit per model per group batch; INPUT as above. Returns the seconds per group batch of each
//             stream, model 0's Σ iterations and coefficients, the most iterations a model took in one batch
//             (most_iterations: a group's update lasts as long as its slowest model), all_converged over the models
//             and batches, and
//             {"skipped": why} when the library does not offer the group asked for (Errc::unavailable)
//         quit
//       An error answers {"error": "..."} and the worker goes on.
//
//   rh_perf_worker FILE [--space S] [--dtype f32|f64] [--penalty NAME] [--reps N] --kernel-profile
//       one-shot diagnosis: times N cold partial_fit streams, then lists every kernel and deep_copy of one
//       steady stream (kernel_profile.hpp), per solver iteration.
//
// Operations (the reference project's definitions, docs/performance.md "Records"):
//   partial_fit  streams every batch of the file in order (Σ iterations over the batches)
//   fit          one fit() on all rows (the batches concatenated outside the timed region)
//   cold         a new rh::Regressor inside every timed operation (its destruction untimed)
//   steady       one model primed by an untimed operation; reset() outside the timed region before each one
//                (defined for partial_fit only)
//   INPUT host   the caller's arrays are host memory (the library copies them to the space)
//   INPUT device arrays already in the space's memory (copied once, untimed, when first asked for); only on a
//                space with its own memory (CUDA)
//
// File format (little-endian): magic "RHSTRM01", int64 samples, features, batch, models, then 3 reserved int64; X
// as float64 row-major (samples × features); y as float64. f32 runs round the values once (as NumPy's astype).
// models > 0: a group file (perf/rhperf/data.py): samples / batch group batches of batch / models rows per model,
// model m's rows of group batch b at row b·batch + m·(batch / models).
#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gram_pass.hpp"
#include "kernel_profile.hpp"
#include "machine_load.hpp"
#include "perf_build_info.hpp"
#include "rh/detail/compiled_spaces.hpp"
#include "rh/detail/host_isa.hpp"
#include "rh/group.hpp"
#include "rh/regressor.hpp"
#include "rh/version.hpp"
#ifdef RH_DEVICE_MEMORY_HEADER  // a compiled space with its own memory: its device, as the fingerprint names it
#include RH_DEVICE_MEMORY_HEADER
#endif

namespace {

using json = nlohmann::json;
using DeviceMemory = Kokkos::DefaultExecutionSpace::memory_space;
constexpr bool kHasDeviceMemory = !std::is_same_v<DeviceMemory, Kokkos::HostSpace>;

template <class S>
using DeviceArray = Kokkos::View<S*, DeviceMemory>;

// The data of one file, in both dtypes on the host (f32 made on first use) and, when asked for, in device memory.
struct Data {
  long long samples = 0, features = 0, batch = 0, models = 0;
  std::vector<double> x, y;
  std::vector<float> xf, yf;
  DeviceArray<double> dx, dy;
  DeviceArray<float> dxf, dyf;

  template <class S>
  std::pair<const S*, const S*> host() {
    if constexpr (std::is_same_v<S, float>) {
      if (xf.empty()) {
        xf.assign(x.begin(), x.end());
        yf.assign(y.begin(), y.end());
      }
      return {xf.data(), yf.data()};
    } else {
      return {x.data(), y.data()};
    }
  }

  template <class S>
  std::pair<const S*, const S*> device() {
    if constexpr (!kHasDeviceMemory) {
      throw std::runtime_error("this build has no device memory (input device needs a space such as CUDA)");
    } else {
      auto [hx, hy] = host<S>();
      auto copy = [](DeviceArray<S>& d, const S* h, long long n, const char* label) {
        if (d.extent(0) == static_cast<size_t>(n)) return;
        d = DeviceArray<S>(std::string(label), static_cast<size_t>(n));  // Kokkos 3.4: a label is a string
        Kokkos::deep_copy(d, Kokkos::View<const S*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(h, static_cast<size_t>(n)));
      };
      if constexpr (std::is_same_v<S, float>) {
        copy(dxf, hx, samples * features, "rh_perf::x32");
        copy(dyf, hy, samples, "rh_perf::y32");
        return {dxf.data(), dyf.data()};
      } else {
        copy(dx, hx, samples * features, "rh_perf::x64");
        copy(dy, hy, samples, "rh_perf::y64");
        return {dx.data(), dy.data()};
      }
    }
  }
};

std::unique_ptr<Data> load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  char magic[8];
  std::int64_t head[7];
  in.read(magic, 8);
  in.read(reinterpret_cast<char*>(head), sizeof head);
  if (!in || std::memcmp(magic, "RHSTRM01", 8) != 0) throw std::runtime_error(path + " is not an RHSTRM01 file");
  auto d = std::make_unique<Data>();
  d->samples = head[0];
  d->features = head[1];
  d->batch = head[2];
  d->models = head[3];
  if (d->samples <= 0 || d->features <= 0 || d->batch <= 0 || d->models < 0 ||
      (d->models > 0 && (d->batch % d->models != 0 || d->samples % d->batch != 0)))
    throw std::runtime_error(path + ": bad header");
  d->x.resize(static_cast<size_t>(d->samples * d->features));
  d->y.resize(static_cast<size_t>(d->samples));
  in.read(reinterpret_cast<char*>(d->x.data()), static_cast<std::streamsize>(d->x.size() * sizeof(double)));
  in.read(reinterpret_cast<char*>(d->y.data()), static_cast<std::streamsize>(d->y.size() * sizeof(double)));
  if (!in) throw std::runtime_error(path + ": truncated");
  return d;
}

struct Op {
  rh::Space space = rh::Space::openmp;
  rh::Dtype dtype = rh::Dtype::f64;
  rh::Penalty penalty = rh::Penalty::none;
  bool steady = false;
  bool fit = false;     // operation fit (else partial_fit)
  bool device = false;  // input device (else host)
  bool inference = false;  // Config::inference (SPACE given as "<space>+inference")

  std::string key() const {
    return fmt::format("{}/{}/{}/{}/{}/{}", static_cast<int>(space), static_cast<int>(dtype),
                       static_cast<int>(penalty), fit, device, inference);
  }
};

struct OpResult {
  long long iterations = 0;
  bool all_converged = true;
  long long most_iterations = 0;  // group ops: the most any model took in one batch (a group waits for its slowest)
};

template <class S>
OpResult operate(rh::Regressor& model, Data& d, const Op& op, const S* x, const S* y) {
  auto batch = [&](long long r0, long long n) {
    rh::Batch b = rh::host_batch(x + r0 * d.features, y + r0, n, d.features);
    b.memory = op.device ? rh::Memory::device : rh::Memory::host;
    return b;
  };
  OpResult r;
  if (op.fit) {
    const auto& diag = model.fit(batch(0, d.samples));
    return {diag.iterations, diag.converged};
  }
  for (long long r0 = 0; r0 < d.samples; r0 += d.batch) {
    const auto& diag = model.partial_fit(batch(r0, std::min(d.batch, d.samples - r0)));
    r.iterations += diag.iterations;
    r.all_converged = r.all_converged && diag.converged;
  }
  return r;
}

// Where the operation's arrays are: resolved before the timed region (a device copy is made once, untimed).
template <class S>
std::pair<const S*, const S*> arrays(Data& d, const Op& op) {
  return op.device ? d.device<S>() : d.host<S>();
}

OpResult operate_any(rh::Regressor& model, Data& d, const Op& op) {
  if (op.dtype == rh::Dtype::f32) {
    auto [x, y] = arrays<float>(d, op);
    return operate<float>(model, d, op, x, y);
  }
  auto [x, y] = arrays<double>(d, op);
  return operate<double>(model, d, op, x, y);
}

struct Measured {
  std::vector<double> seconds;
  OpResult last;
  std::vector<double> coefficients;
};

// One `group` request (the group profile): MODE group or loop, over how many of the file's models.
struct GroupOp {
  rh::Space space = rh::Space::openmp;
  rh::Dtype dtype = rh::Dtype::f64;
  rh::Penalty penalty = rh::Penalty::none;
  bool loop = false;
  bool device = false;  // input device: the file's arrays already in the space's memory (copied once, untimed)
  long long models = 0;
};

// Streams of the file's group batches into new models; each stream's time is the sum of its update calls only.
template <class S>
Measured run_group(Data& d, const GroupOp& op, int reps) {
  if (d.models == 0) throw std::runtime_error("not a group file (the group profile writes them)");
  const long long n = d.models, rows = d.batch / d.models, batches = d.samples / d.batch, p = d.features;
  if (op.models < 1 || op.models > n || (!op.loop && op.models != n))
    throw std::runtime_error(fmt::format("MODELS must be the file's {} models (group) or 1 … {} (loop)", n, n));
  const auto arrays = op.device ? d.device<S>() : d.host<S>();
  const S* x = arrays.first;  // not a structured binding: the lambdas below capture x and y (C++20 allows that)
  const S* y = arrays.second;
  const rh::Memory memory = op.device ? rh::Memory::device : rh::Memory::host;
  rh::Config config;
  config.penalty = op.penalty;
  std::vector<std::int64_t> offsets(static_cast<size_t>(n) + 1);
  for (long long m = 0; m <= n; ++m) offsets[static_cast<size_t>(m)] = m * rows;
  using clock = std::chrono::steady_clock;
  Measured out;
  for (int r = 0; r < reps; ++r) {
    double seconds = 0;
    OpResult res;
    auto timed = [&](auto&& call) {
      const auto t0 = clock::now();
      call();
      seconds += std::chrono::duration<double>(clock::now() - t0).count();
    };
    if (op.loop) {
      std::vector<rh::Regressor> models;
      models.reserve(static_cast<size_t>(op.models));
      for (long long m = 0; m < op.models; ++m) models.emplace_back(op.space, op.dtype, config);
      for (long long b = 0; b < batches; ++b)
        timed([&] {
          for (long long m = 0; m < op.models; ++m) {
            const long long r0 = b * d.batch + m * rows;
            rh::Batch one = rh::host_batch(x + r0 * p, y + r0, rows, p);
            one.memory = memory;
            const auto& diag = models[static_cast<size_t>(m)].partial_fit(one);
            if (m == 0) res.iterations += diag.iterations;
            res.all_converged = res.all_converged && diag.converged;
            res.most_iterations = std::max<long long>(res.most_iterations, diag.iterations);
          }
        });
      if (r + 1 == reps) out.coefficients = models.front().coefficients();
    } else {
      rh::RegressorGroup group(op.space, op.dtype, config, n, p);
      for (long long b = 0; b < batches; ++b) {
        const long long r0 = b * d.batch;
        std::int64_t committed = 0;
        rh::GroupBatch batch = rh::group_batch(x + r0 * p, y + r0, offsets.data(), n, p);
        batch.memory = memory;
        timed([&] { committed = group.partial_fit(batch); });
        for (long long m = 0; m < n; ++m) {
          if (group.status(m)) throw std::runtime_error(group.status_message(m));
          res.all_converged = res.all_converged && group.diagnostics(m).converged;
          res.most_iterations = std::max<long long>(res.most_iterations, group.diagnostics(m).iterations);
        }
        if (committed != n) throw std::runtime_error(fmt::format("{} of {} models committed", committed, n));
        res.iterations += group.diagnostics(0).iterations;
      }
      if (r + 1 == reps) out.coefficients = group.state(0).coefficients;
    }
    out.seconds.push_back(seconds / static_cast<double>(batches));
    out.last = res;
  }
  return out;
}

class Runner {
 public:
  void set_data(std::unique_ptr<Data> d) {
    models_.clear();
    data_ = std::move(d);
  }
  Data& data() {
    if (!data_) throw std::runtime_error("no data loaded (load FILE first)");
    return *data_;
  }

  Measured run(const Op& op, int reps) {
    Data& d = data();
    if (op.steady && op.fit) throw std::runtime_error("the steady lifecycle is defined for partial_fit only");
    // Resolve the arrays once before any timing: the first device request copies the data (untimed).
    if (op.dtype == rh::Dtype::f32) arrays<float>(d, op); else arrays<double>(d, op);
    const rh::Config config = config_of(op);
    Measured m;
    using clock = std::chrono::steady_clock;
    for (int r = 0; r < reps; ++r) {
      std::unique_ptr<rh::Regressor> cold;
      rh::Regressor* model = nullptr;
      if (op.steady) {
        model = &steady_model(op);
        model->reset();
      }
      const auto t0 = clock::now();
      if (!op.steady) {
        cold = std::make_unique<rh::Regressor>(op.space, op.dtype, config);
        model = cold.get();
      }
      m.last = operate_any(*model, d, op);
      m.seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
      if (r + 1 == reps) m.coefficients = model->coefficients();
    }
    return m;
  }

  // Seconds per fused Gram pass, one value per call (perf/gram_pass.hpp), on every row as one batch.
  std::vector<double> gram(rh::Space space, rh::Dtype dtype, int reps, long long& passes) {
    Data& d = data();
    rh::Config config;
    config.max_iter = 1;
    rh::Regressor model(space, dtype, config);
    auto batch = [&]() {
      if (dtype == rh::Dtype::f32) {
        auto [x, y] = d.host<float>();
        return rh::host_batch(x, y, d.samples, d.features);
      }
      auto [x, y] = d.host<double>();
      return rh::host_batch(x, y, d.samples, d.features);
    }();
    model.partial_fit(batch);  // warm-up: buffers allocated, code paths loaded
    std::vector<double> out;
    for (int r = 0; r < reps; ++r) {
      const rh_perf::GramPassTiming t = rh_perf::time_gram_pass(model, batch);
      out.push_back(t.seconds_per_pass);
      passes = t.passes;
    }
    return out;
  }

  rh::Regressor& steady_model(const Op& op) {
    auto it = models_.find(op.key());
    if (it == models_.end()) {
      it = models_.emplace(op.key(), std::make_unique<rh::Regressor>(op.space, op.dtype, config_of(op))).first;
      operate_any(*it->second, data(), op);  // prime
    }
    return *it->second;
  }

 private:
  static rh::Config config_of(const Op& op) {
    rh::Config c;
    c.penalty = op.penalty;
    c.inference = op.inference;
    return c;
  }
  std::unique_ptr<Data> data_;
  std::map<std::string, std::unique_ptr<rh::Regressor>> models_;
};

// Sums 8 strided streams per work item (coalesced on a GPU, 8 prefetch streams on a CPU; independent adds).
template <class Exec>
struct ReadSum {
  Kokkos::View<const double*, typename Exec::memory_space> a;
  size_t stride;
  KOKKOS_INLINE_FUNCTION void operator()(const size_t i, double& sum) const {
    const double* p = a.data() + i;
    sum += ((p[0] + p[stride]) + (p[2 * stride] + p[3 * stride])) +
           ((p[4 * stride] + p[5 * stride]) + (p[6 * stride] + p[7 * stride]));
  }
};

template <class Exec>
double read_bandwidth(size_t bytes) {
  const size_t stride = bytes / sizeof(double) / 8;
  Kokkos::View<double*, typename Exec::memory_space> a("rh_perf::bandwidth", 8 * stride);
  Kokkos::deep_copy(a, 1.0);
  double best = 1e300;
  for (int r = 0; r < 6; ++r) {
    double sum = 0;
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    Kokkos::parallel_reduce("rh_perf::read_bandwidth", Kokkos::RangePolicy<Exec>(0, stride), ReadSum<Exec>{a, stride},
                            sum);
    Kokkos::fence();
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, t);  // the first sum warms up
    if (sum != static_cast<double>(8 * stride)) throw std::runtime_error("bandwidth: wrong sum");
  }
  return static_cast<double>(8 * stride * sizeof(double)) / best;
}

double read_bandwidth(rh::Space space, size_t bytes) {
  rh::initialize_runtime();
#define RH_PERF_BANDWIDTH(name, traits, ARG) \
  if (space == traits::id) return read_bandwidth<typename traits::execution_space>(bytes);
  RH_FOR_EACH_COMPILED_SPACE(RH_PERF_BANDWIDTH, )
#undef RH_PERF_BANDWIDTH
  throw std::runtime_error("bandwidth: space not compiled");
}

rh::Space parse_space(const std::string& s) {
  for (const auto& info : rh::compiled_spaces())
    if (info.name == s) return info.space;
  throw std::runtime_error("space '" + s + "' is not compiled in this build");
}
rh::Dtype parse_dtype(const std::string& s) {
  if (s == "f32") return rh::Dtype::f32;
  if (s == "f64") return rh::Dtype::f64;
  throw std::runtime_error("dtype must be f32 or f64");
}
// The library's own names of its penalty policies (RH_PENALTY_POLICIES): a new penalty needs nothing here.
rh::Penalty parse_penalty(const std::string& s) { return rh::penalty_from_name(s); }
template <class T>
T choose(const std::string& s, const char* what, std::initializer_list<std::pair<const char*, T>> options) {
  for (const auto& [name, value] : options)
    if (s == name) return value;
  throw std::runtime_error(fmt::format("unknown {} '{}'", what, s));
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// What the record's fingerprint needs from this build and this process.
json build_info() {
  json spaces = json::array();
  for (const auto& s : rh::compiled_spaces())
    spaces.push_back({{"name", s.name}, {"concurrency", s.concurrency}, {"device_count", s.device_count},
                      {"own_memory", s.own_memory}});
  json gpu = nullptr;
#ifdef RH_DEVICE_MEMORY
  if (const auto device = RH_DEVICE_MEMORY::describe())
    gpu = {{"name", device->name},
           {"compute_capability", device->compute_capability},
           {"memory_mib", device->memory_mib},
           {"driver_version", device->driver_version},
           {"runtime_version", device->runtime_version},
           {"devices", device->devices}};
#endif
  json penalties = json::array();  // every penalty the library knows: what a profile measures unless told otherwise
  for (int v = 0; rh::penalty_known(static_cast<rh::Penalty>(v)); ++v)
    penalties.push_back(rh::penalty_name(static_cast<rh::Penalty>(v)));
  return {{"ready", true},
          {"engine", "rh"},
          {"library_version", rh::library_version()},
          {"git_revision", RH_GIT_REVISION},
          {"host_isa", rh::detail::host_isa_name()},
          {"compiler", RH_PERF_COMPILER},
          {"compiler_flags", RH_PERF_CXX_FLAGS},
          {"library_compile_options", RH_PERF_LIBRARY_OPTIONS},
          {"build_type", RH_PERF_BUILD_TYPE},
          {"kokkos_version", rh::kokkos_version()},
          {"spaces", spaces},
          {"penalties", penalties},
          {"omp_num_threads", env_or("OMP_NUM_THREADS", "(unset)")},
          {"omp_proc_bind", env_or("OMP_PROC_BIND", "(unset)")},
          {"gpu", gpu}};
}

json answer(Runner& runner, const std::string& line) {
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  if (cmd == "load") {
    std::string path;
    in >> path;
    runner.set_data(load(path));
    const Data& d = runner.data();
    return {{"loaded", true}, {"samples", d.samples}, {"features", d.features}, {"batch", d.batch}, {"models", d.models}};
  }
  if (cmd == "run") {
    std::string space, dtype, penalty, lifecycle, operation, input;
    int reps = 0;
    in >> space >> dtype >> penalty >> lifecycle >> operation >> input >> reps;
    if (!in || reps < 1)
      throw std::runtime_error("usage: run SPACE DTYPE PENALTY LIFECYCLE OPERATION INPUT REPS");
    Op op;
    const std::string with_inference = "+inference";  // the bench's --inference engines (rh:SPACE+inference)
    op.inference = space.size() > with_inference.size() &&
                   space.compare(space.size() - with_inference.size(), with_inference.size(), with_inference) == 0;
    op.space = parse_space(op.inference ? space.substr(0, space.size() - with_inference.size()) : space);
    op.dtype = parse_dtype(dtype);
    op.penalty = parse_penalty(penalty);
    op.steady = choose<bool>(lifecycle, "lifecycle", {{"cold", false}, {"steady", true}});
    op.fit = choose<bool>(operation, "operation", {{"partial_fit", false}, {"fit", true}});
    op.device = choose<bool>(input, "input", {{"host", false}, {"device", true}});
    const Measured m = runner.run(op, reps);
    return {{"seconds", m.seconds},
            {"iterations", m.last.iterations},
            {"all_converged", m.last.all_converged},
            {"coefficients", m.coefficients}};
  }
  if (cmd == "gram") {
    std::string space, dtype;
    int reps = 0;
    in >> space >> dtype >> reps;
    if (!in || reps < 1) throw std::runtime_error("usage: gram SPACE DTYPE REPS");
    long long passes = 0;
    const auto seconds = runner.gram(parse_space(space), parse_dtype(dtype), reps, passes);
    return {{"seconds", seconds}, {"passes_per_call", passes}};
  }
  if (cmd == "group") {
    std::string space, dtype, penalty, mode, input;
    GroupOp op;
    int reps = 0;
    in >> space >> dtype >> penalty >> mode >> input >> op.models >> reps;
    if (!in || reps < 1) throw std::runtime_error("usage: group SPACE DTYPE PENALTY MODE INPUT MODELS REPS");
    op.space = parse_space(space);
    op.dtype = parse_dtype(dtype);
    op.penalty = parse_penalty(penalty);
    op.loop = choose<bool>(mode, "mode", {{"group", false}, {"loop", true}});
    op.device = choose<bool>(input, "input", {{"host", false}, {"device", true}});
    Measured m;
    try {
      m = op.dtype == rh::Dtype::f32 ? run_group<float>(runner.data(), op, reps)
                                     : run_group<double>(runner.data(), op, reps);
    } catch (const rh::Error& e) {
      if (e.code() == rh::Errc::unavailable) return {{"skipped", e.what()}};
      throw;
    }
    return {{"seconds", m.seconds},
            {"iterations", m.last.iterations},
            {"all_converged", m.last.all_converged},
            {"most_iterations", m.last.most_iterations},
            {"coefficients", m.coefficients}};
  }
  if (cmd == "bandwidth") {
    std::string space;
    long long mib = 0;
    in >> space >> mib;
    if (!in || mib < 1) throw std::runtime_error("usage: bandwidth SPACE MIB");
    return {{"bytes_per_s", read_bandwidth(parse_space(space), static_cast<size_t>(mib) << 20)}};
  }
  throw std::runtime_error("unknown command '" + cmd + "'");
}

int serve() {
  std::cout << build_info().dump() << std::endl;
  Runner runner;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "quit") break;
    if (line.empty()) continue;
    json out;
    try {
      out = answer(runner, line);
    } catch (const std::exception& e) {
      out = {{"error", e.what()}};
    }
    std::cout << out.dump() << std::endl;
  }
  return 0;
}

void print_kernel_profile(Runner& runner, const Op& op) {
  Data& d = runner.data();
  rh::Regressor& model = runner.steady_model(op);
  model.reset();
  auto& prof = rh_perf::KernelProfile::instance();
  rh_perf::wait_quiet(0.3, 20.0);
  const rh_perf::CpuSnapshot load0 = rh_perf::cpu_snapshot();
  prof.start();
  const auto t0 = std::chrono::steady_clock::now();
  const OpResult r = operate_any(model, d, op);
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

int kernel_profile(const std::string& file, const Op& op, int reps) {
  Runner runner;
  runner.set_data(load(file));
  rh_perf::wait_quiet(0.3, 20.0);
  const rh_perf::CpuSnapshot load0 = rh_perf::cpu_snapshot();
  const Measured m = runner.run(op, reps);
  const double other = rh_perf::other_cores(load0, rh_perf::cpu_snapshot());
  std::vector<double> s = m.seconds;
  std::sort(s.begin(), s.end());
  const Data& d = runner.data();
  fmt::print("{} rows x {} features, batch {}: {} / {} / {} / cold partial_fit\n", d.samples, d.features, d.batch,
             rh::space_name(op.space), rh::dtype_name(op.dtype), rh::penalty_name(op.penalty));
  fmt::print("  median {:.3f} ms, min {:.3f} ms over {} operations; iterations {}, all converged: {}; "
             "other processes used {:.2f} cores meanwhile\n",
             1e3 * s[s.size() / 2], 1e3 * s.front(), s.size(), m.last.iterations, m.last.all_converged ? "yes" : "no",
             other);
  print_kernel_profile(runner, op);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string file;
    Op op;
    int reps = 3;
    bool serve_mode = false, profile = false;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--serve") serve_mode = true;
      else if (a == "--kernel-profile") profile = true;
      else if (a == "--space") op.space = parse_space(value());
      else if (a == "--dtype") op.dtype = parse_dtype(value());
      else if (a == "--penalty") op.penalty = parse_penalty(value());
      else if (a == "--reps") reps = std::max(1, std::stoi(value()));
      else if (!a.empty() && a[0] != '-' && file.empty()) file = a;
      else throw std::runtime_error("unknown argument " + a);
    }
    if (serve_mode) return serve();
    if (file.empty() || !profile)
      throw std::runtime_error("usage: rh_perf_worker --serve | rh_perf_worker FILE [--space S] [--dtype f32|f64] "
                               "[--penalty NAME] [--reps N] --kernel-profile");
    return kernel_profile(file, op, reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rh_perf_worker: %s\n", e.what());
    return 2;
  }
}
