"""Hidden serving costs read back from public prices (lecture a.5, f, g): the ``fit_*`` tables.

Reads ``price_current``, ``models``, ``hardware``, ``memory_tiers`` and scenario ``base``; writes

- ``fit_context_tiers``: long-context tiers → per-context-token cost slope → implied KV bytes per token
  (slope and crossover readings), per schedule × component × representative-context rule, plus pooled rows;
- ``fit_io_prices``: output/input ratio of every priced model → implied decode batch / decode efficiency;
- ``fit_io_market`` and ``fit_io_market_residuals``: the open-weight market's $/FLOP, $/byte and effective batch;
- ``fit_cache_tiers`` and ``fit_cache_tiers_by_memory_tier``: cache prices → hold cost → memory tier;
- ``fit_fast_mode``: fast/priority multiples → batch ratio and the roofline's implied batches.

Every table carries its assumptions as columns and, for every implied quantity, the fit interval (from
:mod:`econ.fits.wrapper`: ``…_fit_low/high`` with ``status`` and ``fit_interval_kind``) and the assumption
interval (Monte Carlo over the scenario ranges: ``…_scenario_low/high``, described in ``scenario_interval``).
The pure table builders below take frames and an :class:`econ.fits.assumptions.Assumptions`; ``run`` is the
I/O edge.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.pricing_tables import COLUMNS, DESCRIPTIONS
from econ.analyses.scenario import load_scenario
from econ.fits import cache_tiers, context_tiers, fast_mode, io_prices
from econ.fits.assumptions import Assumptions, from_scenario
from econ.fits.price_selection import attach_architecture, choose_sources

NAME = "pricing"
INPUTS = ("price_current", "models", "hardware", "memory_tiers", "scenarios")

SCHEDULE = ["source", "provider", "model"]
ARCH_KEEP = ("arch_model", "arch_match", "params_total", "params_active", "kv_bytes_per_token")


def assumption_columns(a: Assumptions, names: tuple[str, ...], *, hardware: bool = True) -> list[pl.Expr]:
    """The stated assumptions as constant columns, and what the scenario interval varies."""
    c = a.central
    out = [
        pl.lit(a.chip).alias("chip"),
        pl.lit(a.number_format).alias("number_format"),
        pl.lit(a.kv_cache_format).alias("kv_cache_format"),
        pl.lit(c["usd_per_chip_hour"]).alias("usd_per_chip_hour"),
        pl.lit(c["gross_margin_frac"]).alias("gross_margin_frac"),
    ]
    extra = {
        "decode_mbu": "decode_mbu_frac",
        "prefill_mfu": "prefill_mfu_frac",
        "context_tokens": "context_tokens",
        "frontier_active_params": "frontier_active_params",
        "batch_multiple_over_balance": "batch_multiple_over_balance_ratio",
    }
    out += [pl.lit(c[k]).alias(v) for k, v in extra.items() if k in names]
    out += [
        pl.lit(a.describe(names, hardware=hardware)).alias("scenario_interval"),
        pl.lit(", ".join(a.defaulted) or "none").alias("assumptions_defaulted"),
    ]
    return out


def thresholds(prices: pl.DataFrame) -> pl.DataFrame:
    """First long-context threshold per (source, provider, model), any variant."""
    return (
        prices.filter(pl.col("tier_min_prompt_tokens") > 0)
        .group_by(SCHEDULE)
        .agg(pl.col("tier_min_prompt_tokens").min().cast(pl.Float64).alias("tier_threshold_tokens"))
    )


# ---------------------------------------------------------------------------- fit_context_tiers


def context_tiers_table(prices: pl.DataFrame, models: pl.DataFrame, a: Assumptions) -> pl.DataFrame:
    """``fit_context_tiers``: one source per model among tiered schedules; per-schedule rows and pooled rows."""
    tiered = prices.filter(pl.len().over("source", "provider", "model", "variant") > 1)
    selected = attach_architecture(choose_sources(tiered), models)
    fits = context_tiers.fit_schedules(selected)
    if fits.height == 0:
        return pl.DataFrame()
    arch = selected.select(*context_tiers.SCHEDULE_KEY, "name_key", *ARCH_KEEP).unique(
        subset=list(context_tiers.SCHEDULE_KEY), keep="first"
    )
    per = context_tiers.implied_kv(fits.join(arch, on=list(context_tiers.SCHEDULE_KEY), how="left"), a)
    per = per.with_columns(pl.lit(False).alias("pooled"))
    pools = context_tiers.fit_pools(selected, fits)
    if pools.height:
        sources = selected.group_by("price_provider").agg(
            pl.col("price_source").unique().sort().str.join(",").alias("price_source")
        )
        pools = pools.join(sources, on="price_provider", how="left").with_columns(
            pl.lit("(pooled)").alias("price_model"), pl.lit("standard").alias("variant"), pl.lit(True).alias("pooled")
        )
    names = ("usd_per_chip_hour", "gross_margin_frac", "decode_mbu", "frontier_active_params")
    out = pl.concat([per, pools], how="diagonal_relaxed") if pools.height else per
    return out.with_columns(
        (pl.col("rule") == context_tiers.DEFAULT_RULE).alias("default_rule"),
        *assumption_columns(a, names),
    ).sort("pooled", "price_provider", "price_model", "variant", "component", "rule")


# ---------------------------------------------------------------------------- fit_io_prices / market


def io_prices_table(prices: pl.DataFrame, models: pl.DataFrame, a: Assumptions) -> pl.DataFrame:
    """``fit_io_prices``: base-tier rows with positive input and output prices, one source per model."""
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("input_usd_per_mtok") > 0)
        & (pl.col("output_usd_per_mtok") > 0)
    )
    if base.height == 0:
        return pl.DataFrame()
    rows = attach_architecture(choose_sources(base), models).join(thresholds(prices), on=SCHEDULE, how="left")
    out = io_prices.model_ratios(rows, a)
    keep = [
        "price_source",
        "price_provider",
        "price_model",
        "name_key",
        "variant",
        "input_usd_per_mtok",
        "output_usd_per_mtok",
        *ARCH_KEEP,
        "tier_threshold_tokens",
    ]
    derived = [c for c in out.columns if c not in rows.columns]
    names = ("prefill_mfu", "decode_mbu", "context_tokens", "batch_multiple_over_balance")
    return (
        out.select(*keep, *derived)
        .with_columns(*assumption_columns(a, names))
        .sort("price_provider", "price_model", "variant")
    )


def market_rows(prices: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """Every provider's standard base-tier price of an open-weight model with known KV bytes (all sources)."""
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("variant") == "standard")
        & (pl.col("input_usd_per_mtok") > 0)
        & (pl.col("output_usd_per_mtok") > 0)
    )
    rows = attach_architecture(base, models).filter(pl.col("kv_bytes_per_token").is_not_null())
    return rows.unique(subset=SCHEDULE, keep="first").sort(SCHEDULE)


