// How a float32 group model g stands against its float32 single-model fit e and the float64 fit w of the same values,
// every value divided by `scale` (1 for β; J's largest entry for J), with the float32 floors rtol / atol. `same`: g
// within the floors of e, entry by entry (it took e's path). `near_w`: g no further from w than the larger of twice
// e's distance and the floors of w, what a model on another path must meet: where a group sums in another order than
// the single model (a device), float32's last accept/reject is rounding's choice (docs/api.md, "Model groups").
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace rh::test {

struct Float32Path {
  bool same = true, near_w = true;
  double to_w = 0.0, e_to_w = 0.0;  // largest |g − w| and |e − w|, scaled
};

inline Float32Path float32_path(const std::vector<double>& g, const std::vector<double>& e,
                                const std::vector<double>& w, double scale, double rtol, double atol) {
  Float32Path r;
  double w_max = 0.0;
  for (std::size_t j = 0; j < g.size(); ++j) {
    r.same = r.same && std::fabs(g[j] - e[j]) / scale <= atol + rtol * std::fabs(e[j]) / scale;
    r.to_w = std::max(r.to_w, std::fabs(g[j] - w[j]) / scale);
    r.e_to_w = std::max(r.e_to_w, std::fabs(e[j] - w[j]) / scale);
    w_max = std::max(w_max, std::fabs(w[j]) / scale);
  }
  r.near_w = r.to_w <= std::max(2.0 * r.e_to_w, atol + rtol * w_max);
  return r;
}

}  // namespace rh::test
