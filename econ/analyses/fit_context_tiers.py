"""``fit_context_tiers``: long-context price tiers read backwards into KV bytes per token (lecture f.1–f.2).

Per schedule × price component × representative-context rule, the per-context-token cost slope of
c(L) = a + k·L and the KV bytes per token it implies by the slope and the crossover readings
(:mod:`econ.fits.context_tiers`), plus pooled rows; open-weight models add implied/true.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_context_tiers_columns import columns
from econ.analyses.pricing_inputs import ARCH_KEEP, assumption_columns, assumptions, inputs, with_declared
from econ.fits import context_tiers
from econ.fits.price_selection import attach_architecture, choose_sources
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "fit_context_tiers"
INPUTS = ("price_current", "models", "model_derived", "hardware_derived", "scenarios")

NAMES = ("usd_per_chip_hour", "gross_margin_frac", "decode_mbu_frac", "frontier_active_params")

FIT_CONTEXT_TIERS = ResultTable(
    name="fit_context_tiers",
    grain="price source x provider x model x variant x component x rule, plus pooled rows per provider x component x "
    "rule",
    key=("source", "provider", "model", "variant", "component", "rule"),
    description=(
        "Long-context price tiers read backwards (lecture f.1-f.2): per schedule x price component x representative-"
        "context rule, the per-context-token cost slope of c(L) = a + k*L and the KV bytes per token it implies, by "
        "the slope reading b_kv = k*(1-margin)*W*mbu/p and by the crossover reading b_kv = b_w*N_act/(R*L*) at the "
        "first threshold; open-weight models add implied/true. One price source per model among tiered schedules "
        "(hand, else litellm, else openrouter; source says which). Pooled rows (pooled = true) fit one "
        "relative slope per provider over its standard schedules. " + INTERVALS
    ),
    columns=columns(
        "source",
        "provider",
        "model",
        "variant",
        "n_tiers",
        "tier_thresholds_tokens",
        "crossover_threshold_tokens",
        "component",
        "rule",
        "representative_contexts_tokens",
        "base_price_usd_per_mtok",
        "status",
        "fit_interval_kind",
        "n_points",
        "fit_message",
        "intercept_usd_per_mtok",
        "slope_usd_per_mtok_per_mtok_context",
        "slope_fit_low_usd_per_mtok_per_mtok_context",
        "slope_fit_high_usd_per_mtok_per_mtok_context",
        "uplift_per_mtok_context_frac",
        "max_abs_residual_frac",
        "name_key",
        *ARCH_KEEP,
        "kv_slope_bytes_per_token",
        "kv_slope_fit_low_bytes_per_token",
        "kv_slope_fit_high_bytes_per_token",
        "kv_slope_scenario_low_bytes_per_token",
        "kv_slope_scenario_high_bytes_per_token",
        "kv_crossover_bytes_per_token",
        "kv_crossover_scenario_low_bytes_per_token",
        "kv_crossover_scenario_high_bytes_per_token",
        "params_active_used",
        "params_active_source",
        "kv_true_bytes_per_token",
        "kv_slope_over_true_ratio",
        "kv_slope_over_true_scenario_low_ratio",
        "kv_slope_over_true_scenario_high_ratio",
        "kv_crossover_over_true_ratio",
        "kv_crossover_over_true_scenario_low_ratio",
        "kv_crossover_over_true_scenario_high_ratio",
        "pooled",
        "pool_models",
        "pool_model_count",
        "pool_spread_ratio",
        "pool_plausible",
        "uplift_fit_low_per_mtok_context_frac",
        "uplift_fit_high_per_mtok_context_frac",
        "default_rule",
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "frontier_active_params",
        "scenario_interval",
        "assumptions_defaulted",
    ),
)
FIT_CONTEXT_TIER_STEPS = ResultTable(
    name="fit_context_tier_steps",
    grain="first-party standard schedule x kind (tier step or fitted line) x context",
    key=("provider", "model", "kind", "context_tokens"),
    description=(
        "The input-price tiers of each first-party standard schedule as steps, and the line c(L) = a + k*L fitted "
        "to them (default rule), from context 0 to the schedule's end: what the Context pricing page draws"
    ),
    columns=(
        C("provider", "str", "", "key", "Provider (prices.provider)"),
        C("model", "str", "", "key", "Price key (prices.model)"),
        C("kind", "str", "", "key", "tier (the published price from this context on) or fit (the fitted line)"),
        C("context_tokens", "float", "tokens", "key", "Context where the point sits"),
        C(
            "usd_per_mtok",
            "float",
            "USD/MTok",
            "fit",
            "Input price at this context (tier) or the fitted c(L) (fit)",
            context_tiers.tier_steps,
        ),
        C("tier_min_prompt_tokens", "int", "tokens", "input", "The tier's threshold (tier rows)"),
        C("status", "str", "", "check", "Fit status of the line (fit rows)"),
        C(
            "slope_usd_per_mtok_per_mtok_context",
            "float",
            "USD/MTok per MTok of context",
            "fit",
            "The fitted slope k (fit rows)",
            context_tiers.fit_schedules,
        ),
    ),
)
TABLES = (FIT_CONTEXT_TIERS, FIT_CONTEXT_TIER_STEPS)


def table(prices: pl.DataFrame, models: pl.DataFrame, a) -> pl.DataFrame:
    """``fit_context_tiers``: one source per model among tiered schedules; per-schedule rows and pooled rows."""
    tiered = prices.filter(pl.len().over("source", "provider", "model", "variant") > 1)
    selected = attach_architecture(choose_sources(tiered), models)
    fits = context_tiers.fit_schedules(selected)
    if fits.height == 0:
        return FIT_CONTEXT_TIERS.empty_frame()
    arch = selected.select(*context_tiers.SCHEDULE_KEY, "name_key", *ARCH_KEEP).unique(
        subset=list(context_tiers.SCHEDULE_KEY), keep="first"
    )
    per = context_tiers.implied_kv(fits.join(arch, on=list(context_tiers.SCHEDULE_KEY), how="left"), a)
    per = per.with_columns(pl.lit(False).alias("pooled"))
    pools = context_tiers.fit_pools(selected, fits)
    if pools.height:
        sources = selected.group_by("provider").agg(pl.col("source").unique().sort().str.join(",").alias("source"))
        pools = pools.join(sources, on="provider", how="left").with_columns(
            pl.lit("(pooled)").alias("model"), pl.lit("standard").alias("variant"), pl.lit(True).alias("pooled")
        )
    out = pl.concat([per, pools], how="diagonal_relaxed") if pools.height else per
    out = out.with_columns(
        (pl.col("rule") == context_tiers.DEFAULT_RULE).alias("default_rule"), *assumption_columns(a, NAMES)
    ).sort("pooled", "provider", "model", "variant", "component", "rule")
    return with_declared(out, FIT_CONTEXT_TIERS)


def steps(prices: pl.DataFrame, fits: pl.DataFrame) -> pl.DataFrame:
    """``fit_context_tier_steps`` for the hand-kept standard schedules with a default-rule input fit."""
    chosen = fits.filter(
        pl.col("default_rule")
        & ~pl.col("pooled")
        & (pl.col("component") == "input")
        & (pl.col("source") == "hand")
        & (pl.col("variant") == "standard")
    ).select(
        "provider",
        "model",
        "status",
        "intercept_usd_per_mtok",
        "slope_usd_per_mtok_per_mtok_context",
    )
    tiers = (
        prices.filter((pl.col("source") == "hand") & (pl.col("variant") == "standard"))
        .join(chosen.select("provider", "model"), on=["provider", "model"], how="semi")
        .select("provider", "model", "tier_min_prompt_tokens", "input_usd_per_mtok", "max_input_tokens")
    )
    return context_tiers.tier_steps(tiers, chosen) if chosen.height else FIT_CONTEXT_TIER_STEPS.empty_frame()


def run(ctx) -> None:
    prices, models = inputs(ctx)
    fits = table(prices, models, assumptions(ctx))
    ctx.write(FIT_CONTEXT_TIERS, fits)
    ctx.write(FIT_CONTEXT_TIER_STEPS, steps(prices, fits))
