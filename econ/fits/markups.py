"""The markup model: list prices against the calibrated serving cost of the open models sellers offer.

Every price row i of an open model (every seller, source and snapshot) and every price component c it quotes
(input, output, cache read, cache write, cache storage, the long-context slopes) is set against what that
component costs to serve under the calibrated deployment model, C_i:

    ln(P_i / C_i) = μ_c(i) + γ·[seller class of i = reseller] + ε_i                                 (weighted)

μ_c is the markup of component c charged by a model's maker, γ the resellers' difference (shared by the components),
ε what is left (the seller's own choices, the deployment it really runs, the cost model's error). Each
model × component weighs 1 in all, shared among its rows, so a model with thirty resellers does not outvote one
sold by its maker alone. The fit is weighted least squares (closed form).

**Left out.** For each open model m the fit is repeated without m's rows, and m's rows are predicted from the rest:
ln Ĉ_i = ln P_i − μ̂_c^(−m) − γ̂^(−m)·[reseller]. These left-out cost readings are what the validation rule
(:mod:`econ.fits.validation`) scores against the calibrated cost: their interval, skill against the no-price
baseline and status are those of a new model's price read the same way. A closed model is read with every open model
in the fit.

**Implied margin** of a seller on a model it sells: 1 − C/P (gross margin if the calibrated deployment is what it
runs); against the markup the model predicts for its class, P/(C·e^{μ+γ}) says how far the seller prices above or
below the market.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula

COMPONENTS = (
    "input",
    "output",
    "cache_read",
    "cache_write",
    "cache_storage",
    "long_context_input",
    "long_context_output",
)
"""Price components the model has an effect for (the cost each is set against: :mod:`econ.analyses.markup_costs`)."""


def _design(component, reseller, n_components: int) -> np.ndarray:
    c = np.asarray(component, dtype=int)
    x = np.zeros((c.size, n_components + 1))
    x[np.arange(c.size), c] = 1.0
    x[:, -1] = np.asarray(reseller, dtype=float)
    return x


def model_weights(groups, component) -> np.ndarray:
    """1 / (rows of the row's model × component): each model × component weighs 1 in all."""
    g, c = np.asarray(groups, dtype=int), np.asarray(component, dtype=int)
    key = g * (int(c.max()) + 1 if c.size else 1) + c
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse]


@formula("ln(P/C) = μ_component + γ·[reseller] + ε, weighted least squares", "econ markup model")
def fit(log_ratio, component, reseller, weights, *, n_components: int) -> tuple[np.ndarray, float]:
    """(μ per component, γ) of the weighted least-squares fit; μ is NaN for a component without rows and γ is 0
    when no reseller (or no first-party) row shares a component with the other class."""
    y = np.asarray(log_ratio, dtype=float)
    x = _design(component, reseller, n_components)
    w = np.sqrt(np.asarray(weights, dtype=float))
    present = x[:, :-1].sum(axis=0) > 0
    cols = np.concatenate([present, [True]])
    beta, *_ = np.linalg.lstsq(x[:, cols] * w[:, None], y * w, rcond=None)
    if np.linalg.matrix_rank(x[:, cols]) < cols.sum():  # γ not identified: refit without it
        cols[-1] = False
        beta, *_ = np.linalg.lstsq(x[:, cols] * w[:, None], y * w, rcond=None)
        beta = np.concatenate([beta, [0.0]])
    mu = np.full(n_components, np.nan)
    mu[present] = beta[: present.sum()]
    return mu, float(beta[-1])


@formula("ln Ĉ_i = ln P_i − μ̂_c^(−m) − γ̂^(−m)·[reseller], the fit without model m", "leave one model out")
def left_out(log_price, log_ratio, component, reseller, groups, *, n_components: int) -> np.ndarray:
    """Each row's cost read from its price with its own model left out of the fit (ln USD/MTok-like units of the
    price; NaN where the other models give its component no markup). ``groups``: the unit left out (econ passes the
    architecture group, so a model's re-release, whose cost is its own, leaves with it)."""
    g = np.asarray(groups, dtype=int)
    c = np.asarray(component, dtype=int)
    res = np.asarray(reseller, dtype=float)
    y = np.asarray(log_ratio, dtype=float)
    w = model_weights(g, c)
    out = np.full(g.size, np.nan)
    for m in np.unique(g):  # one refit per open model (tens), each vectorised over the rows
        keep = g != m
        mu, gamma = fit(y[keep], c[keep], res[keep], w[keep], n_components=n_components)
        mine = ~keep
        out[mine] = np.asarray(log_price, dtype=float)[mine] - mu[c[mine]] - gamma * res[mine]
    return out


@formula("margin = 1 − C/P", "gross margin over the calibrated serving cost")
def implied_margin(price, cost):
    """The share of the price left after the calibrated cost (negative: priced below cost) [fraction]."""
    p, c = np.asarray(price, dtype=float), np.asarray(cost, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((p > 0) & np.isfinite(c), 1.0 - c / p, np.nan)
