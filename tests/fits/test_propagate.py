"""Monte Carlo propagation of assumption ranges."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from econ.fits.propagate import draw, nanquantile_columns, propagate


def test_draws_stay_in_range_and_use_log_scale_for_wide_positive_ranges():
    d = draw({"wide": (1.0, 100.0), "narrow": (0.3, 0.6), "signed": (-1.0, 1.0)}, 20_000, seed=1)
    assert d["wide"].min() >= 1 and d["wide"].max() <= 100
    assert np.median(d["wide"]) == pytest.approx(10.0, rel=0.05)  # log-uniform: median = geometric mean
    assert np.median(d["narrow"]) == pytest.approx(0.45, rel=0.02)  # uniform: median = midpoint
    assert d["signed"].min() >= -1


def test_propagate_product_matches_closed_form_quantiles():
    """x*y with x, y ~ U(1, 2) independent: central 2.25 at (1.5, 1.5); 5 %/95 % quantiles of the product."""
    out = propagate(lambda x, y: x * y, {"x": 1.5, "y": 1.5}, {"x": (1, 2), "y": (1, 2)}, n=200_000, seed=3)
    rng = np.random.default_rng(99)
    ref = np.quantile(rng.uniform(1, 2, 400_000) * rng.uniform(1, 2, 400_000), [0.05, 0.95])
    assert float(out.central) == pytest.approx(2.25)
    assert (float(out.low), float(out.high)) == pytest.approx(tuple(ref), rel=0.01)


def test_propagate_keeps_a_trailing_axis_and_fixed_assumptions():
    values = np.array([1.0, 10.0, 100.0])
    out = propagate(
        lambda scale, fixed: scale * values * fixed, {"scale": 1.0, "fixed": 2.0}, {"scale": (0.5, 1.5)}, n=5000
    )
    assert out.central.shape == (3,)
    assert out.low == pytest.approx(2 * values * 0.55, rel=0.02)
    assert out.high == pytest.approx(2 * values * 1.45, rel=0.02)


def test_nanquantile_columns_matches_numpy_value_for_value():
    """The vectorised path gives np.nanquantile's numbers exactly: clean columns, columns with NaN, all-NaN, ±inf."""
    rng = np.random.default_rng(3)
    samples = np.round(rng.normal(size=(41, 9)), 1)
    samples[rng.random(samples.shape) < 0.1] = np.nan
    samples[:, 2] = np.nan
    samples[0, 3], samples[1, 4] = np.inf, -np.inf
    samples[:, 5] = rng.normal(size=41)  # a column with no NaN
    q = [0.05, 0.5, 0.95]
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):  # numpy warns of the all-NaN column
        expected = np.nanquantile(samples, q, axis=0)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")  # econ gives its NaN without a warning (no filter to swap on a thread)
        got = nanquantile_columns(samples, q)
    np.testing.assert_array_equal(got, expected)
