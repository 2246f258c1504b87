"""The data-fix rule: a unit slip is a move of a power of ten a unit can make, and a step's reasons read in words."""

from __future__ import annotations

import polars as pl
import pytest

from econ.fits.data_fixes import fix_reason, slip_and_revert


@pytest.mark.parametrize(
    ("old", "new", "slip"),
    [
        (0.15, 15.0, True),  # cents read as dollars: OCI's grok-3 output in LiteLLM until 2026-11-20
        (3200.0, 3.5, True),  # per thousand tokens read as per million, with a price change inside 1.5x
        (2.0, 0.002, True),
        (1.0, 20.0, False),  # 20x is no unit: a price move (or a revert, seen only with the history)
        (1.0, 300.0, False),
        (5.0, 4.0, False),  # not a move of more than 10x
    ],
)
def test_a_unit_slip_is_a_move_of_a_power_of_ten_a_unit_can_make(old, new, slip):
    frame = pl.DataFrame({"old": [old], "new": [new], "before": [None], "after": [None]}, schema_overrides={
        "before": pl.Float64, "after": pl.Float64
    })  # fmt: skip
    found, revert = slip_and_revert(pl.col("old"), pl.col("new"), pl.col("before"), pl.col("after"))
    assert frame.select(found.alias("slip"), revert.alias("revert")).row(0) == (slip, False)


def test_a_steps_reasons_are_named_in_order_and_a_move_has_none():
    frame = pl.DataFrame({"s": [True, False, False], "r": [False, False, False], "c": [True, False, True]})
    found = frame.select(fix_reason(pl.col("s"), pl.col("r"), pl.col("c"), pl.lit(False)).alias("why"))["why"]
    assert found.to_list() == ["unit slip; contradicted", None, "contradicted"]
