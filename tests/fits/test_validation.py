"""Validation of price inferences: coverage of the cross-validated intervals in synthetic round trips (where the
theory says what it must be), the widening by hand, and the statuses."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.fits import validation as v


def frame(true, implied, keys=None, low=None, high=None):
    n = len(true)
    return pl.DataFrame(
        {
            "model_key": keys if keys is not None else [f"m{i}" for i in range(n)],
            "implied": implied,
            "scenario_low": low if low is not None else [None] * n,
            "scenario_high": high if high is not None else [None] * n,
            "true": true,
        },
        schema={
            "model_key": pl.String,
            **{c: pl.Float64 for c in ("implied", "scenario_low", "scenario_high", "true")},
        },
    )


def test_leave_one_out_t_interval_covers_at_the_stated_level_with_four_models():
    """Unbiased log-normal errors, 4 models per set, 3,000 sets generated at once: r_new/s with s² the mean of three
    other r² is Student-t with 3 degrees of freedom, so the LOO interval covers exactly 90 % (here ± 1.5 %)."""
    rng = np.random.default_rng(3)
    covered = []
    r = rng.normal(0.0, 0.7, size=(3_000, 4))
    for row in r:  # one small validation per set (the function is vectorised within a set)
        out, _ = v.validate(frame(np.ones(4), np.exp(row)))
        covered.append(out["covers_true"].to_numpy())
    assert np.mean(covered) == pytest.approx(0.9, abs=0.015)


def test_many_models_with_a_bias_still_cover_near_the_level():
    """400 models, bias 0.5 and spread 0.5 in log: the RMS counts the bias as error; coverage 90 % ± 4 %."""
    rng = np.random.default_rng(5)
    r = 0.5 + rng.normal(0.0, 0.5, size=400)
    out, s = v.validate(frame(np.full(400, 2e4), 2e4 * np.exp(r)))
    assert s["coverage_rows_frac"] == pytest.approx(0.9, abs=0.04)
    assert s["geometric_mean_ratio"] == pytest.approx(np.exp(0.5), rel=0.08)
    assert s["status"] == "ok"


def test_widening_by_hand():
    """Central 100 with scenario 50–400 and h = ln 2: high = 100·exp(√(ln4² + ln2²)), low = 100·exp(−√(ln2² + ln2²))."""
    low, high = v.widened_interval([100.0], [50.0], [400.0], [np.log(2.0)])
    assert high[0] == pytest.approx(100 * np.exp(np.hypot(np.log(4), np.log(2))))
    assert low[0] == pytest.approx(100 * np.exp(-np.hypot(np.log(2), np.log(2))))
    low, high = v.widened_interval([100.0], [None], [None], [np.inf])
    assert (low[0], high[0]) == (0.0, np.inf)


def test_closed_rows_get_the_full_sample_factor_and_open_rows_leave_themselves_out():
    """Four open models with r = ln 2, ln 2, ln 4, ln 0.5 and one closed row: the closed row's h uses all four."""
    r = np.log([2.0, 2.0, 4.0, 0.5])
    out, s = v.validate(frame([1.0, 1.0, 1.0, 1.0, None], [*np.exp(r), 3.0], keys=["a", "b", "c", "d", None]))
    rms_all = np.sqrt(np.mean(r**2))
    t4 = v.stdtrit(4, 0.95)
    assert out["half_width_log"][4] == pytest.approx(t4 * rms_all)
    assert s["widening_factor_ratio"] == pytest.approx(np.exp(t4 * rms_all))
    rms_without_c = np.sqrt(np.mean(np.log([2.0, 2.0, 0.5]) ** 2))
    assert out["half_width_log"][2] == pytest.approx(v.stdtrit(3, 0.95) * rms_without_c)
    assert out["covers_true"][4] is False  # no truth to cover
    assert s["n_models"] == 4 and s["median_abs_log_ratio"] == pytest.approx(np.log(2.0))


def test_first_party_and_reseller_rows_of_one_model_are_one_vote_and_left_out_together():
    out, s = v.validate(frame([1.0] * 5, [2.0, 8.0, 2.0, 2.0, 2.0], keys=["a", "a", "b", "c", "d"]))
    assert s["n_models"] == 4 and s["n_rows"] == 5
    r_a = (np.log(2) + np.log(8)) / 2  # one vote: the mean of its rows
    expected = v.stdtrit(4, 0.95) * np.sqrt((r_a**2 + 3 * np.log(2) ** 2) / 4)
    assert s["widening_factor_ratio"] == pytest.approx(np.exp(expected))
    assert out["half_width_log"][0] == out["half_width_log"][1]  # a's rows both leave a out


def test_too_few_models_leave_the_interval_unbounded():
    out, s = v.validate(frame([1.0, 1.0], [2.0, 2.0]))
    assert s["status"] == "too_few_open_models" and np.isinf(s["widening_factor_ratio"])
    assert out["validated_high"].to_list() == [np.inf, np.inf] and out["validated_low"].to_list() == [0.0, 0.0]


def test_an_interval_that_covers_fewer_than_three_of_four_models_is_undercovered():
    """Two of four models outside their intervals (a hand-made validated frame): coverage 0.5 < 0.75."""
    validated = pl.DataFrame(
        {
            "model_key": ["a", "b", "c", "d"],
            "log_ratio": [0.1, 0.2, 3.0, -3.0],
            "covers_true": [True, True, False, False],
        }
    )
    s = v.summary(validated, full_half_width=1.0, n_models=4)
    assert s["status"] == "undercovered" and s["coverage_models_frac"] == 0.5
    assert s["median_abs_log_ratio"] == pytest.approx(1.6) and not s["error_within_factor"]  # e^1.6 > e^1
