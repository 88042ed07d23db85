// tools/rh replay FILE [--space S] [--no-floor]: replays a golden corpus on every compiled space (or one), one line per
// case and space, then "N passed, M failed". Exits 1 on any failure, 2 on bad usage or an unreadable file.
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <string>

#include "golden_replay.hpp"

int main(int argc, char** argv) {
  std::string file, only;
  bool use_floors = true;  // --no-floor: hold every case to its own tolerance only (measures what floors cover)
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--space") == 0 && i + 1 < argc) only = argv[++i];
    else if (std::strcmp(argv[i], "--no-floor") == 0) use_floors = false;
    else if (file.empty()) file = argv[i];
    else { fmt::print(stderr, "usage: rh_replay FILE [--space serial|openmp|cuda] [--no-floor]\n"); return 2; }
  }
  if (file.empty()) { fmt::print(stderr, "usage: rh_replay FILE [--space serial|openmp|cuda] [--no-floor]\n"); return 2; }
  std::vector<rh::Space> spaces;
  for (const auto& s : rh::compiled_spaces())
    if (only.empty() || only == s.name) spaces.push_back(s.space);
  if (spaces.empty()) { fmt::print(stderr, "space '{}' is not compiled into this build\n", only); return 2; }
  try {
    int passed = 0, failed = 0;
    for (const auto& r : rh::golden::replay_file(file, spaces, use_floors)) {
      (r.passed ? passed : failed) += 1;
      fmt::print("{} {:<36} {:<7} {:<8} worst {:.3g} of tolerance{}{} iterations [{}]\n", r.passed ? "PASS" : "FAIL",
                 r.id, rh::space_name(r.space), rh::dtype_name(r.dtype), r.worst,
                 r.worst_field.empty() ? "" : " at ", r.worst_field, fmt::join(r.iterations, ","));
      if (!r.passed) fmt::print("     {}\n", r.failure);
    }
    fmt::print("{} passed, {} failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rh_replay: {}\n", e.what());
    return 2;
  }
}
