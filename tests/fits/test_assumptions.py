"""Serving assumptions from a scenario: defaults said out loud, chip x format alternatives, Monte Carlo behaviour."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.analyses.scenario import scenarios_from_frame
from econ.errors import EconError
from econ.fits.assumptions import from_scenario, hardware_alternatives
from econ.load.loader import load_all
from fits.pricing_data import FIXTURE_DATA, REAL_DATA, frames


def test_real_scenario_has_every_assumption():
    a = frames()["assumptions"]
    assert a.defaulted == ()
    assert (a.chip, a.number_format, a.kv_cache_format) == ("GB200", "fp8", "bf16")
    assert a.central["usd_per_chip_hour"] == 2.0 and a.ranges["usd_per_chip_hour"] == (1.5, 4.0)
    # R = (F/2) b_w / W for GB200 fp8: 5e15/2 * 1 / 8e12 = 312.5 (hardware_derived's critical_batch_ratio)
    assert a.central_hardware["critical_batch_ratio"] == pytest.approx(312.5)


def test_fixture_scenario_states_its_defaults():
    a = frames(FIXTURE_DATA)["assumptions"]
    assert {"gross_margin_frac", "decode_mbu_frac", "weight_format"} <= set(a.defaulted)
    assert a.central["gross_margin_frac"] == 0.0 and a.number_format == "bf16"


def test_alternatives_skip_formats_without_a_peak():
    """H100 has no FP4 peak: the H100/fp4 combination is not drawn."""
    alt = hardware_alternatives(frames()["hardware_derived"], ("H100", "B200"), ("fp8", "fp4"))
    assert alt.select("chip", "number_format").rows() == [("H100", "fp8"), ("B200", "fp8"), ("B200", "fp4")]


def test_propagate_central_and_interval():
    a = frames()["assumptions"]
    res = a.propagate(lambda hw, usd_per_chip_hour: np.array([1.0, 2.0]) * usd_per_chip_hour, ("usd_per_chip_hour",))
    assert list(res.central) == [2.0, 4.0]
    # uniform on [1.5, 4]: the 5-95 % quantiles are 1.625 and 3.875 (within Monte Carlo error)
    assert res.low == pytest.approx([1.625, 3.25], rel=0.03) and res.high == pytest.approx([3.875, 7.75], rel=0.03)


def test_categorical_draws_cover_every_alternative_evenly():
    a = frames()["assumptions"]
    n = a.hardware.height
    res = a.propagate(lambda hw: hw["hbm_bandwidth_bytes_per_s"] * np.ones(1), ())
    assert res.low[0] == a.hardware["hbm_bandwidth_bytes_per_s"].min()
    assert res.high[0] == a.hardware["hbm_bandwidth_bytes_per_s"].max()
    # equal slices of the unit interval map to the alternatives in order, one slice each
    u = (np.arange(n) + 0.5) / n
    draws = a._hardware_at(u, np.zeros(n))
    np.testing.assert_array_equal(draws["peak_flop_per_s"], a.hardware["peak_flop_per_s"].to_numpy())
    np.testing.assert_array_equal(draws["weight_bytes_per_param"], a.hardware["weight_bytes_per_param"].to_numpy())


def test_a_quantity_that_depends_on_nothing_has_a_degenerate_interval():
    a = frames()["assumptions"]
    res = a.propagate(lambda hw: np.array([3.0, 4.0]), (), hardware=False)
    assert list(res.low) == [3.0, 4.0] and list(res.high) == [3.0, 4.0]


def test_propagate_rows_matches_propagate():
    a = frames()["assumptions"]
    x = np.array([1.0, 2.0, 1.0, np.nan, 2.0])
    direct = a.propagate(lambda hw, gross_margin_frac: x * (1 - gross_margin_frac), ("gross_margin_frac",))
    rows = a.propagate_rows(
        lambda hw, cols, gross_margin_frac: cols["x"] * (1 - gross_margin_frac), ("gross_margin_frac",), {"x": x}
    )
    np.testing.assert_allclose(rows.low, direct.low)
    np.testing.assert_allclose(rows.high, direct.high)
    assert pl.Series(rows.central).is_nan().to_list() == [False, False, False, True, False]


def edited_base(edits: dict[str, dict | None]):
    """The real base scenario read again with rows changed (dict of columns) or removed (None)."""
    rows = load_all(REAL_DATA)["scenarios"]
    for name, changes in edits.items():
        mine = (pl.col("scenario") == "base") & (pl.col("name") == name)
        if changes is None:
            rows = rows.filter(~mine)
        else:
            rows = rows.with_columns(
                pl.when(mine).then(pl.lit("|".join(v) if isinstance(v, tuple) else v)).otherwise(pl.col(k)).alias(k)
                for k, v in changes.items()
            )
    return scenarios_from_frame(rows)["base"]


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        (
            {"usd_per_chip_hour": None},
            "scenario 'base' has no assumption 'usd_per_chip_hour' — add a row 'base,usd_per_chip_hour,…' to "
            "data/scenarios.csv",
        ),
        (
            {"serving_chip": None},
            "scenario 'base' has no assumption 'serving_chip' — add a row 'base,serving_chip,,<value>,…' to "
            "data/scenarios.csv (text column)",
        ),
        (
            {"serving_chip": {"alternatives": ("H100", "H1OO")}},
            "scenario chip 'H1OO' (serving_chip or its alternatives) is not in the hardware table — add it to "
            "data/hardware.csv or fix the name in data/scenarios.csv",
        ),
        (
            {"weight_format": {"alternatives": ("bf16", "fp44")}},
            "scenario 'base' lists 'fp44' in weight_format, not a number format econ can use here — use one of bf16, "
            "fp8, "
            "int8, fp4 in data/scenarios.csv (value or alternatives)",
        ),
        (
            {"kv_cache_format": {"text": "fp9"}},
            "scenario 'base' sets kv_cache_format to 'fp9', not a number format econ can use here — use one of "
            "fp32, bf16, fp16, fp8, int8, fp4, int4 in data/scenarios.csv",
        ),
        (
            {
                "serving_chip": {"text": "H100", "alternatives": ()},
                "weight_format": {"text": "fp4", "alternatives": ()},
            },
            "the scenario chip H100 has no fp4 peak — pick another weight_format or serving_chip",
        ),
    ],
)
def test_bad_scenarios_are_errors_for_people(edits, message):
    with pytest.raises(EconError) as err:
        from_scenario(edited_base(edits), frames()["hardware_derived"])
    assert str(err.value) == message
