"""The measurements' own repeatability (:func:`econ.fits.calibration_cv.replicate_log_deviation`): a synthetic round
trip with a known noise, and copies that are not repeats."""

from __future__ import annotations

import numpy as np

from econ.fits.calibration_cv import replicate_log_deviation


def test_replicates_recover_a_known_run_to_run_noise():
    """Configurations measured 2 to 5 times with a lognormal noise of σ = 0.2: the deviations' median and 90th
    percentile of |e| are the normal's 0.674σ and 1.645σ (within 8%); without the √(n/(n − 1)) scaling they would
    read about 17% too tight (29% for pairs)."""
    rng = np.random.default_rng(7)
    sigma = 0.2
    counts = rng.integers(2, 6, size=3000)
    key = np.repeat(np.arange(counts.size), counts).astype(str)
    truth = np.repeat(rng.normal(0.0, 2.0, counts.size), counts)  # configurations far apart
    e = np.abs(replicate_log_deviation(key, truth + rng.normal(0.0, sigma, key.size)))
    assert abs(np.median(e) / (0.6745 * sigma) - 1.0) < 0.08
    assert abs(np.quantile(e, 0.9) / (1.6449 * sigma) - 1.0) < 0.08


def test_a_copy_of_a_measurement_is_not_a_repeat_of_it():
    """The file stores some runs twice (one id per snapshot): a copy joins neither the count nor the mean, and a run
    measured once (however often stored) has no deviation."""
    key = np.array(["a", "a", "a", "b", "b", "c"])
    e = replicate_log_deviation(key, np.array([1.0, 1.0, 2.0, 3.0, 3.0, 4.0]))
    # a: distinct values 1 and 2, mean 1.5, n = 2, scaled by √2
    assert np.allclose(e[:3], [-0.5 * 2**0.5, -0.5 * 2**0.5, 0.5 * 2**0.5])
    assert np.isnan(e[3:]).all()


def test_a_missing_measurement_spoils_no_other_runs_deviation():
    """A run without a finite value (an empty or zero cell read as log 0 → -inf, or NaN) is no measurement: it has
    no deviation and leaves its key's mean and count to the runs that have one."""
    key = np.array(["a", "a", "a", "b", "b"])
    e = replicate_log_deviation(key, np.array([1.0, 2.0, np.nan, 3.0, -np.inf]))
    assert np.allclose(e[:2], [-0.5 * 2**0.5, 0.5 * 2**0.5])
    assert np.isnan(e[2:]).all()
