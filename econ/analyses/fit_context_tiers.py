"""``fit_context_tiers``: long-context price tiers read backwards, per price component (lecture f.1–f.2).

Per schedule × price component × representative-context rule, the per-context-token cost slope of
c(L) = a + k·L (:mod:`econ.fits.context_tiers`) and what it says for that component
(:mod:`econ.fits.context_readings`): output → decode KV bytes read per context token, input → prefill
attention FLOPs per context token, cache read → a billing rule; the lecture's crossover hypothesis on every row.
Open models (one schedule per seller, first-party and resellers apart) are priced by the deployment model and
carry implied/true; the default rule's readings carry the interval validated on them (:mod:`econ.fits.validation`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_context_tiers_columns import EVIDENCE, LABELS, columns
from econ.analyses.inference_serving import Serving, serving
from econ.analyses.inputs import architecture_groups, architecture_of
from econ.analyses.pricing_inputs import ARCH_KEEP, assumption_columns, assumptions, inputs, with_declared
from econ.analyses.pricing_inputs import INPUTS as PRICING_INPUTS
from econ.analyses.validation_evidence import empty_evidence, evidence, quantities_table, summary_frame, validate
from econ.fits import context_readings, context_tiers
from econ.fits.price_selection import attach_architecture, choose_schedules
from econ.results import ResultColumn as C
from econ.results import ResultTable
from econ.units import MEGA

NAME = "fit_context_tiers"
INPUTS = PRICING_INPUTS

NAMES = (
    "usd_per_chip_hour",
    "gross_margin_frac",
    "decode_mbu_frac",
    "prefill_mfu_frac",
    "frontier_active_params",
    "tier_context_density_exponent_ratio",
)
VALIDATED = {  # quantity -> (implied, scenario low, scenario high, true, validated low, validated high) columns
    context_readings.QUANTITIES["output"]: (
        "kv_read_bytes_per_context_token",
        "kv_read_scenario_low_bytes_per_context_token",
        "kv_read_scenario_high_bytes_per_context_token",
        "true_kv_read_bytes_per_context_token",
        "kv_read_validated_low_bytes_per_context_token",
        "kv_read_validated_high_bytes_per_context_token",
    ),
    context_readings.QUANTITIES["input"]: (
        "attention_flop_per_context_token",
        "attention_scenario_low_flop_per_context_token",
        "attention_scenario_high_flop_per_context_token",
        "true_attention_flop_per_context_token",
        "attention_validated_low_flop_per_context_token",
        "attention_validated_high_flop_per_context_token",
    ),
    context_readings.CROSSOVER: (
        "kv_crossover_bytes_per_token",
        "kv_crossover_scenario_low_bytes_per_token",
        "kv_crossover_scenario_high_bytes_per_token",
        "kv_true_bytes_per_token",
        "kv_crossover_validated_low_bytes_per_token",
        "kv_crossover_validated_high_bytes_per_token",
    ),
}
"""Each validated quantity's columns in this table (the crossover is read once per schedule, on its input row)."""
PUBLISHED = {  # quantity -> published value column
    context_readings.QUANTITIES["output"]: "kv_read_published_bytes_per_context_token",
    context_readings.QUANTITIES["input"]: "attention_published_flop_per_context_token",
    context_readings.CROSSOVER: "kv_crossover_published_bytes_per_token",
}
"""Each validated quantity's published value (bias-corrected where its bias is significant); its evidence columns are
:data:`econ.analyses.fit_context_tiers_columns.EVIDENCE`, its status ``fit_context_tier_quantities``."""
ROLES = {
    context_readings.QUANTITIES["output"]: "reading",
    context_readings.QUANTITIES["input"]: "reading",
    context_readings.CROSSOVER: "hypothesis",
}
"""Whether a quantity is a reading (corrected for a significant bias) or the lecture's hypothesis (never corrected:
falsified when it misses beyond its own interval; :mod:`econ.fits.validation`)."""

