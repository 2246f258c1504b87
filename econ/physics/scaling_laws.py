"""Chinchilla loss law, the compute-optimal allocation, and the inference-aware optimum.

Pure and vectorised: every function takes floats or numpy arrays (broadcast together) and
returns arrays. Units: parameters [params], tokens [tokens], FLOP [FLOP], loss [nats/token].

Sources
-------
- Hoffmann et al. 2022, "Training Compute-Optimal Large Language Models", arXiv 2203.15556:
  eq. (2) the loss law, Appendix D.2 the closed-form compute optimum, C ≈ 6·N·D.
- Besiroglu, Erdil, Barnett, You 2024, "Chinchilla Scaling: A replication attempt",
  arXiv 2404.10102, Table 1: the refit constants with bootstrap standard errors.
- Sardana, Portes, Doubov, Frankle 2024, "Beyond Chinchilla-Optimal", arXiv 2401.00448 §2:
  minimise training + inference FLOPs subject to a target loss (no closed form; solved
  numerically, here with SciPy's vectorised elementwise root finder).
- The lecture (docs/formulas.md) §e.1 (equal-cost heuristic), §e.5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.formula import formula

TRAIN_FLOP_PER_PARAM_TOKEN = 6.0  # forward + backward (Kaplan et al. 2020; Hoffmann et al. 2022)
INFERENCE_FLOP_PER_PARAM_TOKEN = 2.0  # forward only


@dataclass(frozen=True)
class ScalingLaw:
    """L(N, D) = E + A/N^alpha + B/D^beta, loss in nats/token, N in params, D in tokens.

    ``E`` [nats/token] is the irreducible loss; ``A`` [nats/token · params^alpha] and
    ``B`` [nats/token · tokens^beta] scale the finite-model and finite-data terms.
    """

    name: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source_url: str = ""
    note: str = ""


HOFFMANN_2022 = ScalingLaw(
    "hoffmann_2022",
    E=1.69,
    A=406.4,
    B=410.7,
    alpha=0.34,
    beta=0.28,
    source_url="https://arxiv.org/abs/2203.15556",
    note="Hoffmann et al. 2022 Approach 3, constants as printed (rounded) in the paper body",
)
HOFFMANN_2022_UNROUNDED = ScalingLaw(
    "hoffmann_2022_unrounded",
    E=1.6934,
    A=406.4,
    B=410.7,
    alpha=0.33917,
    beta=0.28491,
    source_url="https://github.com/epoch-research/analyzing-chinchilla",
    note="Hoffmann et al. 2022 Approach 3 unrounded (exp(0.5267228), exp(6.0073404), exp(6.0179186), 0.33917084, "
    "0.2849083: "
    "Epoch's true_params); Sardana et al. 2024 Fig. 1 is reproduced with these",
)
BESIROGLU_2024 = ScalingLaw(
    "besiroglu_2024",
    E=1.8172,
    A=482.01,
    B=2085.43,
    alpha=0.3478,
    beta=0.3658,
    source_url="https://arxiv.org/abs/2404.10102",
    note="Epoch refit of Hoffmann et al.'s Figure 4 data (Huber on log loss, 5 outliers dropped), Table 1",
)
BESIROGLU_2024_SE = {"E": 0.03, "A": 124.58, "B": 1293.23, "alpha": 0.02, "beta": 0.02}
"""Published bootstrap standard errors of :data:`BESIROGLU_2024` (Table 1)."""

PUBLISHED_LAWS = (BESIROGLU_2024, HOFFMANN_2022, HOFFMANN_2022_UNROUNDED)


@formula("L(N, D) = E + A/N^α + B/D^β", "Hoffmann et al. 2022, eq. 2; lecture e.5")
def loss_nats_per_token(law: ScalingLaw, params, tokens):
    """Chinchilla loss L(N, D) = E + A/N^α + B/D^β [nats/token] (Hoffmann et al. 2022 eq. 2)."""
    n, d = np.asarray(params, dtype=float), np.asarray(tokens, dtype=float)
    return law.E + law.A / n**law.alpha + law.B / d**law.beta


@formula("C = 6·N·D", "Hoffmann et al. 2022, §2")
def training_flop(params, tokens):
    """C = 6·N·D [FLOP]: forward and backward pass over D tokens (Hoffmann et al. 2022 §2)."""
    return TRAIN_FLOP_PER_PARAM_TOKEN * np.asarray(params, dtype=float) * np.asarray(tokens, dtype=float)


@formula(
    "N_opt = G·(C/6)^a, D_opt = (C/6)^b / G, G = (αA/(βB))^(1/(α+β)), a = β/(α+β)",
    "Hoffmann et al. 2022, eq. 4; lecture e.5",
)
def compute_optimal(law: ScalingLaw, compute_flop):
    """Closed-form compute-optimal (params, tokens) for a budget C = 6·N·D.

    N_opt = G·(C/6)^a, D_opt = G⁻¹·(C/6)^b, G = (αA/(βB))^(1/(α+β)), a = β/(α+β), b = α/(α+β)
    (Hoffmann et al. 2022, Appendix D.2, eq. 4).

    Returns
    -------
    (params [params], tokens [tokens]) arrays shaped like ``compute_flop``.
    """
    c6 = np.asarray(compute_flop, dtype=float) / TRAIN_FLOP_PER_PARAM_TOKEN
    s = law.alpha + law.beta
    g = (law.alpha * law.A / (law.beta * law.B)) ** (1.0 / s)
    return g * c6 ** (law.beta / s), c6 ** (law.alpha / s) / g


@formula("root of dL/dlnN = −αA·N^−α + βB·D^−β on 6·N·D = C", "Hoffmann et al. 2022")
def compute_optimal_numerical(law: ScalingLaw, compute_flop, *, log_bracket=(-30.0, 30.0)):
    """Compute-optimal (params, tokens) found numerically: the root of dL/dlnN on the line 6·N·D = C.

    Along the budget line D = C/(6N), dL/dlnN = −αA·N^−α + βB·D^−β; SciPy's vectorised
    ``elementwise.find_root`` solves it for every budget at once in ln N, bracketed by
    ``log_bracket`` around ln√(C/6). A check of :func:`compute_optimal`, not a copy of it.

    Returns
    -------
    (params [params], tokens [tokens]); NaN where the bracket holds no root.
    """
    c6 = np.asarray(compute_flop, dtype=float) / TRAIN_FLOP_PER_PARAM_TOKEN
    mid = 0.5 * np.log(c6)

    def slope(x, c6):
        n = np.exp(x)
        return -law.alpha * law.A * n**-law.alpha + law.beta * law.B * (c6 / n) ** -law.beta

    from scipy.optimize import elementwise  # imported when a root is solved (see econ.fits.wrapper)

    res = elementwise.find_root(
        slope, (mid + log_bracket[0], mid + log_bracket[1]), args=(c6,), tolerances={"xrtol": 1e-15, "xatol": 1e-13}
    )
    n = np.where(res.success, np.exp(res.x), np.nan)
    return n, c6 / n


@formula("D = (B / (ℓ − E − A/N^α))^(1/β)", "Hoffmann et al. 2022")
def tokens_for_loss(law: ScalingLaw, params, loss_nats_per_token):
    """Training tokens that bring a model of ``params`` to ``loss``: D = (B/(ℓ − E − A/N^α))^(1/β).

    NaN where the target is out of reach at that size (ℓ ≤ E + A/N^α).
    """
    n = np.asarray(params, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.asarray(loss_nats_per_token, dtype=float) - law.E - law.A / n**law.alpha
        return np.where(gap > 0, (law.B / np.where(gap > 0, gap, 1.0)) ** (1.0 / law.beta), np.nan)


@formula("N = (A / (ℓ − E − B/D^β))^(1/α)", "Hoffmann et al. 2022")
def params_for_loss(law: ScalingLaw, tokens, loss_nats_per_token):
    """Parameters that reach ``loss`` with ``tokens`` of training: N = (A/(ℓ − E − B/D^β))^(1/α); NaN if out of
    reach."""
    d = np.asarray(tokens, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.asarray(loss_nats_per_token, dtype=float) - law.E - law.B / d**law.beta
        return np.where(gap > 0, (law.A / np.where(gap > 0, gap, 1.0)) ** (1.0 / law.alpha), np.nan)


@formula("N_min = (A / (ℓ − E))^(1/α)", "Hoffmann et al. 2022")
def min_params_for_loss(law: ScalingLaw, loss_nats_per_token):
    """The smallest model that can reach ``loss`` with unlimited data: N_min = (A/(ℓ − E))^(1/α) [params]."""
    gap = np.asarray(loss_nats_per_token, dtype=float) - law.E
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gap > 0, (law.A / np.where(gap > 0, gap, 1.0)) ** (1.0 / law.alpha), np.nan)


@formula("w_tr·6·N·D_tr + w_inf·2·N·D_inf", "Sardana et al. 2024")
def lifetime_cost_flop(params, train_tokens, inference_tokens, *, train_weight=1.0, inference_weight=1.0):
    """Lifetime cost in pre-training-FLOP equivalents: w_tr·6·N·D_tr + w_inf·2·N·D_inf.

    Sardana et al. 2024 §2 (compute form: both weights 1). The cost form divides each term
    by its phase's efficiency (MFU); pass w = η_train/η_phase so the result stays in
    pre-training-FLOP equivalents (multiply by $ per pre-training FLOP for dollars).
    """
    n = np.asarray(params, dtype=float)
    return train_weight * TRAIN_FLOP_PER_PARAM_TOKEN * n * np.asarray(
        train_tokens, dtype=float
    ) + inference_weight * INFERENCE_FLOP_PER_PARAM_TOKEN * n * np.asarray(inference_tokens, dtype=float)


@formula("argmin over N, D_tr with L(N, D_tr) = ℓ of 6·N·D_tr + 2·N·D_inf", "Sardana et al. 2024; lecture e.5")
def inference_aware_optimum(
    law: ScalingLaw, loss_nats_per_token, inference_tokens, *, train_weight=1.0, inference_weight=1.0
):
    """Sardana et al. 2024: argmin over (N, D_tr) with L(N, D_tr) = ℓ of w_tr·6·N·D_tr + w_inf·2·N·D_inf.

    With D_tr(N) from the loss constraint, the cost is a function of x = ln N alone and its
    optimum is the root of dCost/dx = w_tr·6·D_tr·(1 + dlnD_tr/dx) + w_inf·2·D_inf, where
    dlnD_tr/dx = −(αA·N^−α) / (β·(ℓ − E − A·N^−α)). The root is bracketed between
    N_min (ℓ reached only with infinite data; cost → ∞) and 1e12·N_min, and found for every
    (ℓ, D_inf, weight) element at once with SciPy's vectorised ``elementwise.find_root``.

    Parameters
    ----------
    law : the loss law used for the constraint.
    loss_nats_per_token : target loss ℓ [nats/token].
    inference_tokens : lifetime inference demand D_inf [tokens].
    train_weight, inference_weight : relative cost per FLOP of each phase (1/MFU scaled to
        training's); 1 and 1 is the compute form.

    Returns
    -------
    dict of arrays (broadcast shape): ``params``, ``train_tokens``, ``tokens_per_param_ratio``,
    ``train_flop``, ``inference_flop``, ``cost_flop`` (weighted total), ``converged``.
    """
    ell = np.asarray(loss_nats_per_token, dtype=float)
    d_inf = np.asarray(inference_tokens, dtype=float)
    w_tr = np.asarray(train_weight, dtype=float)
    w_inf = np.asarray(inference_weight, dtype=float)
    ell, d_inf, w_tr, w_inf = np.broadcast_arrays(ell, d_inf, w_tr, w_inf)
    x_min = np.log(min_params_for_loss(law, ell))

    def slope(x, ell, d_inf, w_tr, w_inf):
        a_term = law.A * np.exp(-law.alpha * x)
        gap = ell - law.E - a_term
        log_d = (np.log(law.B) - np.log(gap)) / law.beta
        dlogd_dx = -law.alpha * a_term / (law.beta * gap)
        # divide by D_tr·N scale-free: sign of dCost/dx is that of this expression
        return w_tr * TRAIN_FLOP_PER_PARAM_TOKEN * (
            1.0 + dlogd_dx
        ) + w_inf * INFERENCE_FLOP_PER_PARAM_TOKEN * d_inf * np.exp(-log_d)

    lo, hi = x_min + 1e-9 * np.maximum(1.0, np.abs(x_min)), x_min + np.log(1e12)
    from scipy.optimize import elementwise  # imported when a root is solved (see econ.fits.wrapper)

    res = elementwise.find_root(
        slope, (lo, hi), args=(ell, d_inf, w_tr, w_inf), tolerances={"xrtol": 1e-14, "xatol": 1e-12}
    )
    ok = res.success & np.isfinite(x_min)
    n = np.where(ok, np.exp(res.x), np.nan)
    d_tr = tokens_for_loss(law, n, ell)
    train = training_flop(n, d_tr)
    infer = INFERENCE_FLOP_PER_PARAM_TOKEN * n * d_inf
    return {
        "params": n,
        "train_tokens": d_tr,
        "tokens_per_param_ratio": d_tr / n,
        "train_flop": train,
        "inference_flop": infer,
        "cost_flop": w_tr * train + w_inf * infer,
        "converged": ok,
    }


@formula("N where training and inference FLOPs are equal on L(N, D) = ℓ", "lecture e.1")
def equal_cost_allocation(
    law: ScalingLaw,
    loss_nats_per_token,
    inference_tokens,
    *,
    train_weight=1.0,
    inference_weight=1.0,
    exponent_ratio=1.0,
):
    """The lecture's equal-cost heuristic applied to Sardana's problem (§e.1).

    Set the training cost to the inference cost divided by the exactness knob r = q/p
    (r = 1: equal costs): w_tr·6·N·D_tr = w_inf·2·N·D_inf / r ⇒ D_tr = w_inf·2·D_inf/(r·w_tr·6);
    then N is the size that reaches ℓ with that many tokens (NaN if none can).

    Returns
    -------
    dict of arrays like :func:`inference_aware_optimum` (without ``converged``).
    """
    ell = np.asarray(loss_nats_per_token, dtype=float)
    d_inf = np.asarray(inference_tokens, dtype=float)
    w_tr, w_inf = np.asarray(train_weight, dtype=float), np.asarray(inference_weight, dtype=float)
    d_tr = (
        w_inf
        * INFERENCE_FLOP_PER_PARAM_TOKEN
        * d_inf
        / (np.asarray(exponent_ratio, dtype=float) * w_tr * TRAIN_FLOP_PER_PARAM_TOKEN)
    )
    n = params_for_loss(law, d_tr, ell)
    train = training_flop(n, d_tr)
    infer = INFERENCE_FLOP_PER_PARAM_TOKEN * n * d_inf
    return {
        "params": n,
        "train_tokens": np.where(np.isnan(n), np.nan, d_tr),
        "tokens_per_param_ratio": d_tr / n,
        "train_flop": train,
        "inference_flop": infer,
        "cost_flop": w_tr * train + w_inf * infer,
    }


@formula("D = (C/6)/N with N = G·(C/6)^a", "Hoffmann et al. 2022")
def compute_optimal_tokens_for_params(law: ScalingLaw, params):
    """Tokens that make ``params`` compute-optimal: invert N = G·(C/6)^a, then D = (C/6)/N [tokens]."""
    n = np.asarray(params, dtype=float)
    s = law.alpha + law.beta
    g = (law.alpha * law.A / (law.beta * law.B)) ** (1.0 / s)
    c6 = (n / g) ** (s / law.beta)
    return c6 / n


@formula("a = β/(α+β), b = α/(α+β)", "Hoffmann et al. 2022, eq. 4")
def optimal_exponents(alpha, beta):
    """(a, b): N_opt grows as C^a and D_opt as C^b [dimensionless]."""
    alpha, beta = np.asarray(alpha, dtype=float), np.asarray(beta, dtype=float)
    return beta / (alpha + beta), alpha / (alpha + beta)


@formula("max(|N_num/N − 1|, |D_num/D − 1|)", "closed form vs numerical solve")
def closed_form_gap_frac(params, tokens, params_numerical, tokens_numerical):
    """Largest relative difference between the closed-form and the numerical optimum [frac]."""
    return np.maximum(np.abs(np.divide(params_numerical, params) - 1), np.abs(np.divide(tokens_numerical, tokens) - 1))


@formula("ln(L_pred) − ln(L)", "scaling-law residual")
def log_residual(predicted_loss, loss):
    """Log residual of a predicted loss against the reported one [dimensionless]."""
    return np.log(predicted_loss) - np.log(loss)


@formula("w_inf·C_inf / C_train", "Sardana et al. 2024")
def inference_to_train_cost_ratio(inference_flop, train_flop, inference_weight=1.0):
    """Weighted inference cost over training cost [ratio]."""
    return np.multiply(inference_weight, inference_flop) / np.asarray(train_flop, dtype=float)


@formula("1 − cost / reference cost", "Sardana et al. 2024, Fig. 1")
def saving_frac(cost, reference_cost):
    """Share of the reference's cost saved [frac]; negative where it costs more."""
    return 1.0 - np.divide(cost, reference_cost)


@formula("cost / optimum − 1", "Sardana et al. 2024")
def excess_over_optimum_frac(cost, optimum_cost):
    """How much more than the optimum a choice costs [frac] (0 at the optimum)."""
    return np.divide(cost, optimum_cost) - 1.0


@formula("D = C / (6·N)", "Hoffmann et al. 2022, §2")
def tokens_from_flop(params, training_flop):
    """Training tokens of a run of ``training_flop`` on a model of ``params`` [tokens]."""
    return np.asarray(training_flop, dtype=float) / (TRAIN_FLOP_PER_PARAM_TOKEN * np.asarray(params, dtype=float))
