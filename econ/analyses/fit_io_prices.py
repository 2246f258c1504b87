"""``fit_io_prices``: every priced model's output/input ratio and what it implies about decode (lecture f.3).

Under the roofline with compute-bound prefill and memory-bound decode, ρ = (mfu/mbu)·(B*₀/B + L/L*), so
B/B*₀ and, at the scenario batch, the decode mbu are read back (:mod:`econ.fits.io_prices`).
"""

from __future__ import annotations

import polars as pl

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_io_columns import columns
from econ.analyses.pricing_inputs import (
    ARCH_KEEP,
    SCHEDULE,
    assumption_columns,
    assumptions,
    inputs,
    thresholds,
    with_declared,
)
from econ.fits import io_prices
from econ.fits.price_selection import attach_architecture, choose_sources
from econ.results import ResultTable

NAME = "fit_io_prices"
INPUTS = ("price_current", "models", "model_derived", "hardware_derived", "scenarios")

NAMES = ("prefill_mfu_frac", "decode_mbu_frac", "context_tokens", "batch_multiple_over_balance_ratio")
KEEP = (
    "source",
    "provider",
    "model",
    "name_key",
    "variant",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    *ARCH_KEEP,
    "tier_threshold_tokens",
)

FIT_IO_PRICES = ResultTable(
    name="fit_io_prices",
    grain="price source x provider x model x variant",
    key=("source", "provider", "model", "variant"),
    description=(
        "Output/input price ratio of every priced model (base tier, one price source per model) and what it implies "
        "under the roofline with compute-bound prefill and memory-bound decode (lecture f.3): rho = (mfu/mbu)*(B*0/B "
        "+ L/L*), so B/B*0 = 1/(rho*mbu/mfu - L/L*) and, at the scenario batch B = m*B*0, decode mbu = mfu*(1/m + "
        "L/L*)/rho. lecture_f3_check flags the lecture's inconsistency (rho near 5 with L* near 200k needs a batch "
        "below B*0); implied_decode_mbu_check flags an implied mbu above 1 (impossible: the roofline prices decode "
        "dearer than observed). Ratios of published prices: no fit interval. " + INTERVALS
    ),
    columns=columns(
        *KEEP,
        "output_over_input_ratio",
        "critical_context_tokens",
        "critical_context_source",
        "context_over_critical_ratio",
        "regime",
        "batch_over_balance_ratio",
        "batch_over_balance_scenario_low_ratio",
        "batch_over_balance_scenario_high_ratio",
        "implied_decode_mbu_frac",
        "implied_decode_mbu_check",
        "implied_decode_mbu_scenario_low_frac",
        "implied_decode_mbu_scenario_high_frac",
        "predicted_output_over_input_ratio",
        "predicted_output_over_input_scenario_low_ratio",
        "predicted_output_over_input_scenario_high_ratio",
        "lecture_f3_check",
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "prefill_mfu_frac",
        "context_tokens",
        "batch_multiple_over_balance_ratio",
        "scenario_interval",
        "assumptions_defaulted",
    ),
)
TABLES = (FIT_IO_PRICES,)


def table(prices: pl.DataFrame, models: pl.DataFrame, a) -> pl.DataFrame:
    """Base-tier rows with positive input and output prices, one source per model."""
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("input_usd_per_mtok") > 0)
        & (pl.col("output_usd_per_mtok") > 0)
    )
    if base.height == 0:
        return FIT_IO_PRICES.empty_frame()
    rows = attach_architecture(choose_sources(base), models).join(thresholds(prices), on=SCHEDULE, how="left")
    out = io_prices.model_ratios(rows, a)
    derived = [c for c in out.columns if c not in rows.columns]
    frame = out.select(*KEEP, *derived).with_columns(*assumption_columns(a, NAMES)).sort("provider", "model", "variant")
    return with_declared(frame, FIT_IO_PRICES)


def run(ctx) -> None:
    prices, models = inputs(ctx)
    ctx.write(FIT_IO_PRICES, table(prices, models, assumptions(ctx)))
