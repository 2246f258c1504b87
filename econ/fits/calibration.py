"""Calibration: the efficiencies at which the deployment model reproduces measured operating points.

Each measured point is predicted from its step terms at peak (:func:`econ.physics.deployment.decode_terms` and
:func:`~econ.physics.deployment.prefill_terms` at every efficiency 1, no overhead, no latency) over a grid of
batches, by its regime:

- ``decode``: output tokens/s per chip, ``B/(c·t_d(B))``, at the stated batch or the best one that fits (and
  meets the test's time-per-token limit);
- ``prefill``: input tokens/s per chip, ``P·ℓ/(c·t_p(P))``, at the stated pass or the best that fits (and meets
  its TTFT limit);
- ``single_stream``: tokens/s of one user, ``1/t_d(1)``;
- ``offline`` (aggregated serving, both phases on the replica): output tokens/s per chip
  ``O / (ℓ·s_p + O·s_d(B))`` with ``s_p`` the best prefill chip-seconds per prompt token and ``s_d(B)`` the decode
  chip-seconds per output token, at the best B;
- ``disaggregated``: the system's output tokens/s per chip, ``min(D/s_d, (C − D)·O/(ℓ·s_p)) / C`` with D of its
  C chips decoding.

A limit no grid point meets takes the fastest point (flagged by the caller). The decode context is the stated
KV length, else the prompt plus half the output (the mean over the generation).

Step time under efficiencies (``lower`` overlap rule, the lecture's ``t_step``): compute by
:func:`econ.physics.deployment.compute_time_s` (non-expert weight FLOPs and attention at ``mfu``, the routed
experts' grouped GEMMs at ``expert_mfu``), HBM traffic at ``hbm_bandwidth_frac``, communication at
``link_bandwidth_frac`` (latencies 0: the fixed per-step cost is ``step_overhead_s``), then
``max(compute, memory, communication) + overhead``.

Fit (:func:`fit_calibration`): parameters in unbounded coordinates (an efficiency ``η = exp(−e^z) ∈ (0, 1)``,
the overhead ``e^z``), plus per architecture family log-offsets ``δ_f`` on the three compute efficiencies and the
HBM efficiency, shrunk toward the shared value by pseudo-residuals ``δ_f·σ/τ`` (prior ``δ ~ N(0, τ²)``, residual
scale σ); an efficiency with its offset is capped at 1. Robust (soft-L1) least squares on
``log(predicted / measured)`` through :func:`econ.fits.wrapper.fit`. Leave-one-source-out cross-validation
(:func:`cross_validate`) refits without each source and predicts it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.fits.wrapper import FitResult, fit
from econ.formula import formula
from econ.physics.deployment import compute_time_s, overlap_bounds

SHARED = (
    "prefill_mfu_frac",
    "decode_mfu_frac",
    "expert_mfu_frac",
    "hbm_bandwidth_frac",
    "link_bandwidth_frac",
    "step_overhead_s",
)
"""The shared parameters, in this order."""

PER_FAMILY = ("prefill_mfu_frac", "decode_mfu_frac", "expert_mfu_frac", "hbm_bandwidth_frac")
"""The parameters an architecture family may move (log-offset from the shared value)."""

RESIDUAL_SCALE_LOG = float(np.log(1.3))
"""σ: the residual scale of ``log(predicted/measured)`` the prior is weighed against, and where the soft-L1 loss
starts to bend (a point more than ~1.3× off counts less than quadratically)."""

FAMILY_SPREAD_LOG = float(np.log(1.5))
"""τ: a family's efficiency is a priori within ~1.5× of the shared value (one standard deviation)."""

START = {
    "prefill_mfu_frac": 0.5,
    "decode_mfu_frac": 0.5,
    "expert_mfu_frac": 0.2,
    "hbm_bandwidth_frac": 0.7,
    "link_bandwidth_frac": 0.7,
    "step_overhead_s": 1e-3,
}
TOLERANCE = 1e-4
"""Solver tolerance (relative change of cost and step): the loss is flat near its optimum (max and min over the
batch grid), and tighter tolerances move the parameters by < 1% at 20× the time."""


