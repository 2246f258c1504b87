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

from econ.analyses import fit_context_tier_tables
from econ.analyses.fit_context_tier_tables import (
    FIT_CONTEXT_TIER_QUANTITIES,
    FIT_CONTEXT_TIER_STEPS,
    FIT_CONTEXT_TIERS,
    NAMES,
    PUBLISHED,
    ROLES,
    VALIDATED,
)
from econ.analyses.fit_context_tiers_columns import EVIDENCE, LABELS
from econ.analyses.inference_serving import Serving, serving
from econ.analyses.inputs import architecture_groups, architecture_of
from econ.analyses.pricing_inputs import (
    ARCH_KEEP,
    PRICES_READ_SQL,
    assumption_columns,
    assumptions,
    inputs,
    with_declared,
)
from econ.analyses.pricing_inputs import INPUTS as PRICING_INPUTS
from econ.analyses.validation_evidence import empty_evidence, evidence, summary_frame, validate
from econ.fits import context_readings, context_tiers
from econ.fits.price_selection import attach_architecture, choose_schedules
from econ.units import MEGA

NAME = "fit_context_tiers"
INPUTS = PRICING_INPUTS
READS = {
    "inference_prices": f"{PRICES_READ_SQL} qualify count(*) over (partition by source, provider, model, variant) > 1"
}
"""All the fit reads of the prices (:func:`run` queries exactly this): the schedules with more than one context tier.
A price change of a model priced at one tier leaves its key (a refresh keeps its tables: 0.8-1.5 s)."""
TABLES = fit_context_tier_tables.TABLES


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
        have, model, chip, layout, _ = deployed.rows(rows["arch_model"].to_list())
        rows = rows.filter(pl.Series(have))
        if rows.height == 0:
            continue
        width = max(len(c) for c in rows["_contexts"].to_list())
        contexts = np.array([c + [np.nan] * (width - len(c)) for c in rows["_contexts"].to_list()], dtype=float)
        cost, true = context_readings.deployment_slopes(
            model,
            chip,
            layout,
            contexts,
            component,
            kv_scale=deployed.kv_scale,
            settings=deployed.settings(pool, rows["arch_model"].to_list()),
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
    prices, models = inputs(ctx, READS)
    fits, quantities = tables(prices, models, assumptions(ctx), serving(ctx))
    ctx.write(FIT_CONTEXT_TIERS, fits)
    ctx.write(FIT_CONTEXT_TIER_QUANTITIES, quantities)
    ctx.write(FIT_CONTEXT_TIER_STEPS, steps(prices, fits))
