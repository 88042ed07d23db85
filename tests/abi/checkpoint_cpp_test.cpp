// The checkpoint format through the C++ API (rh/checkpoint.hpp): the same bytes as the C ABI, for C++ users.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <thread>

#include "common/os.hpp"
#include "common/same_state.hpp"
#include "cpp_test_support.hpp"
#include "doctest/doctest.h"
#include "rh/checkpoint.hpp"
#include "rh/regressor.hpp"

using cpp_test::failure_of;
using cpp_test::space_under_test;

namespace {

struct Batch {
  std::vector<double> x, y;
  std::int64_t rows, cols;
};

Batch make_batch(std::int64_t rows, std::int64_t cols, unsigned seed) {
  Batch b{{}, {}, rows, cols};
  std::srand(seed);
  for (std::int64_t i = 0; i < rows; ++i) {
    double yi = 0.5;
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = std::rand() / static_cast<double>(RAND_MAX) - 0.5;
      b.x.push_back(v);
      yi += v * static_cast<double>(j + 1);
    }
    b.y.push_back(yi + (i % 9 == 4 ? 5.0 : 0.01 * (std::rand() / static_cast<double>(RAND_MAX))));
  }
  return b;
}

template <class S>
void feed(rh::Regressor& m, const Batch& b) {
  const std::vector<S> x(b.x.begin(), b.x.end()), y(b.y.begin(), b.y.end());
  m.partial_fit(rh::host_batch(x.data(), y.data(), b.rows, b.cols));
}

bool same(const rh::State& a, const rh::State& b) { return rh::test::same_state(a, b); }

bool same(const rh::Config& a, const rh::Config& b) {
  return a.tau == b.tau && a.penalty == b.penalty && a.lambda_scale == b.lambda_scale &&
         a.bandwidth_scale == b.bandwidth_scale && a.fit_intercept == b.fit_intercept && a.max_iter == b.max_iter &&
         a.tol == b.tol && a.ridge == b.ridge;
}

rh::Errc error_of(const std::function<void()>& f) { return failure_of(f).first; }

}  // namespace

TEST_CASE("encode and decode are inverse, bit for bit") {
  rh::Config config;
  config.penalty = rh::Penalty::l1;
  config.tau = 0.75;
  rh::Regressor m(space_under_test(), rh::Dtype::f64, config);
  feed<double>(m, make_batch(40, 3, 1));
  const rh::Checkpoint cp{m.config(), m.dtype(), m.state()};
  const std::vector<std::uint8_t> bytes = rh::encode_checkpoint(cp);
  CHECK(bytes == rh::save_checkpoint(m));
  const rh::Checkpoint back = rh::decode_checkpoint(bytes.data(), bytes.size());
  CHECK(back.dtype == rh::Dtype::f64);
  CHECK(back.config.tau == 0.75);
  CHECK(back.config.penalty == rh::Penalty::l1);
  CHECK(same(back.state, cp.state));
  CHECK(rh::encode_checkpoint(back) == bytes);
}

TEST_CASE("continuing after load_checkpoint equals never stopping, both dtypes") {
  const Batch b1 = make_batch(50, 4, 2), b2 = make_batch(60, 4, 3);
  SUBCASE("float64") {
    rh::Regressor straight(space_under_test(), rh::Dtype::f64), saved(space_under_test(), rh::Dtype::f64);
    feed<double>(straight, b1);
    feed<double>(straight, b2);
    feed<double>(saved, b1);
    const auto bytes = rh::save_checkpoint(saved);
    rh::Config different;
    different.max_iter = 3;
    rh::Regressor resumed(space_under_test(), rh::Dtype::f64, different);
    rh::load_checkpoint(resumed, bytes.data(), bytes.size());
    CHECK(resumed.config().max_iter == 100);
    feed<double>(resumed, b2);
    CHECK(same(resumed.state(), straight.state()));
  }
  SUBCASE("float32, through a file") {
    rh::Regressor straight(space_under_test(), rh::Dtype::f32), saved(space_under_test(), rh::Dtype::f32);
    feed<float>(straight, b1);
    feed<float>(straight, b2);
    feed<float>(saved, b1);
    // One file per space: ctest may run this test for two spaces at once in the same folder.
    const std::string path = std::string("cpp_f32_") + rh::space_name(space_under_test()) + ".rhckpt";
    rh::save_checkpoint_file(saved, path);
    rh::Regressor resumed(space_under_test(), rh::Dtype::f32);
    rh::load_checkpoint_file(resumed, path);
    feed<float>(resumed, b2);
    CHECK(same(resumed.state(), straight.state()));
    CHECK(rh::read_checkpoint_file(path).dtype == rh::Dtype::f32);
    std::remove(path.c_str());
  }
}

