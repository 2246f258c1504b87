"""Tier mean contexts: against numerical integration (a second method) and the uniform closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad

from econ.physics.context_mix import MIN_PROMPT_TOKENS, tier_mean_context_tokens


def by_quadrature(lo, hi, alpha, token_weighted):
    lo = max(lo, MIN_PROMPT_TOKENS)
    j = 1.0 if token_weighted else 0.0
    num = quad(lambda x: x ** (j + 1 - alpha), lo, hi, limit=200)[0]
    den = quad(lambda x: x ** (j - alpha), lo, hi, limit=200)[0]
    return num / den


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0, 1.7, 2.0, 3.0])
@pytest.mark.parametrize(("lo", "hi"), [(0.0, 128_000.0), (200_000.0, 1_048_576.0), (32_000.0, 202_745.0)])
@pytest.mark.parametrize("token_weighted", [False, True])
def test_closed_form_matches_numerical_integration(alpha, lo, hi, token_weighted):
    """The log cases (α = 1, 2, 3 hit j + 1 − α = −1 for some moment) included; 1e-7 relative."""
    got = tier_mean_context_tokens(lo, hi, alpha, token_weighted=token_weighted)
    assert got == pytest.approx(by_quadrature(lo, hi, alpha, token_weighted), rel=1e-7)


def test_even_spread_is_the_midpoint_and_its_token_weighted_mean():
    """α = 0 on [200k, 1M]: E[L] = (lo + hi)/2; E[L²]/E[L] = (2/3)(hi³ − lo³)/(hi² − lo²) by hand."""
    lo, hi = 200_000.0, 1_000_000.0
    assert tier_mean_context_tokens(lo, hi, 0.0) == pytest.approx((lo + hi) / 2)
    assert tier_mean_context_tokens(lo, hi, 0.0, token_weighted=True) == pytest.approx(
        2 / 3 * (hi**3 - lo**3) / (hi**2 - lo**2)
    )


def test_steeper_spread_pulls_the_mean_to_the_lower_edge_and_vectorises():
    alphas = np.array([0.0, 1.0, 2.0, 3.0])
    means = tier_mean_context_tokens(np.full(4, 0.0), np.full(4, 128_000.0), alphas)
    assert np.all(np.diff(means) < 0) and means[-1] < 3_000  # α = 3: about 2·lo for hi ≫ lo
    assert means[-1] == pytest.approx(2 * 1_000 * 128_000 / (128_000 + 1_000), rel=1e-9)  # M₁/M₀ at α = 3


def test_unknown_or_empty_tier_has_no_mean():
    out = tier_mean_context_tokens(np.array([0.0, 200_000.0, 500.0]), np.array([np.nan, 100_000.0, 800.0]), 1.7)
    assert np.isnan(out).all()
