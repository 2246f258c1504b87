"""Array helpers that fit many long-context price schedules at once (:func:`econ.fits.context_tiers.fit_schedules`).

Each schedule × component × rule is one row of a padded array, its tiers along the last axis; a row's finite points
are packed to the left with zeros after them, so sums along the last axis equal the sums over its points alone.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.wrapper import fit

LEVEL = 0.9


def _line(x, p):
    return p[0] + p[1] * x[:, 0]


def fit_lines(x: np.ndarray, y: np.ndarray, count: np.ndarray, base: np.ndarray) -> dict[str, np.ndarray]:
    """Every schedule × component × rule at once: the line through (L/1e6, p/p_base), in $/MTok units.

    ``x``, ``y``: one row per fit, its finite points packed to the left (``count`` of them); ``base`` the base-tier
    price. A problem that recurs up to y → c·y (rounded to 1e-12) is fitted once, on its first row, by the wrapper
    (linear least squares is equivariant under that scaling): the wrapper's bounded solve and status are per
    problem, so the loop is over the distinct problems (a few hundred), not over the rows.
    """
    width = max(x.shape[1], 1)
    valid = np.arange(width)[None, :] < count[:, None]
    packed = np.concatenate([np.where(valid, x, 0.0).round(12), np.where(valid, y, 0.0).round(12)], axis=1)
    keys = np.ascontiguousarray(np.column_stack([packed, count.astype(float)])).view(np.void(8 * (2 * width + 1)))
    _, first, inverse = np.unique(keys.ravel(), return_index=True, return_inverse=True)
    found = []
    for i in first:
        n = count[i]
        found.append(
            fit(
                _line,
                x[i, :n, None],
                y[i, :n],
                [1.0, 0.0],
                names=("intercept", "slope"),
                bounds=([0.0, 0.0], [np.inf, np.inf]),
                linear=True,
                level=LEVEL,
                seed=0,
            )
        )
    intercept = np.array([r["intercept"] for r in found])[inverse]
    slope = np.array([r["slope"] for r in found])[inverse]
    low, high = (np.array([r.interval("slope")[j] for r in found])[inverse] for j in (0, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        uplift = np.where(intercept > 0, slope / intercept, np.nan)
    residual = np.array([float(np.max(np.abs(r.residuals))) if r.residuals.size else np.nan for r in found])
    return {
        "status": np.array([r.status for r in found], dtype=object)[inverse],
        "fit_interval_kind": np.array([r.interval_kind for r in found], dtype=object)[inverse],
        "n_points": np.array([r.n_points for r in found], dtype=np.int64)[inverse],
        "fit_message": np.array([r.message for r in found], dtype=object)[inverse],
        "intercept_usd_per_mtok": base * intercept,
        "slope_usd_per_mtok_per_mtok_context": base * slope,
        "slope_fit_low_usd_per_mtok_per_mtok_context": base * low,
        "slope_fit_high_usd_per_mtok_per_mtok_context": base * high,
        "uplift_per_mtok_context_frac": uplift,
        "max_abs_residual_frac": residual[inverse],
    }


def pack_left(values: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's kept values moved to the left in order, zeros after them; and how many were kept."""
    order = np.argsort(~keep, axis=-1, kind="stable")
    count = keep.sum(axis=-1)
    packed = np.take_along_axis(np.where(keep, values, 0.0), order, axis=-1)
    return np.where(np.arange(keep.shape[-1]) < count[..., None], packed, 0.0), count


def ols_slope(x: np.ndarray, y: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Least-squares slope of y on x along the last axis over each row's first ``count`` values (packed left by
    :func:`pack_left`, zeros after them; unbounded; NaN where x does not vary).

    The zeros after the values add nothing to a sum, so each slope is, bit for bit, the one computed on that row's
    values alone: k = Σ(x − x̄)(y − ȳ) / Σ(x − x̄)².
    """
    valid = np.arange(x.shape[-1]) < count[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        xm = np.where(valid, x - x.sum(axis=-1, keepdims=True) / count[..., None], 0.0)
        ym = np.where(valid, y - y.sum(axis=-1, keepdims=True) / count[..., None], 0.0)
        return (xm * ym).sum(axis=-1) / (xm * xm).sum(axis=-1)


def joined(name: str, values: np.ndarray, present: np.ndarray) -> pl.Series:
    """Each row's first values as whole numbers joined by commas ("" for a missing one), as the tables show them."""
    rows, cols = np.nonzero(present)
    flat = values[rows, cols]
    text = pl.Series(np.where(np.isfinite(flat), np.rint(flat), 0.0)).cast(pl.Int64).cast(pl.String)
    text = pl.select(pl.when(pl.Series(np.isfinite(flat))).then(text).otherwise(pl.lit(""))).to_series()
    return (
        pl.DataFrame({"row": rows, "text": text})
        .group_by("row", maintain_order=True)
        .agg(pl.col("text").str.join(","))["text"]
        .alias(name)
    )
