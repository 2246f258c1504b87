"""Fast mode (lecture a.5): what a published price multiple m and speed multiple s imply about batch.

Speed per user ∝ 1/t_step and price per token ∝ G·t_step/B. For a fast configuration (1)
against a baseline (0):

    m = (G1/G0)·(B0/B1)·(t1/t0),   s = t0/t1   ⇒   m · s = (G1/G0) · (B0/B1)

so on the same replica (G1 = G0) the batch shrinks by m·s (Claude Opus fast mode: 6 × 2.5 = 15).

The solver adds the roofline: given the model, chip, replica and context, find the baseline
batch B0 such that cutting it to B1 = B0/(m·s) speeds a step up by exactly s. Assumptions:
same replica for both (G1 = G0, no speculative decoding, no extra chips), cost ∝ t_step/B
(price tracks cost with the same margin in both modes), decode at the given context, step
time = the roofline lower bound t(B) = max(a·B, c + k·B) with a = 2·N_act/(G·F·mfu),
c = N_tot·b_w/(G·W·mbu), k = L·b_kv/(G·W·mbu).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from econ.formula import formula


@formula("B0/B1 = m·s·G0/G1", "lecture a.5")
def batch_ratio(price_ratio, speed_ratio, chips_ratio=1.0):
    """B0 / B1 implied by the identity m · s = (G1/G0) · (B0/B1) [ratio]; ``chips_ratio`` = G1/G0."""
    return price_ratio * speed_ratio / chips_ratio


class FastModeBatches(NamedTuple):
    """Implied baseline and fast batches [sequences] and their step times [s]; ``solved`` False where none exists."""

    baseline_batch: np.ndarray
    fast_batch: np.ndarray
    baseline_step_time_s: np.ndarray
    fast_step_time_s: np.ndarray
    solved: np.ndarray


def _step(batch, a, c, k):
    return np.maximum(a * batch, c + k * batch)


def _speed_gap(log_batch, a, c, k, ratio, log_speed):
    batch = np.exp(log_batch)
    return np.log(_step(batch, a, c, k)) - np.log(_step(batch / ratio, a, c, k)) - log_speed


def implied_batches_from_coefficients(
    price_ratio, speed_ratio, compute_time_per_sequence_s, weight_time_s, kv_time_per_sequence_s
) -> FastModeBatches:
    """Solve t(B0)/t(B0/(m·s)) = s for B0 under t(B) = max(a·B, c + k·B), elementwise (SciPy root finding).

    Parameters
    ----------
    price_ratio, speed_ratio : fast over baseline price per token (m) and tokens/s per user (s).
    compute_time_per_sequence_s : a = 2·N_act/(G·F·mfu) [s per sequence].
    weight_time_s : c = N_tot·b_w/(G·W·mbu) [s], the latency floor.
    kv_time_per_sequence_s : k = L·b_kv/(G·W·mbu) [s per sequence].

    The speed ratio t(B)/t(B/r) rises monotonically from 1 (both weight-bound) towards r = m·s,
    so a solution exists and is unique iff 1 < s and m > 1; elsewhere the result is NaN and
    ``solved`` is False.
    """
    m, s, a, c, k = np.broadcast_arrays(
        *(
            np.asarray(x, dtype=float)
            for x in (price_ratio, speed_ratio, compute_time_per_sequence_s, weight_time_s, kv_time_per_sequence_s)
        )
    )
    ratio = m * s
    valid = (s > 1.0) & (m > 1.0) & (c > 0) & ((a > 0) | (k > 0))
    # a bracket in log(batch) around the scale where the weight term stops dominating
    scale = np.log(np.where(valid, c / np.where(valid, a + k, 1.0), 1.0))
    lo, hi = scale - 40.0, scale + 60.0
    args = tuple(
        np.where(valid, x, y)
        for x, y in ((a, 1.0), (c, 1.0), (k, 0.0), (ratio, 4.0), (np.log(np.where(valid, s, 2.0)), np.log(2.0)))
    )
    bracketed = valid & (_speed_gap(lo, *args) < 0) & (_speed_gap(hi, *args) > 0)
    hi = np.where(bracketed, hi, lo + 1.0)
    args = tuple(np.where(bracketed, x, y) for x, y in zip(args, (1.0, 1.0, 1.0, 4.0, np.log(2.0))))
    lo = np.where(bracketed, lo, np.log(1.0 / 3.0))  # a dummy bracket with a root where there is no problem to solve
    hi = np.where(bracketed, hi, np.log(3.0))
    from scipy.optimize.elementwise import find_root  # imported when a root is solved (see econ.fits.wrapper)

    result = find_root(_speed_gap, (lo, hi), args=args, tolerances={"xatol": 1e-12, "xrtol": 1e-12})
    solved = bracketed & result.success
    baseline = np.where(solved, np.exp(result.x), np.nan)
    fast = baseline / ratio
    return FastModeBatches(baseline, fast, _step(baseline, a, c, k), _step(fast, a, c, k), solved)


@formula("t(B0) / t(B0/(m·s)) = s with t(B) = max(a·B, c + k·B)", "lecture a.5")
def implied_batches(
    price_ratio,
    speed_ratio,
    *,
    params_total,
    params_active,
    weight_bytes_per_param,
    kv_bytes_per_token,
    context_tokens,
    chips,
    peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    mfu=1.0,
    mbu=1.0,
    pipeline_stages=1,
) -> FastModeBatches:
    """Implied baseline and fast batches of a published (price, speed) multiple under the roofline (vectorised).

    Every argument broadcasts (one row per fast variant × model × chip × context, say).
    See the module docstring for the assumptions; a pipelined replica reads its weights once per
    stage's micro-batch (c = P·N_tot·b_w/(G·W·mbu), as :func:`econ.physics.roofline.memory_time_s`).
    """
    flop = np.multiply(np.multiply(chips, peak_flop_per_s), mfu)
    bandwidth = np.multiply(np.multiply(chips, hbm_bandwidth_bytes_per_s), mbu)
    a = 2.0 * np.asarray(params_active, dtype=float) / flop
    c = np.multiply(np.multiply(pipeline_stages, params_total), weight_bytes_per_param) / bandwidth
    k = np.multiply(context_tokens, kv_bytes_per_token) / bandwidth
    return implied_batches_from_coefficients(price_ratio, speed_ratio, a, c, k)


@formula("m = (B0/B1) / s", "lecture a.5")
def price_ratio_for(batch_ratio_, speed_ratio):
    """The price multiple that a batch ratio B0/B1 and a speed multiple s imply on the same replica [ratio]."""
    return batch_ratio_ / speed_ratio


EXPLANATIONS = ("smaller_batch", "more_chips", "speculation", "any_combination")
"""What may make a fast variant fast (lecture a.5 and what it leaves out): a smaller batch on the same replica, a
replica spread over more chips, speculative decoding, or any mix of the three."""


@formula("cost multiple = min{c(p)/c₀ : p allowed, v(p) ≥ s·v₀}; allowed when ≤ the price multiple m", "lecture a.5")
def cost_multiple_for_speed(speed, cost, eligible, baseline_speed, baseline_cost, speed_ratio):
    """The cheapest way, among a set of operating points, to be ``speed_ratio`` times faster per user than a baseline.

    ``speed``, ``cost``, ``eligible``: (models, points) tokens/s per user, $/token and which points the explanation
    allows (and fit in memory); ``baseline_*``: (models,); ``speed_ratio``: (variants,). Returns (cost multiple
    needed, (variants, models), inf where no allowed point is fast enough; the largest speed multiple the points
    reach, (models,)).
    """
    v, c, ok = (np.asarray(x) for x in (speed, cost, eligible))
    v0, c0 = np.asarray(baseline_speed, dtype=float), np.asarray(baseline_cost, dtype=float)
    target = np.asarray(speed_ratio, dtype=float)[:, None, None] * v0[None, :, None]
    fast = ok[None, :, :] & (v[None, :, :] >= target)
    cheapest = np.where(fast, c[None, :, :], np.inf).min(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        reach = np.where(ok, v, 0.0).max(axis=1) / v0
        return cheapest / c0[None, :], reach
