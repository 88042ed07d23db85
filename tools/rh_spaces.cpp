// Prints the compiled execution spaces. With --require-profile P, exits 2 unless the spaces that test profile
// needs are compiled and have a device: a missing GPU is a setup failure, never a pass by skipping.
#include <cstring>
#include <fmt/format.h>
#include <string>

#include "rh/regressor.hpp"

int main(int argc, char** argv) {
  const auto spaces = rh::compiled_spaces();
  std::string required;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--require-profile") == 0 && i + 1 < argc) required = argv[++i];
  fmt::print("renewable-huber {} on Kokkos {}\n", rh::library_version(), rh::kokkos_version());
  bool cuda_ready = false;
  for (const auto& s : spaces) {
    fmt::print("  space {:<7} concurrency {:>7}  devices {}\n", s.name, s.concurrency, s.device_count);
    if (s.space == rh::Space::cuda && s.device_count > 0) cuda_ready = true;
  }
  if (required.empty() || required == "cpu") return 0;
  if (required == "cuda") {
    if (cuda_ready) return 0;
    fmt::print(stderr, "profile cuda needs the CUDA space compiled and a CUDA device present\n");
    return 2;
  }
  fmt::print(stderr, "unknown test profile '{}' (known: cpu, cuda)\n", required);
  return 2;
}
