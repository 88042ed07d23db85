// Times the library's fused Gram + gradient pass (kernel "rh::gram_gradient", one pass over X that forms
// Xᵀdiag(c)X and Σ s_i x_i) inside real partial_fit calls, through the in-process Kokkos Tools listener of
// kernel_profile.hpp: nothing internal is called, only the kernel's label is relied on.
//
// The model should have max_iter = 1 and penalty none: every call then makes exactly one pass over every row with
// the Gram (the Newton iteration; the commit of J adds only the rows whose curvature changed, kernel
// "rh::gram_delta", which is not timed here). This is the one place that knows how the pass is reached: if the
// library exposes a direct pass call later, only this file changes (rh_gram_bench and rh_perf_worker use it).
#pragma once
#include <stdexcept>

#include "kernel_profile.hpp"
#include "rh/regressor.hpp"

namespace rh_perf {

inline constexpr const char* kGramKernel = "rh::gram_gradient";

struct GramPassTiming {
  double seconds_per_pass = 0.0;  // mean over the passes of the call
  long long passes = 0;
};

// One call: reset (untimed), then partial_fit(batch) with the listener on. Throws when no pass ran (the label
// changed: this file must follow the library).
inline GramPassTiming time_gram_pass(rh::Regressor& model, const rh::Batch& batch) {
  auto& prof = KernelProfile::instance();
  model.reset();
  prof.start();
  model.partial_fit(batch);
  prof.stop();
  const auto it = prof.kernels.find(kGramKernel);
  if (it == prof.kernels.end() || it->second.launches == 0)
    throw std::runtime_error(std::string("no kernel labelled ") + kGramKernel +
                             " ran: the library's label changed; update perf/gram_pass.hpp");
  return {it->second.seconds / static_cast<double>(it->second.launches), it->second.launches};
}

}  // namespace rh_perf
