"""``fit_fast_mode``: fast and priority variants read back into batches (lecture a.5; :mod:`econ.fits.fast_mode`)."""

from __future__ import annotations

import polars as pl

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_fast_mode_columns import columns
from econ.analyses.pricing_inputs import (
    ARCH_KEEP,
    SCHEDULE,
    assumption_columns,
    assumptions,
    inputs,
    thresholds,
    with_declared,
)
from econ.fits import fast_mode
from econ.fits.price_selection import attach_architecture, choose_sources
from econ.physics import fast_mode as physics_fast_mode
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "fit_fast_mode"
INPUTS = ("price_current", "models", "model_derived", "hardware_derived", "scenarios")

NAMES = ("context_tokens", "prefill_mfu_frac", "decode_mbu_frac")
KEEP = (
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
)

FIT_FAST_MODE = ResultTable(
    name="fit_fast_mode",
    grain="price source x provider x model x variant x context tier",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens"),
    description=(
        "Fast and priority variants (lecture a.5): price multiple m (output, fast/standard at the same tier) x "
        "published speed multiple s = batch ratio B0/B1 on the same replica; the roofline solver's baseline and "
        "fast batches relative to B*0 at the scenario context (and in sequences for open-weight models). One price "
        "source per model; rows without a published speed multiple are listed with status. " + INTERVALS
    ),
    columns=columns(
        *KEEP,
        "output_price_ratio",
        "input_price_ratio",
        "batch_ratio",
        "critical_context_source",
        "context_used_tokens",
        "context_over_critical_ratio",
        "solved",
        "baseline_batch_over_balance_ratio",
        "baseline_batch_over_balance_scenario_low_ratio",
        "baseline_batch_over_balance_scenario_high_ratio",
        "fast_batch_over_balance_ratio",
        "fast_batch_over_balance_scenario_low_ratio",
        "fast_batch_over_balance_scenario_high_ratio",
        "baseline_step_over_weight_read_ratio",
        "fast_step_over_weight_read_ratio",
        "balance_batch_seqs",
        "baseline_batch_seqs",
        "fast_batch_seqs",
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "prefill_mfu_frac",
        "context_tokens",
        "scenario_interval",
        "assumptions_defaulted",
    ),
)
FIT_FAST_MODE_GUIDES = ResultTable(
    name="fit_fast_mode_guides",
    grain="published batch ratio x speed multiple on a log grid",
    key=("batch_ratio", "speed_ratio"),
    description=(
        "Lines of constant m x s (the batch ratios of fit_fast_mode) over the range of published speed multiples: "
        "the price multiple each speed multiple implies on the same replica (lecture a.5), for the Fast mode chart"
    ),
    columns=(
        C("batch_ratio", "float", "", "key", "A batch ratio B0/B1 = m x s of fit_fast_mode"),
        C("speed_ratio", "float", "", "key", "Speed multiple s on a 21-point log grid around the published ones"),
        C(
            "output_price_ratio",
            "float",
            "",
            "derived",
            "The price multiple m = (B0/B1)/s",
            physics_fast_mode.price_ratio_for,
        ),
        C("label", "str", "", "label", "m·s = <batch ratio>"),
        C("label_here", "bool", "", "label", "True at the grid's last speed (where the chart labels the line)"),
    ),
)
TABLES = (FIT_FAST_MODE, FIT_FAST_MODE_GUIDES)


def table(prices: pl.DataFrame, models: pl.DataFrame, a) -> pl.DataFrame:
    """Every fast/priority row with a published speed multiple (and fast rows without one)."""
    variants = prices.filter(
        pl.col("variant").is_in(fast_mode.VARIANTS)
        & (pl.col("speed_ratio").is_not_null() | (pl.col("variant") == "fast"))
    )
    if variants.height == 0:
        return FIT_FAST_MODE.empty_frame()
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
    derived = [c for c in out.columns if c not in rows.columns and c != "status"]
    frame = (
        out.select(*KEEP, *derived)
        .with_columns(*assumption_columns(a, NAMES))
        .sort("source", "provider", "model", "variant", "tier_min_prompt_tokens")
    )
    return with_declared(frame, FIT_FAST_MODE)


def guides(fits: pl.DataFrame) -> pl.DataFrame:
    """``fit_fast_mode_guides``: constant-m·s lines through the published (s, m) of ``fit_fast_mode``."""
    known = fits.filter(
        pl.col("speed_ratio").is_not_null()
        & pl.col("output_price_ratio").is_not_null()
        & (pl.col("speed_ratio") > 0)
        & (pl.col("output_price_ratio") > 0)
    )
    if not known.height:
        return FIT_FAST_MODE_GUIDES.empty_frame()
    ratios = sorted(set(known["batch_ratio"].drop_nulls().to_list()))
    s_low = min(1.0, float(known["speed_ratio"].min()) / 1.5)
    s_high = float(known["speed_ratio"].max()) * 1.5
    speeds = [s_low * (s_high / s_low) ** (i / 20) for i in range(21)]
    frame = pl.DataFrame(
        {"batch_ratio": [r for r in ratios for _ in speeds], "speed_ratio": [v for _ in ratios for v in speeds]}
    )
    return frame.with_columns(
        physics_fast_mode.price_ratio_for(pl.col("batch_ratio"), pl.col("speed_ratio")).alias("output_price_ratio"),
        pl.format("m·s = {}", pl.col("batch_ratio").round(2)).alias("label"),
        (pl.col("speed_ratio") == speeds[-1]).alias("label_here"),
    )


def run(ctx) -> None:
    prices, models = inputs(ctx)
    fits = table(prices, models, assumptions(ctx))
    ctx.write(FIT_FAST_MODE, fits)
    ctx.write(FIT_FAST_MODE_GUIDES, guides(fits))
