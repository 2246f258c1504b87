"""The exact bounded linear least-squares solvers of the fitting wrapper, against SciPy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from econ.fits.bounded_lstsq import bounded_lstsq_batch


def test_batched_bounded_least_squares_matches_scipy_per_problem():
    """200 random 3-parameter problems with mixed bounds: the vectorised active-set solution equals lsq_linear's."""
    rng = np.random.default_rng(8)
    a = rng.normal(size=(200, 15, 3)) * np.array([1.0, 30.0, 0.01])
    b = rng.normal(size=(200, 15)) + a @ np.array([1.0, -0.05, 40.0])
    lower, upper = np.array([0.0, 0.0, -np.inf]), np.array([0.5, np.inf, 20.0])
    ours = bounded_lstsq_batch(a, b, lower, upper)
    for k in range(a.shape[0]):
        ref = lsq_linear(a[k], b[k], bounds=(lower, upper), method="bvls", tol=1e-14)
        ssr = np.sum((a[k] @ ours[k] - b[k]) ** 2)
        assert ssr == pytest.approx(2 * ref.cost, rel=1e-8, abs=1e-12)
        assert ours[k] == pytest.approx(ref.x, rel=1e-6, abs=1e-9)
    assert np.all(ours >= lower) and np.all(ours <= upper)
