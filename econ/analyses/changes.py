"""What changed between the two newest price snapshots (issue 7): the table behind ``econ diff`` and its page.

Writes ``price_changes``: every model added or removed and every price component that moved
between the snapshot before the newest and the newest one (``econ.diff``), with both dates.
"""

from __future__ import annotations

import polars as pl

from econ.diff import CHANGE_SCHEMA, default_dates, price_changes

NAME = "changes"
INPUTS = ("prices", "price_snapshots")

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
    "change_frac": "new / old - 1 (null when either side is blank or zero)",
}


def run(ctx) -> None:
    dates = ctx.query("select distinct snapshot_date from price_snapshots")["snapshot_date"].to_list()
    if len(set(dates)) < 2:
        changes = pl.DataFrame(schema={"from_date": pl.Date, "to_date": pl.Date} | CHANGE_SCHEMA)
    else:
        start, end = default_dates(dates, None, None)
        changes = price_changes(ctx.query("select * from prices"), start, end).select(
            pl.lit(start).alias("from_date"), pl.lit(end).alias("to_date"), pl.all())
    ctx.write("price_changes", changes, "Price changes between the two newest snapshots (econ diff's default). "
              "Grain: one row per added/removed price key, or per changed component of a price key.", COLUMNS)

