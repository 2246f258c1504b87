"""BFGS on a batch of problems: each problem reaches its own known minimum, as scipy's BFGS does one at a time."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, rosen, rosen_der

from econ.fits.batched_bfgs import batched_bfgs


def test_each_problem_of_a_batch_reaches_its_own_minimum():
    """Rosenbrock (minimum 0 at (1, 1)) from three starts beside shifted quadratics (minimum 0 at their centres): one
    batch, each row its own problem, each at its textbook minimum and where scipy's BFGS ends from the same start."""
    centres = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [3.0, -2.0], [-0.5, 7.0]])
    rosenbrock = np.array([True, True, True, False, False])
    x0 = np.array([[-1.2, 1.0], [2.0, 2.0], [0.0, -1.0], [0.0, 0.0], [1.0, 1.0]])

    def fun(x, idx):
        f = np.where(rosenbrock[idx], [rosen(r) for r in x], ((x - centres[idx]) ** 2 * [1.0, 10.0]).sum(1))
        g = np.where(rosenbrock[idx][:, None], [rosen_der(r) for r in x], 2.0 * (x - centres[idx]) * [1.0, 10.0])
        return f, g

    x, f, _g, converged, iterations = batched_bfgs(fun, x0, max_iter=500)
    expected = np.where(rosenbrock[:, None], 1.0, centres)
    np.testing.assert_allclose(x, expected, atol=1e-5)
    assert converged.all() and (f < 1e-10).all() and (iterations < 500).all()
    for row in np.flatnonzero(rosenbrock):
        np.testing.assert_allclose(x[row], minimize(rosen, x0[row], jac=rosen_der, method="BFGS").x, atol=1e-4)
