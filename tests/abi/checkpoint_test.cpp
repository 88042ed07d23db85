// Checkpoints through the C ABI: the documented byte layout, bit-exact round trips, continuing a stream after a
// load exactly as if it had never stopped, and rejection of every corrupted, truncated or inconsistent input with
// the model left untouched.
#include <array>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>

#include "abi_test_support.hpp"

using namespace abi_test;

namespace {

void put_le(std::vector<std::uint8_t>& b, std::size_t offset, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.at(offset + i) = static_cast<std::uint8_t>(v >> (8 * i));
}
double f64_at(const std::vector<std::uint8_t>& b, std::size_t offset) {
  const std::uint64_t bits = le(b, offset, 8);
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
void put_f64(std::vector<std::uint8_t>& b, std::size_t offset, double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  put_le(b, offset, bits, 8);
}
void reseal(std::vector<std::uint8_t>& b) {
  put_le(b, b.size() - 4, reference_crc32(b.data(), b.size() - 4), 4);
}

rh_status load(rh_model* m, const std::vector<std::uint8_t>& bytes, std::size_t size) {
  return rh_model_load_checkpoint(m, bytes.data(), static_cast<std::int64_t>(size));
}
rh_status load(rh_model* m, const std::vector<std::uint8_t>& bytes) { return load(m, bytes, bytes.size()); }

std::vector<double> predictions(rh_model* m, const Data& d, std::int32_t dtype) {
  Arrays a;
  const rh_batch b = make_batch(d, dtype, a);
  std::vector<double> out(static_cast<std::size_t>(d.rows));
  if (dtype == RH_DTYPE_F32) {
    std::vector<float> f(out.size());
    REQUIRE(rh_model_predict(m, &b, f.data(), d.rows) == RH_SUCCESS);
    out.assign(f.begin(), f.end());
  } else {
    REQUIRE(rh_model_predict(m, &b, out.data(), d.rows) == RH_SUCCESS);
  }
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

const char* dtype_label(std::int32_t d) { return d == RH_DTYPE_F32 ? "float32" : "float64"; }

}  // namespace

TEST_SUITE("checkpoint") {

TEST_CASE("the byte layout is the documented one") {
  rh_config c = make_config();
  c.tau = 1.25;
  c.max_iter = 77;
  c.penalty = RH_PENALTY_L1;
  Model m(c);
  partial_fit(m, make_data(30, 2, 11, true), RH_DTYPE_F64);
  partial_fit(m, make_data(25, 2, 12, true), RH_DTYPE_F64);
  const Snapshot s = snapshot(m);
  const std::vector<std::uint8_t>& b = s.checkpoint;
  const std::int64_t q = 3;
  REQUIRE(b.size() == static_cast<std::size_t>(172 + 8 * q + 16 * q * q));
  const std::array<std::uint8_t, 8> magic = {0x89, 'R', 'H', 'C', 'K', 'P', '\r', '\n'};
  CHECK(std::memcmp(b.data(), magic.data(), 8) == 0);
  CHECK(le(b, 8, 4) == 2);   // format version
  CHECK(le(b, 12, 4) == 0);  // flags
  CHECK(le(b, 16, 8) == b.size());
  CHECK(f64_at(b, 24) == 1.25);
  CHECK(f64_at(b, 32) == s.config.lambda_scale);
  CHECK(f64_at(b, 40) == s.config.bandwidth_scale);
  CHECK(f64_at(b, 48) == s.config.tol);
  CHECK(f64_at(b, 56) == s.config.ridge);
  CHECK(le(b, 64, 4) == 77);
  CHECK(le(b, 68, 4) == 2);  // penalty l1
  CHECK(le(b, 72, 4) == 1);  // fit_intercept
  CHECK(le(b, 76, 4) == 2);  // float64
  CHECK(le(b, 80, 4) == 0);  // inference (off: l1)
  CHECK(le(b, 84, 4) == 0);  // reserved
  CHECK(le(b, 88, 8) == 2);
  CHECK(le(b, 96, 8) == 55);
  CHECK(le(b, 104, 8) == 2);
  CHECK(f64_at(b, 112) == s.scalars.previous_lambda);
  CHECK(s.scalars.previous_lambda > 0);  // l1: a real value, not a default zero
  CHECK(f64_at(b, 120) == s.scalars.weight_sum);
  CHECK(le(b, 128, 4) == 1);
  CHECK(le(b, 132, 8) == 0);  // score_variance_batches
  CHECK(le(b, 140, 4) == 0);  // reserved
  CHECK(le(b, 144, 8) == 3);
  CHECK(le(b, 152, 8) == 9);
  CHECK(le(b, 160, 8) == 9);
  for (std::int64_t j = 0; j < q; ++j) CHECK(f64_at(b, 168 + 8 * j) == s.coefficients[static_cast<std::size_t>(j)]);
  for (std::int64_t j = 0; j < q * q; ++j)
    CHECK(f64_at(b, 168 + 8 * q + 8 * j) == s.information[static_cast<std::size_t>(j)]);
  for (std::int64_t j = 0; j < q * q; ++j) CHECK(f64_at(b, 168 + 8 * q + 8 * q * q + 8 * j) == 0.0);  // K
  // The checksum is zlib's CRC-32 of every byte before it.
  const std::uint8_t check_value[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  REQUIRE(reference_crc32(check_value, 9) == 0xCBF43926u);
  CHECK(le(b, b.size() - 4, 4) == reference_crc32(b.data(), b.size() - 4));
}

TEST_CASE("two-call sizing, and a round trip restores every bit") {
  Model m;
  partial_fit(m, make_data(50, 4, 21), RH_DTYPE_F64);
  std::int64_t size = -7;
  REQUIRE(rh_model_save_checkpoint(m, nullptr, 0, &size) == RH_SUCCESS);
  CHECK(size == 172 + 8 * 5 + 16 * 25);
  CHECK(std::string(rh_last_error()).empty());
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size) + 10, 0xAB);
  std::int64_t written = 0;
  REQUIRE(rh_model_save_checkpoint(m, bytes.data(), static_cast<std::int64_t>(bytes.size()), &written) == RH_SUCCESS);
  CHECK(written == size);
  CHECK(bytes[static_cast<std::size_t>(size)] == 0xAB);  // nothing written past the checkpoint
  bytes.resize(static_cast<std::size_t>(size));

  Model restored;
  REQUIRE(load(restored, bytes) == RH_SUCCESS);
  Snapshot a = snapshot(m), b = snapshot(restored);
  CHECK(b.diagnostics_status == RH_INVALID_STATE);  // diagnostics are not part of a checkpoint
  b.diagnostics_status = a.diagnostics_status;
  b.diagnostics = a.diagnostics;
  CHECK(a == b);

  // An unfitted model has a checkpoint too: the configuration and an empty state.
  Model empty;
  const std::vector<std::uint8_t> e = checkpoint_of(empty);
  CHECK(e.size() == 172);
  REQUIRE(load(restored, e) == RH_SUCCESS);
  CHECK(snapshot(restored) == snapshot(empty));
}

TEST_CASE("save, load, continue: bit-identical to never stopping") {
  for (std::int32_t dtype : {RH_DTYPE_F64, RH_DTYPE_F32}) {
    const std::vector<std::int32_t> penalties = known_penalties();
    for (std::size_t k = 0; k < penalties.size(); ++k) {
      const std::int32_t penalty = penalties[k];
      for (bool weighted : {false, true}) {
        CAPTURE(dtype_label(dtype));
        CAPTURE(penalty_label(penalty));
        CAPTURE(weighted);
        const Data b1 = make_data(60, 4, 100, weighted), b2 = make_data(45, 4, 200, weighted),
                   b3 = make_data(70, 4, 300, weighted), probe = make_data(9, 4, 400);
        const rh_config c = make_config(dtype, penalty);
        Model straight(c);
        for (const Data* d : {&b1, &b2, &b3}) partial_fit(straight, *d, dtype);

        Model first(c);
        partial_fit(first, b1, dtype);
        const std::vector<std::uint8_t> bytes = checkpoint_of(first);
        // The loader starts with another configuration: the checkpoint's must replace it.
        rh_config other = c;
        other.tau = 3.0;
        other.max_iter = 5;
        other.penalty = penalties[(k + 1) % penalties.size()];
        Model resumed(other);
        REQUIRE(load(resumed, bytes) == RH_SUCCESS);
        partial_fit(resumed, b2, dtype);
        partial_fit(resumed, b3, dtype);
        CHECK(snapshot(resumed) == snapshot(straight));
        CHECK(same_bits(predictions(resumed, probe, dtype), predictions(straight, probe, dtype)));

        // The same through a file, into the model that wrote it after it moved on.
        // One file per space: ctest may run this test for two spaces at once in the same folder.
        const std::string path =
            "continue_" + std::to_string(space_under_test()) + "_" + dtype_label(dtype) + ".rhckpt";
        REQUIRE(rh_model_save_checkpoint_file(first, path.c_str()) == RH_SUCCESS);
        partial_fit(first, b3, dtype);
        REQUIRE(rh_model_load_checkpoint_file(first, path.c_str()) == RH_SUCCESS);
        partial_fit(first, b2, dtype);
        partial_fit(first, b3, dtype);
        CHECK(snapshot(first) == snapshot(straight));
        std::remove(path.c_str());
      }
    }
  }
}

TEST_CASE("file saves replace the target whole and leave no temporary behind") {
  Model m;
  partial_fit(m, make_data(30, 3, 5), RH_DTYPE_F64);
  // One file per space: ctest may run this test for two spaces at once in the same folder.
  const std::string name = "replace_" + std::to_string(space_under_test()) + ".rhckpt";
  const char* path = name.c_str();
  if (std::FILE* f = std::fopen(path, "wb")) {
    std::fputs("an older, longer file that must be replaced entirely, not overwritten in place ..........", f);
    std::fclose(f);
  }
  REQUIRE(rh_model_save_checkpoint_file(m, path) == RH_SUCCESS);
  std::vector<std::uint8_t> on_disk;
  if (std::FILE* f = std::fopen(path, "rb")) {
    int ch;
    while ((ch = std::fgetc(f)) != EOF) on_disk.push_back(static_cast<std::uint8_t>(ch));
    std::fclose(f);
  }
  CHECK(on_disk == checkpoint_of(m));
  for (const auto& entry : std::filesystem::directory_iterator(".")) {
    const std::string entry_name = entry.path().filename().string();
    CHECK_MESSAGE(entry_name.rfind(name + ".", 0) != 0, entry_name << " was left behind");
  }
  std::remove(path);
}

TEST_CASE("every flipped byte or bit and every truncation is rejected; the model stays as it was") {
  // A small checkpoint (p = 2, q = 3: 340 bytes) loaded into a model whose state differs from it.
  Model source;
  partial_fit(source, make_data(20, 2, 31, true), RH_DTYPE_F64);
  const std::vector<std::uint8_t> good = checkpoint_of(source);
  REQUIRE(good.size() == 340);
  Model target;
  partial_fit(target, make_data(25, 2, 32), RH_DTYPE_F64);
  const Snapshot before = snapshot(target);

  auto expect_rejected = [&](const std::vector<std::uint8_t>& bytes, std::size_t size, bool version_field) {
    const rh_status s = load(target, bytes, size);
    const rh_status want = version_field ? RH_VERSION_MISMATCH : RH_CORRUPT_DATA;
    CHECK_MESSAGE(s == want, "got " << status_name(s) << ": " << rh_last_error());
    CHECK(std::string(rh_last_error()).rfind("rh_model_load_checkpoint: checkpoint: ", 0) == 0);
  };
  std::vector<std::uint8_t> bytes = good;
  for (std::size_t i = 0; i < good.size(); ++i) {
    CAPTURE(i);
    const bool version_field = i >= 8 && i < 12;
    bytes[i] ^= 0xFF;
    expect_rejected(bytes, bytes.size(), version_field);
    bytes[i] = good[i];
    for (int bit = 0; bit < 8; ++bit) {
      bytes[i] ^= static_cast<std::uint8_t>(1u << bit);
      expect_rejected(bytes, bytes.size(), version_field);
      bytes[i] = good[i];
    }
    expect_rejected(good, i, false);  // truncated to i bytes
  }
  CHECK(snapshot(target) == before);  // checked once at the end as well as the load statuses above
  for (std::size_t extra : {1, 7, 1000}) {
    CAPTURE(extra);
    bytes = good;
    bytes.resize(good.size() + extra, 0);
    expect_rejected(bytes, bytes.size(), false);
  }
  CHECK(snapshot(target) == before);
  // And the unspoiled bytes still load.
  REQUIRE(load(target, good) == RH_SUCCESS);
}

TEST_CASE("every flipped byte leaves the model bit for bit untouched") {
  // The expensive full snapshot after each single-byte corruption (the bit and truncation sweeps above check the
  // status of each load and the snapshot in aggregate).
  Model source;
  partial_fit(source, make_data(20, 2, 41), RH_DTYPE_F64);
  const std::vector<std::uint8_t> good = checkpoint_of(source);
  Model target;
  partial_fit(target, make_data(25, 2, 42), RH_DTYPE_F64);
  const Snapshot before = snapshot(target);
  std::vector<std::uint8_t> bytes = good;
  for (std::size_t i = 0; i < good.size(); ++i) {
    CAPTURE(i);
    bytes[i] ^= 0x5A;
    CHECK(load(target, bytes) != RH_SUCCESS);
    CHECK(snapshot(target) == before);
    bytes[i] = good[i];
    CHECK(load(target, good, i) == RH_CORRUPT_DATA);
    CHECK(snapshot(target) == before);
  }
}

TEST_CASE("well-sealed but inconsistent checkpoints are rejected") {
  Model source;
  partial_fit(source, make_data(20, 2, 51), RH_DTYPE_F64);
  const std::vector<std::uint8_t> good = checkpoint_of(source);
  Model target;
  partial_fit(target, make_data(25, 2, 52), RH_DTYPE_F64);
  const Snapshot before = snapshot(target);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    rh_status want;
    std::function<void(std::vector<std::uint8_t>&)> spoil;
  };
  const std::vector<Case> cases = {
      {"format version 0", RH_VERSION_MISMATCH, [](auto& b) { put_le(b, 8, 0, 4); }},
      {"format version 3", RH_VERSION_MISMATCH, [](auto& b) { put_le(b, 8, 3, 4); }},
      {"unknown flags", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 12, 1, 4); }},
      {"tau 0", RH_CORRUPT_DATA, [](auto& b) { put_f64(b, 24, 0.0); }},
      {"tol NaN", RH_CORRUPT_DATA, [&](auto& b) { put_f64(b, 48, nan); }},
      {"max_iter 0", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 64, 0, 4); }},
      {"penalty code 0", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 68, 0, 4); }},
      {"penalty code 3", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 68, 3, 4); }},
      {"config fit_intercept 2", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 72, 2, 4); }},
      {"dtype code 0", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 76, 0, 4); }},
      {"dtype code 3", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 76, 3, 4); }},
      {"n_features does not match q", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 88, 1, 8); }},
      {"n_features negative", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 88, ~std::uint64_t{0}, 8); }},
      {"n_samples_seen negative", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 96, ~std::uint64_t{0}, 8); }},
      {"batch_count negative", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 104, ~std::uint64_t{4}, 8); }},
      {"previous_lambda negative", RH_CORRUPT_DATA, [](auto& b) { put_f64(b, 112, -1.0); }},
      {"weight_sum NaN", RH_CORRUPT_DATA, [&](auto& b) { put_f64(b, 120, nan); }},
      {"state fit_intercept 2", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 128, 2, 4); }},
      {"state and config fit_intercept differ", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 128, 0, 4); }},
      {"reserved field set", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 140, 9, 4); }},
      {"config reserved field set", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 84, 9, 4); }},
      {"config inference 2", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 80, 2, 4); }},
      {"score_variance_batches above batch_count", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 132, 3, 8); }},
      {"score_variance_batches negative", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 132, ~std::uint64_t{0}, 8); }},
      {"q disagrees with the size", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 144, 2, 8); }},
      {"q absurd", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 144, std::uint64_t{1} << 62, 8); }},
      {"information count not q squared", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 152, 8, 8); }},
      {"score_variance count not q squared", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 160, 8, 8); }},
      {"declared total size differs", RH_CORRUPT_DATA, [](auto& b) { put_le(b, 16, b.size() - 8, 8); }},
      {"NaN coefficient", RH_CORRUPT_DATA, [&](auto& b) { put_f64(b, 168 + 8, nan); }},
      {"Inf information", RH_CORRUPT_DATA,
       [](auto& b) { put_f64(b, 168 + 24 + 16, std::numeric_limits<double>::infinity()); }},
      {"NaN score variance", RH_CORRUPT_DATA, [&](auto& b) { put_f64(b, 168 + 24 + 72 + 8, nan); }},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    std::vector<std::uint8_t> bytes = good;
    c.spoil(bytes);
    reseal(bytes);
    const rh_status s = load(target, bytes);
    CHECK_MESSAGE(s == c.want, "got " << status_name(s) << ": " << rh_last_error());
    CHECK(snapshot(target) == before);
  }
  // A float32 checkpoint holding a value no float can represent.
  Model f32(RH_DTYPE_F32);
  partial_fit(f32, make_data(20, 2, 53), RH_DTYPE_F32);
  std::vector<std::uint8_t> bytes = checkpoint_of(f32);
  const Snapshot f32_before = snapshot(f32);
  put_f64(bytes, 168, 0.1);
  reseal(bytes);
  CHECK(load(f32, bytes) == RH_CORRUPT_DATA);
  CHECK(snapshot(f32) == f32_before);
}

}  // TEST_SUITE
