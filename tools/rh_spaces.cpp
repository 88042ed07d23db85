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
  // A test profile is the ctest label of a space's tests: cpu (the host spaces) or a device space's own name. A
  // device profile is checked before Kokkos starts: a device build cannot initialize Kokkos without its device.
  if (!required.empty() && required != "cpu") {
    rh::Space space;
    try {
      space = rh::space_from_name(required);
    } catch (const rh::Error&) {
      fmt::print(stderr, "unknown test profile '{}' (known: cpu, or the name of a device space)\n", required);
      return 2;
    }
    if (rh::device_count(space) == 0) {
      fmt::print(stderr, "profile {} needs the {} space compiled ({}) and a device present (none found)\n", required,
                 required, rh::space_compiled(space) ? "it is" : "it is not");
      return 2;
    }
  }
  const auto spaces = rh::compiled_spaces();
  fmt::print("renewable-huber {} on Kokkos {}\n", rh::library_version(), rh::kokkos_version());
  for (const auto& s : spaces)
    fmt::print("  space {:<7} concurrency {:>7}  devices {}\n", s.name, s.concurrency, s.device_count);
  return 0;
}
