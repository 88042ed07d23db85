// The sequential reference of every solver pass (rh/detail/passes.hpp): plain host loops over row-major double
// arrays, summed in double in index order, written from docs/method.md without any of the library's code. The
// tests run each space's pass and this reference on the same inputs and compare within a bound derived from the
// pass's own rounding (tests/unit/test_pass_*.cpp). Like Ginkgo's reference executor: slow and obviously correct.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rh::reference {

using Values = std::vector<double>;

// The method's scalar formulas (docs/method.md §2), directly.
inline double loss(double r, double tau) {
  return std::fabs(r) <= tau ? 0.5 * r * r : tau * std::fabs(r) - 0.5 * tau * tau;
}
inline double score(double r, double tau) { return std::min(tau, std::max(-tau, r)); }
inline double curvature(double r, double tau, double h) {
  h = std::min(h, tau);
  const double a = std::fabs(r);
  if (a < tau - h) return 1.0;
  if (a > tau + h) return 0.0;
  return 0.5 - (a - tau) / (2.0 * h);
}
inline double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }
inline double soft_threshold(double v, double t) { return v > t ? v - t : (v < -t ? v + t : 0.0); }

// The penalties (docs/method.md §4), each by its name (rh_penalty_name): the pass tests iterate the library's list of
// penalties and ask for each its reference here, so a penalty without one fails them.
[[noreturn]] inline void unknown_penalty(const std::string& penalty) {
  throw std::invalid_argument("tests/reference/passes.hpp has no reference of penalty " + penalty);
}
// Its term of the Newton gradient g_j (subtracted from the data part), m_j = 1 for a penalized coefficient, `hist` the
// weight of its term carried from earlier batches (BatchScalars::historical).
inline double penalty_gradient(const std::string& penalty, double hist, double m, double tilde_j) {
  if (penalty == "none") return 0.0;
  if (penalty == "l1") return hist * m * sign(tilde_j);  // the historical subgradient term
  unknown_penalty(penalty);
}
// The size of that term, for a rounding bound.
inline double penalty_gradient_scale(const std::string& penalty, double hist) {
  if (penalty == "none") return 0.0;
  if (penalty == "l1") return hist;
  unknown_penalty(penalty);
}

// A staged batch: n rows of q values (intercept column last when there is one), y and w (w empty: all 1).
struct Rows {
  long long n = 0, q = 0;
  Values x, y, w;
  double weight(long long i) const { return w.empty() ? 1.0 : w[static_cast<size_t>(i)]; }
  double at(long long i, long long j) const { return x[static_cast<size_t>(i * q + j)]; }
};

// 1. stage: element (i, j) of a caller's X is x[i·ld + j] (row-major) or x[j·ld + i] (column-major).
template <class S>
Rows stage(const S* x, const S* y, const S* w, long long n, long long p, long long ld, bool row_major, bool intercept) {
  Rows r;
  r.n = n;
  r.q = p + (intercept ? 1 : 0);
  for (long long i = 0; i < n; ++i) {
    for (long long j = 0; j < p; ++j) r.x.push_back(static_cast<double>(row_major ? x[i * ld + j] : x[j * ld + i]));
    if (intercept) r.x.push_back(1.0);
    if (y) r.y.push_back(static_cast<double>(y[i]));
    if (w) r.w.push_back(static_cast<double>(w[i]));
  }
  return r;
}

// validate: what is wrong with a batch, and its weight.
struct Check {
  long long non_finite_x = 0, non_finite_y = 0, non_finite_w = 0, negative_w = 0;
  double weight_sum = 0.0;
};
inline Check validate(const Rows& r) {
  Check c;
  for (long long i = 0; i < r.n; ++i) {
    for (long long j = 0; j < r.q; ++j) c.non_finite_x += std::isfinite(r.at(i, j)) ? 0 : 1;
    if (!r.y.empty()) c.non_finite_y += std::isfinite(r.y[static_cast<size_t>(i)]) ? 0 : 1;
    c.non_finite_w += std::isfinite(r.weight(i)) ? 0 : 1;
    c.negative_w += r.weight(i) < 0 ? 1 : 0;
    c.weight_sum += r.weight(i);
  }
  return c;
}