@dataclass(frozen=True)
class Pool:
    """One pool's terms at peak over a grid: (points × grid) arrays."""

    weight_flop: np.ndarray
    expert_flop: np.ndarray
    attention_flop: np.ndarray
    peak_flop_per_s: np.ndarray
    attention_peak_flop_per_s: np.ndarray
    memory_time_s: np.ndarray  # at full HBM bandwidth
    comm_time_s: np.ndarray  # at full link bandwidth, no latency
    tokens: np.ndarray  # decode: sequences of the step; prefill: prompt tokens of the pass
    fits: np.ndarray  # the point fits in HBM
    replica_chips: np.ndarray  # (points × 1)
    stated: np.ndarray  # (points,) the grid is one stated batch or pass (else: choose the best)
    limit_s: np.ndarray  # (points × 1) time limit of a step or pass (inf: none)


@dataclass(frozen=True)
class Problem:
    """Measured points and their terms."""

    regime: np.ndarray
    family: np.ndarray  # index into families
    families: tuple[str, ...]
    source: np.ndarray
    log_measured: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    decode_chips_share: np.ndarray  # disaggregated: decode chips / system chips
    decode: Pool
    prefill: Pool

    @property
    def n(self) -> int:
        return self.log_measured.size


@dataclass(frozen=True)
class Efficiencies:
    """Per point (n × 1) efficiencies and the shared link fraction and overhead."""

    prefill_mfu_frac: np.ndarray
    decode_mfu_frac: np.ndarray
    expert_mfu_frac: np.ndarray
    hbm_bandwidth_frac: np.ndarray
    link_bandwidth_frac: float
    step_overhead_s: float


IDEALISED = {name: (0.0 if name == "step_overhead_s" else 1.0) for name in SHARED}


@formula("t = max(t_c(mfu, mfu_e), t_m/η_m, t_x/η_l) + t_o", "this module; deployment.compute_time_s")
def step_time_s(pool: Pool, mfu, expert_mfu, hbm_frac, link_frac, overhead_s) -> np.ndarray:
    """Step (or pass) time of every grid point at the given efficiencies [s] (the lower overlap rule)."""
    compute = compute_time_s(
        pool.weight_flop,
        pool.expert_flop,
        pool.attention_flop,
        pool.peak_flop_per_s,
        pool.attention_peak_flop_per_s,
        mfu,
        expert_mfu,
    )
    lower, _, _ = overlap_bounds(compute, pool.memory_time_s / hbm_frac, pool.comm_time_s / link_frac, overhead_s)
    return lower


def _best(chip_s_per_token: np.ndarray, step_s: np.ndarray, pool: Pool):
    """Per point: the chip-seconds per token at the chosen grid point, its index, and whether the limit held."""
    ok = pool.fits & (step_s <= pool.limit_s)
    cost = np.where(ok, chip_s_per_token, np.inf)
    pick = np.argmin(cost, axis=1)
    met = np.isfinite(cost[np.arange(cost.shape[0]), pick])
    fastest = np.argmin(np.where(pool.fits, step_s, np.inf), axis=1)  # no point meets the limit: the fastest
    pick = np.where(met, pick, fastest)
    rows = np.arange(cost.shape[0])
    any_fit = pool.fits.any(axis=1)
    return np.where(any_fit, chip_s_per_token[rows, pick], np.inf), pick, met


