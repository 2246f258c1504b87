"""Refit the Chinchilla loss law with Epoch's method (Besiroglu et al. 2024), vectorised.

Method (arXiv 2404.10102 §2; code: epoch-research/analyzing-chinchilla):

- data: (N, C, L) points read off Hoffmann et al.'s Figure 4, D = C/(6N); the 5 points
  with the highest loss are dropped, as in their repository;
- model: log L̂ = LSE(a − α·ln N, b − β·ln D, e), i.e. L̂ = E + A/N^α + B/D^β with
  A = eᵃ, B = eᵇ, E = eᵉ;
- objective: Huber loss (δ = 1e-3) of log L̂ − log L, SUMMED over points;
- optimiser: (L-)BFGS from every start of the grid α, β ∈ {0, 0.5, …, 2}, e ∈ {−1, −0.5, …, 1},
  a, b ∈ {0, 5, …, 25} (4,500 starts), keeping the best;
- uncertainty: bootstrap resamples of the points, refitted; standard errors are the
  bootstrap standard deviations of (E, A, B, α, β), intervals the 2.5/97.5 percentiles.

Vectorisation. Every start (and every bootstrap resample) is a 5-parameter problem; the
code runs them together as one batch through a small numpy BFGS with a per-problem
Armijo line search (``econ.fits.batched_bfgs``). A resample is a vector of multinomial counts, so
its summed Huber loss is the count-weighted sum over the original points. The grid's
starts are run in successive-halving rounds (all 4,500 for a few iterations, the best
eighth onwards, …) and the winner is polished with SciPy's L-BFGS-B; every resample is
warm-started from the full-data optimum (Epoch warm-started theirs from Hoffmann's
estimates).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from econ.errors import FitError
from econ.fits.batched_bfgs import batched_bfgs
from econ.formula import formula
from econ.physics import scaling_laws as sl
from econ.physics.scaling_laws import ScalingLaw

PARAMETERS = ("E", "A", "B", "alpha", "beta")
HUBER_DELTA = 1e-3
DROP_HIGHEST_LOSS = 5
START_GRID = {  # Epoch's grid of initial values
    "a": np.arange(0.0, 30.0, 5.0),
    "b": np.arange(0.0, 30.0, 5.0),
    "e": np.arange(-1.0, 1.5, 0.5),
    "alpha": np.arange(0.0, 2.5, 0.5),
    "beta": np.arange(0.0, 2.5, 0.5),
}
HALVING_ROUNDS = ((10, 512), (20, 64), (40, 8))  # (BFGS iterations, starts kept) per round
METHOD = (
    "LSE form, Huber(delta) on log loss summed, highest-loss points dropped; batched BFGS from Epoch's "
    "4,500-start grid (successive halving), best start polished with L-BFGS-B; bootstrap warm-started "
    "from the full-data optimum (Besiroglu et al. 2024)"
)


@dataclass(frozen=True)
class ChinchillaFit:
    """A refit of L(N, D) = E + A/N^α + B/D^β with its bootstrap uncertainty and status.

    ``status`` uses the vocabulary of ``econ.fits.wrapper``: ``ok``, ``underdetermined`` (no
    more points than parameters; estimates are NaN), ``rank_deficient`` (an exponent collapsed
    to 0 or a term vanished, so some parameters are not identified) or ``not_converged``; ``status_detail``
    says why in words. ``estimates``/``std_errors``/``interval_low``/``interval_high`` map
    the names in :data:`PARAMETERS` to floats (E, A, B in the law's units, α, β bare).
    """

    estimates: dict[str, float]
    std_errors: dict[str, float]
    interval_low: dict[str, float]
    interval_high: dict[str, float]
    objective: float
    n_points: int
    n_dropped: int
    n_bootstrap: int
    n_bootstrap_converged: int
    huber_delta: float
    status: str
    status_detail: str
    method: str = METHOD
    bootstrap: np.ndarray = field(default_factory=lambda: np.empty((0, 5)), repr=False)

    def law(self, name: str = "refit") -> ScalingLaw:
        """The estimates as a :class:`ScalingLaw` (for the compute-optimal and Sardana tables)."""
        e = self.estimates
        return ScalingLaw(name, E=e["E"], A=e["A"], B=e["B"], alpha=e["alpha"], beta=e["beta"], note=self.status)


def huber(residual, delta=HUBER_DELTA):
    """Huber loss: ½r² for |r| ≤ δ, δ·(|r| − ½δ) beyond (quadratic core, linear tails)."""
    r = np.abs(np.asarray(residual, dtype=float))
    return np.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta))


CHUNK_ELEMENTS = 2**15
"""Starts × points :func:`objective_and_gradient` evaluates at once: its buffers stay in the CPU's cache (all 4,500
starts × 240 points at once took 48 ms a call, in chunks 15 ms; each row's bits are the same)."""


def objective_and_gradient(theta, log_params, log_tokens, log_loss, weights, delta=HUBER_DELTA):
    """Summed Huber loss of LSE(a − α·lnN, b − β·lnD, e) − ln L for a batch of parameter vectors.

    Parameters
    ----------
    theta : (K, 5) rows (a, b, e, α, β).
    log_params, log_tokens, log_loss : (n,) ln N, ln D, ln L of the points.
    weights : (n,) or (K, n) multiplicity of each point (bootstrap counts; 1 for the data itself).

    Returns
    -------
    (f (K,), gradient (K, 5)).
    """
    theta, weights = np.asarray(theta, dtype=float), np.asarray(weights, dtype=float)
    rows = max(1, CHUNK_ELEMENTS // max(np.size(log_params), 1))
    w = (lambda i: weights[i : i + rows]) if weights.ndim == 2 else (lambda i: weights)  # noqa: E731
    parts = [
        _objective_and_gradient(theta[i : i + rows], log_params, log_tokens, log_loss, w(i), delta)
        for i in range(0, max(theta.shape[0], 1), rows)
    ]
    return parts[0] if len(parts) == 1 else tuple(np.concatenate(x) for x in zip(*parts, strict=True))


def _objective_and_gradient(theta, log_params, log_tokens, log_loss, weights, delta):
    """:func:`objective_and_gradient` of one chunk of parameter vectors."""
    # The same arithmetic, in the same order, as LSE and Huber written out (bit for bit: tests/fits/test_chinchilla.py),
    # in place on five (K, n) buffers: the first halving round calls it on 4,500 starts × every point, and fresh
    # arrays for each of ~30 intermediate results took a quarter of the fit's time.
    with np.errstate(over="ignore", invalid="ignore"):
        e1 = theta[:, 3:4] * log_params
        np.subtract(theta[:, 0:1], e1, out=e1)  # t1 = a − α·lnN
        e2 = theta[:, 4:5] * log_tokens
        np.subtract(theta[:, 1:2], e2, out=e2)  # t2 = b − β·lnD
        m = np.maximum(e1, e2)
        np.maximum(m, theta[:, 2:3], out=m)  # m = max(t1, t2, t3), t3 = e
        e1 -= m
        np.exp(e1, out=e1)
        e2 -= m
        np.exp(e2, out=e2)
        e3 = theta[:, 2:3] - m
        np.exp(e3, out=e3)
        s = e1 + e2
        s += e3
        r = np.log(s)
        np.add(m, r, out=r)
        r -= log_loss  # r = LSE − ln L
        size = np.abs(r, out=m)
        loss = np.minimum(size, delta)  # q = min(|r|, δ): Huber = q·(|r| − q/2), ½r² in the core, δ(|r| − ½δ) beyond
        size -= 0.5 * loss
        loss *= size
        loss *= weights
        f = loss.sum(axis=1)
        psi = np.clip(r, -delta, delta, out=r)
        psi *= weights
        psi /= s
        e1 *= psi  # g1
        e2 *= psi  # g2
        e3 *= psi
        grad = np.stack(
            [
                e1.sum(1),
                e2.sum(1),
                e3.sum(1),
                -np.multiply(e1, log_params, out=s).sum(1),
                -np.multiply(e2, log_tokens, out=loss).sum(1),
            ],
            axis=1,
        )
    return f, grad


def _start_grid() -> np.ndarray:
    """Epoch's 4,500 starting points as rows (a, b, e, α, β)."""
    return np.array(
        list(
            itertools.product(
                START_GRID["a"], START_GRID["b"], START_GRID["e"], START_GRID["alpha"], START_GRID["beta"]
            )
        ),
        dtype=float,
    )


def _natural(theta: np.ndarray) -> np.ndarray:
    """Rows (a, b, e, α, β) -> rows (E, A, B, α, β)."""
    theta = np.atleast_2d(theta)
    return np.column_stack([np.exp(theta[:, 2]), np.exp(theta[:, 0]), np.exp(theta[:, 1]), theta[:, 3], theta[:, 4]])


def best_of_grid(log_params, log_tokens, log_loss, *, delta=HUBER_DELTA, starts: np.ndarray | None = None):
    """Multi-start minimisation from Epoch's grid; returns (theta (5,), objective, converged).

    Successive halving (``HALVING_ROUNDS``): every start runs a few BFGS iterations, the best
    fraction continues, and the last few run to convergence; the winner is polished with
    SciPy's L-BFGS-B.
    """
    weights = np.ones_like(log_params)

    def fun(x, _idx):
        return objective_and_gradient(x, log_params, log_tokens, log_loss, weights, delta)

    x = _start_grid() if starts is None else np.atleast_2d(np.asarray(starts, dtype=float))
    for iterations, keep in HALVING_ROUNDS:
        x, f, *_ = batched_bfgs(fun, x, max_iter=iterations)
        order = np.argsort(np.where(np.isfinite(f), f, np.inf), kind="stable")
        x = x[order[:keep]]
    x, f, _g, conv, _ = batched_bfgs(fun, x, max_iter=2000)
    best = int(np.argmin(np.where(np.isfinite(f), f, np.inf)))
    from scipy.optimize import minimize  # imported when a fit runs (see econ.fits.wrapper)

    polished = minimize(
        lambda t: tuple(v[0] for v in fun(t[None], None)),
        x[best],
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-12},
    )
    if np.isfinite(polished.fun) and polished.fun <= f[best]:
        return polished.x, float(polished.fun), bool(conv[best] or polished.success)
    return x[best], float(f[best]), bool(conv[best])


def bootstrap_counts(n_points: int, n_bootstrap: int, seed: int) -> np.ndarray:
    """(n_bootstrap, n_points) multinomial counts: each row is one resample with replacement."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_points, np.full(n_points, 1.0 / n_points), size=n_bootstrap).astype(float)


def bootstrap_fits(theta0, log_params, log_tokens, log_loss, counts, *, delta=HUBER_DELTA, max_iter=1000):
    """Refit every resample (rows of ``counts``) at once, warm-started from ``theta0``.

    Returns (theta (B, 5), converged (B,)).
    """
    counts = np.asarray(counts, dtype=float)

    def fun(x, idx):
        return objective_and_gradient(x, log_params, log_tokens, log_loss, counts[idx], delta)

    x0 = np.repeat(np.asarray(theta0, dtype=float)[None], counts.shape[0], axis=0)
    x, _f, _g, converged, _ = batched_bfgs(fun, x0, max_iter=max_iter)
    return x, converged


def highest_loss_mask(loss, n_drop: int = DROP_HIGHEST_LOSS) -> np.ndarray:
    """True for the points kept: those below the n-th highest loss (Epoch: ``loss < sorted(loss)[-n]``)."""
    loss = np.asarray(loss, dtype=float)
    if n_drop <= 0 or loss.size == 0:
        return np.ones(loss.shape, dtype=bool)
    if n_drop >= loss.size:
        return np.zeros(loss.shape, dtype=bool)
    return loss < np.sort(loss)[-n_drop]


def _vanished_terms(
    estimate: np.ndarray, log_params: np.ndarray, log_tokens: np.ndarray, *, floor: float = 1e-3
) -> str:
    """Names of the terms (A/N^α, B/D^β) that stay below ``floor`` of the predicted loss at every point."""
    e, a, b, alpha, beta = estimate
    n_term, d_term = a * np.exp(-alpha * log_params), b * np.exp(-beta * log_tokens)
    pred = e + n_term + d_term
    names = [name for name, term in (("A/N^alpha", n_term), ("B/D^beta", d_term)) if np.all(term < floor * pred)]
    return " and ".join(names)


def _empty(value: float) -> dict[str, float]:
    return {p: value for p in PARAMETERS}


@formula(
    "min Σ Huber_δ(LSE(a − α·ln N, b − β·ln D, e) − ln L), δ = 1e-3", "Besiroglu et al. 2024 (Epoch's Chinchilla refit)"
)
def fit_chinchilla(
    params,
    tokens,
    loss,
    *,
    n_bootstrap: int = 1000,
    seed: int = 42,
    drop_highest: int = DROP_HIGHEST_LOSS,
    delta: float = HUBER_DELTA,
) -> ChinchillaFit:
    """Fit L(N, D) = E + A/N^α + B/D^β to (params, tokens, loss) points with Epoch's method.

    Parameters
    ----------
    params : model sizes N [params].
    tokens : training tokens D [tokens] (Chinchilla data: D = FLOP/(6N)).
    loss : final training loss [nats/token].
    n_bootstrap : resamples for the standard errors and intervals (Epoch used 4,000).
    seed : seed of the resampling (the result is deterministic for a given seed).
    drop_highest : how many of the highest-loss points to drop (Epoch: 5).
    delta : Huber threshold on the log-loss residual (Epoch: 1e-3).

    Returns
    -------
    :class:`ChinchillaFit`. Too few points, a failed optimisation or a collapsed exponent
    are reported in ``status``, never as a confident number.
    """
    n_arr, d_arr, l_arr = (np.asarray(v, dtype=float).ravel() for v in (params, tokens, loss))
    if not (n_arr.size == d_arr.size == l_arr.size):
        raise FitError(
            f"params, tokens and loss differ in length ({n_arr.size}, {d_arr.size}, {l_arr.size})",
            "pass one value of each per training run",
        )
    bad = ~(np.isfinite(n_arr) & np.isfinite(d_arr) & np.isfinite(l_arr) & (n_arr > 0) & (d_arr > 0) & (l_arr > 0))
    if bad.any():
        raise FitError(
            f"{int(bad.sum())} point(s) with a missing, zero or negative value (first at index {int(np.argmax(bad))})",
            "params, tokens and loss must all be positive numbers",
        )
    keep = highest_loss_mask(l_arr, drop_highest)
    n_points = int(keep.sum())
    common = dict(n_points=n_points, n_dropped=int(l_arr.size - n_points), huber_delta=delta)
    if n_points <= len(PARAMETERS):
        return ChinchillaFit(
            _empty(np.nan),
            _empty(np.nan),
            _empty(np.nan),
            _empty(np.nan),
            np.nan,
            n_bootstrap=0,
            n_bootstrap_converged=0,
            status="underdetermined",
            status_detail=f"{n_points} point(s) after dropping {drop_highest}; the law has 5 parameters",
            **common,
        )
    ln_n, ln_d, ln_l = np.log(n_arr[keep]), np.log(d_arr[keep]), np.log(l_arr[keep])
    theta, objective, converged = best_of_grid(ln_n, ln_d, ln_l, delta=delta)
    estimate = _natural(theta)[0]
    if n_bootstrap > 0:
        counts = bootstrap_counts(n_points, n_bootstrap, seed)
        boot_theta, boot_ok = bootstrap_fits(theta, ln_n, ln_d, ln_l, counts, delta=delta)
        boot = _natural(boot_theta)
    else:
        boot_ok, boot = np.zeros(0, dtype=bool), np.empty((0, 5))
    good = boot[boot_ok & np.all(np.isfinite(boot), axis=1)]
    if good.shape[0] >= 2:
        se = good.std(axis=0, ddof=1)
        low, high = np.percentile(good, [2.5, 97.5], axis=0)
    else:
        se = low = high = np.full(5, np.nan)
    status, detail = (
        "ok",
        f"best of {len(_start_grid())} grid starts; {good.shape[0]}/{n_bootstrap} resamples converged",
    )
    if not converged:
        status, detail = "not_converged", "the best start did not converge; " + detail
    elif estimate[3] < 1e-3 or estimate[4] < 1e-3 or not np.all(np.isfinite(estimate)):
        status, detail = (
            "rank_deficient",
            f"an exponent collapsed (alpha={estimate[3]:.3g}, beta={estimate[4]:.3g}): a term is indistinguishable "
            "from E",
        )
    elif vanished := _vanished_terms(estimate, ln_n, ln_d):
        status, detail = (
            "rank_deficient",
            f"{vanished} below 0.1% of the predicted loss at every point: the data cannot pin it down",
        )
    elif n_bootstrap > 0 and good.shape[0] < 0.9 * n_bootstrap:
        status, detail = "not_converged", f"only {good.shape[0]}/{n_bootstrap} bootstrap resamples converged"
    elif n_bootstrap > 0 and (thin := float(np.mean((counts > 0).sum(axis=1) <= len(PARAMETERS)))) > 0.01:
        status, detail = (
            "underdetermined",
            (
                f"{thin:.0%} of the bootstrap resamples of {n_points} points hold no more distinct "
                f"points than the law has parameters: the intervals are not meaningful"
            ),
        )
    as_dict = lambda v: dict(zip(PARAMETERS, (float(x) for x in v)))  # noqa: E731
    return ChinchillaFit(
        as_dict(estimate),
        as_dict(se),
        as_dict(low),
        as_dict(high),
        objective,
        n_bootstrap=n_bootstrap,
        n_bootstrap_converged=int(good.shape[0]),
        status=status,
        status_detail=detail,
        bootstrap=good,
        **common,
    )


@formula("2.5 / 97.5 percentiles over bootstrap draws of N_opt and D_opt/N_opt", "bootstrap (Efron 1979)")
def compute_optimal_band(draws: np.ndarray, compute_flop: np.ndarray) -> dict[str, np.ndarray]:
    """The compute-optimal N and D/N at each budget under each bootstrap draw's law, as 2.5/97.5 percentiles.

    ``draws``: (n_draws, 5) in :data:`PARAMETERS` order; NaN bands with fewer than two draws.
    """
    nan = np.full(np.shape(compute_flop), np.nan)
    if draws is None or draws.shape[0] < 2:
        return {"params_low": nan, "params_high": nan, "tokens_per_param_low": nan, "tokens_per_param_high": nan}
    e, a, b, al, be = (draws[:, i : i + 1] for i in range(5))  # one law per draw, broadcast against the budgets
    n_draw, d_draw = sl.compute_optimal(
        sl.ScalingLaw("draws", E=e, A=a, B=b, alpha=al, beta=be), np.asarray(compute_flop)[None, :]
    )
    low, high = np.percentile(n_draw, [2.5, 97.5], axis=0)
    tpp_low, tpp_high = np.percentile(d_draw / n_draw, [2.5, 97.5], axis=0)
    return {"params_low": low, "params_high": high, "tokens_per_param_low": tpp_low, "tokens_per_param_high": tpp_high}
