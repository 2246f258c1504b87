"""The fit_* tables: written by their analyses, stating their assumptions and both intervals, one source per model,
and restored from the cache when their inputs are unchanged."""

from __future__ import annotations

import shutil
from datetime import date

import duckdb
import polars as pl
import pytest
from fits.pricing_data import AS_OF, frames

from econ.analyses import fit_cache_tiers, fit_context_tiers
from econ.analyses.inferred_changes import pricing_tables
from econ.analyses.runner import run_analyses
from tests.analyses.helpers import q

ASSUMPTIONS = (
    "chip",
    "number_format",
    "kv_cache_format",
    "usd_per_chip_hour",
    "gross_margin_frac",
    "scenario_interval",
    "assumptions_defaulted",
)


def test_fixture_gemini_tiers_and_fast_mode(fixture_db):
    ctx = q(fixture_db, "select * from fit_context_tiers where not pooled and default_rule")
    assert set(ctx["model"]) == {"gemini-3.1-pro-preview"} and set(ctx["status"]) == {"exact"}
    fast = q(fixture_db, "select batch_ratio from fit_fast_mode where status = 'ok'")
    assert fast["batch_ratio"].to_list() == pytest.approx([15.0])


@pytest.fixture(scope="module")
def real_tables():
    f = frames()
    return pricing_tables(f["price_current"], f["models"], f["memory_tiers"], f["assumptions"], f["serving"])


def test_real_data_fills_every_table(real_tables):
    for name, frame in real_tables.items():
        assert frame.height > 0, name


@pytest.mark.parametrize(
    "table", ["fit_context_tiers", "fit_io_prices", "fit_io_market", "fit_cache_tiers", "fit_fast_mode"]
)
def test_every_result_table_states_assumptions_and_both_intervals(real_tables, table):
    frame = real_tables[table]
    for column in ASSUMPTIONS:
        assert column in frame.columns and frame[column].null_count() == 0, column
    has_interval = any(
        "_scenario_low_" in c or c.endswith("_scenario_low_ratio") or "_low_usd_per_gb_hour" in c or c == "scenario_low"
        for c in frame.columns
    )
    # fast mode states no interval of its own: each row is read on every reference architecture and says on how
    # many of them each explanation fits (reference_models and the *_allowed_frac shares)
    assert has_interval or (table == "fit_fast_mode" and "reference_models" in frame.columns)
    # ratios of published prices have no fit interval; the cache premium fit states its own (premium_fit_status)
    fit_evidence = {"fit_cache_tiers": "premium_fit_status"}.get(table, "fit_interval_kind")
    assert fit_evidence in frame.columns or table in ("fit_io_prices", "fit_fast_mode")


def test_one_price_source_per_model_and_one_per_seller_of_open_weights(real_tables):
    """A closed model is read from one schedule; an open model from one schedule per seller (first-party and
    resellers are validated apart), each from one source."""
    for table in ("fit_io_prices", "fit_context_tiers", "fit_cache_tiers"):
        frame = real_tables[table]
        if "pooled" in frame.columns:
            frame = frame.filter(~pl.col("pooled"))
        closed = frame.filter(pl.col("arch_model").is_null())
        per_model = closed.group_by("name_key").agg(pl.struct("source", "provider", "model").n_unique())
        assert per_model.filter(pl.col("source") > 1).height == 0, table
    open_rows = real_tables["fit_context_tiers"].filter(~pl.col("pooled") & pl.col("arch_model").is_not_null())
    per_seller = open_rows.group_by("arch_model", "provider").agg(pl.struct("source", "model").n_unique())
    assert per_seller.filter(pl.col("source") > 1).height == 0


def test_fit_io_prices_flags_the_lecture_inconsistency_for_frontier_models(real_tables):
    """Gemini 3.1 Pro: rho = 6 gives B/B*0 = 1/(rho*mbu/mfu) = 1/8 even with the KV term dropped (a closed model
    has no L*: its tier threshold is not the crossover), a lower bound already below the scenario's batch (f.3)."""
    row = (
        real_tables["fit_io_prices"]
        .filter((pl.col("model") == "gemini-3.1-pro-preview") & (pl.col("variant") == "standard"))
        .row(0, named=True)
    )
    assert row["output_over_input_ratio"] == pytest.approx(6.0)
    assert row["critical_context_source"].startswith("none")
    mbu, mfu = row["decode_mbu_frac"], row["prefill_mfu_frac"]
    assert row["batch_over_balance_ratio"] == pytest.approx(1 / (6.0 * mbu / mfu))
    assert row["batch_over_balance_ratio"] < 1 and row["lecture_f3_check"].startswith("batch below")


def test_rebuild_with_unchanged_inputs_restores_from_cache(fixture_db, tmp_path):
    db = tmp_path / "copy.duckdb"
    shutil.copy(fixture_db, db)
    modules = [fit_context_tiers, fit_cache_tiers]
    with duckdb.connect(str(db), read_only=False) as con:
        before = con.sql("select * from fit_context_tiers order by all").pl()
        first = run_analyses(con, modules, as_of=date.fromisoformat(AS_OF), cache_dir=tmp_path / "cache")
        second = run_analyses(con, modules, as_of=date.fromisoformat(AS_OF), cache_dir=tmp_path / "cache")
        after = con.sql("select * from fit_context_tiers order by all").pl()
    assert first == {"fit_context_tiers": "ran", "fit_cache_tiers": "ran"}
    assert second == {"fit_context_tiers": "cached", "fit_cache_tiers": "cached"}
    assert after.equals(before)
