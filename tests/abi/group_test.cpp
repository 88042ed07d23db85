// Model groups through the C ABI (rh_group_*): ragged batches with empty models, per-model errors that leave their
// model as it was, and bad calls refused with the whole group unchanged (compared bit for bit).
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "abi_test_support.hpp"
#include "common/float32_path.hpp"

using namespace abi_test;

namespace {

// Model m's rows of a ragged batch, as a Data of their own.
Data rows_of(const Ragged& r, std::size_t m) {
  Data d;
  d.cols = r.data.cols;
  d.rows = r.offsets[m + 1] - r.offsets[m];
  const auto p = static_cast<std::size_t>(r.data.cols);
  const auto r0 = static_cast<std::size_t>(r.offsets[m]), r1 = static_cast<std::size_t>(r.offsets[m + 1]);
  d.x.assign(r.data.x.begin() + static_cast<std::ptrdiff_t>(r0 * p), r.data.x.begin() + static_cast<std::ptrdiff_t>(r1 * p));
  d.y.assign(r.data.y.begin() + static_cast<std::ptrdiff_t>(r0), r.data.y.begin() + static_cast<std::ptrdiff_t>(r1));
  return d;
}

// The same rows as float32 holds them, for a float64 fit of exactly the values a float32 model sees.
Data rounded_to_float(Data d) {
  for (double& v : d.x) v = static_cast<double>(static_cast<float>(v));
  for (double& v : d.y) v = static_cast<double>(static_cast<float>(v));
  return d;
}

}  // namespace