FIT_CONTEXT_TIERS = ResultTable(
    name="fit_context_tiers",
    grain="price source x provider x model x variant x component x rule, plus pooled rows per provider x component x "
    "rule",
    key=("source", "provider", "model", "variant", "component", "rule"),
    description=(
        "Long-context price tiers read backwards (lecture f.1-f.2): per schedule x price component x representative-"
        "context rule (default power_law: prompts with density L^-alpha inside a tier), the per-context-token cost "
        "slope of c(L) = a + k*L and what it says for its component: output -> bytes a decode step reads per "
        "context token, input -> prefill attention FLOPs per context token, cache read -> a billing rule (no cost); "
        "the lecture's crossover hypothesis b_kv = b_w*N_act/(R*L*) at the first threshold on every row (biased, "
        "never a headline). Open-weight models: one schedule per seller (provider_kind first_party or reseller), "
        "priced by the deployment model at the scenario chip, with the architecture's true value and implied/true. "
        "Closed models: one price source per model (hand, else litellm, else openrouter). Default-rule readings "
        "carry the validated interval (the bias-corrected value times exp(+-h), h the left-out prediction "
        "half-width of the open models' errors; inference_quantities). Pooled rows fit one relative slope per "
        "provider. " + INTERVALS
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
        "provider_kind",
        "intercept_usd_per_mtok",
        "slope_usd_per_mtok_per_mtok_context",
        "slope_fit_low_usd_per_mtok_per_mtok_context",
        "slope_fit_high_usd_per_mtok_per_mtok_context",
        "uplift_per_mtok_context_frac",
        "max_abs_residual_frac",
        "name_key",
        *ARCH_KEEP,
        "quantity",
        "kv_read_bytes_per_context_token",
        "kv_read_fit_low_bytes_per_context_token",
        "kv_read_fit_high_bytes_per_context_token",
        "kv_read_scenario_low_bytes_per_context_token",
        "kv_read_scenario_high_bytes_per_context_token",
        "kv_read_published_bytes_per_context_token",
        "kv_read_validated_low_bytes_per_context_token",
        "kv_read_validated_high_bytes_per_context_token",
        *EVIDENCE[context_readings.QUANTITIES["output"]].values(),
        "true_kv_read_bytes_per_context_token",
        "attention_flop_per_context_token",
        "attention_fit_low_flop_per_context_token",
        "attention_fit_high_flop_per_context_token",
        "attention_scenario_low_flop_per_context_token",
        "attention_scenario_high_flop_per_context_token",
        "attention_published_flop_per_context_token",
        "attention_validated_low_flop_per_context_token",
        "attention_validated_high_flop_per_context_token",
        *EVIDENCE[context_readings.QUANTITIES["input"]].values(),
        "true_attention_flop_per_context_token",
        "implied_over_true_ratio",
        "implied_over_true_scenario_low_ratio",
        "implied_over_true_scenario_high_ratio",
        "usd_per_kv_byte_read",
        "attention_flop_cost_usd_per_token",
        "deployment_cost_slope_usd_per_mtok_per_mtok_context",
        "cache_read_over_input_ratios",
        "billing_rule",
        "kv_crossover_bytes_per_token",
        "kv_crossover_scenario_low_bytes_per_token",
        "kv_crossover_scenario_high_bytes_per_token",
        "kv_crossover_published_bytes_per_token",
        "kv_crossover_validated_low_bytes_per_token",
        "kv_crossover_validated_high_bytes_per_token",
        *EVIDENCE[context_readings.CROSSOVER].values(),
        "params_active_used",
        "params_active_source",
        "kv_true_bytes_per_token",
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
        "prefill_mfu_frac",
        "frontier_active_params",
        "tier_context_density_exponent_ratio",
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
FIT_CONTEXT_TIER_QUANTITIES = quantities_table("fit_context_tier_quantities", "fit_context_tiers")
TABLES = (FIT_CONTEXT_TIERS, FIT_CONTEXT_TIER_STEPS, FIT_CONTEXT_TIER_QUANTITIES)


def with_deployment(per: pl.DataFrame, deployed: Serving | None) -> pl.DataFrame:
    """Add ``deployment_cost_slope`` and ``deployment_true_slope`` (per token per context token) to the output and
    input rows of open models with a modelled deployment (:func:`econ.fits.context_readings.deployment_slopes`)."""
    per = per.with_row_index("_i").with_columns(
        pl.lit(None, pl.Float64).alias("deployment_cost_slope"), pl.lit(None, pl.Float64).alias("deployment_true_slope")
    )
    if deployed is None or deployed.cases.height == 0:
        return per.drop("_i")
    parts = []
    for component, pool in (("output", "decode"), ("input", "prefill")):
        rows = per.filter((pl.col("component") == component) & pl.col("arch_model").is_not_null())
        have, model, chip, layout, b_w = deployed.rows(rows["arch_model"].to_list())
        rows = rows.filter(pl.Series(have))
        if rows.height == 0:
            continue
        width = max(len(c) for c in rows["_contexts"].to_list())
        contexts = np.array([c + [np.nan] * (width - len(c)) for c in rows["_contexts"].to_list()], dtype=float)
        cost, true = context_readings.deployment_slopes(
            model, chip, layout, contexts, component, kv_scale=deployed.kv_scale, settings=deployed.settings(pool, b_w)
        )
        parts.append(
            rows.select("_i").with_columns(
                pl.Series("deployment_cost_slope", cost), pl.Series("deployment_true_slope", true)
            )
        )
    if parts:
        found = pl.concat(parts)
        per = per.drop("deployment_cost_slope", "deployment_true_slope").join(found, on="_i", how="left")
    return per.sort("_i").drop("_i")


def spread_readings(per: pl.DataFrame) -> pl.DataFrame:
    """The generic reading columns of :func:`econ.fits.context_readings.readings` under their unit-named columns."""
    out, inp = pl.col("component") == "output", pl.col("component") == "input"

    def on(mask, name):
        return pl.when(mask).then(pl.col(name))

    generic = ("implied", "implied_fit_low", "implied_fit_high", "implied_scenario_low", "implied_scenario_high")
    named = {
        "output": (
            "kv_read_bytes_per_context_token",
            "kv_read_fit_low_bytes_per_context_token",
            "kv_read_fit_high_bytes_per_context_token",
            "kv_read_scenario_low_bytes_per_context_token",
            "kv_read_scenario_high_bytes_per_context_token",
        ),
        "input": (
            "attention_flop_per_context_token",
            "attention_fit_low_flop_per_context_token",
            "attention_fit_high_flop_per_context_token",
            "attention_scenario_low_flop_per_context_token",
            "attention_scenario_high_flop_per_context_token",
        ),
    }
    return per.with_columns(
        *(on(out, g).alias(n) for g, n in zip(generic, named["output"])),
        *(on(inp, g).alias(n) for g, n in zip(generic, named["input"])),
        on(out, "true_value").alias("true_kv_read_bytes_per_context_token"),
        on(inp, "true_value").alias("true_attention_flop_per_context_token"),
        on(out, "unit_cost_usd").alias("usd_per_kv_byte_read"),
        on(inp, "unit_cost_usd").alias("attention_flop_cost_usd_per_token"),
        (pl.col("deployment_cost_slope") * MEGA * MEGA).alias("deployment_cost_slope_usd_per_mtok_per_mtok_context"),
    )


def validation_rows(frame: pl.DataFrame, quantity: str, groups: dict[str, str] | None = None) -> pl.DataFrame:
    """The default-rule rows of one validated quantity in the layout :func:`econ.fits.validation.validate` reads.

    ``model_key`` is the open model on standard-variant rows with a true value (those are validated), ``group_key``
    its architecture group (``groups``: model -> ``model_derived.architecture_group``, left out together); every
    other row (closed models, other variants) gets the full-sample factor.
    """
    implied, low, high, true, validated_low, validated_high = VALIDATED[quantity]
    rows = frame.filter(pl.col("default_rule") & ~pl.col("pooled"))
    rows = (
        rows.filter(pl.col("component") == "input")
        if quantity == context_readings.CROSSOVER
        else rows.filter(pl.col("quantity") == quantity)
    )
    validated = (pl.col("variant") == "standard") & pl.col(true).is_not_null() & pl.col(implied).is_not_null()
    return rows.select(
        *context_tiers.SCHEDULE_KEY,
        "component",
        "provider_kind",
        pl.when(validated).then(pl.col("arch_model")).alias("model_key"),
        pl.when(validated).then(architecture_of(groups or {})).alias("group_key"),
        pl.col(implied).alias("implied"),
        pl.col(low).alias("scenario_low"),
        pl.col(high).alias("scenario_high"),
        pl.col(true).alias("true"),
    )


def with_validated(frame: pl.DataFrame, groups: dict[str, str] | None = None) -> tuple[pl.DataFrame, dict]:
    """Each default-rule reading's published value, validated interval and evidence, and {quantity: summary}
    (:func:`econ.fits.validation.validate`, once per quantity; ``groups``: each open model's architecture group, the
    unit left out)."""
    key = list(context_tiers.SCHEDULE_KEY)
    summaries = {}
    for quantity, (*_, low, high) in VALIDATED.items():
        names = (PUBLISHED[quantity], low, high)
        rows = validation_rows(frame, quantity, groups)
        if rows.height == 0:
            frame = frame.with_columns(
                *(pl.lit(None, pl.Float64).alias(n) for n in names), *empty_evidence(EVIDENCE[quantity])
            )
            continue
        checked, summaries[quantity] = validate(rows, role=ROLES[quantity])
        found = checked.select(
            *key,
            "component",
            pl.col("corrected").alias(names[0]),
            pl.col("validated_low").alias(low),
            pl.col("validated_high").alias(high),
        ).with_columns(
            *evidence(checked, EVIDENCE[quantity]), pl.lit(True).alias("default_rule"), pl.lit(False).alias("pooled")
        )
        if quantity == context_readings.CROSSOVER:  # read once per schedule, shown on each of its components
            found = found.drop("component")
            frame = frame.join(found, on=[*key, "default_rule", "pooled"], how="left")
        else:
            frame = frame.join(found, on=[*key, "component", "default_rule", "pooled"], how="left")
    return frame, summaries


def table(prices: pl.DataFrame, models: pl.DataFrame, a, deployed: Serving | None = None) -> pl.DataFrame:
    """``fit_context_tiers`` (:func:`tables`)."""
    return tables(prices, models, a, deployed)[0]


def tables(
    prices: pl.DataFrame, models: pl.DataFrame, a, deployed: Serving | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``fit_context_tiers``, ``fit_context_tier_quantities``): per-schedule rows (one per closed model, one per
    open model × seller) and pooled rows, open models priced by ``deployed`` (none: the one-read-per-unit formula for
    every row); and the summary of each validated quantity."""
    tiered = prices.filter(pl.len().over("source", "provider", "model", "variant") > 1)
    selected = choose_schedules(attach_architecture(tiered, models))
    exponent = a.central["tier_context_density_exponent_ratio"]
    fits = context_tiers.fit_schedules(selected, exponent=exponent)
    if fits.height == 0:
        return FIT_CONTEXT_TIERS.empty_frame(), summary_frame({}, FIT_CONTEXT_TIER_QUANTITIES, LABELS)
    arch = selected.select(*context_tiers.SCHEDULE_KEY, "name_key", "provider_kind", *ARCH_KEEP).unique(
        subset=list(context_tiers.SCHEDULE_KEY), keep="first"
    )
    per = fits.join(arch, on=list(context_tiers.SCHEDULE_KEY), how="left")
    per = spread_readings(context_readings.readings(with_deployment(per, deployed), a))
    per = per.with_columns(pl.lit(False).alias("pooled"))
    pools = context_tiers.fit_pools(selected, fits, exponent=exponent)
    if pools.height:
        sources = selected.group_by("provider").agg(pl.col("source").unique().sort().str.join(",").alias("source"))
        pools = pools.join(sources, on="provider", how="left").with_columns(
            pl.lit("(pooled)").alias("model"), pl.lit("standard").alias("variant"), pl.lit(True).alias("pooled")
        )
    out = pl.concat([per, pools], how="diagonal_relaxed") if pools.height else per
    out = out.with_columns(
        (pl.col("rule") == context_tiers.DEFAULT_RULE).alias("default_rule"), *assumption_columns(a, NAMES)
    )
    out, summaries = with_validated(out, architecture_groups(models))
    out = out.sort("pooled", "provider", "model", "variant", "component", "rule")
    return (
        with_declared(out.drop("_contexts", "_slope_ratio_grid", strict=False), FIT_CONTEXT_TIERS),
        summary_frame(summaries, FIT_CONTEXT_TIER_QUANTITIES, LABELS),
    )


def steps(prices: pl.DataFrame, fits: pl.DataFrame) -> pl.DataFrame:
    """``fit_context_tier_steps`` for the hand-kept standard schedules with a default-rule input fit."""
    chosen = fits.filter(
        pl.col("default_rule")
        & ~pl.col("pooled")
        & (pl.col("component") == "input")
        & (pl.col("source") == "hand")
        & (pl.col("variant") == "standard")
    ).select(
        pl.col("provider").alias("provider"),
        pl.col("model").alias("model"),
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
    fits, quantities = tables(prices, models, assumptions(ctx), serving(ctx))
    ctx.write(FIT_CONTEXT_TIERS, fits)
    ctx.write(FIT_CONTEXT_TIER_QUANTITIES, quantities)
    ctx.write(FIT_CONTEXT_TIER_STEPS, steps(prices, fits))
