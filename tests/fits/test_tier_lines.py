"""The array helpers that fit many tier schedules at once (econ.fits.tier_lines)."""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits import tier_lines


def test_pack_left_keeps_order_and_zero_fills():
    values = np.array([[1.0, np.nan, 3.0, 4.0], [np.nan, np.nan, 7.0, np.nan]])
    packed, count = tier_lines.pack_left(values, np.isfinite(values))
    np.testing.assert_array_equal(packed, [[1.0, 3.0, 4.0, 0.0], [7.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(count, [3, 1])


def test_ols_slope_of_padded_rows_is_each_rows_own_slope_bit_for_bit():
    """Against numpy's least squares line of each row alone (np.polyfit), and exactly against the plain formula."""
    rng = np.random.default_rng(5)
    x = rng.uniform(1e3, 1e6, size=(50, 5))
    y = 2.0 + 3e-6 * x + rng.normal(scale=0.1, size=x.shape)
    keep = rng.random(x.shape) < 0.8
    keep[:, :2] = True
    packed_x, count = tier_lines.pack_left(x, keep)
    packed_y, _ = tier_lines.pack_left(y, keep)
    slopes = tier_lines.ols_slope(packed_x, packed_y, count)
    for row, k in enumerate(keep):
        xs, ys = x[row, k], y[row, k]
        assert np.isclose(slopes[row], np.polyfit(xs, ys, 1)[0], rtol=1e-9)
        xm, ym = xs - xs.mean(), ys - ys.mean()
        assert slopes[row] == (xm * ym).sum() / (xm * xm).sum()


def test_joined_writes_whole_numbers_and_blanks():
    values = np.array([[1000.4, np.nan, 2500.5], [3.0, 4.0, 9.9]])
    present = np.array([[True, True, True], [True, True, False]])
    assert tier_lines.joined("t", values, present).to_list() == ["1000,,2500", "3,4"]
    assert isinstance(tier_lines.joined("t", values, present), pl.Series)
