"""``fit_io_market`` and ``fit_io_market_residuals``: the open-weight market's $/FLOP, $/byte and effective batch,
and whether the two chip-hour prices they imply agree, with every FLOP class (routed experts, dense weights and
attention, prefill and decode) at its calibrated efficiency, varied over the calibration's intervals.

A cross-model regression over every provider's standard price of an open-weight model with a known
architecture (:func:`econ.fits.io_market.fit_market`), its design from the deployment model at the fleet's traffic
mix (:func:`econ.analyses.inference_serving.traffic_costs`), and each price row's observed over predicted.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_io_columns import columns
from econ.analyses.inference_serving import TrafficCosts, serving, traffic_costs
from econ.analyses.pricing_inputs import INPUTS as PRICING_INPUTS
from econ.analyses.pricing_inputs import READS as PRICING_READS
from econ.analyses.pricing_inputs import SCHEDULE, assumption_columns, assumptions, inputs, with_declared
from econ.fits import io_market, measured_decode
from econ.fits.price_selection import attach_architecture
from econ.results import ResultTable

NAME = "fit_io_market"
INPUTS = (*PRICING_INPUTS, "measured_points")
READS = PRICING_READS

NAMES = ("gross_margin_frac", "prefill_mfu_frac", "decode_mbu_frac")

FIT_IO_MARKET = ResultTable(
    name="fit_io_market",
    grain="implied quantity",
    key=("quantity",),
    description=(
        "Cross-model regression over every provider's standard price of an open-weight model with known architecture "
        "(OpenRouter hugging_face_id, LiteLLM keys embedding the HF repo, documented name rule): input = "
        "c_flop*F_in, output = c_flop*F_out + c_byte*(N_tot*b_w/B_eff + K_out), weights 1/price (relative errors), "
        "with F_in, F_out (weight and attention FLOPs in prefill-dense equivalents: routed experts at the calibrated "
        "expert mfu, attention at its model's attention kind's calibrated share, other decode FLOPs at the decode mfu) "
        "and K_out (cache bytes read) from the deployment model at the "
        "fleet's traffic mix (prompt-length shares, cached share, mean decode context) at the scenario chip and "
        "formats; the chip-hour prices the FLOP and the byte prices imply, and status inconsistent (with the reason) "
        "when their combined intervals do not overlap; B_eff checked against measured systems. " + INTERVALS
    ),
    columns=columns(
        "quantity",
        "unit",
        "estimate",
        "fit_low",
        "fit_high",
        "scenario_low",
        "scenario_high",
        "combined_low",
        "combined_high",
        "meaning",
        "scenario_interval",
        "status",
        "status_reason",
        "check",
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
        "decode_context_tokens",
        "prompt_cache_hit_frac",
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


def market_rows(prices: pl.DataFrame, models: pl.DataFrame, costs: TrafficCosts) -> pl.DataFrame:
    """Every provider's standard base-tier price of an open-weight model the deployment model serves (all sources),
    with the design columns (:data:`econ.fits.io_market.DESIGN`) of its architecture."""
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("variant") == "standard")
        & (pl.col("input_usd_per_mtok") > 0)
        & (pl.col("output_usd_per_mtok") > 0)
    )
    rows = attach_architecture(base, models).filter(pl.col("kv_bytes_per_token").is_not_null())
    rows = rows.unique(subset=SCHEDULE, keep="first").sort(SCHEDULE)
    design = costs.frame.select(
        pl.col("model").alias("arch_model"),
        *io_market.DESIGN,
        io_market.ATTENTION_RATIO,
        io_market.ATTENTION_PEAK_RATIO,
    )
    return rows.join(design, on="arch_model", how="inner").drop_nulls(list(io_market.DESIGN)).sort(SCHEDULE)


def tables(
    prices: pl.DataFrame,
    models: pl.DataFrame,
    a,
    costs: TrafficCosts,
    measured: measured_decode.MeasuredDecode = measured_decode.DEEPSEEK_DECODE,
    efficiencies: dict | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(one row per implied quantity, one row per price row × component); B_eff checked against ``measured``;
    ``efficiencies``: name -> (central, low, high) of :data:`econ.fits.io_market.EFFICIENCIES` (None: every FLOP
    at the same efficiency, the plain counts)."""
    rows = market_rows(prices, models, costs)
    if rows.height == 0:
        return FIT_IO_MARKET.empty_frame(), FIT_IO_MARKET_RESIDUALS.empty_frame()
    central = {k: v[0] for k, v in efficiencies.items()} if efficiencies else None
    result, x, y = io_market.fit_market(rows, central)
    factor, text = None, ""
    if efficiencies:
        fitted = x @ np.nan_to_num(result.estimate)
        draws = io_market.efficiency_ratio_draws(rows, efficiencies, 1.0 / np.where(fitted > 0, fitted, y))
        factor = tuple(np.nanquantile(draws, [0.05, 0.95]))
        text = f"efficiencies refitted over {draws.size} draws: " + ", ".join(
            f"{k} {lo:.3g}-{hi:.3g}" for k, (_, lo, hi) in efficiencies.items()
        )
    quantities = io_market.market_quantities(result, a, measured, factor, text).with_columns(
        pl.lit(result.status).alias("fit_status"),
        pl.lit(result.interval_kind).alias("fit_interval_kind"),
        pl.lit(result.level).alias("interval_level_frac"),
        pl.lit(result.n_points).alias("n_points"),
        pl.lit(rows.height).alias("n_price_rows"),
        pl.lit(rows["arch_model"].n_unique()).alias("n_models"),
        pl.lit(rows["provider"].n_unique()).alias("n_providers"),
        pl.lit(result.message).alias("fit_message"),
        pl.lit(costs.mix.decode_context_tokens).alias("decode_context_tokens"),
        pl.lit(costs.prompt_cache_hit_frac).alias("prompt_cache_hit_frac"),
        *assumption_columns(a, NAMES),
    )
    if text:
        quantities = quantities.with_columns(
            pl.when(pl.col("quantity") == "flop_over_byte_chip_hour_ratio")
            .then(pl.col("scenario_interval") + f"; {text}")
            .otherwise(pl.col("scenario_interval"))
            .alias("scenario_interval")
        )
    residuals = io_market.market_residuals(rows, result, x, y)
    return with_declared(quantities.drop("fit_status"), FIT_IO_MARKET), residuals


def efficiencies_of(scenario) -> dict:
    """name -> (central, low, high) of the FLOP classes' efficiencies in the serving scenario (calibrated)."""
    return {k: (float(getattr(scenario, k)), *scenario.range(k)) for k in io_market.EFFICIENCIES}


def run(ctx) -> None:
    prices, models = inputs(ctx)
    measured = measured_decode.measured_decode(ctx.query("select * from measured_points"))
    deployed = serving(ctx)
    market, residuals = tables(
        prices, models, assumptions(ctx), traffic_costs(deployed), measured, efficiencies_of(deployed.scenario)
    )
    ctx.write(FIT_IO_MARKET, market)
    ctx.write(FIT_IO_MARKET_RESIDUALS, residuals)
