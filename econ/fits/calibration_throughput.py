"""The calibration's published points: the throughput each predicts in its regime at the stated or best batch.

A point (``measured_points``, as :mod:`econ.analyses.calibration_points` reads it) states a system and a regime but
often not the batch: the prediction takes the batch (decode) and the pass (prefill) that cost the fewest chip-seconds
per token within the point's step-time limit, as a serving engine tuned for the benchmark would, else the fastest
step that fits. :mod:`econ.fits.calibration` fits these beside the measured runs.
"""

from __future__ import annotations

import numpy as np

from econ.fits.calibration_features import Points, prefill_parameters, step_seconds
from econ.formula import formula


def best_batch(chip_s_per_token, step_s, fits, limit):
    """(chip-seconds per token, index, whether the limit was met) of each row's cheapest cell of the grid that fits and
    whose step is within ``limit``; where none is within it, the fastest cell that fits (not met); inf where nothing
    fits."""
    ok = fits & (step_s <= limit)
    cost = np.where(ok, chip_s_per_token, np.inf)
    pick = np.argmin(cost, axis=1)
    rows = np.arange(cost.shape[0])
    met = np.isfinite(cost[rows, pick])
    fastest = np.argmin(np.where(fits, step_s, np.inf), axis=1)
    pick = np.where(met, pick, fastest)
    return np.where(fits.any(axis=1), chip_s_per_token[rows, pick], np.inf), pick, met


@formula(
    "offline O/(ℓ·s_p + O·s_d(B)); decode 1/s_d; prefill 1/s_p; single stream 1/t_d(1); "
    "disaggregated min(D/s_d, (C−D)·O/(ℓ·s_p))/C",
    "calibration points: the regime's throughput at the stated or best batch",
)
def predict_points(p: dict, pts: Points) -> dict[str, np.ndarray]:
    """Predicted value of every point (in its own unit) and the batch, pass and limit status behind it."""
    pg = {k: np.asarray(v)[:, None] for k, v in p.items()}
    t_d = step_seconds(pts.decode, pg)
    t_p = step_seconds(pts.prefill, prefill_parameters(pg))
    with np.errstate(divide="ignore", invalid="ignore"):
        s_d_grid = t_d * pts.decode_chips / pts.decode_tokens
        s_p_grid = t_p * pts.prefill_chips / pts.prefill_tokens
    s_d, pick_d, met_d = best_batch(s_d_grid, t_d, pts.decode_fits, pts.decode_limit_s)
    s_p, pick_p, met_p = best_batch(s_p_grid, t_p, pts.prefill_fits, pts.prefill_limit_s)
    ell, out_tokens, regime = pts.input_tokens, pts.output_tokens, pts.regime
    with np.errstate(divide="ignore", invalid="ignore"):
        usable = pts.decode_fits & (t_d <= pts.decode_limit_s)
        per_request = s_p[:, None] * ell[:, None] + out_tokens[:, None] * np.where(usable, s_d_grid, np.inf)
    pick_off = np.argmin(np.where(np.isnan(per_request), np.inf, per_request), axis=1)
    rows = np.arange(pts.n)
    value = np.full(pts.n, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(regime == "decode", 1.0 / s_d, value)
        value = np.where(regime == "prefill", 1.0 / s_p, value)
        value = np.where(regime == "single_stream", 1.0 / t_d[:, 0], value)
        value = np.where(regime == "offline", out_tokens / per_request[rows, pick_off], value)
        share = pts.decode_share
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
