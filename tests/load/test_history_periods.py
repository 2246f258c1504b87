"""Effective periods of a replayed history: dated by the snapshots that saw a price, refined by the source's dates."""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.load import history as h
from econ.load.history_periods import history_periods
from tests.load.test_history import rows, snap

D = date
SNAPSHOTS = [
    snap("a", "2026-01-01", rows(("m1", 0, 1.0, 2.0, None, None), ("m2", 0, 3.0, 4.0, None, None))),
    snap("b", "2026-01-05", rows(("m1", 0, 1.0, 2.0, None, None), ("m2", 0, 3.0, 4.0, None, None))),
    snap("c", "2026-01-09", rows(("m1", 0, 0.5, 1.0, None, None), ("m3", 0, 9.0, 9.0, None, None))),
    # announces a cut of m1 for 2026-03-01
    snap(
        "d",
        "2026-02-01",
        rows(
            ("m1", 0, 0.5, 1.0, None, D(2026, 3, 1)),
            ("m1", 0, 0.4, 0.8, D(2026, 3, 1), None),
            ("m3", 0, 9.0, 9.0, None, None),
        ),
    ),  # fmt: skip
    # dates m3's rise to 2026-04-05, after the last snapshot with the old price (d, 2026-02-01)
    snap(
        "e",
        "2026-04-10",
        rows(
            ("m1", 0, 0.5, 1.0, None, D(2026, 3, 1)),
            ("m1", 0, 0.4, 0.8, D(2026, 3, 1), None),
            ("m3", 0, 9.0, 9.0, None, D(2026, 4, 5)),
            ("m3", 0, 12.0, 12.0, D(2026, 4, 5), None),
        ),
    ),  # fmt: skip
    # two commits on one day: m3 cut in place, then its history written down the same day
    snap("f", "2026-05-01", rows(("m1", 0, 0.4, 0.8, None, None), ("m3", 0, 6.0, 6.0, None, None)), hour=10),
    snap(
        "g",
        "2026-05-01",
        rows(
            ("m1", 0, 0.4, 0.8, None, None),
            ("m3", 0, 12.0, 12.0, None, D(2026, 5, 1)),
            ("m3", 0, 6.0, 6.0, D(2026, 5, 1), None),
        ),
        hour=18,
    ),  # fmt: skip
]


def periods(model: str) -> list[tuple]:
    frame = history_periods(h.encode(SNAPSHOTS), "genai_prices").filter(pl.col("model") == model)
    cols = ["from_date", "to_date", "input_usd_per_mtok", "declared", "source_commit", "snapshot_date", "last_commit"]
    return [(f, t, i, d, sc[0], sd, lc[0]) for f, t, i, d, sc, sd, lc in frame.sort("from_date").select(cols).rows()]


def test_a_change_is_dated_to_the_first_snapshot_with_the_new_price():
    """m1 moved between b (last seen at 1.0, 2026-01-05) and c (first at 0.5, 2026-01-09); the cut announced in d for
    2026-03-01 starts that day, declared."""
    assert periods("m1") == [
        (D(2026, 1, 1), D(2026, 1, 9), 1.0, False, "a", D(2026, 1, 5), "b"),
        (D(2026, 1, 9), D(2026, 3, 1), 0.5, False, "c", D(2026, 4, 10), "e"),
        (D(2026, 3, 1), None, 0.4, True, "d", D(2026, 5, 1), "g"),
    ]


def test_a_key_that_left_ends_at_the_snapshot_without_it():
    assert periods("m2") == [(D(2026, 1, 1), D(2026, 1, 9), 3.0, False, "a", D(2026, 1, 5), "b")]


def test_the_source_s_own_date_inside_the_window_dates_the_change():
    """m3's rise was first seen in e (2026-04-10), after d (2026-02-01); e dates it 2026-04-05: it holds from then.
    Then a cut seen in f and written down with its date in g the same day: from 2026-05-01, first shown by f."""
    assert periods("m3") == [
        (D(2026, 1, 9), D(2026, 4, 5), 9.0, False, "c", D(2026, 2, 1), "d"),
        (D(2026, 4, 5), D(2026, 5, 1), 12.0, True, "e", D(2026, 4, 10), "e"),
        (D(2026, 5, 1), None, 6.0, False, "f", D(2026, 5, 1), "g"),
    ]


def test_periods_of_a_key_never_overlap_and_follow_each_other():
    frame = history_periods(h.encode(SNAPSHOTS), "genai_prices").sort("model", "from_date")
    nxt = frame.with_columns(pl.col("from_date").shift(-1).over("model").alias("_next"))
    assert nxt.filter(pl.col("_next").is_not_null() & (pl.col("to_date") > pl.col("_next"))).height == 0
    assert frame.filter(pl.col("to_date") <= pl.col("from_date")).height == 0
