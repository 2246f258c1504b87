"""One guarded least-squares wrapper: an estimate, an interval and a status — never a confident number from too little
data.

``fit(model, x, y, p0, names=…)`` minimises the (weighted) squared residuals with
``scipy.optimize.least_squares`` inside bounds and classifies the result:

============== ==================================================================== =================
status         meaning                                                              interval
============== ==================================================================== =================
ok             more points than parameters, full-rank Jacobian, interior optimum    covariance (t)
exact          as many points as (identified) parameters: the curve passes through none (±inf)
               every point, there is no residual to size an interval
underdetermined fewer points than parameters                                        none (±inf)
rank_deficient the Jacobian loses rank (collinear data): some parameters are not    ±inf for the
               identified; those get NaN estimates                                  unidentified
at_bound       a parameter sits on a bound, so the covariance is not valid          bootstrap
============== ==================================================================== =================

An unidentified parameter never gets a finite interval. A model linear in its parameters
(``linear=True``) is solved exactly on its design matrix (:func:`~econ.fits.bounded_lstsq.bounded_lstsq_batch`;
``scipy.optimize.lsq_linear``'s active-set ``bvls`` beyond :data:`EXACT_MAX_PARAMETERS`). The
bootstrap resamples points with replacement; for linear models all resamples are solved at
once with batched least squares (vectorised), otherwise each resample is a warm-started
``least_squares`` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from econ.errors import FitError
from econ.fits.bounded_lstsq import bounded_lstsq_batch, clear_of_bounds
from econ.formula import formula

STATUSES = ("ok", "exact", "underdetermined", "rank_deficient", "at_bound")
EXACT_MAX_PARAMETERS = 3
"""A linear model of at most this many parameters is solved by enumerating which bounds bind
(:func:`~econ.fits.bounded_lstsq.bounded_lstsq_batch`, at most 3^p small solves): its optimum is exact, a bound that
binds is hit exactly and the result is the same on every machine. An interior-point solver (``lsq_linear``'s
``trf``) stops short of a binding bound by its tolerance: two equal tier prices gave a slope of 0 on one machine and
8e-6 on another."""


@dataclass(frozen=True)
class FitResult:
    """Estimates with intervals at ``level`` and how far they can be trusted."""

    names: tuple[str, ...]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    stderr: np.ndarray
    status: str
    interval_kind: str
    level: float
    n_points: int
    residuals: np.ndarray
    identified: np.ndarray
    message: str = ""
    extra: dict = field(default_factory=dict)

    def __getitem__(self, name: str) -> float:
        return float(self.estimate[self.names.index(name)])

    def interval(self, name: str) -> tuple[float, float]:
        i = self.names.index(name)
        return float(self.low[i]), float(self.high[i])

    def rows(self) -> list[dict]:
        """One dict per parameter (for result tables)."""
        return [
            {
                "parameter": n,
                "estimate": float(e),
                "low": float(lo),
                "high": float(hi),
                "stderr": float(se),
                "identified": bool(ok),
                "status": self.status,
                "interval_kind": self.interval_kind,
                "interval_level_frac": self.level,
                "n_points": self.n_points,
            }
            for n, e, lo, hi, se, ok in zip(
                self.names, self.estimate, self.low, self.high, self.stderr, self.identified
            )
        ]


def _rank(jac: np.ndarray, rtol: float = 1e-9) -> tuple[int, np.ndarray]:
    """Numerical rank of the (column-scaled) Jacobian and the null-space basis."""
    scale = np.linalg.norm(jac, axis=0)
    scale[scale == 0] = 1.0
    _, s, vt = np.linalg.svd(jac / scale, full_matrices=jac.shape[0] < jac.shape[1])  # V whole, U thin
    tol = rtol * max(jac.shape) * (s[0] if s.size else 0.0)
    rank = int(np.sum(s > tol)) if s.size else 0
    return rank, vt[rank:].T


@formula(
    "least squares with status (ok, exact, underdetermined, rank_deficient, at_bound) and a 90% interval",
    "econ fit wrapper",
)
def fit(
    model: Callable[[np.ndarray, np.ndarray], np.ndarray],
    x: np.ndarray,
    y: np.ndarray,
    p0,
    *,
    names: tuple[str, ...] | list[str],
    bounds: tuple = (-np.inf, np.inf),
    sigma: np.ndarray | None = None,
    level: float = 0.9,
    linear: bool = False,
    n_bootstrap: int = 1000,
    seed: int = 0,
    loss: str = "linear",
    f_scale: float = 1.0,
    tol: float = 1e-8,
    jac: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    max_nfev: int | None = None,
) -> FitResult:
    """Fit ``y ≈ model(x, params)`` by bounded least squares and classify the result.

    Parameters
    ----------
    model : function (x, params) -> predictions, vectorised over the points of ``x``
        (first axis of ``x`` indexes points).
    x, y : points; ``y`` is 1-d.
    p0 : starting parameters.
    names : parameter names.
    bounds : (lower, upper), scalars or arrays, as for ``scipy.optimize.least_squares``.
    sigma : per-point standard deviation (weights 1/sigma); None = equal weights.
    level : two-sided interval level (0.9 → 5 %–95 %).
    linear : the model is linear in its parameters: solved as bounded linear least squares with the design
        matrix as Jacobian, and the bootstrap is vectorised.
    n_bootstrap, seed : bootstrap size and RNG seed (deterministic).
    loss, f_scale : a robust loss of ``scipy.optimize.least_squares`` (``soft_l1``, ``huber``, …) and the residual
        at which it starts to bend; the covariance then uses the loss-weighted Jacobian the solver returns.
    tol : the solver's ftol, xtol and gtol (nonlinear models).
    jac : optional ``(x, params) -> d model / d params`` (points × parameters); finite differences without it.
    max_nfev : optional cap on the solver's function evaluations (a warm-started refit).
    """
    from scipy import optimize  # imported when a fit runs: a command that reads fitted values does not pay for it
    from scipy.special import stdtrit

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    p0 = np.asarray(p0, dtype=float).ravel()
    names = tuple(names)
    if len(names) != p0.size:
        raise FitError(f"{len(names)} parameter names for {p0.size} starting values", "give one name per parameter")
    if x.shape[0] != y.size:
        raise FitError(f"{x.shape[0]} x values for {y.size} y values", "x and y need one entry per point")
    keep = np.isfinite(y) & np.all(np.isfinite(x.reshape(x.shape[0], int(np.prod(x.shape[1:])))), axis=1)
    x, y = x[keep], y[keep]
    w = np.ones_like(y) if sigma is None else 1.0 / np.asarray(sigma, dtype=float).ravel()[keep]
    n, p = y.size, p0.size
    lower, upper = (np.broadcast_to(np.asarray(b, dtype=float), (p,)) for b in bounds)
    nan, inf = np.full(p, np.nan), np.full(p, np.inf)

    if n == 0:
        return FitResult(
            names,
            nan,
            -inf,
            inf,
            inf,
            "underdetermined",
            "none",
            level,
            0,
            np.array([]),
            np.zeros(p, bool),
            "no data points",
        )

    def residual(params):
        return (model(x, params) - y) * w

    jac_fn = jac

    def jacobian(params):
        return jac_fn(x, params) * w[:, None]

    if linear:
        # a model linear in its parameters is a bounded linear least-squares problem: solve it directly
        # (~50x faster than finite-difference least_squares); its Jacobian is the design matrix
        offset = model(x, np.zeros(p))
        jac = np.stack([model(x, e) - offset for e in np.eye(p)], axis=1) * w[:, None]
        target = (y - offset) * w
        if p <= EXACT_MAX_PARAMETERS:  # the exact optimum, a bound hit exactly (no interior-point residue)
            est = clear_of_bounds(jac, target, lower, upper)
            if est is None:
                est = bounded_lstsq_batch(jac[None], target[None], lower, upper)[0]
        else:
            est = optimize.lsq_linear(jac, target, bounds=(lower, upper), method="bvls").x
    else:
        start = np.clip(p0, np.where(np.isfinite(lower), lower, -np.inf), np.where(np.isfinite(upper), upper, np.inf))
        sol = optimize.least_squares(
            residual,
            start,
            bounds=(lower, upper),
            method="trf",
            x_scale="jac",
            loss=loss,
            f_scale=f_scale,
            ftol=tol,
            xtol=tol,
            gtol=tol,
            jac="2-point" if jac_fn is None else jacobian,
            max_nfev=max_nfev,
        )
        est, jac = sol.x, sol.jac
    resid = model(x, est) - y
    rank, null = _rank(jac)
    identified = np.ones(p, bool) if rank == p else ~np.any(np.abs(null) > 1e-6, axis=1)
    at_bound = _at_bound(est, lower, upper, jac, y * w)

    if n < p:
        est = np.where(identified & (rank == p), est, np.nan)
        return FitResult(
            names,
            est,
            -inf,
            inf,
            inf,
            "underdetermined",
            "none",
            level,
            n,
            resid,
            np.zeros(p, bool),
            f"{n} point(s) for {p} parameters",
        )
    if rank < p:
        est = np.where(identified, est, np.nan)
        return FitResult(
            names,
            est,
            np.where(identified, np.nan, -inf),
            np.where(identified, np.nan, inf),
            inf,
            "rank_deficient",
            "none",
            level,
            n,
            resid,
            identified,
            f"Jacobian rank {rank} < {p}: {', '.join(n_ for n_, ok in zip(names, identified) if not ok)} not "
            "identified",
        )
    if n == p and at_bound.any():
        return FitResult(
            names,
            est,
            -inf,
            inf,
            inf,
            "at_bound",
            "none",
            level,
            n,
            resid,
            identified,
            f"{n} points for {p} parameters with {', '.join(n_ for n_, b in zip(names, at_bound) if b)} "
            f"at a bound: the curve cannot pass through every point and no interval can be sized",
        )
    if n == p:
        return FitResult(
            names,
            est,
            -inf,
            inf,
            inf,
            "exact",
            "none",
            level,
            n,
            resid,
            identified,
            f"{n} points for {p} parameters: passes through every point, no residual to size an interval",
        )
    if at_bound.any():
        boot = _bootstrap(model, x, y, w, est, (lower, upper), linear, n_bootstrap, seed)
        lo, hi = np.nanquantile(boot, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return FitResult(
            names,
            est,
            lo,
            hi,
            np.nanstd(boot, axis=0, ddof=1),
            "at_bound",
            "bootstrap",
            level,
            n,
            resid,
            identified,
            f"at bound: {', '.join(n_ for n_, b in zip(names, at_bound) if b)}",
            {"bootstrap": boot},
        )
    dof = n - p
    cov = np.linalg.inv(jac.T @ jac) * (_residual_variance(loss, f_scale, resid * w, dof) if sigma is None else 1.0)
    se = np.sqrt(np.diag(cov))
    t = stdtrit(dof, (1 + level) / 2)  # Student t quantile (scipy.stats.t.ppf)
    return FitResult(
        names,
        est,
        est - t * se,
        est + t * se,
        se,
        "ok",
        "covariance",
        level,
        n,
        resid,
        identified,
        f"{dof} degrees of freedom",
        {"covariance": cov},
    )


def _psi(loss, z) -> np.ndarray:
    """Influence ``ψ(z) = ρ'(z²)·z`` of scipy's robust ``loss`` at scaled residuals ``z``."""
    z2 = np.asarray(z, dtype=float) ** 2
    weight = {
        "soft_l1": lambda: 1.0 / np.sqrt(1.0 + z2),
        "huber": lambda: np.where(z2 <= 1.0, 1.0, 1.0 / np.sqrt(np.maximum(z2, 1.0))),
        "cauchy": lambda: 1.0 / (1.0 + z2),
        "arctan": lambda: 1.0 / (1.0 + z2**2),
    }.get(loss, lambda: np.ones_like(z2))
    return weight() * z


def _residual_variance(loss, f_scale: float, r: np.ndarray, dof: int) -> float:
    """Residual variance that goes with the Jacobian ``least_squares`` returns: ``Σr²/dof`` for ordinary least
    squares; under a robust loss (whose Jacobian is weighted by ``√ψ'``) Huber's sandwich ``Σψ(r)²/dof / mean ψ'(r)``
    (Huber, *Robust Statistics*, 1981, §7.6), so a point the loss discounts does not widen every interval by its
    squared residual."""
    if not isinstance(loss, str) or loss == "linear":
        return float(np.sum(r**2) / dof)
    z, h = r / f_scale, 1e-4
    psi = _psi(loss, z) * f_scale
    d_psi = (_psi(loss, z + h) - _psi(loss, z - h)) / (2.0 * h)
    return float(np.sum(psi**2) / dof / max(float(np.mean(d_psi)), 1e-12))


def _at_bound(est, lower, upper, jac, weighted_y) -> np.ndarray:
    """Which parameters sit on a bound: so close to it that moving onto the bound changes the fitted values by
    less than 1e-8 of the data's norm. Scale-free: a bound at 0 with the other side infinite does not flag every
    parameter, and a parameter is not flagged for being small in absolute terms (the solver's ``active_mask``
    uses an absolute tolerance and is not used)."""
    reach = np.linalg.norm(jac, axis=0)
    tol = 1e-8 * max(float(np.linalg.norm(weighted_y)), np.finfo(float).tiny)
    with np.errstate(invalid="ignore"):
        near_lower = np.isfinite(lower) & ((est - lower) * reach <= tol)
        near_upper = np.isfinite(upper) & ((upper - est) * reach <= tol)
    return near_lower | near_upper


def _bootstrap(model, x, y, w, est, bounds, linear, n_bootstrap, seed) -> np.ndarray:
    """Parameter draws from resampling points with replacement (n_bootstrap x p)."""
    from scipy import optimize

    rng = np.random.default_rng(seed)
    n = y.size
    idx = rng.integers(0, n, size=(n_bootstrap, n))
    if linear:
        offset = model(x, np.zeros_like(est))
        design = np.stack([model(x, e) - offset for e in np.eye(est.size)], axis=1)
        return bounded_lstsq_batch(design[idx] * w[idx][..., None], (y - offset)[idx] * w[idx], *bounds)
    draws = np.empty((n_bootstrap, est.size))
    for i, rows in enumerate(idx):
        sol = optimize.least_squares(
            lambda q, rows=rows: (model(x[rows], q) - y[rows]) * w[rows], est, bounds=bounds, method="trf"
        )
        draws[i] = sol.x
    return draws
