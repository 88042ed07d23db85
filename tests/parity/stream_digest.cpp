// Streams a fixed synthetic data set (several batches, weights, an outlier, both penalties and dtypes) on one
// space and prints a 64-bit digest of every final state's bytes. compare_digests.cmake runs it on several spaces
// and OpenMP thread counts: host spaces must print identical digests (bitwise identical results).
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <random>
#include <string>
#include <vector>

#include "rh/regressor.hpp"

namespace {

std::uint64_t fnv1a(std::uint64_t h, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

template <class S>
std::uint64_t stream_digest(rh::Space space, rh::Penalty penalty) {
  const long long n = 5000, p = 37, batch = 1250;  // several chunks per batch, uneven tiles
  std::mt19937_64 rng(4242);
  std::normal_distribution<double> normal;
  std::vector<S> x(static_cast<size_t>(n * p)), y(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  for (auto& v : x) v = static_cast<S>(normal(rng));
  for (long long i = 0; i < n; ++i) {
    double fit = 0.3;
    for (long long j = 0; j < p; ++j) fit += x[i * p + j] * (j % 5 == 0 ? 0.0 : 1.0 / (1 + j));
    y[i] = static_cast<S>(fit + 0.3 * normal(rng) + (i % 97 == 0 ? 25.0 : 0.0));
    w[i] = static_cast<S>(0.25 * static_cast<double>(i % 5));
  }
  rh::Config cfg;
  cfg.penalty = penalty;
  cfg.lambda_scale = 0.3;
  rh::Regressor m(space, rh::dtype_of<S>(), cfg);
  std::uint64_t h = 1469598103934665603ULL;
  for (long long r0 = 0; r0 < n; r0 += batch) {
    const auto& d = m.partial_fit(rh::host_batch(x.data() + r0 * p, y.data() + r0, batch, p, w.data() + r0));
    h = fnv1a(h, &d.iterations, sizeof d.iterations);
    h = fnv1a(h, &d.objective, sizeof d.objective);
  }
  const rh::State st = m.state();
  h = fnv1a(h, st.coefficients.data(), st.coefficients.size() * sizeof(double));
  h = fnv1a(h, st.information.data(), st.information.size() * sizeof(double));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: rh_stream_digest SPACE (the name of a compiled space: rh_spaces lists them)\n");
    return 2;
  }
  const std::string name = argv[1];
  for (const auto& s : rh::compiled_spaces()) {
    if (s.name != name) continue;
    for (int v = 0; rh::penalty_known(static_cast<rh::Penalty>(v)); ++v) {  // every penalty
      const auto penalty = static_cast<rh::Penalty>(v);
      fmt::print("{} f64 {:016x}\n{} f32 {:016x}\n", rh::penalty_name(penalty), stream_digest<double>(s.space, penalty),
                 rh::penalty_name(penalty), stream_digest<float>(s.space, penalty));
    }
    return 0;
  }
  fmt::print(stderr, "space {} is not compiled\n", name);
  return 2;
}
