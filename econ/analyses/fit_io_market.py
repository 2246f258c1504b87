"""``fit_io_market`` and ``fit_io_market_residuals``: the open-weight market's $/FLOP, $/byte and effective batch.

A cross-model regression over every provider's standard price of an open-weight model with a known
architecture (:func:`econ.fits.io_prices.fit_market`), and each price row's observed over predicted.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_io_columns import columns
from econ.analyses.pricing_inputs import SCHEDULE, assumption_columns, assumptions, inputs, with_declared
from econ.fits import io_prices
from econ.fits.price_selection import attach_architecture
from econ.results import ResultTable

NAME = "fit_io_market"
INPUTS = ("price_current", "models", "model_derived", "hardware_derived", "scenarios")

NAMES = ("gross_margin_frac", "prefill_mfu_frac", "decode_mbu_frac", "context_tokens")

FIT_IO_MARKET = ResultTable(
    name="fit_io_market",
    grain="implied quantity",
    key=("quantity",),
    description=(
        "Cross-model regression over every provider's standard price of an open-weight model with known architecture "
        "(OpenRouter hugging_face_id, LiteLLM keys embedding the HF repo, documented name rule): input = "
        "c_flop*2*N_act, output = c_flop*2*N_act + c_byte*(N_tot*b_w/B_eff + L*b_kv), weights 1/price (relative "
        "errors), at the scenario's context, weight and KV formats; derived chip-hour prices at the scenario chip. "
        + INTERVALS
    ),
    columns=columns(
        "quantity",
        "unit",
        "estimate",
        "fit_low",
        "fit_high",
        "scenario_low",
        "scenario_high",
        "meaning",
        "scenario_interval",
        "status",
        "fit_interval_kind",
        "interval_level_frac",
        "n_points",
        "n_price_rows",
        "n_models",
        "n_providers",
        "fit_message",
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "prefill_mfu_frac",
        "context_tokens",
        "assumptions_defaulted",
    ),
)

FIT_IO_MARKET_RESIDUALS = ResultTable(
    name="fit_io_market_residuals",
    grain="price source x provider x model x component (input, output)",
    key=("source", "provider", "model", "component"),
    description="Observed vs predicted price of every row in the fit_io_market regression",
    columns=columns(
        "source",
        "provider",
        "model",
        "arch_model",
        "arch_match",
        "component",
        "observed_usd_per_mtok",
        "predicted_usd_per_mtok",
        "observed_over_predicted_ratio",
    ),
)
TABLES = (FIT_IO_MARKET, FIT_IO_MARKET_RESIDUALS)


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


def tables(prices: pl.DataFrame, models: pl.DataFrame, a) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(one row per implied quantity, one row per price row × component)."""
    rows = market_rows(prices, models)
    if rows.height == 0:
        return FIT_IO_MARKET.empty_frame(), FIT_IO_MARKET_RESIDUALS.empty_frame()
    hw = a.central_hardware
    result, x, y = io_prices.fit_market(
        rows,
        weight_bytes_per_param=hw["weight_bytes_per_param"],
        kv_scale=a.kv_scale,
        context_tokens=a.central["context_tokens"],
    )
    quantities = io_prices.market_quantities(result, a).with_columns(
        pl.lit(result.status).alias("status"),
        pl.lit(result.interval_kind).alias("fit_interval_kind"),
        pl.lit(result.level).alias("interval_level_frac"),
        pl.lit(result.n_points).alias("n_points"),
        pl.lit(rows.height).alias("n_price_rows"),
        pl.lit(rows["arch_model"].n_unique()).alias("n_models"),
        pl.lit(rows["provider"].n_unique()).alias("n_providers"),
        pl.lit(result.message).alias("fit_message"),
        *assumption_columns(a, NAMES),
    )
    residuals = io_prices.market_residuals(rows, result, x, y)
    return with_declared(quantities, FIT_IO_MARKET), residuals


def run(ctx) -> None:
    prices, models = inputs(ctx)
    market, residuals = tables(prices, models, assumptions(ctx))
    ctx.write(FIT_IO_MARKET, market)
    ctx.write(FIT_IO_MARKET_RESIDUALS, residuals)
