// The model-group rows of the bad-input table (docs/bad-input.md, "Model groups"): each tried through
// rh::RegressorGroup and the rh_group_* calls, as bad_input_table.cpp tries the model rows.
#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bad_input_support.hpp"

namespace bad_input {
namespace {

// The groups a group row is tried on, one per API, from the same data: kModels models of kCols features, fitted on
// two batches (every model has rows in both), or fresh, or none (the row creates its own).
struct Groups {
  rh::RegressorGroup cpp;
  Group c;
  explicit Groups(Start start)
      : cpp(cpp_space(), rh::Dtype::f64, cpp_config(Start::fitted), kModels, kCols),
        c(c_config(Start::fitted), kModels, kCols) {
    if (start != Start::fitted) return;
    for (std::uint64_t seed : {1, 2}) {
      Input in;  // its offsets
      const Data d = make_data(kRows, kCols, seed);
      cpp.partial_fit(rh::group_batch(d.x.data(), d.y.data(), in.offsets.data(), kModels, kCols));
      Arrays a;
      const rh_batch b = make_batch(d, RH_DTYPE_F64, a);
      REQUIRE_MESSAGE(rh_group_partial_fit(c, &b, in.offsets.data(), kModels + 1, nullptr) == RH_SUCCESS,
                      rh_last_error());
    }
  }
};

struct GroupRow {
  std::string input;
  rh_status want;  // of the call; with `marked`, of that model (the call succeeds)
  Start start;
  std::function<void(rh::RegressorGroup&, Input&)> cpp;  // empty: no such call in the C++ API
  std::function<rh_status(rh_group*, Input&)> c;         // empty: no such call in the C ABI
  bool c_checks_first = false;                           // as Row's
  // A model's own bad rows: partial_fit succeeds, model `marked` keeps its state and diagnostics and its status says
  // why (rh_group_model_status, RegressorGroup::status), and the other models commit. -1: the call fails instead.
  std::int64_t marked = -1;
};

GroupRow group_creation(const std::string& input, rh_status want, std::int64_t n_models, std::int64_t p,
                        bool inference = false) {
  return GroupRow{input, want, Start::none,
                  [=](rh::RegressorGroup&, Input&) {
                    rh::Config config;
                    config.inference = inference;
                    rh::RegressorGroup(cpp_space(), rh::Dtype::f64, config, n_models, p);
                  },
                  [=](rh_group*, Input&) {
                    rh_config c = make_config();
                    c.inference = inference ? 1 : 0;
                    rh_group* out = nullptr;
                    const rh_status s = rh_group_create(RH_ABI_VERSION, &c, n_models, p, &out);
                    if (s == RH_SUCCESS) rh_group_destroy(out);
                    return s;
                  }};
}

// partial_fit with the batch spoiled by `spoil`, in both APIs; marked: the model whose rows it spoils.
GroupRow group_fit_row(const std::string& input, rh_status want, const std::function<void(Input&)>& spoil,
                       std::int64_t marked = -1) {
  return GroupRow{input, want, Start::fitted,
                  [spoil](rh::RegressorGroup& g, Input& in) {
                    spoil(in);
                    g.partial_fit(in.group());
                  },
                  [spoil](rh_group* g, Input& in) {
                    spoil(in);
                    return rh_group_partial_fit(g, &in.c(), in.offsets.data(),
                                                static_cast<std::int64_t>(in.offsets.size()), nullptr);
                  },
                  false, marked};
}

GroupRow group_c_only(const std::string& input, rh_status want, const std::function<rh_status(rh_group*, Input&)>& c,
                      Start start = Start::fitted) {
  return GroupRow{input, want, start, nullptr, c};
}

// The checkpoint of another group (fitted on other data), as bytes.
std::vector<std::uint8_t> other_group_checkpoint(rh::Dtype dtype = rh::Dtype::f64) {
  rh::RegressorGroup other(cpp_space(), dtype, rh::Config(), kModels, kCols);
  const Data d = make_data(kRows, kCols, 99);
  const Input in;
  if (dtype == rh::Dtype::f64) {
    other.partial_fit(rh::group_batch(d.x.data(), d.y.data(), in.offsets.data(), kModels, kCols));
  } else {
    const std::vector<float> x(d.x.begin(), d.x.end()), y(d.y.begin(), d.y.end());
    other.partial_fit(rh::group_batch(x.data(), y.data(), in.offsets.data(), kModels, kCols));
  }
  return rh::save_checkpoint(other);
}

GroupRow group_load_row(const std::string& input, rh_status want,
                        const std::function<std::vector<std::uint8_t>()>& bytes) {
  return GroupRow{input, want, Start::fitted,
                  [bytes](rh::RegressorGroup& g, Input&) {
                    const std::vector<std::uint8_t> b = bytes();
                    rh::load_checkpoint(g, b.data(), b.size());
                  },
                  [bytes](rh_group* g, Input&) {
                    const std::vector<std::uint8_t> b = bytes();
                    return rh_group_load_checkpoint(g, b.data(), static_cast<std::int64_t>(b.size()));
                  }};
}

std::vector<GroupRow> group_rows() {
  return {
      group_creation("create: 0 models", RH_INVALID_ARGUMENT, 0, kCols),
      group_creation("create: 0 features", RH_INVALID_ARGUMENT, kModels, 0),
      group_creation("create: 64 features and the intercept (q = 65)", RH_INVALID_ARGUMENT, kModels, 64),
      group_creation("create: inference", RH_UNAVAILABLE, kModels, kCols, true),
      group_c_only("create: the group output is NULL", RH_INVALID_ARGUMENT, [](rh_group*, Input&) {
        const rh_config c = make_config();
        return rh_group_create(RH_ABI_VERSION, &c, kModels, kCols, nullptr);
      }, Start::none),
      group_c_only("partial_fit: a NULL group handle", RH_INVALID_ARGUMENT, [](rh_group*, Input& i) {
        return rh_group_partial_fit(nullptr, &i.c(), i.offsets.data(), kModels + 1, nullptr);
      }),
      group_c_only("partial_fit: an invented group handle", RH_INVALID_ARGUMENT, [](rh_group*, Input& i) {
        return rh_group_partial_fit(reinterpret_cast<rh_group*>(std::uintptr_t{0x5eed}), &i.c(), i.offsets.data(),
                                    kModels + 1, nullptr);
      }),
      group_c_only("partial_fit: the batch is NULL", RH_INVALID_ARGUMENT, [](rh_group* g, Input& i) {
        return rh_group_partial_fit(g, nullptr, i.offsets.data(), kModels + 1, nullptr);
      }),
      GroupRow{"partial_fit: the offsets are NULL", RH_INVALID_ARGUMENT, Start::fitted,
               [](rh::RegressorGroup& g, Input& i) {
                 rh::GroupBatch b = i.group();
                 b.offsets = nullptr;
                 g.partial_fit(b);
               },
               [](rh_group* g, Input& i) { return rh_group_partial_fit(g, &i.c(), nullptr, kModels + 1, nullptr); },
               true},
      group_c_only("partial_fit: offsets_length 3 for 3 models", RH_INVALID_ARGUMENT, [](rh_group* g, Input& i) {
        return rh_group_partial_fit(g, &i.c(), i.offsets.data(), kModels, nullptr);
      }),
      group_fit_row("partial_fit: offsets start at 1", RH_INVALID_ARGUMENT, [](Input& i) { i.offsets[0] = 1; }),
      group_fit_row("partial_fit: offsets decrease (0, 20, 10, 40)", RH_INVALID_ARGUMENT, [](Input& i) {
        i.offsets = {0, 20, 10, kRows};
      }),
      group_fit_row("partial_fit: offsets end at 41, past the 40 rows", RH_INVALID_ARGUMENT,
                    [](Input& i) { i.offsets.back() = kRows + 1; }),
      group_fit_row("partial_fit: offsets end at 39, before the 40th row", RH_INVALID_ARGUMENT,
                    [](Input& i) { i.offsets.back() = kRows - 1; }),
      group_fit_row("partial_fit: 4 columns for a group of 3 features", RH_INVALID_ARGUMENT,
                    [](Input& i) { i.c().cols = 4; }),
      group_fit_row("partial_fit: X is NULL", RH_INVALID_ARGUMENT, [](Input& i) { i.c().x = nullptr; }),
      group_fit_row("partial_fit: float32 data for a float64 group", RH_INVALID_ARGUMENT,
                    [](Input& i) { i.c().dtype = RH_DTYPE_F32; }),
      group_fit_row("partial_fit: NaN in X in model 0's rows", RH_INVALID_ARGUMENT, [](Input& i) { i.x()[7] = kNaN; }, 0),
      group_fit_row("partial_fit: +Inf in y in model 2's rows", RH_INVALID_ARGUMENT, [](Input& i) { i.y()[30] = kInf; },
                    2),
      group_fit_row("partial_fit: a negative weight in model 1's rows", RH_INVALID_ARGUMENT,
                    [](Input& i) { i.w()[15] = -0.5; }, 1),
      group_fit_row("partial_fit: model 1's weights all zero", RH_INVALID_ARGUMENT,
                    [](Input& i) { std::fill(i.arrays.w64.begin() + 14, i.arrays.w64.begin() + 26, 0.0); }, 1),
      GroupRow{"predict: a model never fitted", RH_INVALID_STATE, Start::fresh,
               [](rh::RegressorGroup& g, Input& i) { g.predict(i.group(), i.out.data(), rh::Dtype::f64); },
               [](rh_group* g, Input& i) {
                 return rh_group_predict(g, &i.c(), i.offsets.data(), kModels + 1, i.out.data(), kRows);
               }},
      group_c_only("predict: out_length 39 for 40 rows", RH_INVALID_ARGUMENT, [](rh_group* g, Input& i) {
        return rh_group_predict(g, &i.c(), i.offsets.data(), kModels + 1, i.out.data(), kRows - 1);
      }),
      GroupRow{"state of model 3 of 3", RH_INVALID_ARGUMENT, Start::fitted,
               [](rh::RegressorGroup& g, Input&) { g.state(kModels); },
               [](rh_group* g, Input&) {
                 rh_state st;
                 RH_STRUCT_INIT(&st);
                 return rh_group_get_state(g, kModels, &st);
               }},
      GroupRow{"diagnostics of a model before its first batch", RH_INVALID_STATE, Start::fresh,
               [](rh::RegressorGroup& g, Input&) { g.diagnostics(1); },
               [](rh_group* g, Input&) {
                 rh_diagnostics d;
                 RH_STRUCT_INIT(&d);
                 return rh_group_diagnostics(g, 1, &d);
               }},
      GroupRow{"set_state: a NaN coefficient for model 1", RH_INVALID_STATE, Start::fitted,
               [](rh::RegressorGroup& g, Input&) {
                 rh::State st = g.state(1);
                 st.coefficients[1] = kNaN;
                 g.set_state(1, st);
               },
               [](rh_group* g, Input&) {
                 Snapshot s;
                 read_state(s, [g](rh_state* st) { return rh_group_get_state(g, 1, st); });
                 s.coefficients[1] = kNaN;
                 rh_state st = s.scalars;
                 st.coefficients = s.coefficients.data();
                 st.information = s.information.data();
                 st.score_variance = s.score_variance.data();
                 return rh_group_set_state(g, 1, &st);
               }},
      group_load_row("load: one byte of a model's state changed (checksum)", RH_CORRUPT_DATA,
                     [] { return spoiled(other_group_checkpoint(), 150, 0x42); }),
      group_load_row("load: the last byte cut off", RH_CORRUPT_DATA, [] {
        std::vector<std::uint8_t> b = other_group_checkpoint();
        b.pop_back();
        return b;
      }),
      group_load_row("load: a model's checkpoint, not a group's", RH_CORRUPT_DATA, [] { return other_checkpoint(); }),
      group_load_row("load: a float32 group checkpoint into a float64 group", RH_INVALID_ARGUMENT,
                     [] { return other_group_checkpoint(rh::Dtype::f32); }),
      GroupRow{"load a file that does not exist", RH_INVALID_ARGUMENT, Start::fitted,
               [](rh::RegressorGroup& g, Input&) { rh::load_checkpoint_file(g, "missing.rhckpt"); },
               [](rh_group* g, Input&) { return rh_group_load_checkpoint_file(g, "missing.rhckpt"); }},
  };
}

// Everything observable about a group through the C++ API (its checkpoint, and each model's diagnostics and
// status), or about model m alone (its state and diagnostics), as bytes.
std::string cpp_model_fingerprint(const rh::RegressorGroup& g, std::int64_t m) {
  const rh::Checkpoint cp{g.config(), g.dtype(), g.state(m)};
  const std::vector<std::uint8_t> bytes = rh::encode_checkpoint(cp);
  std::string s(bytes.begin(), bytes.end());
  try {
    const rh::Diagnostics& d = g.diagnostics(m);
    s.append(reinterpret_cast<const char*>(&d), sizeof d);
  } catch (const rh::Error&) {
    s += "no diagnostics";
  }
  return s;
}
std::string cpp_group_fingerprint(const rh::RegressorGroup& g) {
  const std::vector<std::uint8_t> bytes = rh::save_checkpoint(g);
  std::string s(bytes.begin(), bytes.end());
  for (std::int64_t m = 0; m < g.n_models(); ++m) {
    s += cpp_model_fingerprint(g, m);
    const std::optional<rh::Errc> status = g.status(m);
    s += status ? std::to_string(static_cast<int>(*status)) + g.status_message(m) : "ok";
  }
  return s;
}
const char* group_afterwards(const GroupRow& row) {
  if (row.marked >= 0) return "that model unchanged, bit for bit (its status says why); the others commit";
  switch (row.start) {
    case Start::fitted:
    case Start::inference: return "unchanged, bit for bit";
    case Start::fresh: return "unchanged: no model fitted";
    case Start::none: return "no group is created";
  }
  return "?";
}

}  // namespace

std::string group_section(int& rows) {
  std::ostringstream group_table;
  group_table << "\n## Model groups\n\n"
                 "The same for `rh::RegressorGroup` and the `rh_group_*` calls (docs/api.md and docs/abi.md, \"Model "
                 "groups\"). \"Fitted\" rows start from groups of 3 models of 3 features (q = 4) fitted on two batches; "
                 "the batch's 40 rows are the model rows' data, with offsets 0, 14, 26, 40 (model 0: rows 0-13, model 1: "
                 "14-25, model 2: 26-39). A bad call changes nothing: each group is compared bit for bit (its checkpoint, "
                 "and every model's state, diagnostics and status). A model's own bad rows are not a bad call: the call "
                 "succeeds, that model keeps its state and diagnostics bit for bit and its status "
                 "(`rh_group_model_status`, `RegressorGroup::status`) is the one shown, with the message shown (the same "
                 "in both APIs), and the other models commit.\n\n"
                 "| # | Input | API | Status | Message (C ABI; the C++ API's is the same without the function name) | "
                 "Group afterwards |\n|---:|---|---|---|---|---|\n";
  for (const GroupRow& row : group_rows()) {
    CAPTURE(row.input);
    Groups groups(row.start);
    const std::string cpp_before = cpp_group_fingerprint(groups.cpp);
    const std::vector<ModelView> c_before = views(groups.c);
    const std::vector<std::uint8_t> c_checkpoint_before = checkpoint_of(groups.c);
    const bool marked = row.marked >= 0;
    const auto committed_elsewhere = [&row](std::int64_t m, std::int64_t batches) {
      return m == row.marked || batches == 3;  // the rows' groups had two batches before
    };
    std::optional<CppOutcome> cpp;
    std::string message;
    if (row.cpp) {
      const std::string model_before = marked ? cpp_model_fingerprint(groups.cpp, row.marked) : "";
      cpp = try_cpp(row, groups.cpp);
      if (marked) {
        CHECK_MESSAGE(!cpp->threw, cpp->message);
        const std::optional<rh::Errc> status = groups.cpp.status(row.marked);
        CHECK((status && static_cast<rh_status>(*status) == row.want));
        CHECK_MESSAGE(cpp_model_fingerprint(groups.cpp, row.marked) == model_before, "the C++ model changed");
        for (std::int64_t m = 0; m < kModels; ++m) CHECK(committed_elsewhere(m, groups.cpp.state(m).batch_count));
        cpp->message = groups.cpp.status_message(row.marked);
      } else {
        CHECK_MESSAGE(cpp->threw, "the C++ API accepted it");
        CHECK_MESSAGE(static_cast<rh_status>(cpp->code) == row.want, cpp->message);
        CHECK_MESSAGE(cpp_group_fingerprint(groups.cpp) == cpp_before, "the C++ group changed");
      }
      message = cpp->message;
    }
    if (row.c) {
      Input in;
      const rh_status got = row.c(groups.c, in);
      if (marked) {
        CHECK_MESSAGE(got == RH_SUCCESS, "got " << status_name(got) << ": " << rh_last_error());
        const ModelView v = view(groups.c, row.marked);
        CHECK(v.status == row.want);
        CHECK_MESSAGE(v.state == c_before[static_cast<std::size_t>(row.marked)].state, "the C model changed");
        if (cpp) CHECK(v.message == cpp->message);
        for (std::int64_t m = 0; m < kModels; ++m)
          CHECK(committed_elsewhere(m, view(groups.c, m).state.scalars.batch_count));
        message = v.message;
      } else {
        const std::string c_message = rh_last_error();
        CHECK_MESSAGE(got == row.want, "got " << status_name(got) << ": " << c_message);
        const std::size_t colon = c_message.find(": ");
        REQUIRE(colon != std::string::npos);
        CHECK(c_message.rfind("rh_group_", 0) == 0);
        if (cpp && !row.c_checks_first) CHECK(c_message.substr(colon + 2) == cpp->message);
        CHECK_MESSAGE(views(groups.c) == c_before, "the C group changed");
        CHECK_MESSAGE(checkpoint_of(groups.c) == c_checkpoint_before, "the C group changed");
        message = c_message;
      }
    }
    const char* api = row.cpp && row.c ? "C++, C" : row.cpp ? "C++" : "C";
    group_table << "| G" << ++rows << " | " << escaped(row.input) << " | " << api << " | ";
    if (marked) group_table << "`RH_SUCCESS`; model " << row.marked << ": ";
    group_table << "`" << status_symbol(row.want) << "` | `" << escaped(message) << "`";
    if (row.c_checks_first) group_table << " (C++: `" << escaped(cpp->message) << "`)";
    group_table << " | " << group_afterwards(row) << " |\n";
  }
  return group_table.str();
}

}  // namespace bad_input