TEST_SUITE("group") {

TEST_CASE("ragged batches with empty models: each model is the single-model fit of its rows") {
  // Every penalty and dtype (a group takes them all), against a Regressor on the same space within the group's floor
  // (docs/api.md, "Model groups").
  struct Case {
    std::int32_t dtype, penalty;
    double rtol, atol;
  };
  std::vector<Case> cases;
  for (const std::int32_t penalty : known_penalties()) {
    cases.push_back({RH_DTYPE_F64, penalty, 1e-8, 2e-9});
    cases.push_back({RH_DTYPE_F32, penalty, 3e-4, 3e-5});
  }
  for (const Case c : cases) {
    CAPTURE(c.dtype);
    CAPTURE(penalty_label(c.penalty));
    const std::int64_t p = 4;
    const rh_config config = make_config(c.dtype, c.penalty);
    Group g(config, 4, p);
    std::vector<std::unique_ptr<Model>> singles, wide;  // wide: float64 fits of the float32 cases' rows
    const rh_config config64 = make_config(RH_DTYPE_F64, c.penalty);
    for (int m = 0; m < 4; ++m) {
      singles.push_back(std::make_unique<Model>(config));
      wide.push_back(std::make_unique<Model>(config64));
    }
    // Model 1 has no rows in the first batch, model 2 none ever, model 3 none in the second.
    const std::vector<Ragged> batches = {ragged({60, 0, 0, 45}, p, 100), ragged({50, 70, 0, 0}, p, 200),
                                         ragged({40, 55, 0, 35}, p, 300)};
    for (const Ragged& r : batches) {
      std::int64_t committed = -1;
      REQUIRE_MESSAGE(group_fit(g, r, c.dtype, &committed) == RH_SUCCESS, rh_last_error());
      std::int64_t with_rows = 0;
      for (std::size_t m = 0; m < 4; ++m)
        if (r.offsets[m + 1] > r.offsets[m]) {
          ++with_rows;
          partial_fit(*singles[m], rows_of(r, m), c.dtype);
          partial_fit(*wide[m], rounded_to_float(rows_of(r, m)), RH_DTYPE_F64);
        }
      CHECK(committed == with_rows);
    }
    for (std::int64_t m = 0; m < 4; ++m) {
      CAPTURE(m);
      const ModelView v = view(g, m);
      const Snapshot s = snapshot(*singles[static_cast<std::size_t>(m)]);
      CHECK(v.status == RH_SUCCESS);
      CHECK(v.message.empty());
      CHECK(v.state.scalars.n_features == s.scalars.n_features);
      CHECK(v.state.scalars.n_samples_seen == s.scalars.n_samples_seen);
      CHECK(v.state.scalars.batch_count == s.scalars.batch_count);
      CHECK(v.state.scalars.weight_sum == s.scalars.weight_sum);
      REQUIRE(v.state.coefficients.size() == s.coefficients.size());
      const bool f64 = c.dtype == RH_DTYPE_F64;
      bool same_path = true;  // float32: within the floors of the single model (else it took other rounding steps)
      if (f64) {
        for (std::size_t j = 0; j < s.coefficients.size(); ++j)
          CHECK(std::abs(v.state.coefficients[j] - s.coefficients[j]) <= c.atol + c.rtol * std::abs(s.coefficients[j]));
      } else {
        // tests/common/float32_path.hpp: on the single model's path, or as near the float64 fit as it
        const rh::test::Float32Path path = rh::test::float32_path(
            v.state.coefficients, s.coefficients, snapshot(*wide[static_cast<std::size_t>(m)]).coefficients, 1.0,
            c.rtol, c.atol);
        same_path = path.same;
        CHECK((path.same || path.near_w));
      }
      if (m == 2) {  // never had rows: empty, no diagnostics
        CHECK(v.state.scalars.n_features == 0);
        CHECK(v.state.diagnostics_status == RH_INVALID_STATE);
      } else {
        CHECK(v.state.diagnostics_status == RH_SUCCESS);
        // float32: which of the last tiny steps is accepted is rounding's choice (docs/api.md), so the counts may
        // differ where the group sums in another order than the single model, and where it took other steps, also
        // whether the last one met the tolerance.
        if (f64) CHECK(v.state.diagnostics.iterations == s.diagnostics.iterations);
        if (same_path) CHECK(v.state.diagnostics.converged == s.diagnostics.converged);
      }
    }
    // Predictions: each row by its model; a model never fitted may have no rows.
    const Ragged probe = ragged({3, 2, 0, 4}, p, 900);
    Arrays a;
    const rh_batch b = make_batch(probe.data, c.dtype, a);
    std::vector<double> out64(9);
    std::vector<float> out32(9);
    void* out = c.dtype == RH_DTYPE_F64 ? static_cast<void*>(out64.data()) : static_cast<void*>(out32.data());
    REQUIRE_MESSAGE(rh_group_predict(g, &b, probe.offsets.data(), 5, out, 9) == RH_SUCCESS, rh_last_error());
    for (std::size_t m = 0; m < 4; ++m) {
      if (probe.offsets[m + 1] == probe.offsets[m]) continue;
      Arrays sa;
      const rh_batch sb = make_batch(rows_of(probe, m), c.dtype, sa);
      std::vector<double> e64(5);
      std::vector<float> e32(5);
      void* expected = c.dtype == RH_DTYPE_F64 ? static_cast<void*>(e64.data()) : static_cast<void*>(e32.data());
      REQUIRE(rh_model_predict(*singles[m], &sb, expected, 5) == RH_SUCCESS);
      for (std::int64_t i = 0; i < sb.rows; ++i) {
        const auto k = static_cast<std::size_t>(probe.offsets[m] + i), ki = static_cast<std::size_t>(i);
        const double got = c.dtype == RH_DTYPE_F64 ? out64[k] : out32[k];
        double want = e64[ki];
        if (c.dtype == RH_DTYPE_F32) {  // by the model's own coefficients (the single model may have taken other steps)
          const std::vector<double> beta = view(g, static_cast<std::int64_t>(m)).state.coefficients;  // intercept last
          want = beta.back();
          for (std::size_t j = 0; j < static_cast<std::size_t>(p); ++j)
            want += static_cast<double>(static_cast<float>(
                probe.data.x[static_cast<std::size_t>((probe.offsets[m] + i) * p) + j])) * beta[j];
        }
        CHECK(std::abs(got - want) <= 10 * (c.atol + c.rtol * std::abs(want)));
      }
    }
    // A batch without rows commits nothing and changes nothing.
    const std::vector<ModelView> before = views(g);
    std::int64_t committed = -1;
    REQUIRE(group_fit(g, ragged({0, 0, 0, 0}, p, 1), c.dtype, &committed) == RH_SUCCESS);
    CHECK(committed == 0);
    CHECK(views(g) == before);
  }
}

TEST_CASE("one model's NaN marks that model only, and leaves it as it was") {
  const std::int64_t p = 3;
  Group g(make_config(), 3, p);
  REQUIRE(group_fit(g, ragged({40, 40, 40}, p, 7), RH_DTYPE_F64) == RH_SUCCESS);
  const std::vector<ModelView> before = views(g);
  Ragged r = ragged({30, 30, 30}, p, 8);
  r.data.y[static_cast<std::size_t>(r.offsets[1]) + 4] = std::numeric_limits<double>::quiet_NaN();  // model 1's
  std::int64_t committed = -1;
  REQUIRE(group_fit(g, r, RH_DTYPE_F64, &committed) == RH_SUCCESS);  // per-model failures are not call failures
  CHECK(committed == 2);
  CHECK(std::string(rh_last_error()).empty());
  const std::vector<ModelView> after = views(g);
  CHECK(after[1].state == before[1].state);  // state and diagnostics bit for bit
  CHECK(after[1].status == RH_INVALID_ARGUMENT);
  CHECK(after[1].message.find("model 1") != std::string::npos);
  CHECK(after[1].message.find("NaN") != std::string::npos);
  CHECK(after[0].status == RH_SUCCESS);
  CHECK(after[2].status == RH_SUCCESS);
  CHECK(after[0].state.scalars.batch_count == 2);
  CHECK(after[2].state.scalars.batch_count == 2);
  CHECK(after[1].state.scalars.batch_count == 1);
  // A short message buffer gets the reason cut, NUL-terminated.
  rh_status status = RH_SUCCESS;
  char small[8];
  std::memset(small, 'x', sizeof small);
  REQUIRE(rh_group_model_status(g, 1, &status, small, sizeof small) == RH_SUCCESS);
  CHECK(status == RH_INVALID_ARGUMENT);
  CHECK(std::strlen(small) == sizeof small - 1);
  CHECK(after[1].message.compare(0, sizeof small - 1, small) == 0);
  REQUIRE(rh_group_model_status(g, 1, &status, nullptr, 0) == RH_SUCCESS);  // the message is optional
  // A batch without rows for model 1 keeps its status; its next batch with good rows clears it.
  REQUIRE(group_fit(g, ragged({10, 0, 10}, p, 9), RH_DTYPE_F64) == RH_SUCCESS);
  CHECK(view(g, 1).status == RH_INVALID_ARGUMENT);
  REQUIRE(group_fit(g, ragged({0, 10, 0}, p, 10), RH_DTYPE_F64, &committed) == RH_SUCCESS);
  CHECK(committed == 1);
  CHECK(view(g, 1).status == RH_SUCCESS);
  CHECK(view(g, 1).message.empty());
  CHECK(view(g, 1).state.scalars.batch_count == 2);
}

TEST_CASE("bad group calls are refused with a status and message, and change nothing") {
  const std::int64_t p = 3;
  Group g(make_config(), 3, p);
  REQUIRE(group_fit(g, ragged({20, 20, 20}, p, 11), RH_DTYPE_F64) == RH_SUCCESS);
  const std::vector<ModelView> before = views(g);
  Ragged r = ragged({10, 10, 10}, p, 12);
  Arrays a;
  const rh_batch good = make_batch(r.data, RH_DTYPE_F64, a);
  const std::int64_t* offsets = r.offsets.data();
  std::int64_t committed = -7;
  auto refused = [&](rh_status expected, rh_status got, const char* what) {
    CAPTURE(what);
    CHECK(got == expected);
    CHECK(std::string(rh_last_error()).size() > 0);
    CHECK(std::string(rh_group_last_error(g)) == rh_last_error());
    CHECK(committed == -7);  // outputs untouched
    CHECK(views(g) == before);
  };
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, nullptr, offsets, 4, &committed), "NULL batch");
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &good, nullptr, 4, &committed), "NULL offsets");
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &good, offsets, 3, &committed), "too few offsets");
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &good, offsets, 5, &committed), "too many offsets");
  {
    std::vector<std::int64_t> bad = r.offsets;
    bad[0] = 1;
    refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &good, bad.data(), 4, &committed), "offsets not from 0");
    bad = r.offsets;
    bad[1] = 25;
    refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &good, bad.data(), 4, &committed), "decreasing offsets");
    bad = r.offsets;
    bad[3] = 29;
    refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &good, bad.data(), 4, &committed), "offsets end short");
  }
  rh_batch b = good;
  b.cols = p + 1;
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &b, offsets, 4, &committed), "cols other than p");
  b = good;
  b.dtype = RH_DTYPE_F32;
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &b, offsets, 4, &committed), "dtype mismatch");
  b = good;
  b.x = nullptr;
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &b, offsets, 4, &committed), "NULL x");
  b = good;
  b.y = nullptr;
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &b, offsets, 4, &committed), "NULL y");
  b = good;
  b.memory = RH_MEMORY_DEVICE;
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &b, offsets, 4, &committed), "device memory");
  b = good;
  b.layout = 0;
  refused(RH_INVALID_ARGUMENT, rh_group_partial_fit(g, &b, offsets, 4, &committed), "zeroed layout");
  b = good;
  b.struct_size = 16;
  refused(RH_VERSION_MISMATCH, rh_group_partial_fit(g, &b, offsets, 4, &committed), "struct too small");
  b = good;
  b.abi_version = RH_MAKE_ABI_VERSION(RH_ABI_VERSION_MAJOR + 1, 0);
  refused(RH_VERSION_MISMATCH, rh_group_partial_fit(g, &b, offsets, 4, &committed), "another ABI major");

  // Predictions: the output, its length, and a model never fitted.
  std::vector<double> out(30, -1.0);
  refused(RH_INVALID_ARGUMENT, rh_group_predict(g, &good, offsets, 4, nullptr, 30), "NULL out");
  refused(RH_INVALID_ARGUMENT, rh_group_predict(g, &good, offsets, 4, out.data(), 29), "out too short");
  refused(RH_INVALID_ARGUMENT, rh_group_predict(g, &good, offsets, 2, out.data(), 30), "predict offsets_length");
  CHECK(out == std::vector<double>(30, -1.0));
  {
    Group fresh(make_config(), 3, p);
    CHECK(rh_group_predict(fresh, &good, offsets, 4, out.data(), 30) == RH_INVALID_STATE);
    CHECK(std::string(rh_last_error()).find("model 0") != std::string::npos);
    CHECK(out == std::vector<double>(30, -1.0));
  }

  // Per-model getters: model numbers, outputs, struct headers.
  rh_state st;
  RH_STRUCT_INIT(&st);
  refused(RH_INVALID_ARGUMENT, rh_group_get_state(g, 3, &st), "model out of range");
  refused(RH_INVALID_ARGUMENT, rh_group_get_state(g, -1, &st), "negative model");
  refused(RH_INVALID_ARGUMENT, rh_group_get_state(g, 0, nullptr), "NULL state");
  {
    std::vector<double> small(2);
    st.coefficients = small.data();
    st.coefficients_length = 2;
    st.information = small.data();
    st.information_length = 2;
    refused(RH_INVALID_ARGUMENT, rh_group_get_state(g, 0, &st), "state buffers too small");
    CHECK(st.n_features == 0);
  }
  rh_diagnostics d;
  RH_STRUCT_INIT(&d);
  refused(RH_INVALID_ARGUMENT, rh_group_diagnostics(g, 5, &d), "diagnostics of model 5");
  d.struct_size = 8;
  refused(RH_VERSION_MISMATCH, rh_group_diagnostics(g, 0, &d), "diagnostics struct too small");
  rh_status status = -3;
  char message[16];
  refused(RH_INVALID_ARGUMENT, rh_group_model_status(g, 3, &status, message, 16), "status of model 3");
  refused(RH_INVALID_ARGUMENT, rh_group_model_status(g, 0, nullptr, message, 16), "NULL model_status");
  refused(RH_INVALID_ARGUMENT, rh_group_model_status(g, 0, &status, message, 0), "message capacity 0");
  CHECK(status == -3);
  refused(RH_INVALID_ARGUMENT, rh_group_n_models(g, nullptr), "NULL n_models");
  refused(RH_INVALID_ARGUMENT, rh_group_n_features(g, nullptr), "NULL n_features");
  std::int64_t n = 0;
  REQUIRE(rh_group_n_features(g, &n) == RH_SUCCESS);
  CHECK(n == p);
  rh_config c;
  RH_STRUCT_INIT(&c);
  REQUIRE(rh_group_get_config(g, &c) == RH_SUCCESS);
  CHECK(c.space == space_under_test());
  CHECK(c.dtype == RH_DTYPE_F64);
  CHECK(std::string(rh_group_last_error(g)).empty());
}

