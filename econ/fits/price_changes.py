"""What changed in the prices between two dates (pure: frames in, frames out).

The state of a price key (source, provider, model, variant, tier) on a date is the
``prices`` row whose period contains the date (``from_date <= d < to_date``). Between two
dates a key is *added*, *removed* or *changed* (one row per price component that moved,
with old, new and the relative change). A source is compared only where it has prices
on both dates, so a price map first imported after ``from`` does not show as thousands of
"added" models.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.errors import EconError
from econ.fits.price_ratios import price_change_frac
from econ.formula import formula

KEY = ["source", "provider", "model", "variant", "tier_min_prompt_tokens"]
COMPONENTS = [
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_write_12h_usd_per_mtok",
    "cache_storage_usd_per_mtok_hour",
    "max_input_tokens",
    "speed_ratio",
]
CHANGE_SCHEMA = {
    "change": pl.String,
    "source": pl.String,
    "provider": pl.String,
    "model": pl.String,
    "variant": pl.String,
    "tier_min_prompt_tokens": pl.Int64,
    "component": pl.String,
    "old_value": pl.Float64,
    "new_value": pl.Float64,
    "change_frac": pl.Float64,
}


def state_on(prices: pl.DataFrame, day: date) -> pl.DataFrame:
    """The price rows in effect on ``day``."""
    return prices.filter((pl.col("from_date") <= day) & (pl.col("to_date").is_null() | (pl.col("to_date") > day)))


def price_changes(prices: pl.DataFrame, from_date: date, to_date: date) -> pl.DataFrame:
    """Every added/removed model and every changed price component between two dates.

    Returns one row per change: ``change`` is ``added`` or ``removed`` (one row per model,
    variant and tier, showing its input price) or ``changed`` (one row per component that moved;
    ``change_frac`` = new / old - 1, null where either side is blank or the old value is 0).
    """
    return changes_between(*states_on(prices, from_date, to_date))


def states_on(prices: pl.DataFrame, from_date: date, to_date: date) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows in effect on each date, of the sources that have prices on both dates."""
    old, new = state_on(prices, from_date), state_on(prices, to_date)
    both = sorted(set(old["source"]) & set(new["source"]))
    return old.filter(pl.col("source").is_in(both)), new.filter(pl.col("source").is_in(both))


@formula("added, removed, or changed with new / old − 1", "price periods")
def changes_between(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Added, removed and changed price keys from one set of price rows to another (one row per key each)."""
    cols = KEY + COMPONENTS
    joined = (
        old.select(cols)
        .with_columns(pl.lit(True).alias("_old"))
        .join(
            new.select(cols).with_columns(pl.lit(True).alias("_new")),
            on=KEY,
            how="full",
            coalesce=True,
            suffix="_new",
            nulls_equal=True,
        )
    )

    added = joined.filter(pl.col("_old").is_null()).select(
        pl.lit("added").alias("change"),
        *KEY,
        pl.lit("input_usd_per_mtok").alias("component"),
        pl.lit(None, pl.Float64).alias("old_value"),
        pl.col("input_usd_per_mtok_new").alias("new_value"),
        pl.lit(None, pl.Float64).alias("change_frac"),
    )
    removed = joined.filter(pl.col("_new").is_null()).select(
        pl.lit("removed").alias("change"),
        *KEY,
        pl.lit("input_usd_per_mtok").alias("component"),
        pl.col("input_usd_per_mtok").alias("old_value"),
        pl.lit(None, pl.Float64).alias("new_value"),
        pl.lit(None, pl.Float64).alias("change_frac"),
    )
    kept = joined.filter(pl.col("_old").is_not_null() & pl.col("_new").is_not_null())
    long = pl.concat(
        [
            kept.select(
                pl.lit("changed").alias("change"),
                *KEY,
                pl.lit(c).alias("component"),
                pl.col(c).cast(pl.Float64).alias("old_value"),
                pl.col(f"{c}_new").cast(pl.Float64).alias("new_value"),
            )
            for c in COMPONENTS
        ]
    )
    changed = long.filter(~pl.col("old_value").eq_missing(pl.col("new_value"))).with_columns(
        price_change_frac(pl.col("new_value"), pl.col("old_value")).alias("change_frac")
    )
    out = pl.concat([added, removed, changed], how="vertical_relaxed").cast(CHANGE_SCHEMA)
    order = pl.col("change").replace_strict({"changed": 0, "added": 1, "removed": 2}, return_dtype=pl.Int8)
    return out.sort([order, *KEY, "component"], nulls_last=True)


def summary(changes: pl.DataFrame) -> dict[str, int]:
    """Counts for a one-line summary: models added/removed, price rows and components changed."""

    def models(kind):
        return changes.filter(change=kind).select("source", "provider", "model").unique().height

    changed = changes.filter(change="changed")
    return {
        "models_added": models("added"),
        "models_removed": models("removed"),
        "prices_changed": changed.select(KEY).unique().height,
        "components_changed": changed.height,
    }


def default_dates(snapshot_dates: list[date], from_date: date | None, to_date: date | None) -> tuple[date, date]:
    """``to``: the newest snapshot; ``from``: the snapshot before ``to``."""
    dates = sorted(set(snapshot_dates))
    if to_date is None:
        if not dates:
            raise EconError(
                "there are no snapshots to compare",
                "import one with econ import or econ refresh, or pass --from and --to",
            )
        to_date = dates[-1]
    if from_date is None:
        earlier = [d for d in dates if d < to_date]
        if not earlier:
            raise EconError(f"there is no snapshot before {to_date}", "pass --from DATE")
        from_date = earlier[-1]
    if from_date >= to_date:
        raise EconError(f"--from {from_date} is not before --to {to_date}", "swap the dates")
    return from_date, to_date
