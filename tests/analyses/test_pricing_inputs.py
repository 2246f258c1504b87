"""What the price inferences read of the current prices (their READS, the SQL their runs query): without the columns
a new snapshot moves on every row, and for fit_fast_mode and fit_context_tiers only the schedules they fit. What they
leave out moves neither their fitted values nor their keys; what they read moves their keys."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from econ.analyses import fit_cache_tiers, fit_context_tiers, fit_fast_mode, fit_io_market, fit_io_prices, fleet_plan
from econ.analyses.inference_serving import serving
from econ.analyses.pricing_inputs import PRICES_READ_SQL, assumptions, inputs
from econ.analyses.runner import BuildContext, _Scenarios, input_fingerprint
from econ.db import content_fingerprint


@pytest.fixture
def con(real_db, tmp_path):
    """A copy of the shipped build, dated as built (``price_current`` reads the date)."""
    shutil.copy(real_db, tmp_path / "econ.duckdb")
    con = duckdb.connect(str(tmp_path / "econ.duckdb"))
    con.execute(f"set variable as_of = date '{con.execute('select as_of from build_info').fetchone()[0]}'")
    yield con
    con.close()


def key(con, module) -> str:
    return input_fingerprint(con, module.INPUTS, None, module.READS)


def halve_input_price(con, source: str, provider: str, model: str) -> None:
    con.execute(
        "update price_history set input_usd_per_mtok = input_usd_per_mtok * 0.5 "
        "where source = ? and provider = ? and model = ? and variant = 'standard'",
        [source, provider, model],
    )


def fitted(module, prices, models, a, deployed) -> list:
    """Every table the analysis writes from these prices."""
    tables = list(module.tables(prices, models, a, deployed))
    return tables + [module.steps(prices, tables[0])] if module is fit_context_tiers else tables


@pytest.mark.parametrize("module", [fit_fast_mode, fit_context_tiers])
def test_a_narrowed_fit_reads_nothing_outside_its_reads(con, module):
    ctx = BuildContext(con=con, as_of=None, _scenarios=_Scenarios(con))
    every, models = inputs(ctx)
    read, _ = inputs(ctx, module.READS)
    assert 0 < read.height < every.height
    a, deployed = assumptions(ctx), serving(ctx)
    whole = fitted(module, every, models, a, deployed)
    assert whole[0].height > 0
    for from_every, from_read in zip(whole, fitted(module, read, models, a, deployed), strict=True):
        assert from_every.equals(from_read)
    schedule = "select distinct source, provider, model from"
    reads = module.READS["inference_prices"]
    outside = con.execute(
        f"{schedule} ({PRICES_READ_SQL}) where variant = 'standard' except {schedule} ({reads}) order by all limit 1"
    ).fetchone()
    inside = con.execute(f"{schedule} ({reads}) where variant = 'standard' order by all limit 1").fetchone()
    before = key(con, module)
    halve_input_price(con, *outside)  # a schedule the fit does not read: its key stays
    assert key(con, module) == before
    halve_input_price(con, *inside)  # a standard price of a schedule it fits: it runs again
    assert key(con, module) != before


def test_a_snapshot_that_moves_no_price_keeps_the_price_inferences(con):
    """A new snapshot of a price map moves every current row's snapshot date (and may move its line) though no price
    moved: the keys of the inferences that read the current prices stay, and a price they read moves them."""
    modules = (fit_cache_tiers, fit_context_tiers, fit_io_market, fit_io_prices, fit_fast_mode, fleet_plan)
    before, prices = [key(con, m) for m in modules], content_fingerprint(con, "inference_prices")
    current = "source in (select distinct source from inference_prices)"
    con.execute(
        f"update price_history set snapshot_date = snapshot_date + 1, source_line = source_line + 7 where {current}"
    )
    assert content_fingerprint(con, "inference_prices") != prices  # the view's rows did change
    assert [key(con, m) for m in modules] == before
    first = con.execute(
        "select source, provider, model from inference_prices where variant = 'standard' order by all limit 1"
    ).fetchone()
    halve_input_price(con, *first)
    moved = {m.NAME for m, was in zip(modules, before, strict=True) if key(con, m) != was}
    assert {"fit_io_prices", "fit_io_market"} <= moved