@formula(
    "offline O/(ℓ·s_p + O·s_d(B)); decode 1/s_d; prefill 1/s_p; single stream 1/t_d(1); "
    "disaggregated min(D/s_d, (C−D)·O/(ℓ·s_p))/C",
    "this module",
)
def predict(problem: Problem, eff: Efficiencies) -> dict[str, np.ndarray]:
    """Predicted value of every point (in its own unit) and the batch, pass and limit status behind it."""
    d, p = problem.decode, problem.prefill
    link, over = eff.link_bandwidth_frac, eff.step_overhead_s
    t_d = step_time_s(d, eff.decode_mfu_frac, eff.expert_mfu_frac, eff.hbm_bandwidth_frac, link, over)
    t_p = step_time_s(p, eff.prefill_mfu_frac, eff.expert_mfu_frac, eff.hbm_bandwidth_frac, link, over)
    with np.errstate(divide="ignore", invalid="ignore"):
        s_d_grid = t_d * d.replica_chips / d.tokens
        s_p_grid = t_p * p.replica_chips / p.tokens
    s_d, pick_d, met_d = _best(s_d_grid, t_d, d)
    s_p, pick_p, met_p = _best(s_p_grid, t_p, p)
    ell, out_tokens = problem.input_tokens, problem.output_tokens
    # offline: the decode batch minimises prefill + decode chip-seconds per request (prefill at its best pass)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_request = s_p[:, None] * ell[:, None] + out_tokens[:, None] * np.where(
            d.fits & (t_d <= d.limit_s), s_d_grid, np.inf
        )
    pick_off = np.argmin(np.where(np.isnan(per_request), np.inf, per_request), axis=1)
    rows = np.arange(problem.n)
    regime = problem.regime
    value = np.full(problem.n, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(regime == "decode", 1.0 / s_d, value)
        value = np.where(regime == "prefill", 1.0 / s_p, value)
        value = np.where(regime == "single_stream", 1.0 / t_d[:, 0], value)
        value = np.where(regime == "offline", out_tokens / per_request[rows, pick_off], value)
        share = problem.decode_chips_share
        system = np.minimum(share / s_d, (1.0 - share) * out_tokens / (ell * s_p))
        value = np.where(regime == "disaggregated", system, value)
    pick_d = np.where(regime == "offline", pick_off, pick_d)
    uses_decode = regime != "prefill"
    uses_prefill = np.isin(regime, ("prefill", "offline", "disaggregated"))
    return {
        "value": value,
        "decode_pick": pick_d,
        "prefill_pick": pick_p,
        "limit_met": np.where(uses_decode, met_d, True) & np.where(uses_prefill, met_p, True),
        "decode_step_time_s": t_d[rows, pick_d],
        "prefill_pass_time_s": t_p[rows, pick_p],
    }


# ---------------------------------------------------------------------------- parameters


def names(families: tuple[str, ...]) -> tuple[str, ...]:
    """Fit parameter names: the shared ones, then ``<parameter>@<family>`` offsets."""
    return SHARED + tuple(f"{p}@{f}" for p in PER_FAMILY for f in families)


FLOOR = 1e-6
"""Smallest efficiency the fit may reach (a fold with few points can push a parameter it barely sees to 0)."""


def _efficiency(z):
    return np.maximum(np.exp(-np.exp(np.minimum(z, 50.0))), FLOOR)


def _unconstrained(values: dict) -> np.ndarray:
    return np.array(
        [np.log(values[k]) if k == "step_overhead_s" else np.log(-np.log(values[k])) for k in SHARED], dtype=float
    )


def efficiencies(z: np.ndarray, problem: Problem) -> Efficiencies:
    """Per-point efficiencies from fit coordinates (shared value × the point's family offset, capped at 1)."""
    k = len(SHARED)
    offsets = np.asarray(z[k:], dtype=float).reshape(len(PER_FAMILY), len(problem.families))

    def per_point(name):
        i = SHARED.index(name)
        log_eta = -np.exp(min(z[i], 50.0)) + offsets[PER_FAMILY.index(name)][problem.family]
        return np.clip(np.exp(log_eta), FLOOR, 1.0)[:, None]

    return Efficiencies(
        prefill_mfu_frac=per_point("prefill_mfu_frac"),
        decode_mfu_frac=per_point("decode_mfu_frac"),
        expert_mfu_frac=per_point("expert_mfu_frac"),
        hbm_bandwidth_frac=per_point("hbm_bandwidth_frac"),
        link_bandwidth_frac=float(_efficiency(z[SHARED.index("link_bandwidth_frac")])),
        step_overhead_s=float(np.exp(min(z[SHARED.index("step_overhead_s")], 50.0))),
    )


def idealised(problem: Problem) -> Efficiencies:
    """Every efficiency 1, no overhead: the roofline bound."""
    one = np.ones((problem.n, 1))
    return Efficiencies(one, one, one, one, 1.0, 0.0)


def _model(problem: Problem):
    n_off = len(PER_FAMILY) * len(problem.families)
    weight = RESIDUAL_SCALE_LOG / FAMILY_SPREAD_LOG

    def model(x, z):
        idx = x[:, 0].astype(int)
        pred = np.log(predict(problem, efficiencies(z, problem))["value"])
        pred = np.where(np.isfinite(pred), pred, -50.0)  # a point that cannot run counts as far off
        prior = np.asarray(z[len(SHARED) :], dtype=float) * weight
        full = np.concatenate([pred, prior if n_off else np.zeros(0)])
        return full[idx]

    return model


@formula("min Σ ρ(log pred − log meas) + Σ (δ_f·σ/τ)², ρ = soft-L1", "this module")
def fit_calibration(problem: Problem, mask: np.ndarray | None = None, start: np.ndarray | None = None) -> FitResult:
    """Fit the shared efficiencies and family offsets to the points of ``mask`` (all by default)."""
    n_off = len(PER_FAMILY) * len(problem.families)
    mask = np.ones(problem.n, bool) if mask is None else np.asarray(mask, bool)
    idx = np.concatenate([np.flatnonzero(mask), problem.n + np.arange(n_off)])
    y = np.concatenate([problem.log_measured, np.zeros(n_off)])[idx]
    p0 = np.concatenate([_unconstrained(START), np.zeros(n_off)]) if start is None else start
    return fit(
        _model(problem),
        idx[:, None].astype(float),
        y,
        p0,
        names=names(problem.families),
        loss="soft_l1",
        f_scale=RESIDUAL_SCALE_LOG,
        tol=TOLERANCE,
    )


def usable(result: FitResult) -> np.ndarray:
    """Fit coordinates to predict with: an unidentified parameter keeps its starting value."""
    start = np.concatenate([_unconstrained(START), np.zeros(result.estimate.size - len(SHARED))])
    return np.where(np.isfinite(result.estimate), result.estimate, start)


@formula("log(pred/meas) of each source's points from a fit without that source", "leave-one-source-out CV")
def cross_validate(problem: Problem, full: FitResult) -> np.ndarray:
    """Held-out ``log(predicted / measured)`` of every point (warm-started from the full fit)."""
    out = np.full(problem.n, np.nan)
    start = usable(full)
    for source in np.unique(problem.source):
        held = problem.source == source
        result = fit_calibration(problem, ~held, start)
        pred = np.log(predict(problem, efficiencies(usable(result), problem))["value"])
        out[held] = (pred - problem.log_measured)[held]
    return out


def natural(result: FitResult, problem: Problem) -> list[dict]:
    """Parameter rows in natural units: shared values and each family's effective value, with intervals.

    An efficiency's interval maps the fit coordinate's interval through ``exp(−e^z)``; a family's value is
    ``min(1, exp(−e^z + δ_f))``, its interval from the covariance of (z, δ_f) (delta method, the wrapper's t
    quantile). Without a covariance (status not ``ok``) the intervals are unbounded.
    """
    z, lo, hi = result.estimate, result.low, result.high
    cov = result.extra.get("covariance")
    t = np.where(result.stderr > 0, (hi - z) / result.stderr, np.nan)
    t_q = float(np.nanmax(t)) if np.isfinite(t).any() else np.nan
    rows = []
    for i, name in enumerate(SHARED):
        if name == "step_overhead_s":
            est, low, high = np.exp(z[i]), np.exp(lo[i]), np.exp(hi[i])
        else:
            est, low, high = _efficiency(z[i]), _efficiency(hi[i]), _efficiency(lo[i])
        rows.append({"parameter": name, "family": "", "estimate": est, "low": low, "high": high})
    for name in PER_FAMILY:
        i = SHARED.index(name)
        for j, fam in enumerate(problem.families):
            k = len(SHARED) + PER_FAMILY.index(name) * len(problem.families) + j
            log_eta = -np.exp(z[i]) + z[k]
            if cov is not None and np.isfinite(t_q):
                grad = np.zeros(z.size)
                grad[i], grad[k] = -np.exp(z[i]), 1.0
                half = t_q * float(np.sqrt(grad @ cov @ grad))
                low, high = np.exp(log_eta - half), np.exp(log_eta + half)
            else:
                low, high = 0.0, np.inf
            rows.append(
                {
                    "parameter": name,
                    "family": fam,
                    "estimate": float(np.minimum(1.0, np.exp(log_eta))),
                    "low": float(np.minimum(1.0, low)),
                    "high": float(np.minimum(1.0, high)),
                }
            )
    return rows
