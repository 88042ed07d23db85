// Replays a golden corpus (schema "renewable-huber-native-golden", version 1 or 2) through rh::Regressor and
// compares every batch's state and diagnostics, and the probe predictions, within the case tolerances.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rh/regressor.hpp"

namespace rh::golden {

struct Tolerance {
  double rtol;
  double atol;
};

// The least tolerance a space and dtype is held to (golden/README.md gives the measured reason for each).
// A case's own rtol/atol applies when it is looser.
Tolerance floor_for(Space space, Dtype dtype);

// A corpus case's "config" object as an rh::Config (an unknown penalty name is an error, never another).
Config config_from(const nlohmann::json& c);

struct CaseResult {
  std::string id;
  Space space;
  Dtype dtype;
  bool passed = true;
  double worst = 0.0;          // largest |got − want| / (atol + rtol·|want|): ≤ 1 passes
  std::string worst_field;     // where it occurred
  std::string failure;         // first failed comparison, empty when passed
  std::vector<int> iterations; // per batch, informational (never compared)
};

// Replays every case of the file on each of `spaces`. Throws std::runtime_error for an unreadable file.
// With use_floors = false every case is held to its own rtol/atol only (to measure what a floor must cover).
std::vector<CaseResult> replay_file(const std::string& path, const std::vector<Space>& spaces, bool use_floors = true);

}  // namespace rh::golden
