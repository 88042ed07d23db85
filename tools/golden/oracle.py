"""Independent NumPy oracle for the renewable Huber update.

This is a direct transcription of the method as docs/method.md specifies it (the RHE / RPSHE
method of Jiang, Liang & Yu, 2024); section numbers (§k) in comments refer to that document.
It favours clarity over speed: every batch builds the full dense design and solves densely.

Arithmetic precision is a parameter (`dtype`): the golden corpora are generated in float64
(float32 cases are evaluated in float64 on float32-rounded inputs, see golden/README.md); the
robustness study replays float32 cases in genuine float32 arithmetic to measure how far a float32
solver lands from the float64 answer.
"""

from dataclasses import dataclass, field
import math

import reproducible  # noqa: F401  (before NumPy: the same BLAS kernels on every CPU)
import numpy as np

import penalties

@dataclass(frozen=True)
class Config:
    """The numerically relevant part of the estimator configuration."""
    tau: float
    penalty: str                 # a name of penalties.BY_NAME
    lambda_scale: float
    bandwidth_scale: float
    fit_intercept: bool
    max_iter: int
    tol: float
    ridge: float

    @classmethod
    def from_params(cls, params):
        return cls(**{name: params[name] for name in cls.__dataclass_fields__})


@dataclass
class State:
    """Renewable state carried between batches (§7). Arrays are in the arithmetic dtype."""
    coefficients: np.ndarray
    information: np.ndarray
    score_variance: np.ndarray       # K of §12
    n_samples_seen: int = 0
    batch_count: int = 0
    previous_lambda: float = 0.0
    weight_sum: float = 0.0

    @classmethod
    def empty(cls, n_coefficients, dtype=np.float64):
        square = (n_coefficients, n_coefficients)
        return cls(np.zeros(n_coefficients, dtype), np.zeros(square, dtype), np.zeros(square, dtype))


@dataclass
class Diagnostics:
    iterations: int
    converged: bool
    objective: float
    lambda_value: float
    bandwidth: float


@dataclass
class Trace:
    """Optional record of the solver's accepted iterations: (‖Δβ‖₂, tol·(1+‖β_new‖₂)) each."""
    steps: list = field(default_factory=list)


@dataclass
class Perturbation:
    """Emulates another implementation's rounding, for the robustness study only.

    Every objective comparison (line search, majorization test) is blurred by uniform random noise of
    relative size `decision_noise` (relative to |f|), and every convergence threshold by a random factor
    1 ± `threshold_noise`. A candidate equal to the current β is always accepted, as any
    implementation would (its objective is bitwise the same).
    """
    rng: np.random.Generator
    decision_noise: float
    threshold_noise: float

    def accept(self, lhs, rhs, scale, tie):
        blur = self.decision_noise * abs(float(scale)) * self.rng.uniform(-1, 1)
        return tie or float(lhs) <= float(rhs) + blur

    def converged(self, step, threshold):
        return step <= threshold * (1 + self.threshold_noise * self.rng.uniform(-1, 1))


# ---------------------------------------------------------------------------------------------
# §2 Loss, score, curvature
# ---------------------------------------------------------------------------------------------

def huber_loss(r, tau):
    """Classical (unsmoothed) Huber loss ρ_τ."""
    a = np.abs(r)
    return np.where(a <= tau, 0.5 * r * r, tau * a - 0.5 * tau * tau)


def huber_score(r, tau):
    """Ordinary Huber score ψ_τ = clip(r, −τ, τ); the only score used by the update."""
    return np.clip(r, -tau, tau)


def smoothed_curvature(r, tau, h):
    """Derivative of the smoothed score (paper Eq. 2.1): 1 inside, linear ramps of half-width h."""
    h = min(h, tau)
    a = np.abs(r)
    ramp = 0.5 - (a - tau) / (2 * h)
    return np.where(a < tau - h, 1, np.where(a <= tau + h, ramp, 0)).astype(np.asarray(r).dtype)


