"""serving_scenario: the price inferences use the calibrated efficiencies of the serving chip's family, with the
calibration's intervals as their ranges; without a calibration, the stated scenario."""

from __future__ import annotations

import math

import duckdb
import pytest

from econ.analyses.calibration_scenario import FIELDS
from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.scenario import load_scenario


def test_the_fits_state_the_calibrated_efficiencies_of_the_serving_chip(fixture_db):
    """Read back from the built database: each calibrated field of the scenario the fits used is the calibration's
    estimate for the serving chip's architecture family (the shared one where the family has none), its range the
    calibration's interval, and the fit tables carry those values."""
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        base = load_scenario(con, "base")
        s = serving_scenario(base, base.serving_chip, con)
        family = con.execute("select architecture from hardware where chip = ?", [base.serving_chip]).fetchone()[0]
        params = {
            (p, f): (e, lo, hi)
            for p, f, e, lo, hi in con.execute(
                "select parameter, family, estimate, low, high from calibration_parameters where isfinite(estimate)"
            ).fetchall()
        }
        stated = con.execute("select distinct decode_mbu_frac, prefill_mfu_frac from fit_io_prices").fetchall()
    assert s.efficiency_basis == "calibrated"
    for parameter, fields in FIELDS.items():
        found = params.get((parameter, family)) or params.get((parameter, ""))
        if found is None:  # not identified by the fixture's points: base's value, the bound
            assert all(getattr(s, f) == getattr(base, f) for f in fields)
            continue
        estimate, low, high = found
        for f in fields:
            assert getattr(s, f) == pytest.approx(estimate)
            lo, hi = s.range(f)
            assert lo <= estimate <= hi
            if all(v is not None and math.isfinite(v) for v in (low, high)):
                assert (lo, hi) == pytest.approx((min(low, estimate), max(high, estimate)))
            else:  # no interval: the range collapses to the estimate on that side
                assert estimate in (lo, hi)
    assert stated == [(pytest.approx(s.decode_mbu_frac), pytest.approx(s.prefill_mfu_frac))]
    assert any(getattr(base, f) != pytest.approx(getattr(s, f)) for fs in FIELDS.values() for f in fs)


def test_without_a_calibration_the_stated_scenario_is_used():
    con = duckdb.connect()
    con.execute("create table hardware (chip varchar, architecture varchar)")
    sentinel = object()
    assert serving_scenario(sentinel, "B200", con) is sentinel
    assert serving_scenario(sentinel, "B200", None) is sentinel
