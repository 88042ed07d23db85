// tools/rh replay FILE [--space S] [--no-floor] [--max-worst F]: replays a golden corpus on every compiled space (or
// one), one line per case and space, the corpus's margin (its worst float64 fraction of tolerance), then "N passed,
// M failed". --max-worst F also fails a float64 case that passes but uses more than F of its tolerance: a drift
// guard, so that a change moving a result shows long before it breaks a tolerance (ctest runs it with 0.5).
// Exits 1 on any failure, 2 on bad usage or an unreadable file.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <string>

#include "golden_replay.hpp"

int main(int argc, char** argv) {
  std::string file, only;
  bool use_floors = true;  // --no-floor: hold every case to its own tolerance only (measures what floors cover)
  double max_worst = 1.0;   // of a float64 case's tolerance
  const char* usage = "usage: rh_replay FILE [--space NAME (a compiled space: rh_spaces lists them)] [--no-floor] [--max-worst F]\n";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--space") == 0 && i + 1 < argc) only = argv[++i];
    else if (std::strcmp(argv[i], "--max-worst") == 0 && i + 1 < argc) {
      char* end = nullptr;
      max_worst = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(max_worst > 0 && max_worst <= 1)) { fmt::print(stderr, usage); return 2; }
    }
    else if (std::strcmp(argv[i], "--no-floor") == 0) use_floors = false;
    else if (file.empty()) file = argv[i];
    else { fmt::print(stderr, usage); return 2; }
  }
  if (file.empty()) { fmt::print(stderr, usage); return 2; }
  std::vector<rh::Space> spaces;
  for (const auto& s : rh::compiled_spaces())
    if (only.empty() || only == s.name) spaces.push_back(s.space);
  if (spaces.empty()) { fmt::print(stderr, "space '{}' is not compiled into this build\n", only); return 2; }
  try {
    int passed = 0, failed = 0;
    const rh::golden::CaseResult* margin = nullptr;  // the float64 case that uses the most of its tolerance
    const auto results = rh::golden::replay_file(file, spaces, use_floors);
    for (const auto& r : results) {
      const bool f64 = r.dtype == rh::Dtype::f64;
      const bool within = r.passed && (!f64 || r.worst <= max_worst);
      (within ? passed : failed) += 1;
      if (f64 && (!margin || r.worst > margin->worst)) margin = &r;
      fmt::print("{} {:<44} {:<7} {:<8} worst {:.3g} of tolerance{}{} iterations [{}]\n", within ? "PASS" : "FAIL",
                 r.id, rh::space_name(r.space), rh::dtype_name(r.dtype), r.worst,
                 r.worst_field.empty() ? "" : " at ", r.worst_field, fmt::join(r.iterations, ","));
      if (!r.passed) fmt::print("     {}\n", r.failure);
      else if (!within) fmt::print("     passes, but uses {:.3g} of its tolerance, more than --max-worst {:g}\n", r.worst, max_worst);
    }
    if (margin)
      fmt::print("margin: worst float64 case {} on {}, {:.3g} of its tolerance (at {})\n", margin->id,
                 rh::space_name(margin->space), margin->worst, margin->worst_field);
    fmt::print("{} passed, {} failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rh_replay: {}\n", e.what());
    return 2;
  }
}
