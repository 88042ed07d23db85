// Helpers shared by the C++ tests of the C ABI: the space under test, synthetic data, batches, RAII handles and
// bitwise snapshots of everything a model exposes.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "doctest/doctest.h"
#include "rh/rh.h"

namespace abi_test {

// RH_TEST_SPACE selects the execution space (ctest sets it per entry; serial when unset), found by name in the
// library's list of compiled spaces; a name it does not list fails the test, it never selects another space.
inline rh_space_info space_info_under_test() {
  const char* s = std::getenv("RH_TEST_SPACE");
  const std::string name = s ? s : "serial";
  std::int32_t count = 0;
  REQUIRE(rh_space_count(&count) == RH_SUCCESS);
  for (std::int32_t i = 0; i < count; ++i) {
    rh_space_info info;
    RH_STRUCT_INIT(&info);
    REQUIRE(rh_space_get(i, &info) == RH_SUCCESS);
    if (name == info.name) return info;
  }
  FAIL("RH_TEST_SPACE names no compiled space: " << name);
  return {};
}
inline std::int32_t space_under_test() { return space_info_under_test().space; }
// Whether the space under test has memory of its own (a device): asked of the library, never read from its name.
inline bool space_under_test_has_own_memory() { return space_info_under_test().own_memory == 1; }

// Every penalty the library knows, as RH_PENALTY_* values in order (rh_penalty_name): the tests that cover every
// penalty iterate this, so a new one is covered without naming it here.
inline std::vector<std::int32_t> known_penalties() {
  std::vector<std::int32_t> out;
  const char* name = nullptr;
  while (rh_penalty_name(static_cast<std::int32_t>(out.size()) + 1, &name) == RH_SUCCESS)
    out.push_back(static_cast<std::int32_t>(out.size()) + 1);
  REQUIRE(out.size() >= 2);
  return out;
}
inline std::string penalty_label(std::int32_t p) {
  const char* name = nullptr;
  return rh_penalty_name(p, &name) == RH_SUCCESS ? name : "an unknown penalty";
}

inline rh_config make_config(std::int32_t dtype = RH_DTYPE_F64, std::int32_t penalty = RH_PENALTY_NONE) {
  rh_config c;
  RH_STRUCT_INIT(&c);
  REQUIRE(rh_config_init(&c) == RH_SUCCESS);
  c.dtype = dtype;
  c.penalty = penalty;
  c.space = space_under_test();
  if (penalty == RH_PENALTY_L1) c.lambda_scale = 0.5;
  return c;
}

// Owns a model handle; destroys it at scope exit.
class Model {
 public:
  explicit Model(const rh_config& c) { REQUIRE(rh_model_create(RH_ABI_VERSION, &c, &h_) == RH_SUCCESS); }
  explicit Model(std::int32_t dtype = RH_DTYPE_F64, std::int32_t penalty = RH_PENALTY_NONE)
      : Model(make_config(dtype, penalty)) {}
  ~Model() { rh_model_destroy(h_); }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  rh_model* get() const { return h_; }
  operator rh_model*() const { return h_; }

 private:
  rh_model* h_ = nullptr;
};

// Deterministic synthetic data: y = Xβ + 0.3 + noise, with a few gross outliers. splitmix64 keeps it portable.
struct Data {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> x, y, w;  // x row-major
};

inline Data make_data(std::int64_t rows, std::int64_t cols, std::uint64_t seed, bool weighted = false) {
  auto next = [&seed]() {
    seed += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53 - 0.5;  // uniform in [-0.5, 0.5)
  };
  Data d;
  d.rows = rows;
  d.cols = cols;
  for (std::int64_t i = 0; i < rows; ++i) {
    double yi = 0.3;
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = 2.0 * next();
      d.x.push_back(v);
      yi += v * (j % 2 ? -0.75 : 1.25) / static_cast<double>(j + 1);
    }
    yi += 0.1 * next();
    if (i % 11 == 5) yi += 8.0;  // outlier
    d.y.push_back(yi);
    if (weighted) d.w.push_back(static_cast<double>(i % 4) * 0.5);
  }
  return d;
}

// The data converted to a dtype, kept alive with the batch that points into it.
struct Arrays {
  std::vector<double> x64, y64, w64;
  std::vector<float> x32, y32, w32;
};

