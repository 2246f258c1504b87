"""serving_layouts keeps the answers and a thinned grid: checked against the whole grid materialised (the analysis's
evaluation with nothing dropped) and reduced a second way (polars group-bys instead of the search's sorts)."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from econ.analyses import deployment_inputs as inputs
from econ.analyses import serving_layouts
from econ.analyses.calibration_scenario import all_scenarios, predictive
from tests.analyses.helpers import q

KEY = ["model", "chip", "number_format", "pool", "layout", "replica_chips", "tensor_parallel",
       "attention_data_parallel", "pipeline_parallel", "batch_per_replica"]  # fmt: skip


@pytest.fixture(scope="module")
def whole(fixture_db) -> pl.DataFrame:
    """Every fitting point of every case and pool of the fixture data, as the analysis evaluates them."""
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        s = predictive(all_scenarios(con))[0]  # the scenario the build evaluates the layouts at
        cases = (
            con.sql(inputs.CASES_SQL).pl().filter(pl.col("number_format").is_in(list(s.alternatives("weight_format"))))
        )
        named = con.sql("select * from layouts order by layout").pl()
    cases = cases.with_columns(pl.int_range(pl.len()).alias("_case"))
    m = int(s.max_replica_chips)
    decode = serving_layouts.evaluate(
        inputs.layouts_for(cases, named, "decode", m), s, "decode", serving_layouts.DECODE_BATCH
    )
    prefill = serving_layouts.evaluate(
        inputs.layouts_for(cases, named, "prefill", m), s, "prefill", serving_layouts.PREFILL_BATCH, cases.height
    )
    return pl.concat([decode, prefill])


@pytest.fixture(scope="module")
def stored(fixture_db) -> pl.DataFrame:
    return q(fixture_db, "select * from serving_layouts")


def test_it_stores_a_fraction_of_what_it_evaluates(whole, stored):
    assert stored.height < whole.height / 3
    assert stored.select(KEY).is_duplicated().sum() == 0
    assert stored.join(whole.select(KEY), on=KEY, how="anti").height == 0  # every stored row is a fitting point


def test_the_cheapest_meeting_the_target_is_the_whole_grids(whole, stored):
    eligible = whole.filter(pl.col("meets_target") & ~pl.col("_idealised"))
    best = eligible.group_by("model", "chip", "number_format", "pool").agg(pl.col("usd_per_mtok").min())
    got = stored.filter("cheapest_meeting_target").select("model", "chip", "number_format", "pool", "usd_per_mtok")
    assert got.height == best.height
    assert got.sort(by=got.columns).equals(best.select(got.columns).sort(by=got.columns))


def test_the_frontier_flags_are_serving_frontier(fixture_db, stored):
    frontier = q(fixture_db, "select * from serving_frontier where efficiency_basis = 'calibrated'")
    flagged = stored.filter("on_frontier")
    assert flagged.height == frontier.height > 0 and set(flagged["pool"]) == {"decode"}
    assert flagged.join(frontier, on=[k for k in KEY if k != "pool"], how="anti").height == 0


def test_the_chart_grid_is_the_cheapest_layout_of_each_replica_size(whole, stored):
    cell = ["model", "chip", "number_format", "pool", "replica_chips", "batch_per_replica"]
    chart = {"decode": serving_layouts.DECODE_BATCH[::2], "prefill": serving_layouts.PREFILL_BATCH[::2]}
    grid = whole.filter(pl.col("layout") == "grid")
    grid = grid.filter(
        pl.when(pl.col("pool") == "decode")
        .then(pl.col("batch_per_replica").is_in(list(chart["decode"])))
        .otherwise(pl.col("batch_per_replica").is_in(list(chart["prefill"])))
    )
    best = grid.group_by(cell).agg(pl.col("usd_per_mtok").min())
    got = stored.filter(pl.col("best_of_replica_size") & pl.col("batch_per_replica").is_in(list(chart["decode"])))
    got = got.filter((pl.col("pool") == "decode") | pl.col("batch_per_replica").is_in(list(chart["prefill"])))
    assert got.height == best.height
    joined = got.join(best, on=cell, suffix="_min")
    assert joined.height == best.height and (joined["usd_per_mtok"] == joined["usd_per_mtok_min"]).all()
    named = whole.filter((pl.col("layout") != "grid") & pl.col("batch_per_replica").is_in(list(chart["prefill"])))
    assert named.select(KEY).join(stored.select(KEY), on=KEY, how="anti").height == 0  # every named layout charted