TEST_CASE("a failed load leaves the Regressor as it was") {
  rh::Regressor m(space_under_test(), rh::Dtype::f64);
  feed<double>(m, make_batch(30, 2, 4));
  const rh::State before = m.state();
  const rh::Config config_before = m.config();
  rh::Regressor other(space_under_test(), rh::Dtype::f64);
  feed<double>(other, make_batch(30, 2, 5));
  std::vector<std::uint8_t> bytes = rh::save_checkpoint(other);
  bytes[150] ^= 1;
  CHECK(error_of([&] { rh::load_checkpoint(m, bytes.data(), bytes.size()); }) == rh::Errc::corrupt_data);
  bytes[150] ^= 1;
  CHECK(error_of([&] { rh::load_checkpoint(m, bytes.data(), bytes.size() - 1); }) == rh::Errc::corrupt_data);
  rh::Regressor f32(space_under_test(), rh::Dtype::f32);
  CHECK(error_of([&] { rh::load_checkpoint(f32, bytes.data(), bytes.size()); }) == rh::Errc::invalid_argument);
  CHECK(error_of([&] { rh::load_checkpoint_file(m, "does/not/exist.rhckpt"); }) == rh::Errc::invalid_argument);
  CHECK(same(m.state(), before));
  CHECK(same(m.config(), config_before));
  CHECK(m.diagnostics().iterations >= 1);  // the last batch's diagnostics survive too
}

TEST_CASE("encode refuses what it could not decode") {
  rh::Checkpoint cp;
  cp.config.tau = -1;
  CHECK(error_of([&] { rh::encode_checkpoint(cp); }) == rh::Errc::invalid_argument);
  cp.config = rh::Config();
  cp.state.n_features = 2;  // no coefficients
  CHECK(error_of([&] { rh::encode_checkpoint(cp); }) == rh::Errc::invalid_state);
  cp.state = rh::State();
  cp.state.n_features = 1;
  cp.state.fit_intercept = true;
  cp.state.coefficients = {0.1, 0.2};
  cp.state.information = {1, 0, 0, 1};
  cp.state.n_samples_seen = 3;
  cp.state.batch_count = 1;
  cp.state.weight_sum = 3;
  cp.dtype = rh::Dtype::f32;  // 0.1 is not a float
  CHECK(error_of([&] { rh::encode_checkpoint(cp); }) == rh::Errc::invalid_state);
  cp.dtype = rh::Dtype::f64;
  CHECK(rh::encode_checkpoint(cp).size() == 172 + 16 + 64);  // K left empty: absent, written as zeros
}

TEST_CASE("a file with more bytes than it declares is read no further than needed") {
  rh::Regressor m(space_under_test(), rh::Dtype::f64);
  feed<double>(m, make_batch(20, 2, 6));
  std::vector<std::uint8_t> bytes = rh::save_checkpoint(m);
  bytes.resize(bytes.size() + 300000, 0);  // several read chunks of trailing data
  // One name per space: ctest -j runs the entries of every space at once in one folder.
  const std::string path = std::string("cpp_trailing_") + rh::space_name(space_under_test()) + ".rhckpt";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  CHECK(error_of([&] { rh::read_checkpoint_file(path); }) == rh::Errc::corrupt_data);
  std::remove(path.c_str());
}

// ---- Checkpoint files on hostile paths and headers ------------------------------------------------------------------
// Saves go through a temporary file created exclusively and renamed over the target; the target must be absent or a
// regular file. Reads follow a link but read only a regular file, and never more than the declared p allows.

