"""When each price change happened (econ.fits.change_windows), on one source's three snapshots worked by hand."""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.fits.change_windows import windows
from econ.fits.price_changes import state_on

JAN, FEB, FEB_15, MAR = date(2026, 1, 1), date(2026, 2, 1), date(2026, 2, 15), date(2026, 3, 1)


def _rows(*rows) -> pl.DataFrame:
    """Price periods of source ``s``: (model, from_date, to_date, snapshot_date, source_commit, last_commit,
    declared)."""
    return pl.DataFrame(
        [("s", "p", m, "standard", 0, *rest) for m, *rest in rows],
        schema={
            "source": pl.String,
            "provider": pl.String,
            "model": pl.String,
            "variant": pl.String,
            "tier_min_prompt_tokens": pl.Int64,
            "from_date": pl.Date,
            "to_date": pl.Date,
            "snapshot_date": pl.Date,
            "source_commit": pl.String,
            "last_commit": pl.String,
            "declared": pl.Boolean,
        },
        orient="row",
    )


def test_a_change_happened_after_the_last_snapshot_with_the_old_value_and_by_the_first_with_the_new():
    """Snapshots on Jan 1, Feb 1 and Mar 1. ``moved`` had its old price on Jan 1 and Feb 1 and the new on Mar 1: it
    changed after Feb 1 and by Mar 1. ``dated``'s source names the day of its new price (Feb 15): exactly then.
    ``added`` first appears on Mar 1: after Feb 1 (the snapshot before that did not have it) and by Mar 1."""
    prices = _rows(
        ("moved", JAN, MAR, FEB, "c1", "c2", False),
        ("moved", MAR, None, MAR, "c3", "c3", False),
        ("dated", JAN, FEB_15, FEB, "c1", "c2", False),
        ("dated", FEB_15, None, MAR, "c3", "c3", True),
        ("added", MAR, None, MAR, "c3", "c3", False),
    )
    changes = pl.DataFrame(
        {
            "change": ["changed", "changed", "added"],
            "source": "s",
            "provider": "p",
            "model": ["moved", "dated", "added"],
        }
    ).with_columns(variant=pl.lit("standard"), tier_min_prompt_tokens=pl.lit(0, pl.Int64))
    got = windows(changes, prices, state_on(prices, JAN), state_on(prices, MAR))
    cols = ["model", "window_from_date", "window_to_date", "window_from_commit", "window_to_commit", "exact"]
    assert got.select(cols).rows() == [
        ("moved", FEB, MAR, "c2", "c3", False),
        ("dated", FEB_15, FEB_15, None, "c3", True),
        ("added", FEB, MAR, None, "c3", False),
    ]
