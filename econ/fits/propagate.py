"""Propagate assumption ranges through a vectorised function by Monte Carlo.

Most price schedules have two tiers, so most of the uncertainty of an implied quantity is
in the assumptions (hardware, $/chip-hour, margin, representative context), not in the
data. ``propagate`` draws every assumption independently within its scenario low/high
range — log-uniformly when the range is positive and spans more than a factor of 3,
uniformly otherwise — evaluates ``fn`` on all draws at once and returns the central value
(``fn`` at the central assumptions) with the ``level`` quantile interval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from econ.formula import formula


@dataclass(frozen=True)
class Propagated:
    central: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    n_draws: int


def draw(ranges: Mapping[str, tuple[float, float]], n: int, *, seed: int = 0) -> dict[str, np.ndarray]:
    """n independent draws per assumption within (low, high)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, (lo, hi) in sorted(ranges.items()):
        lo, hi = float(lo), float(hi)
        u = rng.random(n)
        if lo > 0 and hi / lo > 3:
            out[name] = np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))
        else:
            out[name] = lo + u * (hi - lo)
    return out


@formula("5–95% quantiles of f over Monte Carlo draws of the scenario ranges", "econ scenario interval")
def propagate(
    fn: Callable[..., np.ndarray],
    central: Mapping[str, float],
    ranges: Mapping[str, tuple[float, float]],
    *,
    n: int = 2000,
    level: float = 0.9,
    seed: int = 0,
) -> Propagated:
    """Central value and Monte Carlo interval of ``fn(**assumptions)``.

    ``fn`` takes every assumption as a keyword argument and must broadcast: it is called
    once with scalars (the central values) and once with arrays of shape ``(n, 1)`` so
    that any extra axis it returns (e.g. one value per model) stays on the last axis.
    Assumptions in ``central`` but not in ``ranges`` are held fixed.
    """
    mid = np.asarray(fn(**central), dtype=float)
    draws = draw(ranges, n, seed=seed)
    args = {k: (draws[k][:, None] if k in draws else v) for k, v in central.items()}
    samples = np.asarray(fn(**args), dtype=float).reshape(n, -1)
    lo, hi = nanquantile_columns(samples, [(1 - level) / 2, (1 + level) / 2])
    return Propagated(mid, lo.reshape(mid.shape), hi.reshape(mid.shape), level, n)


def nanquantile_columns(samples: np.ndarray, q) -> np.ndarray:
    """``np.nanquantile(samples, q, axis=0)``, value for value, without its Python loop over columns.

    numpy's ``nanquantile`` along an axis of a 2-d array calls its 1-d routine once per column. A column without NaN
    gets ``np.quantile`` of that column (the same order statistics and the same interpolation), so those columns are
    computed in one vectorised ``np.quantile``; only the columns that hold a NaN go through ``nanquantile``. A column
    with no value at all (a row without data) gives NaN, as ``nanquantile`` does, without its "All-NaN slice" warning:
    silencing that with ``warnings.catch_warnings`` is not safe while analyses run on threads (it swaps the process's
    warning filters, so one thread's exit restores them under another).
    """
    out = np.full((len(q), samples.shape[1]), np.nan)
    nan = np.isnan(samples)
    has_nan, all_nan = nan.any(axis=0), nan.all(axis=0)
    if (~has_nan).any():
        out[:, ~has_nan] = np.quantile(samples[:, ~has_nan], q, axis=0)
    some = has_nan & ~all_nan
    if some.any():
        out[:, some] = np.nanquantile(samples[:, some], q, axis=0)
    return out


@formula("|log10(value at high / value at low)|", "one-at-a-time sensitivity (tornado)")
def swing_decades(value_at_low, value_at_high):
    """How many decades a quantity moves as one assumption goes from its low to its high end; NaN if not positive."""
    low, high = np.asarray(value_at_low, dtype=float), np.asarray(value_at_high, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((low > 0) & (high > 0), np.abs(np.log10(high / low)), np.nan)
