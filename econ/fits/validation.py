"""Validation of a price inference against the open models whose true value is known, and the interval it earns.

A price inference reads a hidden quantity (KV bytes read per context token, prefill FLOPs per token, …) back
from a price under stated assumptions. On an open-weight model the architecture gives the true value, so the
reading's error is measured, not assumed:

    r = ln(implied / true)                                   per validation row (model × provider kind)
    r_m = mean of r over the rows of model m                 (first-party and reseller rows kept apart, one vote
                                                              per model)

**Widening.** The interval a reading states is its scenario interval (assumption ranges, Monte Carlo) widened by
the measured error, added in quadrature in log space:

    h = t_{(1+level)/2, n} · s,        s = √(mean over models of r_m²)          (bias counts as error)
    ln high = ln x + √(ln(x_hi/x)² + h²),   ln low = ln x − √(ln(x/x_lo)² + h²)

For an open model, s and n leave that model out (cross-validated: the interval that is checked against the
truth never saw it); for a closed model they use every open model. The factor exp(h) is the stated
validation factor. Fewer than :data:`MIN_MODELS` open models (or none left out) leaves h infinite: the
interval is unbounded and the status says so.

**Status** of a quantity: ``too_few_open_models`` below :data:`MIN_MODELS`; ``undercovered`` when the
cross-validated intervals cover the truth for fewer than :data:`MIN_COVERAGE_FRAC` of the models (the interval
claims more than it delivers); else ``ok``. A biased reading (geometric-mean ratio far from 1) can be ``ok``: its
interval is wide enough to say so; the bias is reported beside it.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.special import stdtrit

from econ.formula import formula

LEVEL = 0.9
MIN_MODELS = 3
"""Open models a reading needs before its validation factor is finite (with fewer there is no spread to measure)."""
MIN_COVERAGE_FRAC = 0.75
"""Share of open models whose cross-validated interval must cover the truth for status ``ok`` (3 of every 4)."""

STATUSES = ("ok", "undercovered", "too_few_open_models")


def _t(dof, level):
    dof = np.asarray(dof, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(dof >= 1, stdtrit(np.maximum(dof, 1.0), (1.0 + level) / 2.0), np.inf)


@formula("r = ln(implied/true)", "econ validation")
def log_ratio(implied, true):
    """ln(implied/true) where both are positive and finite, else NaN."""
    x, y = np.asarray(implied, dtype=float), np.asarray(true, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return np.where(ok, np.log(np.where(ok, x, 1.0) / np.where(ok, y, 1.0)), np.nan)


@formula("h = t_{(1+level)/2, n}·√(mean over models of r_m²), model's own rows left out", "econ validation (LOO)")
def half_widths(model_keys, ratios_log, *, level: float = LEVEL, min_models: int = MIN_MODELS):
    """Log half-width h per row and the full-sample one: (h per row, h for a model without truth, n models).

    ``model_keys``: the open model of each row (None for a row without truth); ``ratios_log``: r per row (NaN
    without truth). A row of model m gets h from the other models; a row without truth from all of them.
    """
    keys = np.asarray([k if k is not None else "" for k in model_keys], dtype=object)
    r = np.asarray(ratios_log, dtype=float)
    has = (keys != "") & np.isfinite(r)
    names = sorted(set(keys[has]))
    r_m = np.array([np.mean(r[has & (keys == m)]) for m in names], dtype=float)
    sq = r_m**2
    n = len(names)
    total = sq.sum()

    def h(sum_sq, count):
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.sqrt(np.where(count > 0, sum_sq / np.maximum(count, 1), np.nan))
        return np.where(count >= min_models, _t(count, level) * s, np.inf)

    index = {m: i for i, m in enumerate(names)}
    own = np.array([sq[index[k]] if k in index else 0.0 for k in keys])
    mine = np.array([k in index for k in keys])
    per_row = np.where(mine, h(total - own, n - 1), h(np.full(keys.size, total), np.full(keys.size, n)))
    return per_row, float(h(np.array(total), np.array(n))), n


@formula("ln x_hi = ln x + √(ln(x_hi/x)² + h²); ln x_lo = ln x − √(ln(x/x_lo)² + h²)", "econ validation")
def widened_interval(central, scenario_low, scenario_high, half_width_log):
    """(low, high) of the validated interval: the scenario interval widened by h in quadrature (log space).

    A missing scenario end counts as no scenario spread on that side; h = inf gives (0, inf).
    """
    x = np.asarray(central, dtype=float)
    ok = np.isfinite(x) & (x > 0)
    xs = np.where(ok, x, 1.0)

    def gap(bound, upper):
        b = np.asarray(bound, dtype=float)
        usable = np.isfinite(b) & (b > 0)
        g = np.log(np.where(usable, b, xs) / xs) * (1.0 if upper else -1.0)
        return np.maximum(np.where(usable, g, 0.0), 0.0)

    h = np.asarray(half_width_log, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.sqrt(gap(scenario_high, True) ** 2 + h**2)
        down = np.sqrt(gap(scenario_low, False) ** 2 + h**2)
        high = np.where(np.isinf(h), np.inf, xs * np.exp(up))
        low = np.where(np.isinf(h), 0.0, xs * np.exp(-down))
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


@formula("covered = x_lo ≤ true ≤ x_hi", "econ validation")
def covers(low, high, true):
    """Whether the interval covers the true value (False where there is none)."""
    lo, hi, y = (np.asarray(v, dtype=float) for v in (low, high, true))
    with np.errstate(invalid="ignore"):
        return np.isfinite(y) & (lo <= y) & (y <= hi)


def validate(frame: pl.DataFrame, *, level: float = LEVEL) -> tuple[pl.DataFrame, dict]:
    """Widen every row's interval by the measured error and check it on the open rows (module docstring).

    ``frame``: one row per reading with ``model_key`` (open model or null), ``implied``, ``scenario_low``,
    ``scenario_high``, ``true`` (null for a closed model). Returns the frame with ``log_ratio``,
    ``half_width_log``, ``validated_low``, ``validated_high``, ``widening_factor_ratio`` and ``covers_true``,
    and the summary of :func:`summary`.
    """
    keys = frame["model_key"].to_list()

    def col(name):
        return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()

    r = log_ratio(col("implied"), col("true"))
    per_row, full, n = half_widths(keys, r, level=level)
    low, high = widened_interval(col("implied"), col("scenario_low"), col("scenario_high"), per_row)
    out = frame.with_columns(
        pl.Series("log_ratio", r, dtype=pl.Float64),
        pl.Series("half_width_log", per_row, dtype=pl.Float64),
        pl.Series("validated_low", low, dtype=pl.Float64),
        pl.Series("validated_high", high, dtype=pl.Float64),
        pl.Series("widening_factor_ratio", np.exp(per_row), dtype=pl.Float64),
        pl.Series("covers_true", covers(low, high, col("true")), dtype=pl.Boolean),
    ).with_columns(pl.col("log_ratio", "validated_low", "validated_high").fill_nan(None))
    return out, summary(out, full_half_width=full, n_models=n, level=level)


@formula("status = too_few_open_models (n < 3) | undercovered (models covered < 3/4) | ok", "econ validation")
def summary(validated: pl.DataFrame, *, full_half_width: float, n_models: int, level: float = LEVEL) -> dict:
    """Per-quantity evidence: models, rows, coverage, median |r|, bias, factor, status (module docstring)."""
    rows = validated.filter(pl.col("log_ratio").is_not_null())
    per_model = (  # sorted: the bias and RMS are sums over models, the same to the last bit on every run
        rows.group_by("model_key")
        .agg(pl.col("log_ratio").mean().alias("r"), pl.col("covers_true").all().alias("covered"))
        .sort("model_key")
    )
    coverage_models = float(per_model["covered"].mean()) if per_model.height else float("nan")
    coverage_rows = float(rows["covers_true"].mean()) if rows.height else float("nan")
    r_m = per_model["r"].to_numpy()
    median_abs = float(np.median(np.abs(rows["log_ratio"].to_numpy()))) if rows.height else float("nan")
    factor = float(np.exp(full_half_width))
    if n_models < MIN_MODELS:
        status = "too_few_open_models"
    elif coverage_models < MIN_COVERAGE_FRAC:
        status = "undercovered"
    else:
        status = "ok"
    return {
        "n_models": n_models,
        "n_rows": rows.height,
        "coverage_models_frac": coverage_models,
        "coverage_rows_frac": coverage_rows,
        "median_abs_log_ratio": median_abs,
        "median_error_factor_ratio": float(np.exp(median_abs)) if np.isfinite(median_abs) else float("nan"),
        "geometric_mean_ratio": float(np.exp(np.mean(r_m))) if r_m.size else float("nan"),
        "rms_log_ratio": float(np.sqrt(np.mean(r_m**2))) if r_m.size else float("nan"),
        "widening_factor_ratio": factor,
        "level_frac": level,
        "error_within_factor": bool(np.isfinite(median_abs) and np.exp(median_abs) <= factor),
        "status": status,
    }
