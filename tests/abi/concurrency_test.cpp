// The C ABI under concurrent callers (issue 15, item 8): a handle shared by several threads, destroyed while other
// threads are calling on it, and separate handles on separate threads. Run by the cpu profile on every host space
// and, on Serial, under ThreadSanitizer (`tools/rh test --sanitize thread`), which is what finds a race here.
#include <atomic>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "abi_test_support.hpp"

using namespace abi_test;

namespace {

constexpr std::int64_t kRows = 40, kCols = 3;
constexpr int kThreads = 4;

// doctest's assertions are not meant to be called from several threads at once: workers record, the test checks.
struct Outcome {
  std::vector<std::string> problems;
  void expect(bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  }
};

void check_outcomes(const std::vector<Outcome>& outcomes) {
  for (const Outcome& o : outcomes)
    for (const std::string& p : o.problems) FAIL_CHECK(p);
}

// The message a call with one column too many leaves, as seen once from this thread.
std::string wrong_columns_message(rh_model* m) {
  const Data wide = make_data(kRows, kCols + 1, 5);
  Arrays a;
  const rh_batch b = make_batch(wide, RH_DTYPE_F64, a);
  REQUIRE(rh_model_partial_fit(m, &b, nullptr) == RH_INVALID_ARGUMENT);
  return rh_last_error();
}

}  // namespace

TEST_SUITE("concurrency") {

TEST_CASE("calls on one shared handle from several threads run one at a time") {
  constexpr int kRounds = 5;
  const Data data = make_data(kRows, kCols, 3), wide = make_data(kRows, kCols + 1, 5);
  Model shared;
  partial_fit(shared, data, RH_DTYPE_F64);
  const std::string refused = wrong_columns_message(shared);
  std::vector<Outcome> outcomes(kThreads);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      Outcome& out = outcomes[static_cast<std::size_t>(t)];
      Arrays a, aw;
      const rh_batch good = make_batch(data, RH_DTYPE_F64, a), bad = make_batch(wide, RH_DTYPE_F64, aw);
      std::vector<double> predictions(static_cast<std::size_t>(kRows));
      for (int r = 0; r < kRounds; ++r) {
        out.expect(rh_model_partial_fit(shared, &good, nullptr) == RH_SUCCESS, "partial_fit failed");
        out.expect(rh_model_predict(shared, &good, predictions.data(), kRows) == RH_SUCCESS, "predict failed");
        out.expect(rh_model_partial_fit(shared, &bad, nullptr) == RH_INVALID_ARGUMENT, "a wide batch was accepted");
        // This thread's message is its own call's, whatever the other threads do meanwhile.
        out.expect(rh_last_error() == refused, std::string("this thread's message is ") + rh_last_error());
        // The model's message is the whole message of some call on it: "" or the refusal, never a mix.
        const std::string on_model = rh_model_last_error(shared);
        out.expect(on_model.empty() || on_model == refused, "the model's message is " + on_model);
        rh_state st;
        RH_STRUCT_INIT(&st);
        out.expect(rh_model_get_state(shared, &st) == RH_SUCCESS && st.n_features == kCols, "get_state failed");
      }
    });
  }
  for (std::thread& w : workers) w.join();
  check_outcomes(outcomes);
  // The same batch kThreads*kRounds more times, in whatever order: exactly what one thread gets doing it alone.
  Model alone;
  for (int i = 0; i < 1 + kThreads * kRounds; ++i) partial_fit(alone, data, RH_DTYPE_F64);
  Snapshot expected = snapshot(alone), got = snapshot(shared);
  CHECK(got.coefficients == expected.coefficients);
  CHECK(got.checkpoint == expected.checkpoint);
}

TEST_CASE("destroying a handle while other threads call on it waits for the call in flight") {
  const Data data = make_data(kRows, kCols, 4);
  for (int repeat = 0; repeat < 10; ++repeat) {
    rh_model* m = nullptr;
    const rh_config c = make_config();
    REQUIRE(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS);
    partial_fit(m, data, RH_DTYPE_F64);
    // Destroyed once every worker is calling on it and kThreads calls have returned, from whichever threads. Not once
    // every worker has finished a call: the handle's lock is not first come, first served (a worker that has just
    // returned mostly takes it again before a waiting one wakes), so the last worker's first call came after tens to
    // thousands of the others' calls, each a device round trip on CUDA (docs/evidence/cuda13-toolchain.md).
    std::atomic<int> started{0}, returned{0};
    std::vector<Outcome> outcomes(kThreads);
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
      workers.emplace_back([&, t] {
        Outcome& out = outcomes[static_cast<std::size_t>(t)];
        Arrays a;
        const rh_batch b = make_batch(data, RH_DTYPE_F64, a);
        std::vector<double> predictions(static_cast<std::size_t>(kRows));
        ++started;
        for (int call = 0;; ++call) {
          const rh_status s = call % 3 == 0   ? rh_model_partial_fit(m, &b, nullptr)
                              : call % 3 == 1 ? rh_model_predict(m, &b, predictions.data(), kRows)
                                              : rh_model_score(m, &b, &predictions[0]);
          (void)rh_model_last_error(m);
          ++returned;
          if (s == RH_SUCCESS) continue;
          out.expect(s == RH_INVALID_ARGUMENT, "status " + status_name(s) + ": " + rh_last_error());
          out.expect(std::string(rh_last_error()).find("is not a live model handle") != std::string::npos,
                     std::string("message: ") + rh_last_error());
          break;  // the handle is dead: every later call says so too
        }
      });
    }
    while (started < kThreads || returned < kThreads) std::this_thread::yield();
    CHECK(rh_model_destroy(m) == RH_SUCCESS);
    for (std::thread& w : workers) w.join();
    check_outcomes(outcomes);
    CHECK(rh_model_destroy(m) == RH_INVALID_ARGUMENT);
  }
}

