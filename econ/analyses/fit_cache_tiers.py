"""``fit_cache_tiers`` and ``fit_cache_tiers_by_memory_tier``: prompt-cache prices read back into a memory tier.

Hold price = (write − input)/T or the published storage price; hold cost per GB-hour with KV bytes from
the architecture or the long-context fit; compared with every memory tier and recompute (lecture g.1–g.4;
:mod:`econ.fits.cache_tiers`). Reads ``fit_context_tiers`` for the slope reading of closed models.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.fit_cache_tiers_columns import columns
from econ.analyses.fit_columns import INTERVALS
from econ.analyses.pricing_inputs import (
    ARCH_KEEP,
    SCHEDULE,
    assumption_columns,
    assumptions,
    inputs,
    thresholds,
    with_declared,
)
from econ.fits import cache_tiers
from econ.fits.price_selection import attach_architecture, choose_sources
from econ.results import ResultTable

NAME = "fit_cache_tiers"
INPUTS = (
    "price_current",
    "models",
    "model_derived",
    "hardware_derived",
    "memory_tiers",
    "scenarios",
    "fit_context_tiers",
)

NAMES = ("usd_per_chip_hour", "gross_margin_frac", "decode_mbu_frac", "prefill_mfu_frac", "frontier_active_params")
KEEP = (
    "row_id",
    "source",
    "provider",
    "model",
    "name_key",
    "variant",
    "cache_item",
    "hold_time_s",
    "status",
    "kv_method",
    "crossover_source",
    "input_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "item_price_usd_per_mtok",
    "premium_usd_per_mtok",
    "cache_price_usd_per_mtok",
    "hold_price_usd_per_mtok_hour",
    *ARCH_KEEP,
    "tier_threshold_tokens",
    "params_active_used",
    "params_active_source",
    "fit_interval_kind",
)

FIT_CACHE_TIERS = ResultTable(
    name="fit_cache_tiers",
    grain="price source x provider x model x variant x cache item x kv_method (row_id)",
    key=("row_id",),
    description=(
        "Prompt-cache prices read backwards (lecture g.1-g.4): hold price = (write - input)/T for T = 5 min, 1 h, "
        "12 h, or the published storage price per token-hour; hold cost = price*(1-margin), per GB-hour with KV "
        "bytes from the architecture (open models) or the long-context fit (crossover and slope readings, "
        "kv_method); compared with every memory tier and recompute (cost = retrieve + hold*T; cheapest_tier, "
        "fastest_covered_tier at the scenario margin) and with the g.4 drain-time rule. Base tier, one price source "
        "per model. " + INTERVALS
    ),
    columns=columns(
        *KEEP,
        "kv_bytes_per_token_used",
        "kv_scenario_low_bytes_per_token",
        "kv_scenario_high_bytes_per_token",
        "hold_cost_usd_per_mtok_hour",
        "hold_cost_scenario_low_usd_per_mtok_hour",
        "hold_cost_scenario_high_usd_per_mtok_hour",
        "hold_cost_usd_per_gb_hour",
        "hold_cost_fit_low_usd_per_gb_hour",
        "hold_cost_fit_high_usd_per_gb_hour",
        "hold_cost_scenario_low_usd_per_gb_hour",
        "hold_cost_scenario_high_usd_per_gb_hour",
        "cheapest_tier",
        "cheapest_tier_device",
        "cheapest_tier_cost_usd_per_mtok",
        "margin_over_cheapest_frac",
        "price_over_cheapest_cost_ratio",
        "fastest_covered_tier",
        "drain_time_tier",
        "drain_time_tier_device",
        "drain_time_tier_s",
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "prefill_mfu_frac",
        "frontier_active_params",
        "scenario_interval",
        "assumptions_defaulted",
    ),
)

FIT_CACHE_TIERS_BY_MEMORY_TIER = ResultTable(
    name="fit_cache_tiers_by_memory_tier",
    grain="fit_cache_tiers row_id x memory tier (recompute first)",
    key=("row_id", "tier", "device"),
    description=(
        "Each fit_cache_tiers row against each memory_tiers row and recompute (lecture g.2): hold and retrieve cost, "
        "cost of holding for the item's time and reading once, and the cache price's margin over it; central "
        "assumptions"
    ),
    columns=columns(
        "row_id",
        "provider",
        "model",
        "variant",
        "cache_item",
        "kv_method",
        "tier",
        "device",
        "drain_time_s",
        "tier_hold_cost_usd_per_mtok_hour",
        "tier_retrieve_cost_usd_per_mtok",
        "tier_cost_for_hold_time_usd_per_mtok",
        "covered_at_scenario_margin",
        "margin_over_tier_frac",
        "price_over_tier_cost_ratio",
    ),
)
TABLES = (FIT_CACHE_TIERS, FIT_CACHE_TIERS_BY_MEMORY_TIER)


def tables(prices, models, tiers, context_fit, a) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``fit_cache_tiers`` (model × variant × cache duration × KV reading) and its per-memory-tier detail."""
    cols = [col for col, _ in cache_tiers.ITEMS.values() if col in prices.columns]
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("input_usd_per_mtok") > 0)
        & pl.any_horizontal(*(pl.col(c).is_not_null() for c in cols))
    )
    if base.height == 0:
        return FIT_CACHE_TIERS.empty_frame(), FIT_CACHE_TIERS_BY_MEMORY_TIER.empty_frame()
    rows = attach_architecture(choose_sources(base), models).join(thresholds(prices), on=SCHEDULE, how="left")
    items = cache_tiers.cache_items(rows)
    slope = None
    if context_fit.height:
        slope = (
            context_fit.filter(
                ~pl.col("pooled")
                & (pl.col("component") == "input")
                & pl.col("default_rule")
                & (pl.col("variant") == "standard")
            )
            .select(
                "name_key",
                "slope_usd_per_mtok_per_mtok_context",
                "slope_fit_low_usd_per_mtok_per_mtok_context",
                "slope_fit_high_usd_per_mtok_per_mtok_context",
                "fit_interval_kind",
            )
            .unique(subset="name_key", keep="first")
        )
    frame = cache_tiers.with_kv_methods(items.filter(pl.col("status") == "ok"), slope)
    frame = pl.concat([frame, items.filter(pl.col("status") != "ok")], how="diagonal_relaxed")
    frame = frame.with_columns(
        pl.when(pl.col("params_active").is_not_null())
        .then(pl.col("params_active"))
        .otherwise(pl.lit(a.central["frontier_active_params"]))
        .alias("params_active_used"),
        pl.when(pl.col("params_active").is_not_null())
        .then(pl.lit("architecture"))
        .otherwise(pl.lit("scenario frontier_active_params"))
        .alias("params_active_source"),
    )
    frame = cache_tiers.implied_hold_costs(frame, a).with_row_index("row_id")
    verdict, detail = cache_tiers.compare_tiers(frame, tiers, a)
    derived = [
        c
        for c in verdict.columns
        if c not in frame.columns or c.startswith(("kv_bytes_per_token_used", "kv_scenario", "hold_cost"))
    ]
    main = verdict.select(*[c for c in KEEP if c in verdict.columns], *[c for c in derived if c not in KEEP])
    main = main.with_columns(*assumption_columns(a, NAMES))
    keys = ["row_id", "provider", "model", "variant", "cache_item", "kv_method"]
    detail = detail.join(main.select(keys), on="row_id", how="left").select(*keys, pl.exclude(keys))
    return (
        with_declared(main.sort("row_id"), FIT_CACHE_TIERS),
        with_declared(detail.sort("row_id", "tier"), FIT_CACHE_TIERS_BY_MEMORY_TIER),
    )


def run(ctx) -> None:
    prices, models = inputs(ctx)
    tiers = ctx.query("select * from memory_tiers order by tier, device")
    context_fit = ctx.query("select * from fit_context_tiers")
    main, detail = tables(prices, models, tiers, context_fit, assumptions(ctx))
    ctx.write(FIT_CACHE_TIERS, main)
    ctx.write(FIT_CACHE_TIERS_BY_MEMORY_TIER, detail)
