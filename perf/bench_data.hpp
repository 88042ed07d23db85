// Shapes and synthetic data of the benchmark harness, shared by rh_bench and rh_gram_bench.
//
// The shapes are the reference project's shape-sweep profiles (seed-system §5.1): smoke (two small streams) and
// standard (latency, reference, wide, streaming). The data follows the same recipe: X ~ N(0,1), coef ~ N(0,1),
// y = X·coef + N(0, 0.2²), and rows 0, k, 2k, … (k = max(100, samples/100)) get an extra N(0, 8²) when
// samples ≥ 100. The generator is std::mt19937_64 seeded with 42 + the shape's index in its profile, so the data
// is deterministic for a given standard library, but it is not the reference's NumPy stream: tools/peer/ compares
// engines on one file written by NumPy instead.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace rh_perf {

struct Shape {
  const char* profile;
  const char* name;
  long long samples, features, batch;
  int index_in_profile;  // the data seed is 42 + this, like the reference's default_rng(seed + index)
};

inline const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all = {
      {"smoke", "latency-smoke", 2048, 8, 1024, 0},
      {"smoke", "reference-smoke", 8192, 32, 4096, 1},
      {"standard", "latency", 4096, 16, 4096, 0},
      {"standard", "reference", 100000, 90, 32768, 1},
      {"standard", "wide", 16384, 256, 4096, 2},
      {"standard", "streaming", 1000000, 32, 65536, 3},
  };
  return all;
}

// "latency_4096x16_b4096"
inline std::string shape_label(const Shape& s) {
  return std::string(s.name) + "_" + std::to_string(s.samples) + "x" + std::to_string(s.features) + "_b" +
         std::to_string(s.batch);
}

struct Dataset {
  long long samples = 0, features = 0;
  std::vector<double> x, y;  // x row-major samples × features
  std::vector<float> xf, yf;  // the same values rounded to float

  template <class S>
  const S* x_data() const {
    if constexpr (std::is_same_v<S, float>) return xf.data(); else return x.data();
  }
  template <class S>
  const S* y_data() const {
    if constexpr (std::is_same_v<S, float>) return yf.data(); else return y.data();
  }
};

inline Dataset make_dataset(long long samples, long long features, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Dataset d;
  d.samples = samples;
  d.features = features;
  d.x.resize(static_cast<size_t>(samples * features));
  d.y.resize(static_cast<size_t>(samples));
  for (auto& v : d.x) v = normal(rng);
  std::vector<double> coef(static_cast<size_t>(features));
  for (auto& c : coef) c = normal(rng);
  for (long long i = 0; i < samples; ++i) {
    double fit = 0.0;
    const double* row = d.x.data() + i * features;
    for (long long j = 0; j < features; ++j) fit += row[j] * coef[static_cast<size_t>(j)];
    d.y[static_cast<size_t>(i)] = fit + 0.2 * normal(rng);
  }
  if (samples >= 100) {
    const long long k = std::max<long long>(100, samples / 100);
    for (long long i = 0; i < samples; i += k) d.y[static_cast<size_t>(i)] += 8.0 * normal(rng);
  }
  d.xf.assign(d.x.begin(), d.x.end());
  d.yf.assign(d.y.begin(), d.y.end());
  return d;
}

// The data set of one shape, generated on first use and kept for the process (benchmarks of one shape share it).
inline const Dataset& dataset(const Shape& s) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Dataset>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = std::string(s.profile) + "/" + s.name;
  auto it = cache.find(key);
  if (it == cache.end()) {
    // Keep at most one data set alive: the streaming shape alone is 384 MiB (double + float copies).
    cache.clear();
    it = cache.emplace(key, std::make_unique<Dataset>(make_dataset(
                                s.samples, s.features, 42u + static_cast<std::uint64_t>(s.index_in_profile))))
             .first;
  }
  return *it->second;
}

}  // namespace rh_perf
