// Prints the compiled execution spaces. With --require-profile P, exits 2 unless the spaces that test profile
// needs are compiled and have a device: a missing GPU is a setup failure, never a pass by skipping.
#include <cstring>
#include <fmt/format.h>
#include <string>

#include "rh/regressor.hpp"

int main(int argc, char** argv) {
  std::string required;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--require-profile") == 0 && i + 1 < argc) required = argv[++i];
  // Checked before Kokkos starts: a CUDA build cannot initialize Kokkos on a machine without a GPU.
  if (required == "cuda" && rh::device_count(rh::Space::cuda) == 0) {
    fmt::print(stderr, "profile cuda needs the CUDA space compiled ({}) and a CUDA device present (none found)\n",
               rh::space_compiled(rh::Space::cuda) ? "it is" : "it is not");
    return 2;
  }
  if (required != "" && required != "cpu" && required != "cuda") {
    fmt::print(stderr, "unknown test profile '{}' (known: cpu, cuda)\n", required);
    return 2;
  }
  const auto spaces = rh::compiled_spaces();
  fmt::print("renewable-huber {} on Kokkos {}\n", rh::library_version(), rh::kokkos_version());
  for (const auto& s : spaces)
    fmt::print("  space {:<7} concurrency {:>7}  devices {}\n", s.name, s.concurrency, s.device_count);
  return 0;
}
