"""How prompts spread inside a long-context price tier, and the context a tier's price stands at.

A tier bills every request whose prompt lies in [lo, hi) at one rate, so its break-even price is the
average cost of the requests it holds. With a cost per token linear in context, c(L) = a + k·L, the
average is the cost at the tier's mean context, and which mean depends on what is billed:

- an **output** token is billed per generated token; a request generates about the same number of tokens
  whatever its prompt, so the request-weighted mean E[L] applies;
- an **input** token is billed per prompt token; a request of L tokens carries L of them, so the
  token-weighted mean E[L²]/E[L] applies.

The spread is a stated assumption: request density per token of prompt length ∝ L^−α on [max(lo, L_min), hi]
(α = ``tier_context_density_exponent_ratio``; α = 0 is the even spread of the old midpoint rule). With
M_j = ∫ L^(j−α) dL the moments, E[L] = M₁/M₀ and E[L²]/E[L] = M₂/M₁, each in closed form
(a logarithm where j + 1 = α).
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula

MIN_PROMPT_TOKENS = 1_000.0
"""Lower edge of the base tier (threshold 0): a prompt is at least a short system prompt."""


def _moment(lower, upper, power):
    """∫_lo^hi L^power dL, with the logarithm where power = −1 (vectorised)."""
    lo, hi, q = (np.asarray(x, dtype=float) for x in (lower, upper, power))
    e = q + 1.0
    near = np.abs(e) < 1e-9
    safe = np.where(near, 1.0, e)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(near, np.log(hi / lo), (hi**safe - lo**safe) / safe)


@formula("E[L] = M₁/M₀, E[L²]/E[L] = M₂/M₁ with M_j = ∫ L^(j−α) dL over [max(lo, 1,000), hi]", "econ tier prompt mix")
def tier_mean_context_tokens(lower_tokens, upper_tokens, exponent, *, token_weighted: bool = False):
    """Mean prompt length of a tier [tokens]: request-weighted E[L] (output prices), or token-weighted E[L²]/E[L]
    (input prices), for a request density ∝ L^−α between the tier's edges (module docstring).

    The lower edge is raised to :data:`MIN_PROMPT_TOKENS`; NaN where the upper edge is unknown or not above it.
    """
    lo = np.maximum(np.asarray(lower_tokens, dtype=float), MIN_PROMPT_TOKENS)
    hi = np.asarray(upper_tokens, dtype=float)
    alpha = np.asarray(exponent, dtype=float)
    j = 1.0 if token_weighted else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = _moment(lo, hi, j + 1.0 - alpha) / _moment(lo, hi, j - alpha)
    return np.where(np.isfinite(hi) & (hi > lo), mean, np.nan)
