// The Kokkos functors of the solver's passes (rh/detail/passes.hpp), written once for every execution space.
//
// One Newton iteration reads X twice: GramGradient (data gradient Σ s_i x_i over every row, and the weighted Gram
// Σ c_i x_i x_iᵀ over every row or only over the rows whose curvature weight changed) and LineSearchRows (r = y − Xβ
// and u = X·d, from which every step of the line search is priced without reading X again). AcceptStep then moves
// the row weights s_i = w_i ψ(r_i), c_i = w_i φ(r_i) to the accepted step. An L1 iteration reads X once per
//
// One header per pass under kernels/ (each path a named piece; the host SIMD code under kernels/host_simd/).
#pragma once

#include "rh/detail/kernels/accept_step.hpp"
#include "rh/detail/kernels/commit.hpp"
#include "rh/detail/kernels/evaluation.hpp"
#include "rh/detail/kernels/gram_gradient.hpp"
#include "rh/detail/kernels/line_search.hpp"
#include "rh/detail/kernels/newton_system.hpp"
#include "rh/detail/kernels/prediction.hpp"
#include "rh/detail/kernels/stage.hpp"
