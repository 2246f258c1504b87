"""What a price change implies: the inferred quantities of the pricing fits, before and after (pure).

``inferred_changes(old_prices, new_prices, models, tiers, assumptions)`` runs the pricing fits
(:func:`econ.analyses.pricing.tables`) on the price rows in effect on each date — only for the
schedules whose prices changed, so a refresh stays fast — and lists every implied quantity
that moved: implied KV bytes per token (slope and crossover readings of the long-context
tiers), output/input ratio and implied decode batch, the memory tier a cache duration is
consistent with, and the fast-mode batch ratio.
"""

from __future__ import annotations

import polars as pl

from econ.analyses import pricing
from econ.fits.assumptions import Assumptions

SCHEDULE = ["source", "provider", "model"]
SCHEMA = {
    "source": pl.String,
    "provider": pl.String,
    "model": pl.String,
    "variant": pl.String,
    "detail": pl.String,
    "quantity": pl.String,
    "value": pl.Float64,
    "label": pl.String,
}

# table -> (key renames, detail column, numeric quantities, categorical quantities)
QUANTITIES = {
    "fit_context_tiers": (
        {"price_source": "source", "price_provider": "provider", "price_model": "model"},
        "component",
        ["kv_slope_bytes_per_token", "kv_crossover_bytes_per_token"],
        [],
    ),
    "fit_io_prices": (
        {"price_source": "source", "price_provider": "provider", "price_model": "model"},
        None,
        ["output_over_input_ratio", "batch_over_balance_ratio", "implied_decode_mbu_frac"],
        [],
    ),
    "fit_cache_tiers": (
        {"price_source": "source", "price_provider": "provider", "price_model": "model"},
        "cache_item",
        ["hold_cost_usd_per_mtok_hour"],
        ["cheapest_tier", "drain_time_tier"],
    ),
    "fit_fast_mode": (
        {},
        None,
        ["batch_ratio", "baseline_batch_over_balance_ratio", "fast_batch_over_balance_ratio"],
        [],
    ),
}
IMPLIED_SCHEMA = {k: SCHEMA[k] for k in (*SCHEDULE, "variant", "detail", "quantity")} | {
    "old_value": pl.Float64,
    "new_value": pl.Float64,
    "change_frac": pl.Float64,
    "old_label": pl.String,
    "new_label": pl.String,
}
CHANGE_COLUMNS = {
    "source": "Price source of the schedule",
    "provider": "Seller",
    "model": "Model id as the seller names it",
    "variant": "Service variant",
    "detail": "Price component, cache item or blank",
    "quantity": "Implied quantity (the column of the fit_* table it comes from; its unit is in its name)",
    "old_value": "Value under the older prices",
    "new_value": "Value under the newer prices",
    "change_frac": "new / old - 1 (null when either side is blank or the old value is 0)",
    "old_label": "Older category (memory tiers)",
    "new_label": "Newer category (memory tiers)",
}


def quantities(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The implied quantities of the pricing tables in long format (one row per schedule × quantity)."""
    parts = [pl.DataFrame(schema=SCHEMA)]
    for name, (renames, detail, numeric, categorical) in QUANTITIES.items():
        frame = tables.get(name)
        if frame is None or frame.is_empty():
            continue
        frame = frame.rename(renames)
        if name == "fit_context_tiers":
            frame = frame.filter(pl.col("default_rule").fill_null(False) & ~pl.col("pooled").fill_null(False))
        if name == "fit_fast_mode":
            frame = frame.with_columns(pl.col("tier_min_prompt_tokens").cast(pl.String).alias("_detail"))
            detail = "_detail"
        det = pl.col(detail).cast(pl.String) if detail else pl.lit(None, pl.String)
        keys = [*[pl.col(c) for c in SCHEDULE], pl.col("variant"), det.alias("detail")]
        for q in numeric:
            if q in frame.columns:
                parts.append(
                    frame.select(
                        *keys,
                        pl.lit(q).alias("quantity"),
                        pl.col(q).cast(pl.Float64).alias("value"),
                        pl.lit(None, pl.String).alias("label"),
                    )
                )
        for q in categorical:
            if q in frame.columns:
                parts.append(
                    frame.select(
                        *keys,
                        pl.lit(q).alias("quantity"),
                        pl.lit(None, pl.Float64).alias("value"),
                        pl.col(q).cast(pl.String).alias("label"),
                    )
                )
    return pl.concat(parts, how="vertical_relaxed").unique(keep="first", maintain_order=True)


def inferred_changes(
    old_prices: pl.DataFrame,
    new_prices: pl.DataFrame,
    models: pl.DataFrame,
    tiers: pl.DataFrame,
    a: Assumptions,
    *,
    rel_tol: float = 1e-9,
) -> pl.DataFrame:
    """Implied quantities that moved between two price states, for the schedules whose prices changed.

    A quantity that only one side can infer (e.g. a long-context tier that gained a cache-read
    price) is listed with a blank on the other side.
    """
    from econ.diff import changes_between

    moved = changes_between(old_prices, new_prices).filter(change="changed").select(SCHEDULE).unique()
    empty = pl.DataFrame(schema=IMPLIED_SCHEMA)
    if moved.is_empty():
        return empty
    subset = lambda p: p.join(moved, on=SCHEDULE, how="semi")  # noqa: E731
    old = quantities(pricing.tables(subset(old_prices), models, tiers, a))
    new = quantities(pricing.tables(subset(new_prices), models, tiers, a))
    key = [*SCHEDULE, "variant", "detail", "quantity"]
    joined = old.join(new, on=key, how="full", coalesce=True, suffix="_new", nulls_equal=True)
    value_moved = ~pl.col("value").eq_missing(pl.col("value_new")) & ~(
        (pl.col("value") - pl.col("value_new")).abs() <= rel_tol * pl.col("value").abs()
    )
    label_moved = ~pl.col("label").eq_missing(pl.col("label_new"))
    out = joined.filter(value_moved.fill_null(True) | label_moved).select(
        *key,
        pl.col("value").alias("old_value"),
        pl.col("value_new").alias("new_value"),
        pl.when(pl.col("value") != 0).then(pl.col("value_new") / pl.col("value") - 1).alias("change_frac"),
        pl.col("label").alias("old_label"),
        pl.col("label_new").alias("new_label"),
    )
    return pl.concat([empty, out], how="vertical_relaxed").sort(key, nulls_last=True)


def inferred_between(
    prices: pl.DataFrame, start, end, models: pl.DataFrame, tiers: pl.DataFrame, a: Assumptions
) -> pl.DataFrame:
    """:func:`inferred_changes` between the price rows in effect on two dates (sources present on both)."""
    from econ.diff import states_on

    return inferred_changes(*states_on(prices, start, end), models, tiers, a)