// 2. The weighted Gram G = Σ c_i x_i x_iᵀ (full q×q) and data gradient u = Σ s_i x_i.
struct GramGradient {
  Values gram, gradient;
};
inline GramGradient gram_gradient(const Rows& r, const Values& s, const Values& c) {
  GramGradient out{Values(static_cast<size_t>(r.q * r.q), 0.0), Values(static_cast<size_t>(r.q), 0.0)};
  for (long long i = 0; i < r.n; ++i)
    for (long long j = 0; j < r.q; ++j) {
      out.gradient[static_cast<size_t>(j)] += s[static_cast<size_t>(i)] * r.at(i, j);
      for (long long k = 0; k < r.q; ++k)
        out.gram[static_cast<size_t>(j * r.q + k)] += c[static_cast<size_t>(i)] * r.at(i, j) * r.at(i, k);
    }
  return out;
}

// 3. The Newton system (§4, §5): H = (G + J)/N + ridge·I, g = (J(β − β̃) − u)/N − the penalty's gradient term
// (penalty_gradient). m_j = 1 for j < penalized.
struct Assembled {
  Values hessian, gradient;
};
inline Assembled assemble(const Values& gram, const Values& u, const Values& info, const Values& cur,
                          const Values& tilde, double inv_n, double ridge, const std::string& penalty, double hist,
                          long long penalized) {
  const auto q = static_cast<long long>(u.size());
  Assembled a{Values(static_cast<size_t>(q * q)), Values(static_cast<size_t>(q))};
  for (long long j = 0; j < q; ++j) {
    double jd = 0.0;
    for (long long k = 0; k < q; ++k) {
      const size_t e = static_cast<size_t>(j * q + k);
      a.hessian[e] = (gram[e] + info[e]) * inv_n + (j == k ? ridge : 0.0);
      jd += info[e] * (cur[static_cast<size_t>(k)] - tilde[static_cast<size_t>(k)]);
    }
    const double m = j < penalized ? 1.0 : 0.0;
    a.gradient[static_cast<size_t>(j)] =
        (jd - u[static_cast<size_t>(j)]) * inv_n - penalty_gradient(penalty, hist, m, tilde[static_cast<size_t>(j)]);
  }
  return a;
}

// 4. a·x = b by Gaussian elimination with partial pivoting (first largest |a_ik|, as LAPACK's getrf). status: 0 ok,
// 1 exactly singular (a zero or NaN pivot), 2 a non-finite solution — the codes of rh::detail::SolveStatus.
struct Solution {
  Values x;
  int status = 0;
};
inline Solution lu_solve(Values a, Values b) {
  const auto q = static_cast<long long>(b.size());
  auto A = [&](long long i, long long j) -> double& { return a[static_cast<size_t>(i * q + j)]; };
  for (long long k = 0; k < q; ++k) {
    long long piv = -1;
    double best = 0.0;
    for (long long i = k; i < q; ++i)
      if (std::fabs(A(i, k)) > best) {
        best = std::fabs(A(i, k));
        piv = i;
      }
    if (piv < 0) return {Values(), 1};
    for (long long j = 0; j < q; ++j) std::swap(A(k, j), A(piv, j));
    std::swap(b[static_cast<size_t>(k)], b[static_cast<size_t>(piv)]);
    for (long long i = k + 1; i < q; ++i) {
      const double l = A(i, k) / A(k, k);
      for (long long j = k; j < q; ++j) A(i, j) -= l * A(k, j);
      b[static_cast<size_t>(i)] -= l * b[static_cast<size_t>(k)];
    }
  }
  Values x(static_cast<size_t>(q));
  for (long long k = q - 1; k >= 0; --k) {
    double s = b[static_cast<size_t>(k)];
    for (long long j = k + 1; j < q; ++j) s -= A(k, j) * x[static_cast<size_t>(j)];
    x[static_cast<size_t>(k)] = s / A(k, k);
  }
  for (double v : x)
    if (!std::isfinite(v)) return {x, 2};
  return {x, 0};
}

// The minimum-norm solution of V·diag(σ)·Vᵀ x = b for an orthonormal V (q×q, row-major): V·diag(1/σ or 0)·Vᵀ b,
// σ_i counting as zero at or below `cutoff`.
inline Values min_norm_solve(const Values& v, const Values& sigma, const Values& b, double cutoff) {
  const auto q = static_cast<long long>(b.size());
  Values x(static_cast<size_t>(q), 0.0);
  for (long long i = 0; i < q; ++i) {
    if (!(sigma[static_cast<size_t>(i)] > cutoff)) continue;
    double coef = 0.0;  // (column i of V)ᵀ b / σ_i
    for (long long k = 0; k < q; ++k) coef += v[static_cast<size_t>(k * q + i)] * b[static_cast<size_t>(k)];
    coef /= sigma[static_cast<size_t>(i)];
    for (long long k = 0; k < q; ++k) x[static_cast<size_t>(k)] += coef * v[static_cast<size_t>(k * q + i)];
  }
  return x;
}

