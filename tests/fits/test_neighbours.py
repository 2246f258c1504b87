"""econ.fits.neighbours: a configuration's measured residuals, interpolated in log concurrency."""

import numpy as np
import pytest

from econ.fits.neighbours import interpolated_residual


def test_a_residual_linear_in_log_concurrency_is_recovered_between_its_runs():
    """Synthetic round trip: runs at C = 4, 16, 64 whose residual is 0.1 + 0.2·ln C; queries at 8 and 32 lie between
    two of them and read the line exactly; a query at 256 has one side and takes its nearest run's value."""
    x = np.log([4.0, 16.0, 64.0])
    r = 0.1 + 0.2 * x
    q = np.log([8.0, 32.0, 256.0])
    corr, sides = interpolated_residual(["a"] * 3, x, r, ["a"] * 3, q)
    assert corr[:2] == pytest.approx(0.1 + 0.2 * q[:2], abs=1e-12)
    assert corr[2] == pytest.approx(r[2])
    assert sides.tolist() == [2, 2, 1]


def test_only_the_same_configuration_at_another_concurrency_is_a_neighbour():
    """Another configuration's runs, and a run at the query's own concurrency (a replicate, or the row itself), are
    not read; runs at one concurrency are averaged."""
    x = np.log([8.0, 8.0, 16.0, 16.0, 32.0])
    r = np.array([5.0, 5.0, 0.2, 0.4, 9.0])
    corr, sides = interpolated_residual(["b", "b", "a", "a", "a"], x, r, ["a", "c"], np.log([16.0, 16.0]))
    assert corr[0] == pytest.approx(9.0)  # not its own concurrency's 0.3; "b" at 8 is another configuration
    assert sides.tolist() == [1, 0]
    assert corr[1] == 0.0
    corr, sides = interpolated_residual(["a", "a", "a", "a"], x[:4], r[:4], ["a"], np.log([64.0]))
    assert corr[0] == pytest.approx(0.3) and sides[0] == 1


def test_order_of_rows_does_not_matter_to_the_last_bit():
    """Three or more runs at one concurrency are averaged in a fixed order, so a build reads the same bits whatever
    order its rows come in."""
    rng = np.random.default_rng(3)
    keys = rng.choice(["a", "b", "c"], 40)
    x, r = np.log(rng.choice([1.0, 2, 4, 8, 16, 32, 64], 40)), rng.normal(size=40)
    qk, qx = rng.choice(["a", "b", "c", "d"], 25), np.log(rng.choice([1.0, 3, 8, 20, 100], 25))
    first = interpolated_residual(keys, x, r, qk, qx)
    p, s = rng.permutation(40), rng.permutation(25)
    second = interpolated_residual(keys[p], x[p], r[p], qk[s], qx[s])
    assert (second[0] == first[0][s]).all() and (second[1] == first[1][s]).all()


def test_with_same_x_a_run_at_the_querys_own_concurrency_is_read_alone():
    """A key that leaves out the lengths: the same system at the same concurrency with other lengths is the nearest
    neighbour there is, and taken alone; without it, the interpolation as before."""
    x = np.log([4.0, 16.0, 64.0])
    r = np.array([0.1, 0.7, 0.9])
    corr, sides = interpolated_residual(["a"] * 3, x, r, ["a", "a"], np.log([16.0, 8.0]), same_x=True)
    assert corr[0] == pytest.approx(0.7) and corr[1] == pytest.approx(0.4)
    assert sides.tolist() == [2, 2]
    corr, _ = interpolated_residual(["a"] * 3, x, r, ["a"], np.log([16.0]))
    assert corr[0] == pytest.approx(0.5)  # 4 and 64 around it: halfway in log C
