// What the two halves of the bad-input table (bad_input_table.cpp: models; bad_input_groups.cpp: model groups)
// share: the arrays of one call, how the models start, the C++ outcome of a row, the table's cells.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "abi_test_support.hpp"
#include "rh/checkpoint.hpp"
#include "rh/group.hpp"
#include "rh/regressor.hpp"

namespace bad_input {

using namespace abi_test;

constexpr std::int64_t kRows = 40, kCols = 3;
constexpr std::int64_t kModels = 3;  // the group rows' groups: models of rows 0-13, 14-25 and 26-39
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

// The C++ API's name of the space under test: a space the C++ API does not know fails the test, never falls back.
inline rh::Space cpp_space() { return rh::space_from_name(space_info_under_test().name); }

// The arrays of one call, as both APIs see them; a row spoils them before the calls.
struct Input {
  struct Padded {  // room behind the batch for a newer caller's larger struct
    rh_batch b;
    unsigned char tail[64];
  };
  Data data = make_data(kRows, kCols, 77, true);
  Arrays arrays;
  Padded batch_storage{};
  std::vector<double> out = std::vector<double>(static_cast<std::size_t>(kRows));
  rh_batch& c() { return batch_storage.b; }
  rh::Batch cpp() const {
    const rh_batch& b = batch_storage.b;
    rh::Batch r;
    r.x = rh::MatrixRef{b.x, b.rows, b.cols, b.ld, b.layout == RH_LAYOUT_COL_MAJOR ? rh::Layout::col_major : rh::Layout::row_major};
    r.y = b.y;
    r.weights = b.weights;
    r.dtype = b.dtype == RH_DTYPE_F32 ? rh::Dtype::f32 : rh::Dtype::f64;
    r.memory = b.memory == RH_MEMORY_DEVICE ? rh::Memory::device : rh::Memory::host;
    return r;
  }
  // As a group batch of kModels models (the group rows, bad_input_groups.cpp): these rows, split by `offsets`.
  std::vector<std::int64_t> offsets = {0, 14, 26, kRows};
  rh::GroupBatch group() const {
    const rh::Batch b = cpp();
    rh::GroupBatch g;
    g.x = b.x;
    g.y = b.y;
    g.weights = b.weights;
    g.offsets = offsets.data();
    g.dtype = b.dtype;
    g.memory = b.memory;
    return g;
  }
  double* x() { return arrays.x64.data(); }
  double* y() { return arrays.y64.data(); }
  double* w() { return arrays.w64.data(); }
  Input() { batch_storage.b = make_batch(data, RH_DTYPE_F64, arrays); }
};

// The models a row is tried on: fitted (the usual case; with inference on, or not) or fresh, in both APIs, from the
// same data.
enum class Start { fitted, inference, fresh, none };

inline rh::Config cpp_config(Start start) {
  rh::Config config;
  config.inference = start == Start::inference;
  return config;
}

inline rh_config c_config(Start start) {
  rh_config config = make_config();
  config.inference = start == Start::inference;
  return config;
}

// The checkpoint of another model (fitted on other data), as bytes and as a file.
inline std::vector<std::uint8_t> other_checkpoint(rh::Dtype dtype = rh::Dtype::f64) {
  rh::Regressor other(cpp_space(), dtype);
  const Data d = make_data(kRows, kCols, 99);
  if (dtype == rh::Dtype::f64) {
    other.partial_fit(rh::host_batch(d.x.data(), d.y.data(), kRows, kCols));
  } else {
    const std::vector<float> x(d.x.begin(), d.x.end()), y(d.y.begin(), d.y.end());
    other.partial_fit(rh::host_batch(x.data(), y.data(), kRows, kCols));
  }
  return rh::save_checkpoint(other);
}

inline std::vector<std::uint8_t> spoiled(std::vector<std::uint8_t> bytes, std::size_t offset, std::uint8_t value) {
  bytes[offset] = value;
  return bytes;
}

struct CppOutcome {
  bool threw = false;
  rh::Errc code = rh::Errc::internal_error;
  std::string message;
};

template <class R, class Object>
CppOutcome try_cpp(const R& row, Object& r) {
  Input in;
  CppOutcome o;
  try {
    row.cpp(r, in);
  } catch (const rh::Error& e) {
    o = CppOutcome{true, e.code(), e.what()};
  } catch (const std::exception& e) {
    o = CppOutcome{true, rh::Errc::internal_error, std::string("not an rh::Error: ") + e.what()};
  }
  return o;
}

inline std::string escaped(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

inline const char* status_symbol(rh_status s) {
  switch (s) {
    case RH_INVALID_ARGUMENT: return "RH_INVALID_ARGUMENT";
    case RH_INVALID_STATE: return "RH_INVALID_STATE";
    case RH_UNAVAILABLE: return "RH_UNAVAILABLE";
    case RH_ALLOCATION_FAILED: return "RH_ALLOCATION_FAILED";
    case RH_NUMERICAL_ERROR: return "RH_NUMERICAL_ERROR";
    case RH_DEVICE_ERROR: return "RH_DEVICE_ERROR";
    case RH_CORRUPT_DATA: return "RH_CORRUPT_DATA";
    case RH_VERSION_MISMATCH: return "RH_VERSION_MISMATCH";
    case RH_INTERNAL_ERROR: return "RH_INTERNAL_ERROR";
  }
  return "?";
}

// The "## Model groups" section of docs/bad-input.md: every group row tried (with its checks), its table; `rows` gets
// how many there are (bad_input_groups.cpp).
std::string group_section(int& rows);

}  // namespace bad_input