// 5. The batch objective's sums at a candidate (§4) and the row weights there: s_i = w_i ψ(r_i), c_i = w_i φ(r_i).
struct Evaluation {
  double loss = 0, quad = 0, step2 = 0, cand2 = 0;  // every penalty; its own sums: penalty_terms
  Values s, c;
};
inline Evaluation evaluate(const Rows& r, const Values& cand, const Values& cur, const Values& tilde,
                           const Values& info, double tau, double h) {
  Evaluation e;
  for (long long i = 0; i < r.n; ++i) {
    double fit = 0.0;
    for (long long j = 0; j < r.q; ++j) fit += r.at(i, j) * cand[static_cast<size_t>(j)];
    const double res = r.y[static_cast<size_t>(i)] - fit, w = r.weight(i);
    e.loss += w * loss(res, tau);
    e.s.push_back(w * score(res, tau));
    e.c.push_back(w * curvature(res, tau, h));
  }
  for (long long j = 0; j < r.q; ++j) {
    const auto J = static_cast<size_t>(j);
    const double delta = cand[J] - tilde[J], step = cand[J] - cur[J];
    double jd = 0.0;
    for (long long k = 0; k < r.q; ++k)
      jd += info[static_cast<size_t>(j * r.q + k)] * (cand[static_cast<size_t>(k)] - tilde[static_cast<size_t>(k)]);
    e.quad += delta * jd;
    e.step2 += step * step;
    e.cand2 += cand[J] * cand[J];
  }
  return e;
}

// The penalty's own sums at a candidate (by the names of the library's Sums::for_each), each with the sum of its
// terms' magnitudes (for a rounding bound), and its term of F_b (§4) with the magnitude of its parts.
struct PenaltySum {
  double value = 0, magnitude = 0;
};
struct PenaltyTerms {
  std::map<std::string, PenaltySum> sums;
  double objective = 0, objective_magnitude = 0;
};
inline PenaltyTerms penalty_terms(const std::string& penalty, const Values& cand, const Values& cur,
                                  const Values& tilde, const Values& grad, double hist, long long penalized) {
  PenaltyTerms t;
  if (penalty == "none") return t;
  if (penalty != "l1") unknown_penalty(penalty);
  PenaltySum historical, gstep, l1;  // Σ m_j sign(β̃_j) δ_j, gᵀ(cand − β), Σ m_j |cand_j|
  for (size_t j = 0; j < cand.size(); ++j) {
    const double delta = cand[j] - tilde[j], step = cand[j] - cur[j];
    const double m = static_cast<long long>(j) < penalized ? 1.0 : 0.0;
    historical.value += m * sign(tilde[j]) * delta;
    historical.magnitude += std::fabs(delta);
    gstep.value += grad[j] * step;
    gstep.magnitude += std::fabs(grad[j] * step);
    l1.value += m * std::fabs(cand[j]);
    l1.magnitude += std::fabs(cand[j]);
  }
  t.sums = {{"hist", historical}, {"gstep", gstep}, {"l1", l1}};
  t.objective = -hist * historical.value;  // the historical subgradient term of F_b
  t.objective_magnitude = hist * historical.magnitude;
  return t;
}

// The candidate: S(cur − step·dir, threshold) on coefficients [0, penalized), cur − step·dir elsewhere.
inline Values candidate(const Values& cur, const Values& dir, double step, double threshold, long long penalized) {
  Values out;
  for (size_t j = 0; j < cur.size(); ++j) {
    const double v = cur[j] - step * dir[j];
    out.push_back(static_cast<long long>(j) < penalized ? soft_threshold(v, threshold) : v);
  }
  return out;
}

// 6. The commit (§7): J_new = J + G, and how many values of β and J_new are not finite.
struct Commit {
  Values info;
  long long non_finite = 0;
};
inline Commit commit(const Values& info, const Values& gram, const Values& beta) {
  Commit c{Values(info.size())};
  for (size_t e = 0; e < info.size(); ++e) {
    c.info[e] = info[e] + gram[e];
    c.non_finite += std::isfinite(c.info[e]) ? 0 : 1;
  }
  for (double b : beta) c.non_finite += std::isfinite(b) ? 0 : 1;
  return c;
}

}  // namespace rh::reference
