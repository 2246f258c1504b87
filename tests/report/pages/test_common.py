"""Shared page helpers, and the pages on a small data set whose analyses write fewer columns and rows."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from econ.report.page import Section
from econ.report.pages.common import (
    UNDRAWABLE,
    ensure_columns,
    finite_interval,
    guarded,
    interval_text,
    nearest_on_log_grid,
    pct,
    pick,
)

from ..conftest import AS_OF, FIXTURE_DATA


@pytest.mark.parametrize(
    ("available", "preferred", "n", "expected"),
    [
        (["H100", "B200", "GB200", "A100"], ("H100", "B200", "GB200"), 3, ["H100", "B200", "GB200"]),
        (["H100", "B200", "TPU-v5e"], ("H100", "B200", "GB200"), 3, ["H100", "B200", "TPU-v5e"]),  # topped up by name
        (["A100"], ("H100",), 3, ["A100"]),
        ([], ("H100",), 3, []),
    ],
)
def test_pick_prefers_the_named_ones_and_tops_up(available, preferred, n, expected):
    assert pick(available, preferred, n) == expected


@pytest.mark.parametrize(
    ("target", "expected"), [(32000, 32768), (8000, 8192), (None, 8192), (3e6, 1048576), (1, 1024)]
)
def test_nearest_grid_point_is_nearest_in_log_terms(target, expected):
    grid = [2**k for k in range(10, 21)]
    assert nearest_on_log_grid(grid, target, 8192) == expected


@pytest.mark.parametrize(("value", "text"), [(-0.6, "-60.0%"), (0.4286, "+42.9%"), (None, ""), (float("nan"), "")])
def test_percentages_are_signed(value, text):
    assert pct(value) == text


@pytest.mark.parametrize(
    ("low", "high", "text"), [(1.0, 2.0, "1–2"), (float("-inf"), float("inf"), "not identified"), (None, 2.0, "")]
)
def test_an_unidentified_fit_interval_says_so(low, high, text):
    assert finite_interval(low, high) == text


def test_interval_column_reads_each_row_like_finite_interval():
    frame = pl.DataFrame({"lo": [1.0, float("-inf"), None, 1500.0], "hi": [2.0, float("inf"), 2.0, 2.5e6]})
    assert frame.select(interval_text("lo", "hi"))["lo"].to_list() == ["1–2", "not identified", "", "1,500–2.5 M"]


def test_a_missing_column_becomes_a_note_and_any_other_error_still_fails():
    con = duckdb.connect()
    con.sql("create table t as select 1 as a")
    section = guarded("Heading", lambda: Section("Heading", [con.sql("select b from t").fetchall()]))
    assert section.heading == "Heading" and UNDRAWABLE in section.blocks[0] and "pending" in section.blocks[0]
    with pytest.raises(ZeroDivisionError):
        guarded("Heading", lambda: 1 / 0)


def test_optional_columns_are_added_as_nulls():
    frame = ensure_columns(pl.DataFrame({"a": [1]}), ["a", "pool_models"])
    assert frame.columns == ["a", "pool_models"] and frame["pool_models"].to_list() == [None]


@pytest.mark.slow
def test_every_page_renders_from_the_small_data_set_without_snapshots(tmp_path, asset_cache):
    """No snapshots (no diff), one tiered price (no pooled fit), no open-weight market: nothing fails, nothing is
    skipped."""
    from econ.build import build

    result_reports = tmp_path / "reports"
    build(
        data_dir=FIXTURE_DATA,
        db_path=tmp_path / "econ.duckdb",
        cache_dir=tmp_path / "cache",
        reports_dir=result_reports,
        as_of=AS_OF,
    )
    pages = sorted(p.name for p in result_reports.glob("*.html"))
    assert len(pages) == 12
    changed = (result_reports / "what-changed.html").read_text(encoding="utf-8")
    assert "Nothing to compare: fewer than two snapshot dates are imported" in changed
    pricing = (result_reports / "context-pricing.html").read_text(encoding="utf-8")
    assert "No provider has enough tiered schedules to pool." in pricing
    for page in pages:
        assert UNDRAWABLE not in (result_reports / page).read_text(encoding="utf-8"), page


def test_a_number_whose_status_is_not_ok_is_never_shown_bare():
    from econ.report.pages.common import with_status

    assert with_status(1234.5, 456.0, 3210.0, "ok") == "1,234 (456–3,210)"
    assert with_status(1234.5, 456.0, 3210.0, "undercovered") == "1,234 (456–3,210) [undercovered]"
    assert with_status(1234.5, None, None, "too_few_open_models") == "1,234 [too_few_open_models]"
    assert with_status(None, None, None, "no hold cost") == "[no hold cost]"
    assert with_status(5.0, 0.0, float("inf"), "ok") == "5 (not identified)"