def io_market_tables(prices: pl.DataFrame, models: pl.DataFrame, a: Assumptions) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``fit_io_market`` (one row per implied quantity) and ``fit_io_market_residuals`` (one row per price)."""
    rows = market_rows(prices, models)
    if rows.height == 0:
        return (
            pl.DataFrame(
                schema={
                    c: pl.Utf8 if c in ("quantity", "unit", "status") else pl.Float64
                    for c in (
                        "quantity",
                        "unit",
                        "estimate",
                        "fit_low",
                        "fit_high",
                        "scenario_low",
                        "scenario_high",
                        "status",
                    )
                }
            ),
            pl.DataFrame(
                schema={
                    "source": pl.Utf8,
                    "provider": pl.Utf8,
                    "model": pl.Utf8,
                    "arch_model": pl.Utf8,
                    "component": pl.Utf8,
                    "observed_usd_per_mtok": pl.Float64,
                    "predicted_usd_per_mtok": pl.Float64,
                    "observed_over_predicted_ratio": pl.Float64,
                }
            ),
        )
    hw = a.central_hardware
    result, x, y = io_prices.fit_market(
        rows,
        weight_bytes_per_param=hw["weight_bytes_per_param"],
        kv_scale=a.kv_scale,
        context_tokens=a.central["context_tokens"],
    )
    names = ("gross_margin_frac", "prefill_mfu", "decode_mbu", "context_tokens")
    quantities = io_prices.market_quantities(result, a).with_columns(
        pl.lit(result.status).alias("status"),
        pl.lit(result.interval_kind).alias("fit_interval_kind"),
        pl.lit(result.level).alias("interval_level_frac"),
        pl.lit(result.n_points).alias("n_points"),
        pl.lit(rows.height).alias("n_price_rows"),
        pl.lit(rows["arch_model"].n_unique()).alias("n_models"),
        pl.lit(rows["provider"].n_unique()).alias("n_providers"),
        pl.lit(result.message).alias("fit_message"),
        *assumption_columns(a, names),
    )
    predicted = x @ np.nan_to_num(result.estimate)
    n = rows.height
    ident = rows.select("source", "provider", "model", "arch_model", "arch_match")
    residuals = (
        pl.concat([ident, ident])
        .with_columns(
            pl.Series("component", ["input"] * n + ["output"] * n),
            pl.Series("observed_usd_per_mtok", y),
            pl.Series("predicted_usd_per_mtok", predicted),
            pl.Series("observed_over_predicted_ratio", y / predicted),
        )
        .with_columns(pl.col(pl.Float64).fill_nan(None))
        .sort("provider", "arch_model", "model", "component")
    )
    return quantities, residuals


# ---------------------------------------------------------------------------- fit_cache_tiers


def cache_tables(
    prices: pl.DataFrame, models: pl.DataFrame, tiers: pl.DataFrame, context_fit: pl.DataFrame, a: Assumptions
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``fit_cache_tiers`` (model × variant × cache duration × KV reading) and its per-memory-tier detail."""
    columns = [col for col, _ in cache_tiers.ITEMS.values() if col in prices.columns]
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("input_usd_per_mtok") > 0)
        & pl.any_horizontal(*(pl.col(c).is_not_null() for c in columns))
    )
    if base.height == 0:
        return pl.DataFrame(), pl.DataFrame()
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
    keep = [
        "row_id",
        "price_source",
        "price_provider",
        "price_model",
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
    ]
    derived = [
        c
        for c in verdict.columns
        if c not in frame.columns or c.startswith(("kv_bytes_per_token_used", "kv_scenario", "hold_cost"))
    ]
    names = ("usd_per_chip_hour", "gross_margin_frac", "decode_mbu", "prefill_mfu", "frontier_active_params")
    main = verdict.select(
        *[c for c in keep if c in verdict.columns], *[c for c in derived if c not in keep]
    ).with_columns(*assumption_columns(a, names))
    detail = detail.join(
        main.select("row_id", "price_provider", "price_model", "variant", "cache_item", "kv_method"),
        on="row_id",
        how="left",
    ).select(
        "row_id",
        "price_provider",
        "price_model",
        "variant",
        "cache_item",
        "kv_method",
        pl.exclude("row_id", "price_provider", "price_model", "variant", "cache_item", "kv_method"),
    )
    return main.sort("row_id"), detail.sort("row_id", "tier")