inline rh_batch make_batch(const Data& d, std::int32_t dtype, Arrays& a) {
  rh_batch b;
  RH_STRUCT_INIT(&b);
  if (dtype == RH_DTYPE_F32) {
    a.x32.assign(d.x.begin(), d.x.end());
    a.y32.assign(d.y.begin(), d.y.end());
    a.w32.assign(d.w.begin(), d.w.end());
    b.x = a.x32.data();
    b.y = a.y32.data();
    b.weights = d.w.empty() ? nullptr : a.w32.data();
  } else {
    a.x64 = d.x;
    a.y64 = d.y;
    a.w64 = d.w;
    b.x = a.x64.data();
    b.y = a.y64.data();
    b.weights = d.w.empty() ? nullptr : a.w64.data();
  }
  b.rows = d.rows;
  b.cols = d.cols;
  b.layout = RH_LAYOUT_ROW_MAJOR;
  b.dtype = dtype;
  b.memory = RH_MEMORY_HOST;
  return b;
}

inline void partial_fit(rh_model* m, const Data& d, std::int32_t dtype) {
  Arrays a;
  const rh_batch b = make_batch(d, dtype, a);
  REQUIRE_MESSAGE(rh_model_partial_fit(m, &b, nullptr) == RH_SUCCESS, rh_last_error());
}

// Everything observable about a model, compared bit for bit.
struct Snapshot {
  std::vector<double> coefficients, information, score_variance;
  rh_state scalars{};  // pointers cleared
  rh_status diagnostics_status = RH_SUCCESS;
  rh_diagnostics diagnostics{};
  rh_config config{};
  std::vector<std::uint8_t> checkpoint;

  bool operator==(const Snapshot& o) const {
    // n == 0: empty vectors may hand out NULL, which memcmp must not get even for 0 bytes.
    auto same = [](const void* a, const void* b, std::size_t n) { return n == 0 || std::memcmp(a, b, n) == 0; };
    return coefficients.size() == o.coefficients.size() && information.size() == o.information.size() &&
           same(coefficients.data(), o.coefficients.data(), coefficients.size() * sizeof(double)) &&
           same(information.data(), o.information.data(), information.size() * sizeof(double)) &&
           score_variance.size() == o.score_variance.size() &&
           same(score_variance.data(), o.score_variance.data(), score_variance.size() * sizeof(double)) &&
           same(&scalars, &o.scalars, sizeof scalars) && diagnostics_status == o.diagnostics_status &&
           same(&diagnostics, &o.diagnostics, sizeof diagnostics) && same(&config, &o.config, sizeof config) &&
           checkpoint == o.checkpoint;
  }
  bool operator!=(const Snapshot& o) const { return !(*this == o); }
};

// The state into s.scalars and its arrays through get(rh_state*) (rh_model_get_state, or rh_group_get_state of one
// model): the lengths first, then the values; the pointers are cleared afterwards.
template <class Get>
void read_state(Snapshot& s, Get&& get) {
  RH_STRUCT_INIT(&s.scalars);
  REQUIRE(get(&s.scalars) == RH_SUCCESS);
  s.coefficients.resize(static_cast<std::size_t>(s.scalars.coefficients_length));
  s.information.resize(static_cast<std::size_t>(s.scalars.information_length));
  s.score_variance.resize(static_cast<std::size_t>(s.scalars.score_variance_length));
  s.scalars.coefficients = s.coefficients.data();
  s.scalars.information = s.information.data();
  s.scalars.score_variance = s.score_variance.data();
  REQUIRE(get(&s.scalars) == RH_SUCCESS);
  s.scalars.coefficients = nullptr;
  s.scalars.information = nullptr;
  s.scalars.score_variance = nullptr;
}

// A model's or a group's checkpoint bytes, through the C ABI's two-call sizing.
inline std::vector<std::uint8_t> checkpoint_of(const rh_model* m) {
  std::int64_t size = 0;
  REQUIRE(rh_model_save_checkpoint(m, nullptr, 0, &size) == RH_SUCCESS);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  REQUIRE(rh_model_save_checkpoint(m, bytes.data(), size, &size) == RH_SUCCESS);
  return bytes;
}
inline std::vector<std::uint8_t> checkpoint_of(const rh_group* g) {
  std::int64_t size = 0;
  REQUIRE(rh_group_save_checkpoint(g, nullptr, 0, &size) == RH_SUCCESS);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  REQUIRE(rh_group_save_checkpoint(g, bytes.data(), size, &size) == RH_SUCCESS);
  return bytes;
}

