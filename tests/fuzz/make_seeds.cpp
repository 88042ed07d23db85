// Writes the hand-made seeds of the fuzz corpora: valid checkpoints of several kinds and the ways one breaks, for the
// two checkpoint targets; a few blobs for the other two. Usage: fuzz_make_seeds tests/fuzz/corpus
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rh/checkpoint.hpp"
#include "rh/regressor.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

// The CRC-32 of docs/abi.md ("Checkpoint format"), to keep a spoiled checkpoint's checksum right.
std::uint32_t crc32(const Bytes& b, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= b[i];
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

void put(Bytes& b, std::size_t offset, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) b[offset + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
}

Bytes resealed(Bytes b) {
  put(b, b.size() - 4, crc32(b, b.size() - 4), 4);
  return b;
}

template <class S>
Bytes fitted(rh::Dtype dtype, rh::Penalty penalty, bool intercept, std::int64_t p) {
  rh::Config config;
  config.penalty = penalty;
  config.fit_intercept = intercept;
  rh::Regressor m(rh::Space::serial, dtype, config);
  std::vector<S> x, y;
  for (std::int64_t i = 0; i < 12; ++i) {
    S yi = 0;
    for (std::int64_t j = 0; j < p; ++j) {
      x.push_back(static_cast<S>((i * (j + 3)) % 7) - 3);
      yi += x.back() * static_cast<S>(j + 1);
    }
    y.push_back(yi + static_cast<S>(i % 2));
  }
  m.partial_fit(rh::host_batch(x.data(), y.data(), 12, p));
  return rh::save_checkpoint(m);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT\n", argv[0]);
    return 2;
  }
  const Bytes f64 = fitted<double>(rh::Dtype::f64, rh::Penalty::none, true, 3);
  Bytes truncated(f64.begin(), f64.begin() + static_cast<std::ptrdiff_t>(f64.size() / 2));
  Bytes flipped = f64;
  flipped[150] ^= 0x20;
  Bytes magic = f64;
  magic[1] = 'X';
  Bytes version = f64;
  put(version, 8, 2, 4);
  Bytes trailing = f64;
  trailing.insert(trailing.end(), 16, 0xAB);
  Bytes huge = f64;
  put(huge, 16, std::uint64_t{1} << 40, 8);
  Bytes empty_with_content = f64;  // checksum right, n_samples_seen = batch_count = weight_sum = 0
  put(empty_with_content, 88, 0, 8);
  put(empty_with_content, 96, 0, 8);
  put(empty_with_content, 112, 0, 8);
  Bytes intercept_mismatch = f64;
  put(intercept_mismatch, 120, 0, 4);
  const std::vector<std::pair<std::string, Bytes>> seeds = {
      {"valid-f64-none-p3", f64},
      {"valid-f32-l1-p2-no-intercept", fitted<float>(rh::Dtype::f32, rh::Penalty::l1, false, 2)},
      {"valid-f64-l1-p5", fitted<double>(rh::Dtype::f64, rh::Penalty::l1, true, 5)},
      {"valid-empty", rh::save_checkpoint(rh::Regressor(rh::Space::serial, rh::Dtype::f64))},
      {"broken-truncated", truncated},
      {"broken-flipped-byte", flipped},
      {"broken-magic", magic},
      {"broken-version-2", resealed(version)},
      {"broken-trailing-bytes", trailing},
      {"broken-declares-1TiB", resealed(huge)},
      {"broken-empty-state-with-content", resealed(empty_with_content)},
      {"broken-intercept-mismatch", resealed(intercept_mismatch)},
  };
  for (const char* target : {"checkpoint_decode", "checkpoint_file"}) {
    const std::filesystem::path dir = std::filesystem::path(argv[1]) / target;
    std::filesystem::create_directories(dir);
    for (const auto& seed : seeds) {
      std::ofstream out(dir / seed.first, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(seed.second.data()), static_cast<std::streamsize>(seed.second.size()));
    }
  }
  // The FuzzedDataProvider targets read choices, not a format: a few plain and pseudo-random blobs start them off.
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<std::uint8_t>(state);
  };
  for (const char* target : {"state_import", "abi_arguments"}) {
    const std::filesystem::path dir = std::filesystem::path(argv[1]) / target;
    std::filesystem::create_directories(dir);
    std::vector<std::pair<std::string, Bytes>> blobs = {{"zeros-256", Bytes(256, 0)}, {"ones-256", Bytes(256, 0xFF)}};
    for (std::size_t n : {32, 128, 512, 2048}) {
      Bytes b(n);
      for (auto& v : b) v = next();
      blobs.push_back({"random-" + std::to_string(n), b});
    }
    for (const auto& blob : blobs) {
      std::ofstream out(dir / blob.first, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(blob.second.data()), static_cast<std::streamsize>(blob.second.size()));
    }
  }
  return 0;
}