# ---------------------------------------------------------------------------- fit_fast_mode


def fast_mode_table(prices: pl.DataFrame, models: pl.DataFrame, a: Assumptions) -> pl.DataFrame:
    """``fit_fast_mode``: every fast/priority row with a published speed multiple (and fast rows without one)."""
    variants = prices.filter(
        pl.col("variant").is_in(fast_mode.VARIANTS)
        & (pl.col("speed_ratio").is_not_null() | (pl.col("variant") == "fast"))
    )
    if variants.height == 0:
        return pl.DataFrame()
    chosen = choose_sources(variants).select(*SCHEDULE).unique()
    variants = variants.join(chosen, on=SCHEDULE, how="semi")
    rows = attach_architecture(fast_mode.with_standard_prices(variants, prices), models).join(
        thresholds(prices), on=SCHEDULE, how="left"
    )
    with_speed = rows.filter(pl.col("speed_ratio").is_not_null() & pl.col("standard_output_usd_per_mtok").is_not_null())
    out = fast_mode.implied(with_speed, a).with_columns(pl.lit("ok").alias("status"))
    missing = rows.filter(
        pl.col("speed_ratio").is_null() | pl.col("standard_output_usd_per_mtok").is_null()
    ).with_columns(
        pl.when(pl.col("speed_ratio").is_null())
        .then(pl.lit("no published speed multiple"))
        .otherwise(pl.lit("no standard price"))
        .alias("status")
    )
    out = pl.concat([out, missing], how="diagonal_relaxed") if out.height else missing
    keep = [
        "source",
        "provider",
        "model",
        "variant",
        "tier_min_prompt_tokens",
        "status",
        "input_usd_per_mtok",
        "output_usd_per_mtok",
        "standard_tier_min_prompt_tokens",
        "standard_input_usd_per_mtok",
        "standard_output_usd_per_mtok",
        "speed_ratio",
        *ARCH_KEEP,
        "tier_threshold_tokens",
    ]
    derived = [c for c in out.columns if c not in rows.columns and c != "status"]
    return (
        out.select(*keep, *derived)
        .with_columns(*assumption_columns(a, ("context_tokens", "prefill_mfu", "decode_mbu")))
        .sort("source", "provider", "model", "variant", "tier_min_prompt_tokens")
    )


# ---------------------------------------------------------------------------- run


def tables(prices: pl.DataFrame, models: pl.DataFrame, tiers: pl.DataFrame, a: Assumptions) -> dict[str, pl.DataFrame]:
    """Every result table of this analysis (pure)."""
    context = context_tiers_table(prices, models, a)
    market, residuals = io_market_tables(prices, models, a)
    cache, cache_detail = cache_tables(prices, models, tiers, context, a)
    return {
        "fit_context_tiers": context,
        "fit_io_prices": io_prices_table(prices, models, a),
        "fit_io_market": market,
        "fit_io_market_residuals": residuals,
        "fit_cache_tiers": cache,
        "fit_cache_tiers_by_memory_tier": cache_detail,
        "fit_fast_mode": fast_mode_table(prices, models, a),
    }


def run(ctx) -> None:
    a = from_scenario(load_scenario(ctx.con, "base"), ctx.query("select * from hardware order by chip"))
    prices = ctx.query("select * from price_current order by source, provider, model, variant, tier_min_prompt_tokens")
    models = ctx.query("select * from models order by model")
    tiers = ctx.query("select * from memory_tiers order by tier, device")
    for name, frame in tables(prices, models, tiers, a).items():
        columns = {k: v for k, v in COLUMNS.items() if k in frame.columns}
        ctx.write(
            name,
            frame if frame.width else pl.DataFrame({"status": pl.Series([], dtype=pl.Utf8)}),
            DESCRIPTIONS[name],
            columns,
        )