namespace {

// A folder of its own per test: ctest runs the spaces' entries of this program at the same time.
class Folder {
 public:
  Folder() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() / ("rh-checkpoint-files-" + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~Folder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string operator/(const char* name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

const std::vector<std::uint8_t> kPrecious = {'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'};


rh::Regressor fitted_model() {
  rh::Regressor m(space_under_test(), rh::Dtype::f64);
  feed<double>(m, make_batch(20, 2, 8));
  return m;
}

void put_u64(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[offset + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

TEST_CASE("a save never writes through a link that sits at a temporary name") {
  Folder dir;
  const std::string target = dir / "model.rhckpt", victim = dir / "victim";
  write_file(victim, kPrecious);
  // The name the library used for its temporary file until issue 15, and a few guesses beside it.
  if (!test_os::make_symlink(victim, target + ".partial")) {
    MESSAGE("no symbolic links on this system for this user: nothing to test");
    return;
  }
  for (const char* suffix : {".tmp", ".tmp-0000000000000000"}) REQUIRE(test_os::make_symlink(victim, target + suffix));
  const rh::Regressor m = fitted_model();
  rh::save_checkpoint_file(m, target);
  CHECK(file_bytes(victim) == kPrecious);
  CHECK(file_bytes(target) == rh::save_checkpoint(m));
  CHECK(dir.entries() == std::vector<std::string>{"model.rhckpt", "model.rhckpt.partial", "model.rhckpt.tmp",
                                                  "model.rhckpt.tmp-0000000000000000", "victim"});
}

TEST_CASE("a save refuses a target that is a link, a directory or a FIFO, and changes nothing") {
  Folder dir;
  const std::string link = dir / "link.rhckpt", victim = dir / "victim", folder = dir / "folder.rhckpt",
                    fifo = dir / "fifo.rhckpt";
  write_file(victim, kPrecious);
  const bool has_link = test_os::make_symlink(victim, link);
  std::filesystem::create_directory(folder);
  const bool has_fifo = test_os::make_fifo(fifo);
  const std::vector<std::string> before = dir.entries();
  const rh::Regressor m = fitted_model();
  std::vector<std::pair<std::string, const char*>> cases = {{folder, "is a directory"}};
  if (has_link) cases.push_back({link, "is a symbolic link"});
  else MESSAGE("no symbolic links on this system for this user: that case is left out");
  if (has_fifo) cases.push_back({fifo, "is a FIFO"});
  else MESSAGE("no FIFO in this system's file systems: that case is left out");
  for (const auto& c : cases) {
    CAPTURE(c.first);
    const auto failure = failure_of([&] { rh::save_checkpoint_file(m, c.first); });
    CHECK(failure.first == rh::Errc::invalid_argument);
    CHECK(failure.second == "checkpoint: " + c.first + " " + c.second);
  }
  if (has_link) CHECK(std::filesystem::read_symlink(link) == victim);
  CHECK(file_bytes(victim) == kPrecious);
  CHECK(dir.entries() == before);  // no temporary file left behind
}

TEST_CASE("a save keeps the permission bits of the file it replaces") {
#if defined(_WIN32)
  // std::filesystem shows Windows' read-only attribute alone; the security descriptor ReplaceFileW keeps is not
  // visible through it.
  MESSAGE("POSIX permission bits only");
  return;
#endif
  Folder dir;
  const std::string target = dir / "private.rhckpt";
  write_file(target, kPrecious);
  std::filesystem::permissions(target, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  rh::save_checkpoint_file(fitted_model(), target);
  CHECK(std::filesystem::status(target).permissions() ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  CHECK(file_bytes(target) != kPrecious);
}

TEST_CASE("a save that fails while writing leaves the old file and no temporary") {
  Folder dir;
  const std::string target = dir / "model.rhckpt";
  write_file(target, kPrecious);
  const rh::Regressor m = fitted_model();
  std::pair<rh::Errc, std::string> failure;
  {
    // Files of this process may not grow beyond 64 bytes for a moment: the write fails (EFBIG, not a signal).
    const test_os::FileSizeLimit limit(64);
    if (!limit.active()) {
      MESSAGE("no file size limit on this system: nothing to make a write fail");
      return;
    }
    failure = failure_of([&] { rh::save_checkpoint_file(m, target); });
  }
  CHECK(failure.first == rh::Errc::invalid_argument);
  CHECK(failure.second.find("cannot write") != std::string::npos);
  CHECK(file_bytes(target) == kPrecious);
  CHECK(dir.entries() == std::vector<std::string>{"model.rhckpt"});
}

TEST_CASE("a read follows a link to a checkpoint") {
  Folder dir;
  const rh::Regressor m = fitted_model();
  rh::save_checkpoint_file(m, dir / "real.rhckpt");
  if (!test_os::make_symlink(dir / "real.rhckpt", dir / "latest.rhckpt")) {
    MESSAGE("no symbolic links on this system for this user: nothing to test");
    return;
  }
  CHECK(same(rh::read_checkpoint_file(dir / "latest.rhckpt").state, m.state()));
}

TEST_CASE("a read refuses a directory, a device or a FIFO before reading anything") {
  Folder dir;
  const std::string fifo = dir / "fifo.rhckpt";
  if (test_os::make_fifo(fifo)) {
    // A writer that keeps offering junk on the FIFO, so that a reader which waits for one (as the library did until
    // issue 15) reads junk and fails with another status instead of blocking this test forever.
    std::pair<rh::Errc, std::string> on_fifo;
    {
      const test_os::FifoWriter writer(fifo);
      on_fifo = failure_of([&] { rh::read_checkpoint_file(fifo); });
    }
    CHECK(on_fifo.first == rh::Errc::invalid_argument);
    CHECK(on_fifo.second == "checkpoint: " + fifo + " is a FIFO");
  } else {
    MESSAGE("no FIFO in this system's file systems: that case is left out");
  }
  const auto on_folder = failure_of([&] { rh::read_checkpoint_file(dir / ""); });
  CHECK(on_folder.first == rh::Errc::invalid_argument);
  CHECK(on_folder.second.find("is a directory") != std::string::npos);
  // POSIX: /dev/zero, endless (read whole, it would never end); Windows: NUL.
  const std::string device = test_os::device_path();
  const auto on_device = failure_of([&] { rh::read_checkpoint_file(device); });
  CHECK(on_device.first == rh::Errc::invalid_argument);
  CHECK(on_device.second == "checkpoint: " + device + " is a device");
}

TEST_CASE("a read never goes further than the largest checkpoint of the declared p") {
  Folder dir;
  std::vector<std::uint8_t> bytes = rh::save_checkpoint(fitted_model());  // p = 2, q = 3: 340 bytes
  REQUIRE(bytes.size() == 340);
  const std::string path = dir / "huge.rhckpt";
  constexpr std::uint64_t kHuge = std::uint64_t{64} << 20;
  SUBCASE("a header that declares a huge size, in a file that really is that large") {
    put_u64(bytes, 16, kHuge);
    write_file(path, bytes);
    std::filesystem::resize_file(path, kHuge);  // sparse: costs no disk
    const long long read_before = test_os::bytes_read_so_far();
    const auto failure = failure_of([&] { rh::read_checkpoint_file(path); });
    const long long read_after = test_os::bytes_read_so_far();
    CHECK(failure.first == rh::Errc::corrupt_data);
    CHECK(failure.second == "checkpoint: declares 67108864 bytes, more than the 340 bytes a checkpoint with 2 "
                            "features can have");
    if (read_before >= 0) CHECK(read_after - read_before < 4096);
  }
  SUBCASE("a header that declares an absurd p") {
    put_u64(bytes, 88, std::uint64_t{1} << 40);  // n_features
    put_u64(bytes, 16, kHuge);
    write_file(path, bytes);
    std::filesystem::resize_file(path, kHuge);
    const long long read_before = test_os::bytes_read_so_far();
    const auto failure = failure_of([&] { rh::read_checkpoint_file(path); });
    CHECK(failure.first == rh::Errc::corrupt_data);
    CHECK(failure.second == "checkpoint: n_features 1099511627776 is too large for a checkpoint");
    if (read_before >= 0) CHECK(test_os::bytes_read_so_far() - read_before < 4096);
  }
}

// ---- Group checkpoints (rh::RegressorGroup) ---------------------------------------------------------------------

namespace {

// A ragged batch of `rows[m]` rows per model, and its offsets.
struct GroupRows {
  std::vector<double> x, y;
  std::vector<std::int64_t> offsets{0};
};
GroupRows group_rows(const std::vector<std::int64_t>& rows, std::int64_t p, unsigned seed) {
  GroupRows g;
  for (std::size_t m = 0; m < rows.size(); ++m) {
    const Batch b = make_batch(rows[m], p, seed + 31 * static_cast<unsigned>(m));
    g.x.insert(g.x.end(), b.x.begin(), b.x.end());
    g.y.insert(g.y.end(), b.y.begin(), b.y.end());
    g.offsets.push_back(g.offsets.back() + rows[m]);
  }
  return g;
}

template <class S>
void feed(rh::RegressorGroup& group, const GroupRows& g) {
  const std::vector<S> x(g.x.begin(), g.x.end()), y(g.y.begin(), g.y.end());
  group.partial_fit(rh::group_batch(x.data(), y.data(), g.offsets.data(), group.n_models(), group.n_features()));
}

// Every model's state, bit for bit, and whether it has diagnostics and a status.
bool same_models(const rh::RegressorGroup& a, const rh::RegressorGroup& b) {
  if (a.n_models() != b.n_models() || a.n_features() != b.n_features() || a.dtype() != b.dtype() ||
      !same(a.config(), b.config()))
    return false;
  for (std::int64_t m = 0; m < a.n_models(); ++m)
    if (!same(a.state(m), b.state(m)) || a.status(m) != b.status(m)) return false;
  return true;
}

rh::RegressorGroup fitted_group(rh::Dtype dtype = rh::Dtype::f64, rh::Penalty penalty = rh::Penalty::none) {
  rh::Config config;
  config.penalty = penalty;
  config.lambda_scale = 0.5;
  rh::RegressorGroup g(space_under_test(), dtype, config, 4, 3);
  const GroupRows rows = group_rows({40, 0, 35, 50}, 3, 5);  // model 1 never fitted
  if (dtype == rh::Dtype::f32) feed<float>(g, rows);
  else feed<double>(g, rows);
  return g;
}

}  // namespace

TEST_CASE("a restored group continues its stream bit for bit, and a load replaces its shape") {
  struct Case {
    rh::Dtype dtype;
    rh::Penalty penalty;
  };
  for (const Case c : {Case{rh::Dtype::f64, rh::Penalty::none}, Case{rh::Dtype::f32, rh::Penalty::none},
                       Case{rh::Dtype::f64, rh::Penalty::l1}}) {
    CAPTURE(static_cast<int>(c.dtype));
    CAPTURE(static_cast<int>(c.penalty));
    rh::Config config;
    config.penalty = c.penalty;
    config.lambda_scale = 0.5;
    const std::vector<GroupRows> stream = {group_rows({40, 0, 30, 25}, 5, 10), group_rows({20, 45, 0, 30}, 5, 20),
                                           group_rows({35, 25, 30, 0}, 5, 30), group_rows({30, 30, 30, 30}, 5, 40)};
    auto run = [&](rh::RegressorGroup& g, std::size_t from, std::size_t to) {
      for (std::size_t k = from; k < to; ++k) {
        if (c.dtype == rh::Dtype::f32) feed<float>(g, stream[k]);
        else feed<double>(g, stream[k]);
      }
    };
    rh::RegressorGroup whole(space_under_test(), c.dtype, config, 4, 5);
    run(whole, 0, stream.size());
    rh::RegressorGroup first(space_under_test(), c.dtype, config, 4, 5);
    run(first, 0, 2);
    const std::vector<std::uint8_t> bytes = rh::save_checkpoint(first);
    // Another shape and configuration: the load replaces them.
    rh::Config other;
    other.tau = 2.0;
    rh::RegressorGroup resumed(space_under_test(), c.dtype, other, 2, 7);
    rh::load_checkpoint(resumed, bytes.data(), bytes.size());
    CHECK(resumed.n_models() == 4);
    CHECK(resumed.n_features() == 5);
    CHECK(same_models(resumed, first));
    CHECK_THROWS_AS(resumed.diagnostics(0), rh::Error);  // not stored
    CHECK(rh::save_checkpoint(resumed) == bytes);
    run(resumed, 2, stream.size());
    CHECK(same_models(resumed, whole));
    // The same through a file.
    Folder dir;
    const std::string path = dir / "group.rhgckpt";
    rh::save_checkpoint_file(first, path);
    CHECK(file_bytes(path) == bytes);
    rh::RegressorGroup from_file(space_under_test(), c.dtype, config, 1, 1);
    rh::load_checkpoint_file(from_file, path);
    run(from_file, 2, stream.size());
    CHECK(same_models(from_file, whole));
  }
}

TEST_CASE("a bad group checkpoint is refused with its status and changes neither the group nor the file") {
  const rh::RegressorGroup source = fitted_group();
  const std::vector<std::uint8_t> good = rh::save_checkpoint(source);
  rh::RegressorGroup target = fitted_group();
  {
    const GroupRows more = group_rows({10, 10, 0, 10}, 3, 77);  // a state of its own, to show it is kept
    feed<double>(target, more);
  }
  const std::vector<std::uint8_t> before = rh::save_checkpoint(target);
  auto refused = [&](const std::vector<std::uint8_t>& bytes, rh::Errc code, const std::string& message) {
    const auto failure = failure_of([&] { rh::load_checkpoint(target, bytes.data(), bytes.size()); });
    CHECK(failure.first == code);
    CHECK(failure.second.find(message) != std::string::npos);
    CHECK(rh::save_checkpoint(target) == before);
  };
  for (std::size_t cut = 0; cut < good.size(); ++cut) {  // every truncation
    CAPTURE(cut);
    refused(std::vector<std::uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)),
            rh::Errc::corrupt_data, "truncated");
  }
  std::vector<std::uint8_t> longer = good;
  longer.push_back(0);
  refused(longer, rh::Errc::corrupt_data, "1 bytes follow the declared end");
  for (std::size_t at = 0; at < good.size(); ++at) {  // every flipped bit: never accepted
    for (int bit = 0; bit < 8; ++bit) {
      CAPTURE(at);
      CAPTURE(bit);
      std::vector<std::uint8_t> flipped = good;
      flipped[at] = static_cast<std::uint8_t>(flipped[at] ^ (1u << bit));
      const auto failure = failure_of([&] { rh::load_checkpoint(target, flipped.data(), flipped.size()); });
      CHECK((failure.first == rh::Errc::corrupt_data || failure.first == rh::Errc::version_mismatch));
    }
    CHECK(rh::save_checkpoint(target) == before);
  }
  std::vector<std::uint8_t> version = good;
  version[8] = 2;  // a newer format (the checksum is checked after the version)
  refused(version, rh::Errc::version_mismatch, "format version 2");
  // A single-model checkpoint is not a group checkpoint, and the other way round.
  const std::vector<std::uint8_t> single = rh::save_checkpoint(fitted_model());
  refused(single, rh::Errc::corrupt_data, "bad magic");
  rh::Regressor model(space_under_test(), rh::Dtype::f64, rh::Config{});
  CHECK(error_of([&] { rh::load_checkpoint(model, good.data(), good.size()); }) == rh::Errc::corrupt_data);
  // Another dtype.
  rh::RegressorGroup f32(space_under_test(), rh::Dtype::f32, rh::Config{}, 4, 3);
  const std::vector<std::uint8_t> f32_before = rh::save_checkpoint(f32);
  CHECK(error_of([&] { rh::load_checkpoint(f32, good.data(), good.size()); }) == rh::Errc::invalid_argument);
  CHECK(rh::save_checkpoint(f32) == f32_before);
  // decode and encode are inverse.
  const rh::GroupCheckpoint decoded = rh::decode_group_checkpoint(good.data(), good.size());
  CHECK(decoded.n_models == 4);
  CHECK(decoded.states.at(1).n_features == 0);  // never fitted
  CHECK(rh::encode_group_checkpoint(decoded) == good);
}

TEST_CASE("a group checkpoint file: links and folders refused, oversized headers read no further") {
  Folder dir;
  const rh::RegressorGroup g = fitted_group();
  const std::string link = dir / "link.rhgckpt", victim = dir / "victim", folder = dir / "folder.rhgckpt";
  write_file(victim, kPrecious);
  const bool has_link = test_os::make_symlink(victim, link);
  std::filesystem::create_directory(folder);
  const std::vector<std::string> before = dir.entries();
  CHECK(error_of([&] { rh::save_checkpoint_file(g, folder); }) == rh::Errc::invalid_argument);
  if (has_link) {
    CHECK(error_of([&] { rh::save_checkpoint_file(g, link); }) == rh::Errc::invalid_argument);
    CHECK(std::filesystem::read_symlink(link) == victim);
  } else {
    MESSAGE("no symbolic links on this system for this user: that case is left out");
  }
  CHECK(file_bytes(victim) == kPrecious);
  CHECK(dir.entries() == before);  // no temporary file left behind
  // A header that declares a huge size in a file that really is that large: refused from the header alone.
  std::vector<std::uint8_t> bytes = rh::save_checkpoint(g);
  const std::string path = dir / "huge.rhgckpt";
  constexpr std::uint64_t kHuge = std::uint64_t{64} << 20;
  put_u64(bytes, 16, kHuge);
  write_file(path, bytes);
  std::filesystem::resize_file(path, kHuge);  // sparse: costs no disk
  const long long read_before = test_os::bytes_read_so_far();
  const auto failure = failure_of([&] { rh::read_group_checkpoint_file(path); });
  CHECK(failure.first == rh::Errc::corrupt_data);
  CHECK(failure.second.find("more than the") != std::string::npos);
  if (read_before >= 0) CHECK(test_os::bytes_read_so_far() - read_before < 4096);
  // n_models 0, p outside 1..64: corrupt.
  std::vector<std::uint8_t> shape = rh::save_checkpoint(g);
  put_u64(shape, 24, 0);
  write_file(path, shape);
  CHECK(error_of([&] { rh::read_group_checkpoint_file(path); }) == rh::Errc::corrupt_data);
  shape = rh::save_checkpoint(g);
  put_u64(shape, 32, 65);
  write_file(path, shape);
  CHECK(error_of([&] { rh::read_group_checkpoint_file(path); }) == rh::Errc::corrupt_data);
  // A missing file.
  rh::RegressorGroup target = fitted_group();
  const std::vector<std::uint8_t> kept = rh::save_checkpoint(target);
  CHECK(error_of([&] { rh::load_checkpoint_file(target, dir / "absent.rhgckpt"); }) == rh::Errc::invalid_argument);
  CHECK(rh::save_checkpoint(target) == kept);
}

TEST_CASE("group set_state and reset of one model") {
  rh::RegressorGroup g = fitted_group();
  rh::Regressor single(space_under_test(), rh::Dtype::f64, rh::Config{});
  feed<double>(single, make_batch(60, 3, 99));
  const rh::State st = single.state();
  g.set_state(1, st);
  CHECK(same(g.state(1), st));
  CHECK(g.fitted(1));
  CHECK_THROWS_AS(g.diagnostics(1), rh::Error);
  const rh::State kept = g.state(0);
  g.reset(0);
  CHECK(!g.fitted(0));
  CHECK(g.state(0).n_samples_seen == 0);
  g.set_state(0, kept);
  CHECK(same(g.state(0), kept));
  // Refused, model unchanged: another p, fit_intercept differing, a K held, a bad model index.
  rh::Regressor wide(space_under_test(), rh::Dtype::f64, rh::Config{});
  feed<double>(wide, make_batch(60, 4, 98));
  const std::vector<std::uint8_t> before = rh::save_checkpoint(g);
  CHECK(error_of([&] { g.set_state(2, wide.state()); }) == rh::Errc::invalid_state);
  rh::State no_intercept = st;
  no_intercept.fit_intercept = false;
  CHECK(error_of([&] { g.set_state(2, no_intercept); }) == rh::Errc::invalid_state);
  rh::Config inference;
  inference.inference = true;
  rh::Regressor with_k(space_under_test(), rh::Dtype::f64, inference);
  feed<double>(with_k, make_batch(60, 3, 97));
  CHECK(error_of([&] { g.set_state(2, with_k.state()); }) == rh::Errc::invalid_state);
  CHECK(error_of([&] { g.set_state(4, st); }) == rh::Errc::invalid_argument);
  CHECK(error_of([&] { g.reset(-1); }) == rh::Errc::invalid_argument);
  CHECK(rh::save_checkpoint(g) == before);
}