TEST_CASE("two threads destroying one handle: one succeeds, the other is told the handle is dead") {
  for (int repeat = 0; repeat < 20; ++repeat) {
    rh_model* m = nullptr;
    const rh_config c = make_config();
    REQUIRE(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS);
    std::atomic<bool> go{false};
    rh_status first = -1, second = -1;
    std::thread a([&] {
      while (!go) std::this_thread::yield();
      first = rh_model_destroy(m);
    });
    std::thread b([&] {
      while (!go) std::this_thread::yield();
      second = rh_model_destroy(m);
    });
    go = true;
    a.join();
    b.join();
    CHECK(std::multiset<rh_status>{first, second} == std::multiset<rh_status>{RH_SUCCESS, RH_INVALID_ARGUMENT});
  }
}

TEST_CASE("rh_model_last_error's text stays readable after the model is destroyed") {
  rh_model* m = nullptr;
  const rh_config c = make_config();
  REQUIRE(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS);
  partial_fit(m, make_data(kRows, kCols, 6), RH_DTYPE_F64);
  const std::string refused = wrong_columns_message(m);
  const char* text = rh_model_last_error(m);
  REQUIRE(text == refused);
  REQUIRE(rh_model_destroy(m) == RH_SUCCESS);
  CHECK(std::string(text) == refused);  // valid until this thread's next rh_model_last_error
  CHECK(std::string(rh_model_last_error(m)).find("not a live model handle") != std::string::npos);
}

// With Kokkos >= 4 on a host space each model runs on an execution-space instance of its own and these threads really
// run at once (rh::SpaceInfo::concurrent_models); with Kokkos 3.4 the library serializes them. Either way every
// thread's stream — fits, predictions, scores, in both dtypes and every penalty — must end bit for bit where it ends
// alone.
TEST_CASE("models on separate threads give exactly the results each gives alone") {
  constexpr int kBatches = 6;
  struct Result {
    std::vector<std::uint8_t> checkpoint;
    std::vector<double> predictions;
    double score = 0;
  };
  const auto dtype_of = [](int t) { return t % 2 ? RH_DTYPE_F32 : RH_DTYPE_F64; };
  const std::vector<std::int32_t> penalties = known_penalties();
  const auto penalty_of = [&](int t) { return penalties[static_cast<std::size_t>(t / 2)]; };
  const int threads = 2 * static_cast<int>(penalties.size());  // one per dtype and penalty
  // One thread's stream on a new model; problems are recorded, not asserted (doctest is not thread-safe).
  auto stream = [&](int t, Outcome& out) {
    Result r;
    rh_model* m = nullptr;
    const rh_config c = make_config(dtype_of(t), penalty_of(t));
    out.expect(rh_model_create(RH_ABI_VERSION, &c, &m) == RH_SUCCESS, "create failed");
    const Data probe = make_data(kRows, kCols, 999);
    Arrays pa;
    const rh_batch p = make_batch(probe, dtype_of(t), pa);
    for (std::uint64_t b = 0; b < kBatches; ++b) {
      Arrays a;
      const rh_batch batch = make_batch(make_data(kRows + 7 * t, kCols, 100 * t + b, b % 2 == 1), dtype_of(t), a);
      out.expect(rh_model_partial_fit(m, &batch, nullptr) == RH_SUCCESS, std::string("partial_fit: ") + rh_last_error());
      double r2 = 0;
      out.expect(rh_model_score(m, &p, &r2) == RH_SUCCESS, "score failed");
      r.score += r2;
    }
    std::vector<float> p32(static_cast<std::size_t>(kRows));
    r.predictions.resize(static_cast<std::size_t>(kRows));
    void* dst = dtype_of(t) == RH_DTYPE_F32 ? static_cast<void*>(p32.data()) : r.predictions.data();
    out.expect(rh_model_predict(m, &p, dst, kRows) == RH_SUCCESS, "predict failed");
    if (dtype_of(t) == RH_DTYPE_F32) r.predictions.assign(p32.begin(), p32.end());
    std::int64_t size = 0;
    out.expect(rh_model_save_checkpoint(m, nullptr, 0, &size) == RH_SUCCESS, "size query failed");
    r.checkpoint.resize(static_cast<std::size_t>(size));
    out.expect(rh_model_save_checkpoint(m, r.checkpoint.data(), size, &size) == RH_SUCCESS, "save failed");
    out.expect(rh_model_destroy(m) == RH_SUCCESS, "destroy failed");
    return r;
  };
  std::vector<Result> alone, together(static_cast<std::size_t>(threads));
  std::vector<Outcome> outcomes(static_cast<std::size_t>(threads) + 1);
  for (int t = 0; t < threads; ++t) alone.push_back(stream(t, outcomes[static_cast<std::size_t>(threads)]));
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] { together[static_cast<std::size_t>(t)] = stream(t, outcomes[static_cast<std::size_t>(t)]); });
    for (std::thread& w : workers) w.join();
    check_outcomes(outcomes);
    for (int t = 0; t < threads; ++t) {
      CAPTURE(t);
      const Result& got = together[static_cast<std::size_t>(t)];
      const Result& want = alone[static_cast<std::size_t>(t)];
      CHECK(got.checkpoint == want.checkpoint);
      CHECK(std::memcmp(got.predictions.data(), want.predictions.data(), got.predictions.size() * sizeof(double)) == 0);
      CHECK(std::memcmp(&got.score, &want.score, sizeof(double)) == 0);
    }
  }
}

}  // TEST_SUITE
