"""A prediction corrected by the measured runs of its own configuration at other concurrencies.

The serving model errs by configuration more than by concurrency: within one stated configuration (engine, model,
chip, formats, lengths, launch settings and layout) a run's measured TTFT lies within 1.13x / 1.67x (median / p90)
of the log-linear interpolation between its neighbours in concurrency, where the calibrated model held out by random
fold is 1.26x / 1.99x on the same 1,215 runs (``inferencex_train``, 2026-12-07; docs/design-notes.md). So a
configuration measured at other concurrencies says how far off the model is for it: the residual
``log(predicted/measured)`` of those runs, interpolated in log concurrency (kriging's mean with a linear variogram,
the residual read as a field over the configuration's concurrencies), is subtracted from the prediction. Runs of the
configuration at the same concurrency (replicates, or the row itself) are not neighbours: the correction and the
bands measured for it (grouped cross-validation over random folds of configurations, ``calibration_errors`` basis
``neighbour_out``) are for a concurrency not measured. A configuration with no such run may take its layout's runs
at other lengths (``same_x``: at its own concurrency too; basis ``lengths_out``,
``econ.analyses.calibration_neighbours.TIERS``).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.formula import formula


@formula(
    "c = (1 − w)·r(x₋) + w·r(x₊),  w = (x − x₋)/(x₊ − x₋),  x = ln C;  r(x±) alone where only one side is measured",
    "interpolation of a configuration's measured residuals in log concurrency",
)
def interpolated_residual(
    train_key, train_x, train_r, query_key, query_x, *, same_x: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(log correction, measured sides: 0, 1 or 2) of every query row: its configuration's training residuals
    ``train_r`` (log predicted/measured; several at one ``x`` averaged) at the nearest ``x`` below and above the
    query's own, interpolated linearly in ``x``; the one side's where only one is measured; 0 where none is. A
    training row at the query's own ``x`` is read only with ``same_x`` (keys that leave out something else the runs
    differ in, such as the lengths: then it is the nearest of all, and taken alone)."""
    n = len(query_x)
    train = (
        pl.DataFrame({"k": pl.Series(train_key, dtype=pl.String), "x": np.asarray(train_x, float), "r": train_r})
        .filter(pl.col("r").is_finite() & pl.col("x").is_finite())
        .sort("k", "x", "r")  # a fixed order of each mean's terms: the same bits whatever the rows' order
        .group_by("k", "x", maintain_order=True)
        .agg(pl.col("r").mean())
    )
    query = pl.DataFrame(
        {"k": pl.Series(query_key, dtype=pl.String), "x": np.asarray(query_x, float), "i": np.arange(n)}
    )
    query = query.sort("k", "x")
    below = train.rename({"x": "x_below", "r": "r_below"})
    above = train.rename({"x": "x_above", "r": "r_above"})
    got = query.join_asof(
        below, left_on="x", right_on="x_below", by="k", strategy="backward", allow_exact_matches=same_x,
        check_sortedness=False,
    ).join_asof(
        above, left_on="x", right_on="x_above", by="k", strategy="forward", allow_exact_matches=same_x,
        check_sortedness=False,
    )  # fmt: skip
    x, lo, hi = (got[c].fill_null(np.nan).to_numpy().astype(float) for c in ("x", "x_below", "x_above"))
    r_lo, r_hi = (got[c].fill_null(np.nan).to_numpy().astype(float) for c in ("r_below", "r_above"))
    has_lo, has_hi = np.isfinite(r_lo), np.isfinite(r_hi)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(has_lo & has_hi & (hi > lo), (x - lo) / (hi - lo), 0.0)  # hi = lo = x: that run alone
    value = np.where(
        has_lo & has_hi,
        (1.0 - w) * np.nan_to_num(r_lo) + w * np.nan_to_num(r_hi),
        np.where(has_lo, r_lo, np.where(has_hi, r_hi, 0.0)),
    )
    correction, sides = np.zeros(n), np.zeros(n, dtype=int)
    order = got["i"].to_numpy()
    correction[order] = value
    sides[order] = has_lo.astype(int) + has_hi.astype(int)
    return correction, sides
