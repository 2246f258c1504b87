"""When each price change happened, as its source allows: after the last snapshot of its source that had the old
value and by the first that had the new one, or on the day the source names (a hand-kept row, a dated price of a
replayed history). :func:`econ.fits.price_changes.price_changes` adds these windows to the changes it finds."""

from __future__ import annotations

import polars as pl

from econ.formula import formula
from econ.price_values import PRICE_KEY as KEY


@formula(
    "window = (last snapshot with the old value, first with the new]; exact = the source's own date for the new price",
    "price periods (econ.fits.price_changes)",
)
def windows(changes: pl.DataFrame, prices: pl.DataFrame, old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """``changes`` (between the price rows ``old`` and ``new`` in effect on the two dates compared, of ``prices``'
    periods) with the window each change happened in, per source (not the dates compared).

    A changed or added key moved after ``window_from_date`` (the newest snapshot of its source that still had the old
    value, or no key) and by ``window_to_date`` (the first that had the new one); ``exact`` when the source dates the
    new price itself (a hand-kept row, a dated price of a replayed history): then both are that day. A removed key
    left after its last snapshot and by the one after. Commits name the snapshots of a replayed history.
    """
    old = old.select(
        *KEY,
        pl.col("snapshot_date").alias("_old_seen"),
        pl.col("last_commit").alias("_old_commit"),
        pl.col("to_date").alias("_old_to"),
        pl.col("declared").alias("_old_declared"),
    )
    new = new.select(
        *KEY,
        pl.col("from_date").alias("_new_from"),
        pl.col("source_commit").alias("_new_commit"),
        pl.col("declared").alias("_new_declared"),
    )
    seen = prices.select("source", pl.col("snapshot_date").alias("_seen")).drop_nulls().unique().sort("_seen")
    frame = changes.join(old, on=KEY, how="left", nulls_equal=True).join(new, on=KEY, how="left", nulls_equal=True)
    before_new = (
        frame.filter(pl.col("change") == "added")
        .select("source", "_new_from")
        .unique()
        .sort("_new_from")
        .join_asof(
            seen,
            left_on="_new_from",
            right_on="_seen",
            by="source",
            strategy="backward",
            allow_exact_matches=False,
            check_sortedness=False,  # both sorted by date, as join_asof needs within each source
        )
        .rename({"_seen": "_before_new"})
    )
    frame = frame.join(before_new, on=["source", "_new_from"], how="left", nulls_equal=True)
    removed = pl.col("change") == "removed"
    exact = pl.when(removed).then(pl.col("_old_declared")).otherwise(pl.col("_new_declared")).fill_null(False)
    end = pl.when(removed).then(pl.col("_old_to")).otherwise(pl.col("_new_from"))
    start = (
        pl.when(exact)
        .then(end)
        .when(pl.col("change") == "added")
        .then(pl.col("_before_new"))
        .otherwise(pl.col("_old_seen"))
    )
    return frame.with_columns(
        start.alias("window_from_date"),
        end.alias("window_to_date"),
        pl.when(exact).then(None).otherwise(pl.col("_old_commit")).alias("window_from_commit"),
        pl.when(removed).then(None).otherwise(pl.col("_new_commit")).alias("window_to_commit"),
        exact.alias("exact"),
    ).drop(pl.selectors.starts_with("_"))