TEST_CASE("group handles: creation refusals, dead and foreign handles") {
  rh_group* h = nullptr;
  const rh_config c = make_config();
  CHECK(rh_group_create(RH_ABI_VERSION, &c, 0, 3, &h) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_create(RH_ABI_VERSION, &c, 2, 0, &h) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_create(RH_ABI_VERSION, &c, 2, 64, &h) == RH_INVALID_ARGUMENT);  // q = 65 with the intercept
  CHECK(std::string(rh_last_error()).find("64") != std::string::npos);
  CHECK(rh_group_create(RH_ABI_VERSION, nullptr, 2, 3, &h) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_create(RH_ABI_VERSION, &c, 2, 3, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_create(RH_MAKE_ABI_VERSION(RH_ABI_VERSION_MAJOR + 1, 0), &c, 2, 3, &h) == RH_VERSION_MISMATCH);
  rh_config inference = c;
  inference.inference = 1;
  CHECK(rh_group_create(RH_ABI_VERSION, &inference, 2, 3, &h) == RH_UNAVAILABLE);
  rh_config bad = c;
  bad.tau = -1.0;
  CHECK(rh_group_create(RH_ABI_VERSION, &bad, 2, 3, &h) == RH_INVALID_ARGUMENT);
  CHECK(h == nullptr);  // never written by a failed creation

  CHECK(rh_group_destroy(nullptr) == RH_SUCCESS);
  REQUIRE(rh_group_create(RH_ABI_VERSION, &c, 2, 3, &h) == RH_SUCCESS);
  REQUIRE(h != nullptr);
  {
    // A model handle is not a group handle, nor the other way round, even while both live.
    Model m(c);
    std::int64_t n = 0;
    CHECK(rh_group_n_models(reinterpret_cast<rh_group*>(m.get()), &n) == RH_INVALID_ARGUMENT);
    CHECK(std::string(rh_last_error()).find("group handle") != std::string::npos);
    rh_config out;
    RH_STRUCT_INIT(&out);
    CHECK(rh_model_get_config(reinterpret_cast<rh_model*>(h), &out) == RH_INVALID_ARGUMENT);
  }
  REQUIRE(rh_group_destroy(h) == RH_SUCCESS);
  std::int64_t n = -1;
  CHECK(rh_group_n_models(h, &n) == RH_INVALID_ARGUMENT);  // dead
  CHECK(n == -1);
  CHECK(rh_group_destroy(h) == RH_INVALID_ARGUMENT);
  CHECK(std::string(rh_group_last_error(h)).find("not a live group handle") != std::string::npos);
  CHECK(std::string(rh_group_last_error(nullptr)).find("NULL") != std::string::npos);
}


TEST_CASE("group calls from several threads run one at a time, and a destroy waits for the call in flight") {
  const std::int64_t p = 3;
  rh_group* h = nullptr;
  const rh_config c = make_config();
  REQUIRE(rh_group_create(RH_ABI_VERSION, &c, 2, p, &h) == RH_SUCCESS);
  const Ragged r = ragged({20, 15}, p, 61);
  std::vector<rh_status> statuses[2];
  auto feed = [&](std::vector<rh_status>& out, int times) {
    for (int k = 0; k < times; ++k) {
      Arrays a;
      const rh_batch b = make_batch(r.data, RH_DTYPE_F64, a);
      out.push_back(rh_group_partial_fit(h, &b, r.offsets.data(), 3, nullptr));
    }
  };
  {
    std::thread t0(feed, std::ref(statuses[0]), 10), t1(feed, std::ref(statuses[1]), 10);
    t0.join();
    t1.join();
  }
  for (const auto& list : statuses)
    for (const rh_status s : list) CHECK(s == RH_SUCCESS);
  rh_state st;
  RH_STRUCT_INIT(&st);
  REQUIRE(rh_group_get_state(h, 1, &st) == RH_SUCCESS);
  CHECK(st.batch_count == 20);
  CHECK(st.n_samples_seen == 20 * 15);
  // A destroy while another thread keeps calling: each of its calls either ran whole or found the handle dead.
  std::vector<rh_status> late;
  std::thread caller([&] {
    for (int k = 0; k < 1000; ++k) {
      Arrays a;
      const rh_batch b = make_batch(r.data, RH_DTYPE_F64, a);
      late.push_back(rh_group_partial_fit(h, &b, r.offsets.data(), 3, nullptr));
      if (late.back() != RH_SUCCESS) break;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(rh_group_destroy(h) == RH_SUCCESS);
  caller.join();
  for (std::size_t k = 0; k + 1 < late.size(); ++k) CHECK(late[k] == RH_SUCCESS);
  if (!late.empty() && late.back() != RH_SUCCESS) CHECK(late.back() == RH_INVALID_ARGUMENT);
}

}  // TEST_SUITE("group")

namespace {

// Rewrites the CRC-32 that ends bytes [from, to) of b, over the bytes before it.
void reseal(std::vector<std::uint8_t>& b, std::size_t from, std::size_t to) {
  const std::uint32_t c = reference_crc32(b.data() + from, to - from - 4);
  for (std::size_t i = 0; i < 4; ++i) b.at(to - 4 + i) = static_cast<std::uint8_t>(c >> (8 * i));
}

}  // namespace

TEST_SUITE("group") {

TEST_CASE("group checkpoints: the documented layout, continuing bit for bit, bad ones refused") {
  const std::int64_t p = 3;
  const rh_config config = make_config();
  Group whole(config, 3, p), first(config, 3, p);
  const std::vector<Ragged> stream = {ragged({30, 0, 25}, p, 41), ragged({20, 30, 0}, p, 42),
                                      ragged({25, 25, 25}, p, 43)};
  for (const Ragged& r : stream) REQUIRE(group_fit(whole, r, RH_DTYPE_F64) == RH_SUCCESS);
  REQUIRE(group_fit(first, stream[0], RH_DTYPE_F64) == RH_SUCCESS);
  const std::vector<std::uint8_t> bytes = checkpoint_of(first);
  // docs/abi.md, "Group checkpoint format": the header, then per model a u64 size and a model checkpoint.
  CHECK(std::memcmp(bytes.data(), "\x89RHGRP\r\n", 8) == 0);
  CHECK(le(bytes, 8, 4) == 1);
  CHECK(le(bytes, 12, 4) == 0);
  CHECK(le(bytes, 16, 8) == bytes.size());
  CHECK(le(bytes, 24, 8) == 3);
  CHECK(le(bytes, 32, 8) == static_cast<std::uint64_t>(p));
  std::size_t at = 40;
  std::vector<std::size_t> record_at;
  for (int m = 0; m < 3; ++m) {
    const std::uint64_t length = le(bytes, at, 8);
    record_at.push_back(at + 8);
    CHECK(std::memcmp(bytes.data() + at + 8, "\x89RHCKP\r\n", 8) == 0);
    Model single(config);  // each record loads as a model checkpoint
    CHECK(rh_model_load_checkpoint(single, bytes.data() + at + 8, static_cast<std::int64_t>(length)) == RH_SUCCESS);
    at += 8 + length;
  }
  CHECK(at + 4 == bytes.size());
  CHECK(le(bytes, at, 4) == reference_crc32(bytes.data(), at));

  // Loaded into a group of another shape, then continued: the states of the group that never stopped.
  Group resumed(config, 1, 7);
  REQUIRE_MESSAGE(rh_group_load_checkpoint(resumed, bytes.data(), static_cast<std::int64_t>(bytes.size())) ==
                      RH_SUCCESS,
                  rh_last_error());
  std::int64_t n = 0;
  REQUIRE(rh_group_n_models(resumed, &n) == RH_SUCCESS);
  CHECK(n == 3);
  CHECK(checkpoint_of(resumed) == bytes);
  for (std::size_t k = 1; k < stream.size(); ++k) REQUIRE(group_fit(resumed, stream[k], RH_DTYPE_F64) == RH_SUCCESS);
  for (std::int64_t m = 0; m < 3; ++m) CHECK(view(resumed, m).state.coefficients == view(whole, m).state.coefficients);
  CHECK(checkpoint_of(resumed) == checkpoint_of(whole));

  // Refused with the group unchanged: a flipped bit, a cut, a newer version, another dtype, a spliced record of
  // another configuration (resealed: only the consistency test can catch it), bad arguments.
  const std::vector<std::uint8_t> kept = checkpoint_of(resumed);
  std::string message;  // of the last refusal
  auto refused = [&](rh_status expected, const std::vector<std::uint8_t>& b, std::size_t size, const char* what) {
    CAPTURE(what);
    CHECK(rh_group_load_checkpoint(resumed, b.data(), static_cast<std::int64_t>(size)) == expected);
    message = rh_last_error();
    CHECK(message == rh_group_last_error(resumed));
    CHECK(message.size() > 0);
    CHECK(checkpoint_of(resumed) == kept);
  };
  std::vector<std::uint8_t> b = bytes;
  b[bytes.size() / 2] = static_cast<std::uint8_t>(b[bytes.size() / 2] ^ 0x01);
  refused(RH_CORRUPT_DATA, b, b.size(), "flipped bit");
  refused(RH_CORRUPT_DATA, bytes, bytes.size() - 1, "cut by one byte");
  b = bytes;
  b[8] = 2;
  refused(RH_VERSION_MISMATCH, b, b.size(), "format version 2");
  b = bytes;
  b[record_at[1] + 24] = static_cast<std::uint8_t>(b[record_at[1] + 24] ^ 0x01);  // model 1's tau (model offset 24)
  refused(RH_CORRUPT_DATA, b, b.size(), "model 1's record, not resealed");
  CHECK(message.find("checksum") != std::string::npos);
  reseal(b, 0, b.size());
  refused(RH_CORRUPT_DATA, b, b.size(), "model 1's record, only the group resealed");
  CHECK(message.find("model 1: checkpoint: checksum") != std::string::npos);
  reseal(b, record_at[1], record_at[1] + le(bytes, record_at[1] - 8, 8));
  reseal(b, 0, b.size());
  refused(RH_CORRUPT_DATA, b, b.size(), "model 1 of another tau, both resealed");
  CHECK(message.find("model 1 has another configuration") != std::string::npos);
  CHECK(rh_group_load_checkpoint(resumed, nullptr, 10) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_load_checkpoint(resumed, bytes.data(), -1) == RH_INVALID_ARGUMENT);
  Group f32(make_config(RH_DTYPE_F32), 3, p);
  CHECK(rh_group_load_checkpoint(f32, bytes.data(), static_cast<std::int64_t>(bytes.size())) == RH_INVALID_ARGUMENT);
  std::int64_t size = -5;
  std::vector<std::uint8_t> small(10);
  CHECK(rh_group_save_checkpoint(resumed, small.data(), 10, &size) == RH_INVALID_ARGUMENT);
  CHECK(size == -5);
  CHECK(rh_group_save_checkpoint(resumed, nullptr, 0, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_save_checkpoint_file(resumed, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_load_checkpoint_file(resumed, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(checkpoint_of(resumed) == kept);
}

TEST_CASE("group set_state and reset through the C ABI") {
  const std::int64_t p = 3;
  Group g(make_config(), 2, p);
  REQUIRE(group_fit(g, ragged({30, 30}, p, 51), RH_DTYPE_F64) == RH_SUCCESS);
  const ModelView zero = view(g, 0);
  Model single(make_config());
  partial_fit(single, make_data(40, p, 52), RH_DTYPE_F64);
  Snapshot s = snapshot(single);
  s.scalars.coefficients = s.coefficients.data();
  s.scalars.information = s.information.data();
  s.scalars.score_variance = nullptr;  // no K
  s.scalars.score_variance_length = 0;
  REQUIRE_MESSAGE(rh_group_set_state(g, 1, &s.scalars) == RH_SUCCESS, rh_last_error());
  CHECK(view(g, 1).state.coefficients == s.coefficients);
  CHECK(view(g, 1).state.diagnostics_status == RH_INVALID_STATE);  // no last batch
  CHECK(view(g, 0) == zero);
  // Refused, unchanged: another p, a bad model number, a NULL state.
  Model wide(make_config());
  partial_fit(wide, make_data(40, p + 1, 53), RH_DTYPE_F64);
  Snapshot w = snapshot(wide);
  w.scalars.coefficients = w.coefficients.data();
  w.scalars.information = w.information.data();
  w.scalars.score_variance = nullptr;
  w.scalars.score_variance_length = 0;
  const std::vector<ModelView> before = views(g);
  CHECK(rh_group_set_state(g, 0, &w.scalars) == RH_INVALID_STATE);
  CHECK(rh_group_set_state(g, 2, &s.scalars) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_set_state(g, 0, nullptr) == RH_INVALID_ARGUMENT);
  CHECK(rh_group_reset(g, 2) == RH_INVALID_ARGUMENT);
  CHECK(views(g) == before);
  REQUIRE(rh_group_reset(g, 0) == RH_SUCCESS);
  CHECK(view(g, 0).state.scalars.n_features == 0);
  CHECK(view(g, 0).state.diagnostics_status == RH_INVALID_STATE);
  CHECK(view(g, 1) == before[1]);
}

}  // TEST_SUITE("group")