def smoothed_score(r, tau, h):
    """Smoothed score of paper Eq. 2.1. Not used by the update; kept for the §2 golden points."""
    h = min(h, tau)
    a = np.abs(r)
    s = tau - a                                  # = r + τ on the left ramp, mirrored by oddness
    left_ramp = h / 4 - tau + s / 2 + s * s / (4 * h)
    magnitude = np.where(a < tau - h, a, np.where(a <= tau + h, -left_ramp, tau))
    return np.sign(r) * magnitude


# ---------------------------------------------------------------------------------------------
# §3 Per-batch scalars
# ---------------------------------------------------------------------------------------------

def bandwidth(bandwidth_scale, tau, cumulative_weight, n_features):
    return min(bandwidth_scale / (math.sqrt(cumulative_weight) * math.log(max(n_features, 2))), tau)


def design_matrix(X, fit_intercept, dtype):
    """Rows x_i; with an intercept the trailing column is ones (the last coefficient)."""
    X = np.asarray(X, dtype=dtype)
    if fit_intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1), dtype=dtype)])
    return X


def penalty_mask(n_coefficients, fit_intercept, dtype):
    mask = np.ones(n_coefficients, dtype=dtype)
    if fit_intercept:
        mask[-1] = 0
    return mask


# ---------------------------------------------------------------------------------------------
# §4 Surrogate objective for one batch
# ---------------------------------------------------------------------------------------------

class BatchObjective:
    """F_b, ∇F_b and H_b of §4 for one batch, in a fixed arithmetic dtype."""

    def __init__(self, X, y, w, state, config, h, cumulative_weight, historical):
        self.X, self.y, self.w = X, y, w
        self.beta_ref = state.coefficients
        self.J = state.information
        dt = X.dtype.type
        self.tau, self.h, self.n = dt(config.tau), dt(h), dt(cumulative_weight)
        self.ridge = dt(config.ridge)
        self.historical = historical          # (N_{b−1}/N_b)·λ̃·(m ∘ sign(β̃)), or zeros

    def residuals(self, beta):
        return self.y - self.X @ beta

    def value(self, beta):
        # Each term is divided by N_b separately. The rounding of F decides noise-level line-search
        # steps; this form reproduces the reference corpus where one of its Newton endgames does so.
        d = beta - self.beta_ref
        data = np.sum(self.w * huber_loss(self.residuals(beta), self.tau))
        proximity = self.J.dtype.type(0.5) * (d @ (self.J @ d))
        return data / self.n + proximity / self.n - self.historical @ d

    def gradient(self, beta):
        d = beta - self.beta_ref
        psi = huber_score(self.residuals(beta), self.tau)
        return (self.J @ d - self.X.T @ (self.w * psi)) / self.n - self.historical

    def hessian(self, beta):
        phi = smoothed_curvature(self.residuals(beta), self.tau, self.h)
        H = (weighted_gram(self.X, self.w * phi) + self.J) / self.n
        return H + self.ridge * np.eye(H.shape[0], dtype=H.dtype)


def weighted_gram(X, weights):
    """Σ_i weights_i x_i x_iᵀ."""
    return X.T @ (weights[:, None] * X)


# ---------------------------------------------------------------------------------------------
# §5, §6 The solvers' two tests (each penalty's solver is in penalties/)
# ---------------------------------------------------------------------------------------------

class Decisions:
    """The solver's two tests, exact by default, optionally blurred by a Perturbation and recorded."""

    def __init__(self, tol, trace=None, perturbation=None):
        self.tol, self.trace, self.perturbation = tol, trace, perturbation

    def accept(self, lhs, rhs, scale, tie):
        if self.perturbation is not None:
            return self.perturbation.accept(lhs, rhs, scale, tie)
        return lhs <= rhs

    def converged(self, delta, beta_new):
        """§5/§6 stopping rule ‖Δβ‖₂ ≤ tol·(1 + ‖β_new‖₂)."""
        step = float(np.linalg.norm(delta))
        threshold = self.tol * (1.0 + float(np.linalg.norm(beta_new)))
        if self.trace is not None:
            self.trace.steps.append((step, threshold))
        if self.perturbation is not None:
            return self.perturbation.converged(step, threshold)
        return step <= threshold


