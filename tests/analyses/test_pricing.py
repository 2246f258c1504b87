"""The pricing analysis: every fit_* table is written with its comments and assumptions, on the fixture build and
on the real data, and a rebuild with unchanged inputs restores it from the cache."""

from __future__ import annotations

import shutil
from datetime import date

import duckdb
import polars as pl
import pytest
from fits.pricing_data import AS_OF, frames

from econ.analyses import ANALYSES, pricing
from econ.analyses.pricing_tables import COLUMNS, DESCRIPTIONS
from econ.analyses.runner import run_analyses

TABLES = tuple(DESCRIPTIONS)
ASSUMPTIONS = (
    "chip",
    "number_format",
    "kv_cache_format",
    "usd_per_chip_hour",
    "gross_margin_frac",
    "scenario_interval",
    "assumptions_defaulted",
)


def q(db, sql) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.sql(sql).pl()


def test_registered_after_serving():
    names = [m.NAME for m in ANALYSES]
    assert names.index("pricing") == names.index("serving") + 1


def test_fixture_build_writes_every_table_with_comments(fixture_db):
    comments = q(fixture_db, "select table_name, comment from duckdb_tables()")
    described = dict(comments.iter_rows())
    for table in TABLES:
        assert described.get(table, "").startswith(DESCRIPTIONS[table][:40]), table
    columns = q(
        fixture_db,
        f"select table_name, column_name, comment from duckdb_columns() "
        f"where table_name in ({', '.join(repr(t) for t in TABLES)})",
    )
    undocumented = columns.filter(pl.col("comment").is_null() | (pl.col("comment") == ""))
    assert undocumented.height == 0, undocumented.rows()


def test_fixture_gemini_tiers_and_fast_mode(fixture_db):
    ctx = q(fixture_db, "select * from fit_context_tiers where not pooled and default_rule")
    assert set(ctx["price_model"]) == {"gemini-3.1-pro-preview"} and set(ctx["status"]) == {"exact"}
    fast = q(fixture_db, "select batch_ratio from fit_fast_mode where status = 'ok'")
    assert fast["batch_ratio"].to_list() == pytest.approx([15.0])


@pytest.fixture(scope="module")
def real_tables():
    f = frames()
    return pricing.tables(f["price_current"], f["models"], f["memory_tiers"], f["assumptions"])


def test_real_data_fills_every_table(real_tables):
    for name, frame in real_tables.items():
        assert frame.height > 0, name
        assert all(c in COLUMNS for c in frame.columns), (name, [c for c in frame.columns if c not in COLUMNS])


@pytest.mark.parametrize(
    "table", [t for t in TABLES if t not in ("fit_io_market_residuals", "fit_cache_tiers_by_memory_tier")]
)
def test_every_result_table_states_assumptions_and_both_intervals(real_tables, table):
    frame = real_tables[table]
    for column in ASSUMPTIONS:
        assert column in frame.columns and frame[column].null_count() == 0, column
    has_scenario = any(
        c.endswith(("_scenario_low_ratio", "_scenario_low_bytes_per_token", "_scenario_low_usd_per_gb_hour"))
        or c == "scenario_low"
        for c in frame.columns
    )
    assert has_scenario
    assert "fit_interval_kind" in frame.columns or table in ("fit_io_prices", "fit_fast_mode")


def test_one_price_source_per_model(real_tables):
    for table in ("fit_io_prices", "fit_context_tiers", "fit_cache_tiers"):
        frame = real_tables[table]
        if "pooled" in frame.columns:
            frame = frame.filter(~pl.col("pooled"))
        per_model = frame.group_by("name_key").agg(
            pl.struct("price_source", "price_provider", "price_model").n_unique()
        )
        assert per_model.filter(pl.col("price_source") > 1).height == 0, table


def test_fit_io_prices_flags_the_lecture_inconsistency_for_frontier_models(real_tables):
    """Gemini 3.1 Pro: rho = 6 with its 200k threshold as L* gives a batch below B*0 at the scenario (lecture f.3)."""
    row = (
        real_tables["fit_io_prices"]
        .filter((pl.col("price_model") == "gemini-3.1-pro-preview") & (pl.col("variant") == "standard"))
        .row(0, named=True)
    )
    assert row["output_over_input_ratio"] == pytest.approx(6.0)
    assert row["critical_context_source"] == "price_tier_threshold"
    assert row["batch_over_balance_ratio"] < 1 and row["lecture_f3_check"].startswith("batch below")


def test_rebuild_with_unchanged_inputs_restores_from_cache(fixture_db, tmp_path):
    db = tmp_path / "copy.duckdb"
    shutil.copy(fixture_db, db)
    with duckdb.connect(str(db), read_only=False) as con:
        before = con.sql("select * from fit_context_tiers order by all").pl()
        first = run_analyses(con, [pricing], as_of=date.fromisoformat(AS_OF), cache_dir=tmp_path / "cache")
        second = run_analyses(con, [pricing], as_of=date.fromisoformat(AS_OF), cache_dir=tmp_path / "cache")
        after = con.sql("select * from fit_context_tiers order by all").pl()
    assert (first, second) == ({"pricing": "ran"}, {"pricing": "cached"})
    assert after.equals(before)
