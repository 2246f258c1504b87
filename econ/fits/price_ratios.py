"""Ratios read straight off price rows: output over input, cache prices over input, tier over base tier, change.

These are the inputs of the price inferences (lecture f.1, f.3, g.3). Frames in, frames out.
"""

from __future__ import annotations

import polars as pl

from econ.formula import formula

PRICE_KEY = ("source", "provider", "model", "variant", "tier_min_prompt_tokens")
"""A price schedule's context tier; with ``from_date`` it names one price row (one effective period)."""
SCHEDULE_KEY = ("source", "provider", "model", "variant")

RATIO_OF_INPUT = {
    "output_over_input_ratio": "output_usd_per_mtok",
    "cache_read_ratio": "cache_read_usd_per_mtok",
    "cache_write_5m_ratio": "cache_write_5m_usd_per_mtok",
    "cache_write_1h_ratio": "cache_write_1h_usd_per_mtok",
    "cache_write_12h_ratio": "cache_write_12h_usd_per_mtok",
    "cache_storage_per_hour_ratio": "cache_storage_usd_per_mtok_hour",
}
"""Ratio column -> the price over the row's uncached input price (lecture f.3: ρ; g.3: read ~0.1x, writes 1.25x/2x)."""

UPLIFT = {
    "input_uplift_ratio": "input_usd_per_mtok",
    "output_uplift_ratio": "output_usd_per_mtok",
    "cache_read_uplift_ratio": "cache_read_usd_per_mtok",
}
"""Ratio column -> the tier's price over the base tier's (lecture f.1: +100% input, +50% output above 200k)."""

CHANGE = {
    "input_change_frac": "input_usd_per_mtok",
    "output_change_frac": "output_usd_per_mtok",
    "cache_read_change_frac": "cache_read_usd_per_mtok",
}
"""Change column -> the price whose relative change from the previous period it is."""


@formula("p_x / p_ref", "prices")
def price_ratio(price, reference_price):
    """One price over another [ratio]; null where the reference is not positive."""
    return pl.when(reference_price > 0).then(price / reference_price)


@formula("p_new / p_old − 1", "prices")
def price_change_frac(price, previous_price):
    """Relative change of a price from its previous period [frac]; null where there is none or it was 0."""
    return pl.when(previous_price != 0).then(price / previous_price - 1)


def ratios_of_input(prices: pl.DataFrame) -> pl.DataFrame:
    """Per price row (``PRICE_KEY`` + ``from_date``): output and cache prices over the uncached input price."""
    return prices.select(
        *PRICE_KEY,
        "from_date",
        *(price_ratio(pl.col(col), pl.col("input_usd_per_mtok")).alias(name) for name, col in RATIO_OF_INPUT.items()),
    ).sort(*PRICE_KEY, "from_date")


def tier_uplifts(prices: pl.DataFrame) -> pl.DataFrame:
    """Per tier row above the base tier × base-tier row of the same schedule whose periods overlap: the uplifts.

    ``from_date``/``to_date`` are the overlap (to_date null = open), so at any date exactly the rows in
    effect pair up; ``tier_from_date`` and ``base_from_date`` name the two price rows.
    """
    base = prices.filter(pl.col("tier_min_prompt_tokens") == 0).select(
        *SCHEDULE_KEY,
        pl.col("from_date").alias("base_from_date"),
        pl.col("to_date").alias("base_to_date"),
        *(pl.col(c).alias(f"base_{c}") for c in UPLIFT.values()),
    )
    tiers = prices.filter(pl.col("tier_min_prompt_tokens") > 0).rename(
        {"from_date": "tier_from_date", "to_date": "tier_to_date"}
    )
    far = pl.date(9999, 12, 31)
    pairs = (
        tiers.join(base, on=list(SCHEDULE_KEY), how="inner")
        .with_columns(
            pl.max_horizontal("tier_from_date", "base_from_date").alias("from_date"),
            pl.min_horizontal(pl.col("tier_to_date").fill_null(far), pl.col("base_to_date").fill_null(far)).alias(
                "_to"
            ),
        )
        .filter(pl.col("from_date") < pl.col("_to"))
    )
    return pairs.select(
        *PRICE_KEY,
        "from_date",
        pl.when(pl.col("_to") < far).then(pl.col("_to")).alias("to_date"),
        "tier_from_date",
        "base_from_date",
        *(price_ratio(pl.col(col), pl.col(f"base_{col}")).alias(name) for name, col in UPLIFT.items()),
    ).sort(*PRICE_KEY, "from_date")


def history(prices: pl.DataFrame) -> pl.DataFrame:
    """Every price row next to the previous period of the same key, with the relative change of each component."""
    ordered = prices.sort(*PRICE_KEY, "from_date")
    prev = {
        c: pl.col(c).shift(1).over(list(PRICE_KEY), order_by="from_date")
        for c in (
            "from_date",
            "input_usd_per_mtok",
            "output_usd_per_mtok",
            "cache_read_usd_per_mtok",
            "cache_write_5m_usd_per_mtok",
            "cache_write_1h_usd_per_mtok",
        )
    }
    seen = {c: pl.col(c).shift(1).over(list(PRICE_KEY), order_by="from_date") for c in ("snapshot_date", "last_commit")}
    out = ordered.with_columns(
        *(expr.alias(f"prev_{c}") for c, expr in prev.items()),
        *(expr.alias(f"prev_{c}") for c, expr in seen.items() if c in prices.columns),
        pl.int_range(1, pl.len() + 1).over(list(PRICE_KEY), order_by="from_date").alias("period_number"),
    )
    return out.with_columns(
        *(price_change_frac(pl.col(col), pl.col(f"prev_{col}")).alias(name) for name, col in CHANGE.items())
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