# ---------------------------------------------------------------------------------------------
# One renewable update (§3–§7)
# ---------------------------------------------------------------------------------------------

def update(state, config, X, y, sample_weight=None, dtype=np.float64, trace=None, perturbation=None):
    """Processes one batch and returns (new_state, diagnostics); `state` is not modified.

    `state` is None before the first batch. `sample_weight` None means unit weights (W_b = n_b).
    `trace` (a Trace) records the iterations; `perturbation` is for the robustness study only.
    """
    X = design_matrix(X, config.fit_intercept, dtype)
    n_rows, q = X.shape
    n_features = q - 1 if config.fit_intercept else q
    y = np.asarray(y, dtype=dtype)
    w = np.ones(n_rows, dtype) if sample_weight is None else np.asarray(sample_weight, dtype=dtype)
    if state is None:
        state = State.empty(q, dtype)

    # Counters and per-batch scalars are float64 whatever the arithmetic dtype.
    batch_weight = float(n_rows) if sample_weight is None else float(np.sum(w, dtype=np.float64))
    cumulative = state.weight_sum + batch_weight
    h = bandwidth(config.bandwidth_scale, config.tau, cumulative, n_features)
    penalty = penalties.BY_NAME[config.penalty]
    lam = penalty.level(config, cumulative, n_features)
    mask = penalty_mask(q, config.fit_intercept, dtype)

    historical = penalty.historical_subgradient(state, config, cumulative, mask)
    obj = BatchObjective(X, y, w, state, config, h, cumulative, historical)
    decisions = Decisions(config.tol, trace, perturbation)
    beta, iterations, converged = penalty.solve(obj, config.max_iter, lam, mask, decisions)
    objective = penalty.objective(obj, beta, lam, mask)

    information = committed_information(state, obj, beta)
    score_variance = committed_score_variance(state, obj, beta)
    new_state = State(beta, information, score_variance, state.n_samples_seen + n_rows, state.batch_count + 1,
                      lam, cumulative)
    return new_state, Diagnostics(iterations, converged, float(objective), lam, h)


def committed_information(state, obj, beta):
    """§7 J_b = J_{b−1} + Σ w φ(r(β_b)) x xᵀ: curvature at the final β, this batch's bandwidth,
    no ridge and no 1/N."""
    phi = smoothed_curvature(obj.residuals(beta), obj.tau, obj.h)
    return state.information + weighted_gram(obj.X, obj.w * phi)


def committed_score_variance(state, obj, beta):
    """§12 K_b = K_{b−1} + Σ w ψ(r(β_b))² x xᵀ: the ordinary score at the final β, like J's curvature."""
    psi = huber_score(obj.residuals(beta), obj.tau)
    return state.score_variance + weighted_gram(obj.X, obj.w * psi * psi)


# ---------------------------------------------------------------------------------------------
# §12 Inference
# ---------------------------------------------------------------------------------------------

def information_singular(J):
    """§12's rule: J is singular to working precision when a pivot of its Cholesky factorization is not above
    q·ε·max_j J_jj (ε of float64). Written out here (not numpy.linalg.cholesky) so that the rule is the spec's."""
    J = np.array(J, dtype=np.float64)
    q = J.shape[0]
    floor = q * np.finfo(np.float64).eps * np.max(np.abs(np.diag(J)))
    L = np.zeros_like(J)
    for j in range(q):
        d = J[j, j] - L[j, :j] @ L[j, :j]
        if not d > floor:
            return True
        L[j, j] = np.sqrt(d)
        L[j + 1:, j] = (J[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return False


def sandwich_covariance(J, K):
    """§12 Ĉov(β̂) = J⁻¹ K J⁻¹ in float64, or None when J is singular to working precision."""
    J, K = np.asarray(J, np.float64), np.asarray(K, np.float64)
    if information_singular(J):
        return None
    cov = np.linalg.solve(J, np.linalg.solve(J, K).T)
    return (cov + cov.T) / 2


def predict(state, X, fit_intercept, dtype=np.float64):
    return design_matrix(X, fit_intercept, dtype) @ state.coefficients
