"""fit_fast_mode reads only the schedules that offer a fast or priority variant, and only their prices (its READS,
which its run queries): the fit from those is the fit from every row and column of the prices, and a price change
elsewhere, or a new snapshot that moves no price of theirs, leaves its key (a refresh keeps its tables)."""

from __future__ import annotations

import shutil

import duckdb

from econ.analyses import fit_fast_mode
from econ.analyses.inference_serving import serving
from econ.analyses.pricing_inputs import PRICES_SQL, assumptions, inputs
from econ.analyses.runner import BuildContext, _Scenarios, input_fingerprint

ORDER = f"order by {', '.join(fit_fast_mode.ROW_KEY)}"


def test_the_fit_reads_nothing_outside_its_reads_and_its_key_follows_them(real_db, tmp_path):
    db = tmp_path / "econ.duckdb"
    shutil.copy(real_db, db)
    con = duckdb.connect(str(db))
    con.execute(f"set variable as_of = date '{con.execute('select as_of from build_info').fetchone()[0]}'")
    ctx = BuildContext(con=con, as_of=None, _scenarios=_Scenarios(con))
    every, models = inputs(ctx)
    reads = fit_fast_mode.READS["inference_prices"]
    read = ctx.query(f"select * from ({reads}) {ORDER}")
    assert 0 < read.height < every.height
    a, deployed = assumptions(ctx), serving(ctx)
    from_every = fit_fast_mode.tables(every, models, a, deployed)
    from_read = fit_fast_mode.tables(read, models, a, deployed)
    assert from_every[0].height > 0 and (from_every[0]["status"] == "ok").any()
    for whole, narrowed in zip(from_every, from_read, strict=True):
        assert whole.equals(narrowed)

    def key() -> str:
        return input_fingerprint(con, fit_fast_mode.INPUTS, None, fit_fast_mode.READS)

    def cut(source: str, provider: str, model: str) -> None:
        con.execute(
            "update price_history set input_usd_per_mtok = input_usd_per_mtok * 0.5 "
            "where source = ? and provider = ? and model = ? and variant = 'standard'",
            [source, provider, model],
        )

    schedule = "select distinct source, provider, model from"
    outside = con.execute(
        f"{schedule} ({PRICES_SQL}) where variant = 'standard' except {schedule} ({reads}) order by all limit 1"
    ).fetchone()
    inside = con.execute(f"{schedule} ({reads}) where variant = 'standard' order by all limit 1").fetchone()
    before = key()
    con.execute("update price_history set source_line = source_line + 1, snapshot_date = snapshot_date + 1")
    assert key() == before  # every row seen again in a newer snapshot, no price moved
    cut(*outside)  # a model without a fast or priority variant: the fit's key stays
    assert key() == before
    cut(*inside)  # the standard price a fast variant is explained against: the fit runs again
    assert key() != before
