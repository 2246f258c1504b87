"""Exact bounded linear least squares beneath the fitting wrapper (:mod:`econ.fits.wrapper`).

:func:`bounded_lstsq_batch` solves a batch of small box-constrained linear least-squares problems exactly by
enumerating which bounds bind (the wrapper's linear fits and their vectorised bootstrap);
:func:`clear_of_bounds` finds the optimum with one solve when it lies clear of every bound.
"""

from __future__ import annotations

import itertools

import numpy as np


def clear_of_bounds(a: np.ndarray, b: np.ndarray, lower, upper) -> np.ndarray | None:
    """The unconstrained least-squares optimum of ``a·θ ≈ b`` when it is of full rank and clear of every bound by
    more than :func:`bounded_lstsq_batch`'s tolerance (then it is the bounded optimum too, found with one solve
    instead of 3^p); else None. Near a bound, the enumeration decides, so a bound that binds is hit exactly."""
    p = a.shape[1]
    theta, _, rank, _ = np.linalg.lstsq(a, b, rcond=None)
    if rank < p:
        return None
    scale = np.sqrt(np.einsum("ni,ni->i", a, a))
    scale[scale == 0] = 1.0
    lo, hi = (np.broadcast_to(np.asarray(v, dtype=float), (p,)) * scale for v in (lower, upper))
    t = theta * scale
    tol = 1e-9 * (1.0 + np.abs(np.where(np.isfinite(lo), lo, 0.0)) + np.abs(np.where(np.isfinite(hi), hi, 0.0)))
    clear = np.all((t - lo > tol) & (hi - t > tol))
    return theta if clear else None


def bounded_lstsq_batch(a: np.ndarray, b: np.ndarray, lower, upper) -> np.ndarray:
    """min ||a·θ − b||² subject to lower ≤ θ ≤ upper, for a batch of problems at once (exact, vectorised).

    ``a`` is (K, n, p), ``b`` (K, n). The optimum of a convex quadratic over a box fixes some parameters at a
    bound and leaves the rest at their unconstrained optimum given those, so every assignment of each parameter
    to {free, its finite lower bound, its finite upper bound} is solved for all K problems together (normal
    equations on column-scaled data, pseudo-inverse for rank-deficient resamples) and each problem keeps the
    feasible solution with the least squared residual. At most 3^p assignments: meant for the wrapper's small
    linear models (p ≤ 3 here). Returns (K, p).
    """
    k, _, p = a.shape
    lower, upper = (np.broadcast_to(np.asarray(v, dtype=float), (p,)) for v in (lower, upper))
    scale = np.sqrt(np.einsum("kni,kni->i", a, a))
    scale[scale == 0] = 1.0
    a = a / scale
    lo, hi = lower * scale, upper * scale  # bounds on the scaled parameters θ·scale
    gram = np.einsum("kni,knj->kij", a, a)
    rhs = np.einsum("kni,kn->ki", a, b)
    options = [
        [("free", 0.0)] + [(side, v) for side, v in (("lower", lo[i]), ("upper", hi[i])) if np.isfinite(v)]
        for i in range(p)
    ]
    best = np.full((k, p), np.nan)
    best_ssr = np.full(k, np.inf)
    tol = 1e-9 * (1.0 + np.abs(np.where(np.isfinite(lo), lo, 0.0)) + np.abs(np.where(np.isfinite(hi), hi, 0.0)))
    for assignment in itertools.product(*options):
        free = np.array([side == "free" for side, _ in assignment])
        theta = np.tile(np.array([v for _, v in assignment]), (k, 1))
        if free.any():
            g_ff = gram[:, free][:, :, free]
            r = rhs[:, free] - np.einsum("kij,kj->ki", gram[:, free][:, :, ~free], theta[:, ~free])
            theta[:, free] = np.einsum("kij,kj->ki", np.linalg.pinv(g_ff), r)
        feasible = np.all((theta >= lo - tol) & (theta <= hi + tol), axis=1)
        ssr = np.einsum("ki,kij,kj->k", theta, gram, theta) - 2.0 * np.einsum(
            "ki,ki->k", theta, rhs
        )  # + |b|², constant
        better = feasible & (ssr < best_ssr)
        best[better], best_ssr[better] = theta[better], ssr[better]
    return np.clip(best, lo, hi) / scale
