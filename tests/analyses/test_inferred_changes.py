"""What a price change implies: the pricing fits before and after, only for schedules whose prices moved."""

from __future__ import annotations

from datetime import date

import duckdb
import polars as pl
import pytest

from econ.analyses.inferred_changes import inferred_between, inferred_changes
from econ.analyses.inputs import MODELS_SQL
from econ.analyses.scenario import scenarios_from_frame
from econ.fits.assumptions import from_scenario


@pytest.fixture(scope="module")
def inputs(fixture_db):
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        frames = {
            t: con.sql(f"select * from {t} order by all").pl()
            for t in ("prices", "memory_tiers", "hardware_derived", "scenarios")
        }
        frames["models"] = con.sql(MODELS_SQL).pl()
    a = from_scenario(scenarios_from_frame(frames["scenarios"])["base"], frames["hardware_derived"])
    return frames, a


def test_a_long_context_price_rise_moves_the_implied_kv_bytes(inputs):
    """Raising Gemini's >200k input price from 4 to 6 $/MTok doubles the input slope (6-2 vs 4-2), so its reading
    as prefill attention FLOPs per context token doubles; nothing about the unchanged Opus schedule is listed."""
    frames, a = inputs
    old = frames["prices"]
    new = old.with_columns(
        pl.when((pl.col("model") == "gemini-3.1-pro-preview") & (pl.col("tier_min_prompt_tokens") > 0))
        .then(6.0)
        .otherwise(pl.col("input_usd_per_mtok"))
        .alias("input_usd_per_mtok")
    )
    out = inferred_changes(old, new, frames["models"], frames["memory_tiers"], a)
    kv = out.filter(quantity="attention_flop_per_context_token", detail="input")
    assert kv.height == 1 and kv["model"][0] == "gemini-3.1-pro-preview"
    assert kv["new_value"][0] / kv["old_value"][0] == pytest.approx(2.0, rel=1e-6)
    assert set(out["model"]) == {"gemini-3.1-pro-preview"}


def test_no_price_change_implies_nothing(inputs):
    frames, a = inputs
    out = inferred_changes(frames["prices"], frames["prices"], frames["models"], frames["memory_tiers"], a)
    assert out.height == 0 and "old_value" in out.columns


def test_between_dates_uses_the_rows_in_effect(inputs):
    """The >200k input price of Gemini rises from 4 to 6 on 2026-06-01 (a new period): dates on either side of it
    see the doubled input slope, two dates inside one period see nothing."""
    frames, a = inputs
    prices = frames["prices"]
    tier = (pl.col("model") == "gemini-3.1-pro-preview") & (pl.col("tier_min_prompt_tokens") > 0)
    rise = date(2026, 6, 1)
    history = pl.concat(
        [
            prices.with_columns(pl.when(tier).then(pl.lit(rise)).otherwise(pl.col("to_date")).alias("to_date")),
            prices.filter(tier).with_columns(pl.lit(rise).alias("from_date"), pl.lit(6.0).alias("input_usd_per_mtok")),
        ]
    )
    across = inferred_between(
        history, date(2026, 3, 1), date(2026, 11, 30), frames["models"], frames["memory_tiers"], a
    )
    kv = across.filter(quantity="attention_flop_per_context_token", detail="input")
    assert kv["new_value"][0] / kv["old_value"][0] == pytest.approx(2.0, rel=1e-6)
    within = inferred_between(
        history, date(2026, 6, 1), date(2026, 11, 30), frames["models"], frames["memory_tiers"], a
    )
    assert within.height == 0


def test_the_compared_dates_are_those_econ_diff_picks_by_default(real_db):
    """The build's compared dates (SQL, read by price_changes and inferred_changes) are the pair econ diff picks
    without --from and --to (econ.fits.price_changes.default_dates); with one snapshot date there is no pair."""
    from econ.analyses.price_changes import COMPARED_SQL
    from econ.fits.price_changes import default_dates

    with duckdb.connect(str(real_db), read_only=True) as con:
        dates = [r[0] for r in con.execute("select snapshot_date from price_snapshots").fetchall()]
        assert con.execute(COMPARED_SQL).fetchall() == [default_dates(dates, None, None)]
    one = duckdb.connect()
    one.execute("create table price_snapshots as select date '2026-01-01' as snapshot_date from range(3)")
    assert one.execute(COMPARED_SQL).fetchall() == [(None, date(2026, 1, 1))]
