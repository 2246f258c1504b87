"""What changed between the two newest price snapshots (issue 7): the tables behind ``econ diff`` and its page.

Writes ``price_changes``: every model added or removed and every price component that moved
between the snapshot before the newest and the newest one (``econ.diff``), with both dates; and
``inferred_changes``: what those price changes imply — every inferred quantity of the pricing
fits that moved (``econ.analyses.inferred``).
"""

from __future__ import annotations

import duckdb
import polars as pl

from econ.analyses.inferred import CHANGE_COLUMNS, IMPLIED_SCHEMA, inferred_between
from econ.analyses.scenario import load_scenario
from econ.diff import CHANGE_SCHEMA, default_dates, price_changes
from econ.fits.assumptions import Assumptions, from_scenario

NAME = "changes"
INPUTS = ("prices", "price_snapshots", "models", "hardware", "memory_tiers", "scenarios")

COLUMNS = {
    "from_date": "Older date compared (the snapshot before the newest)",
    "to_date": "Newer date compared (the newest snapshot)",
    "change": "added, removed or changed",
    "source": "Where the price rows come from (hand, litellm, openrouter)",
    "provider": "Seller",
    "model": "Model id as the seller names it",
    "variant": "Service variant",
    "tier_min_prompt_tokens": "Long-context tier threshold (0 = base tier) [tokens]",
    "component": "Price component (column of prices); input_usd_per_mtok for added/removed rows",
    "old_value": "Value on from_date, in the component's unit",
    "new_value": "Value on to_date, in the component's unit",
    "change_frac": "new / old - 1 (null when either side is blank or the old value is 0)",
}


def run(ctx) -> None:
    dates = ctx.query("select distinct snapshot_date from price_snapshots")["snapshot_date"].to_list()
    if len(set(dates)) < 2:  # nothing to compare: empty tables with the right columns
        start = end = None
        changes, implied = pl.DataFrame(schema=CHANGE_SCHEMA), pl.DataFrame(schema=IMPLIED_SCHEMA)
    else:
        start, end = default_dates(dates, None, None)
        prices = ctx.query("select * from prices")
        changes = price_changes(prices, start, end)
        implied = inferred_between(prices, start, end, *inference_inputs(ctx.con))

    def dated(frame):
        return frame.select(pl.lit(start, pl.Date).alias("from_date"), pl.lit(end, pl.Date).alias("to_date"), pl.all())

    ctx.write(
        "price_changes",
        dated(changes),
        "Price changes between the two newest snapshots (econ diff's default). "
        "Grain: one row per added/removed price key, or per changed component of a price key.",
        COLUMNS,
    )
    ctx.write(
        "inferred_changes",
        dated(implied),
        "What the price changes imply: inferred quantities of the pricing fits "
        "(implied KV bytes, output/input ratio and decode batch, cache tier, fast-mode batch ratio) that moved "
        "between the two newest snapshots, under scenario base. Grain: one row per schedule x variant x detail x "
        "quantity.",
        CHANGE_COLUMNS | {"from_date": COLUMNS["from_date"], "to_date": COLUMNS["to_date"]},
    )


def inference_inputs(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, pl.DataFrame, Assumptions]:
    """What the pricing fits read besides prices: models, memory tiers and scenario base's assumptions."""
    hardware, models, tiers = (
        con.sql(f"select * from {t} order by all").pl() for t in ("hardware", "models", "memory_tiers")
    )
    return models, tiers, from_scenario(load_scenario(con, "base"), hardware)
