// Every entry point x every kind of bad input: the exact status, a message naming the function, and a model whose
// every observable (state, diagnostics, config, checkpoint bytes) is bit for bit what it was before the call.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <limits>

#include "abi_test_support.hpp"
#include "rh/known_spaces.hpp"  // the generated list of every space the library knows

using namespace abi_test;

namespace {

constexpr std::int64_t kRows = 40, kCols = 3;

// Checks one failed call. `model` is the model that must be unchanged; `on_model`: the call was made on it, so its
// own last-error message must repeat the thread's.
void expect_failure(rh_status got, rh_status want, const char* function, const rh_model* model,
                    const Snapshot& before, bool on_model = true) {
  const std::string message = rh_last_error();
  CHECK_MESSAGE(got == want, "got " << status_name(got) << ", want " << status_name(want) << ": " << message);
  CHECK(message.rfind(std::string(function) + ": ", 0) == 0);
  CHECK(message.size() > std::strlen(function) + 2);
  if (on_model) CHECK(message == rh_model_last_error(model));
  CHECK_MESSAGE(snapshot(model) == before, function << " changed the model although it failed");
}

// A batch with room behind it, for struct_size tests; points into `data`'s arrays.
struct BatchInput {
  Data data;
  Arrays arrays;
  struct {
    rh_batch b;
    unsigned char tail[64];
  } storage{};
  const rh_batch* pointer = nullptr;
  std::vector<double> out;

  explicit BatchInput(std::int64_t cols = kCols) : data(make_data(kRows, cols, 77)) {
    data.w.assign(static_cast<std::size_t>(kRows), 1.0);
    storage.b = make_batch(data, RH_DTYPE_F64, arrays);
    pointer = &storage.b;
    out.assign(static_cast<std::size_t>(kRows), 0.0);
  }
  rh_batch& b() { return storage.b; }
  double* x() { return arrays.x64.data(); }
  double* y() { return arrays.y64.data(); }
  double* w() { return arrays.w64.data(); }
};

enum Entry : unsigned { partial_fit_e = 1, fit_e = 2, predict_e = 4, score_e = 8 };
constexpr unsigned all_entries = partial_fit_e | fit_e | predict_e | score_e;
constexpr unsigned with_y = partial_fit_e | fit_e | score_e;

const char* entry_name(Entry e) {
  switch (e) {
    case partial_fit_e: return "rh_model_partial_fit";
    case fit_e: return "rh_model_fit";
    case predict_e: return "rh_model_predict";
    case score_e: return "rh_model_score";
  }
  return "?";
}

rh_status call(Entry e, rh_model* m, BatchInput& in) {
  double r2 = 0;
  switch (e) {
    case partial_fit_e: return rh_model_partial_fit(m, in.pointer, nullptr);
    case fit_e: return rh_model_fit(m, in.pointer, nullptr);
    case predict_e: return rh_model_predict(m, in.pointer, in.out.data(), static_cast<std::int64_t>(in.out.size()));
    case score_e: return rh_model_score(m, in.pointer, &r2);
  }
  return -1;
}

struct BatchCase {
  const char* name;
  unsigned entries;
  rh_status want;
  std::function<void(BatchInput&)> spoil;
  std::int64_t cols = kCols;
};

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t huge = std::int64_t{1} << 62;

std::vector<BatchCase> batch_cases() {
  return {
      {"batch NULL", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.pointer = nullptr; }},
      {"other ABI major", all_entries, RH_VERSION_MISMATCH,
       [](BatchInput& i) { i.b().abi_version = RH_MAKE_ABI_VERSION(2, 0); }},
      {"older ABI major", all_entries, RH_VERSION_MISMATCH,
       [](BatchInput& i) { i.b().abi_version = RH_MAKE_ABI_VERSION(0, 9); }},
      {"struct_size too small", all_entries, RH_VERSION_MISMATCH,
       [](BatchInput& i) { i.b().struct_size = sizeof(rh_batch) - 8; }},
      {"struct_size 0", all_entries, RH_VERSION_MISMATCH, [](BatchInput& i) { i.b().struct_size = 0; }},
      {"struct_size absurd", all_entries, RH_VERSION_MISMATCH, [](BatchInput& i) { i.b().struct_size = 1u << 30; }},
      {"unknown newer field set", all_entries, RH_VERSION_MISMATCH,
       [](BatchInput& i) {
         i.b().struct_size = sizeof(rh_batch) + 16;
         i.storage.tail[9] = 1;
       }},
      {"reserved0 set", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().reserved0 = 1; }},
      {"X NULL", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().x = nullptr; }},
      {"y NULL", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().y = nullptr; }},
      {"rows 0", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().rows = 0; }},
      {"rows negative", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().rows = -5; }},
      {"cols 0", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().cols = 0; }},
      {"cols negative", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().cols = -3; }},
      {"ld negative", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().ld = -1; }},
      {"ld below the row length", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().ld = kCols - 1; }},
      {"ld below the column length", all_entries, RH_INVALID_ARGUMENT,
       [](BatchInput& i) {
         i.b().layout = RH_LAYOUT_COL_MAJOR;
         i.b().ld = kRows - 1;
       }},
      // Shapes whose element offsets overflow, with a row count the output buffer really has.
      {"rows x ld overflows", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().ld = huge; }},
      {"rows x cols overflows", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().cols = huge; }},
      {"column-major cols x ld overflows", all_entries, RH_INVALID_ARGUMENT,
       [](BatchInput& i) {
         i.b().layout = RH_LAYOUT_COL_MAJOR;
         i.b().ld = huge;
       }},
      {"wrong column count", partial_fit_e | predict_e | score_e, RH_INVALID_ARGUMENT, [](BatchInput&) {},
       kCols + 1},
      {"layout 0", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().layout = 0; }},
      {"layout unknown", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().layout = 3; }},
      {"dtype 0", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().dtype = 0; }},
      {"dtype unknown", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().dtype = 7; }},
      {"dtype differs from the model", all_entries, RH_INVALID_ARGUMENT,
       [](BatchInput& i) { i.b().dtype = RH_DTYPE_F32; }},
      {"memory 0", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().memory = 0; }},
      {"memory unknown", all_entries, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.b().memory = 9; }},
      {"NaN in X", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.x()[7] = kNaN; }},
      {"Inf in X", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.x()[kRows * kCols - 1] = -kInf; }},
      {"NaN in y", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.y()[0] = kNaN; }},
      {"Inf in y", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.y()[3] = kInf; }},
      {"NaN weight", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.w()[2] = kNaN; }},
      {"Inf weight", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.w()[2] = kInf; }},
      {"negative weight", with_y, RH_INVALID_ARGUMENT, [](BatchInput& i) { i.w()[4] = -0.5; }},
      {"all weights zero", with_y, RH_INVALID_ARGUMENT,
       [](BatchInput& i) { std::fill(i.arrays.w64.begin(), i.arrays.w64.end(), 0.0); }},
  };
}