inline Snapshot snapshot(const rh_model* m) {
  Snapshot s;
  read_state(s, [m](rh_state* st) { return rh_model_get_state(m, st); });
  RH_STRUCT_INIT(&s.diagnostics);
  s.diagnostics_status = rh_model_diagnostics(m, &s.diagnostics);
  RH_STRUCT_INIT(&s.config);
  REQUIRE(rh_model_get_config(m, &s.config) == RH_SUCCESS);
  s.checkpoint = checkpoint_of(m);
  return s;
}

// An independent CRC-32 (zlib's), bit by bit, to check the library's table-driven one against the documentation.
inline std::uint32_t reference_crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

// The little-endian unsigned integer of `bytes` bytes at `offset` of b.
inline std::uint64_t le(const std::vector<std::uint8_t>& b, std::size_t offset, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(b.at(offset + static_cast<std::size_t>(i))) << (8 * i);
  return v;
}

// Owns a group handle; destroys it at scope exit.
class Group {
 public:
  Group(const rh_config& c, std::int64_t n_models, std::int64_t p) {
    REQUIRE_MESSAGE(rh_group_create(RH_ABI_VERSION, &c, n_models, p, &h_) == RH_SUCCESS, rh_last_error());
  }
  ~Group() { rh_group_destroy(h_); }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  operator rh_group*() const { return h_; }

 private:
  rh_group* h_ = nullptr;
};

// Rows of several models stacked, and their offsets; rows[m] rows for model m, from make_data(seed + m).
struct Ragged {
  Data data;
  std::vector<std::int64_t> offsets{0};
};
inline Ragged ragged(const std::vector<std::int64_t>& rows, std::int64_t p, std::uint64_t seed) {
  Ragged r;
  r.data.cols = p;
  for (std::size_t m = 0; m < rows.size(); ++m) {
    const Data d = make_data(rows[m], p, seed + 17 * m);
    r.data.x.insert(r.data.x.end(), d.x.begin(), d.x.end());
    r.data.y.insert(r.data.y.end(), d.y.begin(), d.y.end());
    r.data.rows += rows[m];
    r.offsets.push_back(r.data.rows);
  }
  return r;
}

// Model m of the group, and its diagnostics and status, as the ABI exports them.
struct ModelView {
  Snapshot state;  // coefficients, information, score_variance, scalars; diagnostics
  rh_status status = RH_SUCCESS;
  std::string message;
  bool operator==(const ModelView& o) const { return state == o.state && status == o.status && message == o.message; }
};

inline ModelView view(const rh_group* g, std::int64_t m) {
  ModelView v;
  Snapshot& s = v.state;
  read_state(s, [g, m](rh_state* st) { return rh_group_get_state(g, m, st); });
  RH_STRUCT_INIT(&s.diagnostics);
  s.diagnostics_status = rh_group_diagnostics(g, m, &s.diagnostics);
  char message[1024];
  REQUIRE(rh_group_model_status(g, m, &v.status, message, sizeof message) == RH_SUCCESS);
  v.message = message;
  return v;
}

inline std::vector<ModelView> views(const rh_group* g) {
  std::int64_t n = 0;
  REQUIRE(rh_group_n_models(g, &n) == RH_SUCCESS);
  std::vector<ModelView> out;
  for (std::int64_t m = 0; m < n; ++m) out.push_back(view(g, m));
  return out;
}

inline rh_status group_fit(rh_group* g, const Ragged& r, std::int32_t dtype, std::int64_t* committed = nullptr) {
  Arrays a;
  const rh_batch b = make_batch(r.data, dtype, a);
  return rh_group_partial_fit(g, &b, r.offsets.data(), static_cast<std::int64_t>(r.offsets.size()), committed);
}

inline std::string status_name(rh_status s) { return std::to_string(s) + " (" + rh_status_string(s) + ")"; }

}  // namespace abi_test