// On a host space, device memory cannot be reached: the claim is checked, never trusted.
bool host_space() { return !space_under_test_has_own_memory(); }

struct Fitted {
  Model model;
  Snapshot before;
  Fitted() {
    partial_fit(model, make_data(kRows, kCols, 1), RH_DTYPE_F64);
    partial_fit(model, make_data(kRows, kCols, 2), RH_DTYPE_F64);
    before = snapshot(model);
  }
};

}  // namespace

TEST_SUITE("bad_input") {

TEST_CASE("batch arguments of partial_fit, fit, predict and score") {
  Fitted f;
  for (const BatchCase& c : batch_cases()) {
    for (Entry e : {partial_fit_e, fit_e, predict_e, score_e}) {
      if (!(c.entries & e)) continue;
      CAPTURE(c.name);
      CAPTURE(entry_name(e));
      BatchInput in(c.cols);
      c.spoil(in);
      expect_failure(call(e, f.model, in), c.want, entry_name(e), f.model, f.before);
    }
  }
  if (host_space()) {
    for (Entry e : {partial_fit_e, fit_e, predict_e, score_e}) {
      CAPTURE(entry_name(e));
      BatchInput in;
      in.b().memory = RH_MEMORY_DEVICE;
      expect_failure(call(e, f.model, in), RH_INVALID_ARGUMENT, entry_name(e), f.model, f.before);
    }
  }
}

// predict checks X's values like update and score do.
TEST_CASE("predict rejects NaN and Inf in X") {
  Fitted f;
  for (double bad : {kNaN, kInf}) {
    BatchInput in;
    in.x()[4] = bad;
    expect_failure(call(predict_e, f.model, in), RH_INVALID_ARGUMENT, "rh_model_predict", f.model, f.before);
  }
}

TEST_CASE("output arguments of partial_fit, fit, predict and score") {
  Fitted f;
  for (Entry e : {partial_fit_e, fit_e}) {
    CAPTURE(entry_name(e));
    // A bad diagnostics struct must be refused before the update, not after it was committed.
    struct {
      rh_diagnostics d;
      unsigned char tail[16];
    } diag{};
    RH_STRUCT_INIT(&diag.d);
    diag.d.struct_size = sizeof(rh_diagnostics) - 4;
    BatchInput in;
    rh_status s = e == fit_e ? rh_model_fit(f.model, in.pointer, &diag.d) : rh_model_partial_fit(f.model, in.pointer, &diag.d);
    expect_failure(s, RH_VERSION_MISMATCH, entry_name(e), f.model, f.before);
    RH_STRUCT_INIT(&diag.d);
    diag.d.abi_version = RH_MAKE_ABI_VERSION(3, 1);
    s = e == fit_e ? rh_model_fit(f.model, in.pointer, &diag.d) : rh_model_partial_fit(f.model, in.pointer, &diag.d);
    expect_failure(s, RH_VERSION_MISMATCH, entry_name(e), f.model, f.before);
  }
  BatchInput in;
  expect_failure(rh_model_predict(f.model, in.pointer, nullptr, kRows), RH_INVALID_ARGUMENT, "rh_model_predict",
                 f.model, f.before);
  expect_failure(rh_model_predict(f.model, in.pointer, in.out.data(), -1), RH_INVALID_ARGUMENT, "rh_model_predict",
                 f.model, f.before);
  expect_failure(rh_model_predict(f.model, in.pointer, in.out.data(), kRows - 1), RH_INVALID_ARGUMENT,
                 "rh_model_predict", f.model, f.before);
  expect_failure(rh_model_score(f.model, in.pointer, nullptr), RH_INVALID_ARGUMENT, "rh_model_score", f.model,
                 f.before);
}

TEST_CASE("never-fitted model") {
  Model m;
  const Snapshot before = snapshot(m);
  CHECK(before.diagnostics_status == RH_INVALID_STATE);
  CHECK(before.scalars.n_features == 0);
  BatchInput in;
  expect_failure(call(predict_e, m, in), RH_INVALID_STATE, "rh_model_predict", m, before);
  expect_failure(call(score_e, m, in), RH_INVALID_STATE, "rh_model_score", m, before);
  rh_diagnostics d;
  RH_STRUCT_INIT(&d);
  expect_failure(rh_model_diagnostics(m, &d), RH_INVALID_STATE, "rh_model_diagnostics", m, before);
  // A rejected first batch leaves it unfitted.
  in.y()[1] = kNaN;
  expect_failure(call(partial_fit_e, m, in), RH_INVALID_ARGUMENT, "rh_model_partial_fit", m, before);
  // So does a refused state import.
  rh_state st;
  RH_STRUCT_INIT(&st);
  st.n_features = 2;
  expect_failure(rh_model_set_state(m, &st), RH_INVALID_STATE, "rh_model_set_state", m, before);
}

TEST_CASE("dead, NULL and invented handles on every entry point") {
  Fitted f;  // a live model that must not be affected by calls on other handles
  rh_model* dead = nullptr;
  {
    const rh_config c = make_config();
    REQUIRE(rh_model_create(RH_ABI_VERSION, &c, &dead) == RH_SUCCESS);
    REQUIRE(rh_model_destroy(dead) == RH_SUCCESS);
  }
  // Tokens are never reused: a model created after the destruction does not revive the dead handle.
  Model newer;
  CHECK(newer.get() != dead);
  rh_model* invented = reinterpret_cast<rh_model*>(std::uintptr_t{0x5eed5eed});
  BatchInput in;
  rh_diagnostics d;
  RH_STRUCT_INIT(&d);
  rh_state st;
  RH_STRUCT_INIT(&st);
  rh_config c;
  RH_STRUCT_INIT(&c);
  double r2 = 0;
  std::int64_t size = 0;
  const std::vector<std::uint8_t> bytes = checkpoint_of(f.model);
  // One file per space: ctest may run this test for two spaces at once in the same folder.
  const std::string path = "bad_input_dead_handle_" + std::to_string(space_under_test()) + ".rhckpt";
  using Call = std::function<rh_status(rh_model*)>;
  const std::vector<std::pair<const char*, Call>> calls = {
      {"rh_model_get_config", [&](rh_model* h) { return rh_model_get_config(h, &c); }},
      {"rh_model_partial_fit", [&](rh_model* h) { return rh_model_partial_fit(h, in.pointer, &d); }},
      {"rh_model_fit", [&](rh_model* h) { return rh_model_fit(h, in.pointer, &d); }},
      {"rh_model_predict", [&](rh_model* h) { return rh_model_predict(h, in.pointer, in.out.data(), kRows); }},
      {"rh_model_score", [&](rh_model* h) { return rh_model_score(h, in.pointer, &r2); }},
      {"rh_model_diagnostics", [&](rh_model* h) { return rh_model_diagnostics(h, &d); }},
      {"rh_model_reset", [&](rh_model* h) { return rh_model_reset(h); }},
      {"rh_model_get_state", [&](rh_model* h) { return rh_model_get_state(h, &st); }},
      {"rh_model_set_state", [&](rh_model* h) { return rh_model_set_state(h, &st); }},
      {"rh_model_save_checkpoint", [&](rh_model* h) { return rh_model_save_checkpoint(h, nullptr, 0, &size); }},
      {"rh_model_save_checkpoint_file", [&](rh_model* h) { return rh_model_save_checkpoint_file(h, path.c_str()); }},
      {"rh_model_load_checkpoint",
       [&](rh_model* h) { return rh_model_load_checkpoint(h, bytes.data(), static_cast<std::int64_t>(bytes.size())); }},
      {"rh_model_load_checkpoint_file", [&](rh_model* h) { return rh_model_load_checkpoint_file(h, path.c_str()); }},
      {"rh_model_destroy", [&](rh_model* h) { return rh_model_destroy(h); }},
  };
  for (const auto& call : calls) {  // no structured binding: nvcc cannot capture one in CAPTURE's lambda
    const char* name = call.first;
    const Call& fn = call.second;
    for (rh_model* h : {static_cast<rh_model*>(nullptr), dead, invented}) {
      if (!h && std::string(name) == "rh_model_destroy") continue;  // destroy(NULL) is a no-op, tested below
      CAPTURE(name);
      CAPTURE(static_cast<const void*>(h));
      expect_failure(fn(h), RH_INVALID_ARGUMENT, name, f.model, f.before, false);
    }
  }
  std::FILE* written = std::fopen(path.c_str(), "rb");
  CHECK(written == nullptr);  // nothing was written for a dead handle
  if (written) std::fclose(written);
  CHECK(rh_model_destroy(nullptr) == RH_SUCCESS);
  CHECK(std::string(rh_model_last_error(nullptr)).find("NULL") != std::string::npos);
  CHECK(std::string(rh_model_last_error(dead)).find("not a live model") != std::string::npos);
  CHECK(std::string(rh_model_last_error(invented)).find("not a live model") != std::string::npos);
}

TEST_CASE("rh_model_create: version gate, every config field, output pointer") {
  Fitted f;  // must not be disturbed by failed creations
  struct ConfigCase {
    const char* name;
    rh_status want;
    std::function<void(rh_config&)> spoil;
  };
  const std::vector<ConfigCase> cases = {
      {"config other ABI major", RH_VERSION_MISMATCH, [](rh_config& c) { c.abi_version = RH_MAKE_ABI_VERSION(2, 0); }},
      {"config struct_size too small", RH_VERSION_MISMATCH, [](rh_config& c) { c.struct_size = 8; }},
      {"reserved0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.reserved0 = -1; }},
      {"tau 0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.tau = 0; }},
      {"tau negative", RH_INVALID_ARGUMENT, [](rh_config& c) { c.tau = -1; }},
      {"tau NaN", RH_INVALID_ARGUMENT, [](rh_config& c) { c.tau = kNaN; }},
      {"tau Inf", RH_INVALID_ARGUMENT, [](rh_config& c) { c.tau = kInf; }},
      {"lambda_scale negative", RH_INVALID_ARGUMENT, [](rh_config& c) { c.lambda_scale = -0.1; }},
      {"lambda_scale NaN", RH_INVALID_ARGUMENT, [](rh_config& c) { c.lambda_scale = kNaN; }},
      {"bandwidth_scale 0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.bandwidth_scale = 0; }},
      {"bandwidth_scale Inf", RH_INVALID_ARGUMENT, [](rh_config& c) { c.bandwidth_scale = kInf; }},
      {"tol 0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.tol = 0; }},
      {"tol NaN", RH_INVALID_ARGUMENT, [](rh_config& c) { c.tol = kNaN; }},
      {"ridge negative", RH_INVALID_ARGUMENT, [](rh_config& c) { c.ridge = -1e-9; }},
      {"ridge Inf", RH_INVALID_ARGUMENT, [](rh_config& c) { c.ridge = kInf; }},
      {"max_iter 0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.max_iter = 0; }},
      {"max_iter negative", RH_INVALID_ARGUMENT, [](rh_config& c) { c.max_iter = -4; }},
      {"penalty 0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.penalty = 0; }},
      {"penalty unknown", RH_INVALID_ARGUMENT, [](rh_config& c) { c.penalty = 3; }},
      {"fit_intercept 2", RH_INVALID_ARGUMENT, [](rh_config& c) { c.fit_intercept = 2; }},
      {"dtype 0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.dtype = 0; }},
      {"dtype unknown", RH_INVALID_ARGUMENT, [](rh_config& c) { c.dtype = 3; }},
      {"space 0", RH_INVALID_ARGUMENT, [](rh_config& c) { c.space = 0; }},
      {"space unknown", RH_INVALID_ARGUMENT, [](rh_config& c) { c.space = 99; }},
      {"device_id negative", RH_INVALID_ARGUMENT, [](rh_config& c) { c.device_id = -1; }},
      {"host_threads negative", RH_INVALID_ARGUMENT, [](rh_config& c) { c.host_threads = -2; }},
  };
  rh_model* const sentinel = reinterpret_cast<rh_model*>(std::uintptr_t{0xdead});
  for (const auto& c : cases) {
    CAPTURE(c.name);
    rh_config cfg = make_config();
    c.spoil(cfg);
    rh_model* out = sentinel;
    expect_failure(rh_model_create(RH_ABI_VERSION, &cfg, &out), c.want, "rh_model_create", f.model, f.before, false);
    CHECK(out == sentinel);  // the output is written only on success
  }
  const rh_config good = make_config();
  rh_model* out = sentinel;
  expect_failure(rh_model_create(RH_MAKE_ABI_VERSION(2, 0), &good, &out), RH_VERSION_MISMATCH, "rh_model_create",
                 f.model, f.before, false);
  expect_failure(rh_model_create(0, &good, &out), RH_VERSION_MISMATCH, "rh_model_create", f.model, f.before, false);
  expect_failure(rh_model_create(RH_ABI_VERSION, nullptr, &out), RH_INVALID_ARGUMENT, "rh_model_create", f.model,
                 f.before, false);
  expect_failure(rh_model_create(RH_ABI_VERSION, &good, nullptr), RH_INVALID_ARGUMENT, "rh_model_create", f.model,
                 f.before, false);
  CHECK(out == sentinel);
  // A newer caller's larger config: accepted when the unknown bytes are zero, refused otherwise.
  struct {
    rh_config c;
    unsigned char tail[24];
  } bigger{};
  bigger.c = good;
  bigger.c.struct_size = sizeof bigger;
  REQUIRE(rh_model_create(RH_MAKE_ABI_VERSION(RH_ABI_VERSION_MAJOR, 7), &bigger.c, &out) == RH_SUCCESS);
  CHECK(rh_model_destroy(out) == RH_SUCCESS);
  out = sentinel;
  bigger.tail[23] = 0x80;
  expect_failure(rh_model_create(RH_ABI_VERSION, &bigger.c, &out), RH_VERSION_MISMATCH, "rh_model_create", f.model,
                 f.before, false);
  CHECK(out == sentinel);
  // Every known space that is not compiled into this build (the CPU build has no CUDA), from the generated list.
  std::int32_t count = 0;
  REQUIRE(rh_space_count(&count) == RH_SUCCESS);
  std::vector<std::int32_t> compiled;
  for (std::int32_t i = 0; i < count; ++i) {
    rh_space_info info;
    RH_STRUCT_INIT(&info);
    REQUIRE(rh_space_get(i, &info) == RH_SUCCESS);
    compiled.push_back(info.space);
  }
#define RH_KNOWN_SPACE_CODE(name, NAME, own_memory) RH_SPACE_##NAME,
  for (const std::int32_t code : {RH_FOR_EACH_KNOWN_SPACE(RH_KNOWN_SPACE_CODE)}) {
#undef RH_KNOWN_SPACE_CODE
    if (std::find(compiled.begin(), compiled.end(), code) != compiled.end()) continue;
    CAPTURE(code);
    rh_config c = good;
    c.space = code;
    expect_failure(rh_model_create(RH_ABI_VERSION, &c, &out), RH_UNAVAILABLE, "rh_model_create", f.model, f.before,
                   false);
    CHECK(out == sentinel);
  }
}

TEST_CASE("library entry points without a model") {
  Fitted f;
  std::int32_t count = 0;
  expect_failure(rh_init(RH_MAKE_ABI_VERSION(9, 0), 0, -1), RH_VERSION_MISMATCH, "rh_init", f.model, f.before, false);
  expect_failure(rh_init(RH_ABI_VERSION, -1, -1), RH_INVALID_ARGUMENT, "rh_init", f.model, f.before, false);
  expect_failure(rh_init(RH_ABI_VERSION, 0, -2), RH_INVALID_ARGUMENT, "rh_init", f.model, f.before, false);
  expect_failure(rh_space_count(nullptr), RH_INVALID_ARGUMENT, "rh_space_count", f.model, f.before, false);
  REQUIRE(rh_space_count(&count) == RH_SUCCESS);
  rh_space_info info;
  RH_STRUCT_INIT(&info);
  expect_failure(rh_space_get(-1, &info), RH_INVALID_ARGUMENT, "rh_space_get", f.model, f.before, false);
  expect_failure(rh_space_get(count, &info), RH_INVALID_ARGUMENT, "rh_space_get", f.model, f.before, false);
  expect_failure(rh_space_get(0, nullptr), RH_INVALID_ARGUMENT, "rh_space_get", f.model, f.before, false);
  info.struct_size = 12;
  expect_failure(rh_space_get(0, &info), RH_VERSION_MISMATCH, "rh_space_get", f.model, f.before, false);
  rh_config c;
  expect_failure(rh_config_init(nullptr), RH_INVALID_ARGUMENT, "rh_config_init", f.model, f.before, false);
  RH_STRUCT_INIT(&c);
  c.abi_version = RH_MAKE_ABI_VERSION(2, 0);
  expect_failure(rh_config_init(&c), RH_VERSION_MISMATCH, "rh_config_init", f.model, f.before, false);
  CHECK(c.tau == 0.0);  // untouched
}

TEST_CASE("model queries: get_config, diagnostics, get_state") {
  Fitted f;
  rh_config c;
  expect_failure(rh_model_get_config(f.model, nullptr), RH_INVALID_ARGUMENT, "rh_model_get_config", f.model, f.before);
  RH_STRUCT_INIT(&c);
  c.struct_size = 4;
  expect_failure(rh_model_get_config(f.model, &c), RH_VERSION_MISMATCH, "rh_model_get_config", f.model, f.before);
  rh_diagnostics d;
  expect_failure(rh_model_diagnostics(f.model, nullptr), RH_INVALID_ARGUMENT, "rh_model_diagnostics", f.model,
                 f.before);
  RH_STRUCT_INIT(&d);
  d.abi_version = 0;
  expect_failure(rh_model_diagnostics(f.model, &d), RH_VERSION_MISMATCH, "rh_model_diagnostics", f.model, f.before);

  const std::int64_t q = kCols + 1;
  std::vector<double> coef(static_cast<std::size_t>(q)), info(static_cast<std::size_t>(q * q));
  auto state_with = [&](std::int64_t coef_capacity, std::int64_t info_capacity, bool coef_buffer, bool info_buffer) {
    rh_state s;
    RH_STRUCT_INIT(&s);
    s.coefficients = coef_buffer ? coef.data() : nullptr;
    s.information = info_buffer ? info.data() : nullptr;
    s.coefficients_length = coef_capacity;
    s.information_length = info_capacity;
    return s;
  };
  rh_state s = state_with(q, q * q, true, true);
  expect_failure(rh_model_get_state(f.model, nullptr), RH_INVALID_ARGUMENT, "rh_model_get_state", f.model, f.before);
  s = state_with(q - 1, q * q, true, true);
  expect_failure(rh_model_get_state(f.model, &s), RH_INVALID_ARGUMENT, "rh_model_get_state", f.model, f.before);
  CHECK(s.coefficients_length == q - 1);  // outputs untouched on failure
  s = state_with(q, q * q - 1, true, true);
  expect_failure(rh_model_get_state(f.model, &s), RH_INVALID_ARGUMENT, "rh_model_get_state", f.model, f.before);
  s = state_with(-1, q * q, true, true);
  expect_failure(rh_model_get_state(f.model, &s), RH_INVALID_ARGUMENT, "rh_model_get_state", f.model, f.before);
  s = state_with(q, q * q, true, false);
  expect_failure(rh_model_get_state(f.model, &s), RH_INVALID_ARGUMENT, "rh_model_get_state", f.model, f.before);
  s = state_with(q, q * q, true, true);
  s.reserved0 = 3;
  expect_failure(rh_model_get_state(f.model, &s), RH_INVALID_ARGUMENT, "rh_model_get_state", f.model, f.before);
  s = state_with(q, q * q, true, true);
  s.abi_version = RH_MAKE_ABI_VERSION(2, 0);
  expect_failure(rh_model_get_state(f.model, &s), RH_VERSION_MISMATCH, "rh_model_get_state", f.model, f.before);
}

TEST_CASE("rh_model_set_state") {
  Fitted f;
  // Start from the model's own exported state, then spoil one thing at a time.
  std::vector<double> coef = f.before.coefficients, info = f.before.information;
  auto good = [&]() {
    rh_state s = f.before.scalars;
    s.coefficients = coef.data();
    s.information = info.data();
    return s;
  };
  {
    // Sanity: the unspoiled state imports, and (diagnostics aside) nothing changes.
    Model other;
    const rh_state s = good();
    REQUIRE(rh_model_set_state(other, &s) == RH_SUCCESS);
  }
  struct StateCase {
    const char* name;
    rh_status want;
    std::function<void(rh_state&)> spoil;
  };
  const std::vector<StateCase> cases = {
      {"other ABI major", RH_VERSION_MISMATCH, [](rh_state& s) { s.abi_version = RH_MAKE_ABI_VERSION(2, 0); }},
      {"struct_size below ABI 1.0's", RH_VERSION_MISMATCH,
       [](rh_state& s) { s.struct_size = offsetof(rh_state, score_variance) - 8; }},
      {"reserved0", RH_INVALID_ARGUMENT, [](rh_state& s) { s.reserved0 = 1; }},
      {"fit_intercept 2", RH_INVALID_ARGUMENT, [](rh_state& s) { s.fit_intercept = 2; }},
      {"coefficients NULL", RH_INVALID_ARGUMENT, [](rh_state& s) { s.coefficients = nullptr; }},
      {"information NULL", RH_INVALID_ARGUMENT, [](rh_state& s) { s.information = nullptr; }},
      {"negative coefficients_length", RH_INVALID_ARGUMENT, [](rh_state& s) { s.coefficients_length = -1; }},
      {"negative information_length", RH_INVALID_ARGUMENT, [](rh_state& s) { s.information_length = -16; }},
      {"information_length not q squared", RH_INVALID_STATE, [](rh_state& s) { s.information_length -= 1; }},
      {"coefficients_length absurd", RH_INVALID_STATE,
       [](rh_state& s) { s.coefficients_length = std::int64_t{1} << 40; }},
      {"q does not match n_features", RH_INVALID_STATE,
       [](rh_state& s) {
         s.coefficients_length = 3;
         s.information_length = 9;
       }},
      {"n_features negative", RH_INVALID_STATE, [](rh_state& s) { s.n_features = -1; }},
      {"fit_intercept differs from the config", RH_INVALID_STATE, [](rh_state& s) { s.fit_intercept = 0; }},
      {"NaN coefficient", RH_INVALID_STATE, [&](rh_state&) { coef[1] = kNaN; }},
      {"Inf information", RH_INVALID_STATE, [&](rh_state&) { info[5] = kInf; }},
      {"negative n_samples_seen", RH_INVALID_STATE, [](rh_state& s) { s.n_samples_seen = -1; }},
      {"negative batch_count", RH_INVALID_STATE, [](rh_state& s) { s.batch_count = -2; }},
      {"negative weight_sum", RH_INVALID_STATE, [](rh_state& s) { s.weight_sum = -1; }},
      {"NaN previous_lambda", RH_INVALID_STATE, [](rh_state& s) { s.previous_lambda = kNaN; }},
      {"samples without weight", RH_INVALID_STATE, [](rh_state& s) { s.weight_sum = 0; }},
      // Nothing seen, but fitted coefficients and information: the next batch would silently ignore them.
      {"empty state with content", RH_INVALID_STATE,
       [](rh_state& s) {
         s.n_samples_seen = 0;
         s.batch_count = 0;
         s.weight_sum = 0;
         s.previous_lambda = 0;
       }},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    coef = f.before.coefficients;
    info = f.before.information;
    rh_state s = good();
    c.spoil(s);
    expect_failure(rh_model_set_state(f.model, &s), c.want, "rh_model_set_state", f.model, f.before);
  }
  expect_failure(rh_model_set_state(f.model, nullptr), RH_INVALID_ARGUMENT, "rh_model_set_state", f.model, f.before);
}

TEST_CASE("checkpoint entry points") {
  Fitted f;
  std::vector<std::uint8_t> bytes = checkpoint_of(f.model);
  const auto n = static_cast<std::int64_t>(bytes.size());
  std::int64_t size = 12345;
  std::vector<std::uint8_t> buffer(bytes.size());
  expect_failure(rh_model_save_checkpoint(f.model, buffer.data(), n, nullptr), RH_INVALID_ARGUMENT,
                 "rh_model_save_checkpoint", f.model, f.before);
  expect_failure(rh_model_save_checkpoint(f.model, nullptr, -1, &size), RH_INVALID_ARGUMENT,
                 "rh_model_save_checkpoint", f.model, f.before);
  expect_failure(rh_model_save_checkpoint(f.model, buffer.data(), n - 1, &size), RH_INVALID_ARGUMENT,
                 "rh_model_save_checkpoint", f.model, f.before);
  CHECK(size == 12345);
  CHECK(std::all_of(buffer.begin(), buffer.end(), [](std::uint8_t b) { return b == 0; }));
  expect_failure(rh_model_save_checkpoint_file(f.model, nullptr), RH_INVALID_ARGUMENT,
                 "rh_model_save_checkpoint_file", f.model, f.before);
  expect_failure(rh_model_save_checkpoint_file(f.model, "no/such/directory/model.rhckpt"), RH_INVALID_ARGUMENT,
                 "rh_model_save_checkpoint_file", f.model, f.before);

  // Loading into the model itself would be a no-op when valid; every invalid input must leave it as it was.
  Model other;
  partial_fit(other, make_data(kRows, kCols, 99), RH_DTYPE_F64);
  const std::vector<std::uint8_t> foreign = checkpoint_of(other);
  expect_failure(rh_model_load_checkpoint(f.model, nullptr, n), RH_INVALID_ARGUMENT, "rh_model_load_checkpoint",
                 f.model, f.before);
  expect_failure(rh_model_load_checkpoint(f.model, foreign.data(), -1), RH_INVALID_ARGUMENT,
                 "rh_model_load_checkpoint", f.model, f.before);
  expect_failure(rh_model_load_checkpoint(f.model, foreign.data(), 0), RH_CORRUPT_DATA, "rh_model_load_checkpoint",
                 f.model, f.before);
  expect_failure(rh_model_load_checkpoint(f.model, nullptr, 0), RH_CORRUPT_DATA, "rh_model_load_checkpoint",
                 f.model, f.before);
  std::vector<std::uint8_t> spoiled = foreign;
  spoiled[spoiled.size() / 2] ^= 0x10;
  expect_failure(rh_model_load_checkpoint(f.model, spoiled.data(), static_cast<std::int64_t>(spoiled.size())),
                 RH_CORRUPT_DATA, "rh_model_load_checkpoint", f.model, f.before);
  spoiled = foreign;
  spoiled[8] = 3;  // format version 3
  expect_failure(rh_model_load_checkpoint(f.model, spoiled.data(), static_cast<std::int64_t>(spoiled.size())),
                 RH_VERSION_MISMATCH, "rh_model_load_checkpoint", f.model, f.before);
  {
    Model f32(RH_DTYPE_F32);
    partial_fit(f32, make_data(kRows, kCols, 5), RH_DTYPE_F32);
    const std::vector<std::uint8_t> other_dtype = checkpoint_of(f32);
    expect_failure(rh_model_load_checkpoint(f.model, other_dtype.data(), static_cast<std::int64_t>(other_dtype.size())),
                   RH_INVALID_ARGUMENT, "rh_model_load_checkpoint", f.model, f.before);
  }
  expect_failure(rh_model_load_checkpoint_file(f.model, nullptr), RH_INVALID_ARGUMENT,
                 "rh_model_load_checkpoint_file", f.model, f.before);
  expect_failure(rh_model_load_checkpoint_file(f.model, "no_such_checkpoint.rhckpt"), RH_INVALID_ARGUMENT,
                 "rh_model_load_checkpoint_file", f.model, f.before);
  expect_failure(rh_model_load_checkpoint_file(f.model, "."), RH_INVALID_ARGUMENT, "rh_model_load_checkpoint_file",
                 f.model, f.before);
  const std::string garbage_name = "bad_input_garbage_" + std::to_string(space_under_test()) + ".rhckpt";
  const char* garbage = garbage_name.c_str();
  if (std::FILE* fp = std::fopen(garbage, "wb")) {
    std::fputs("not a checkpoint at all, just text", fp);
    std::fclose(fp);
  }
  expect_failure(rh_model_load_checkpoint_file(f.model, garbage), RH_CORRUPT_DATA, "rh_model_load_checkpoint_file",
                 f.model, f.before);
  std::remove(garbage);
}

}  // TEST_SUITE
