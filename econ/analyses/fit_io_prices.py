"""``fit_io_prices``: every priced model's output/input ratio and what it implies about decode and prefill
(lecture f.3), at the fleet's traffic mix.

Under the roofline with compute-bound prefill and memory-bound decode, ρ = (mfu/mbu)·(B*₀/B + L/L*), so B/B*₀
and, at the scenario batch, the decode mbu are read back (:mod:`econ.fits.io_prices`); for open models the
deployment model gives the decode batch that ρ implies, and the input price read as prefill FLOPs per token is
validated against their architectures (:mod:`econ.fits.validation`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_io_columns import PREFILL_EVIDENCE as EVIDENCE
from econ.analyses.fit_io_columns import columns
from econ.analyses.inference_serving import TrafficCosts, serving, traffic_costs
from econ.analyses.inputs import architecture_groups, architecture_of
from econ.analyses.pricing_inputs import ARCH_KEEP, assumption_columns, assumptions, inputs, with_declared
from econ.analyses.pricing_inputs import INPUTS as PRICING_INPUTS
from econ.analyses.pricing_inputs import READS as PRICING_READS
from econ.analyses.validation_evidence import empty_evidence, evidence, quantities_table, summary_frame, validate
from econ.fits import io_prices, measured_decode
from econ.fits.price_selection import attach_architecture, choose_schedules
from econ.physics import traffic_cost
from econ.results import ResultTable

NAME = "fit_io_prices"
INPUTS = (*PRICING_INPUTS, "measured_points")
READS = PRICING_READS

NAMES = ("usd_per_chip_hour", "prefill_mfu_frac", "decode_mbu_frac", "batch_multiple_over_balance_ratio")
QUANTITY = "prefill_flop_per_input_token"
"""The validated quantity of this table: the input price read as prefill FLOPs per uncached prompt token."""
LABELS = {
    QUANTITY: (
        "fit_io_prices",
        "FLOP/token",
        "base-tier input price -> prefill FLOPs per uncached prompt token (compute-bound prefill)",
        "reading",
    )
}
"""quantity -> (table, unit, what is read from what, role): the labels of its ``fit_io_price_quantities`` row."""
KEEP = (
    "source",
    "provider",
    "model",
    "name_key",
    "variant",
    "provider_kind",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    *ARCH_KEEP,
)

FIT_IO_PRICES = ResultTable(
    name="fit_io_prices",
    grain="price source x provider x model x variant",
    key=("source", "provider", "model", "variant"),
    description=(
        "Output/input price ratio of every priced model (base tier; a closed model from one price source, an open "
        "one per seller) and what it implies at the fleet's mean decode context L (traffic mix): the lecture's "
        "closed form rho = (mfu/mbu)*(B*0/B + L/L*), so B/B*0 = 1/(rho*mbu/mfu - L/L*) and, at B = m*B*0, decode "
        "mbu = mfu*(1/m + L/L*)/rho, with L* from the architecture (closed models: KV term dropped, B/B*0 a lower "
        "bound); for open models the deployment model's decode batch at which decode cost over prefill cost "
        "(attention, cached share, communication, default layout) equals rho, checked against measured systems; "
        "and the input price read as prefill FLOPs per token, validated on open models (validated interval). "
        "Ratios of published prices: no fit interval. " + INTERVALS
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
        "implied_decode_batch_seqs",
        "implied_decode_batch_status",
        "implied_decode_batch_check",
        "balance_batch_seqs",
        "decode_memory_cap_seqs",
        "replica_chips",
        "prefill_flop_per_input_token",
        "prefill_flop_scenario_low_per_input_token",
        "prefill_flop_scenario_high_per_input_token",
        "prefill_flop_published_per_input_token",
        "prefill_flop_validated_low_per_input_token",
        "prefill_flop_validated_high_per_input_token",
        *EVIDENCE.values(),
        "true_prefill_flop_per_input_token",
        "prefill_flop_over_true_ratio",
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "prefill_mfu_frac",
        "decode_context_tokens",
        "prompt_cache_hit_frac",
        "batch_multiple_over_balance_ratio",
        "scenario_interval",
        "assumptions_defaulted",
    ),
)
FIT_IO_PRICE_QUANTITIES = quantities_table("fit_io_price_quantities", "fit_io_prices")
TABLES = (FIT_IO_PRICES, FIT_IO_PRICE_QUANTITIES)


def with_deployment(rows: pl.DataFrame, costs: TrafficCosts | None) -> pl.DataFrame:
    """The open rows' deployment-model columns: implied decode batch (and where it lands), B*0, memory cap, chips,
    and the architecture's prefill FLOPs per token at the mix."""
    names = ("balance_batch_seqs", "decode_memory_cap_seqs", "replica_chips", "true_prefill_flop_per_input_token")
    rows = rows.with_row_index("_i")
    empty = rows.with_columns(
        *(pl.lit(None, pl.Float64).alias(n) for n in (*names, "implied_decode_batch_seqs")),
        pl.lit("not deployed (closed model or no modelled layout)").alias("implied_decode_batch_status"),
    )
    if costs is None or costs.frame.height == 0:
        return empty.drop("_i")
    have, found, decode = costs.for_models(rows["arch_model"].fill_null("").to_list())
    if not have.any():
        return empty.drop("_i")
    sub = rows.filter(pl.Series(have))
    rho = (sub["output_usd_per_mtok"] / sub["input_usd_per_mtok"]).to_numpy()
    batch, where = traffic_cost.implied_batch(
        rho, decode, found["prefill_usd_per_input_token"].fill_null(np.nan).to_numpy(), costs.batch
    )
    part = sub.select("_i").with_columns(
        *(found[n].alias(n) for n in names),
        pl.Series("implied_decode_batch_seqs", batch, nan_to_null=True),
        pl.Series("implied_decode_batch_status", where),
    )
    return (
        empty.drop(*names, "implied_decode_batch_seqs", "implied_decode_batch_status")
        .join(part, on="_i", how="left")
        .with_columns(pl.col("implied_decode_batch_status").fill_null(empty["implied_decode_batch_status"][0]))
        .sort("_i")
        .drop("_i")
    )


def batch_checks(
    frame: pl.DataFrame, measured: measured_decode.MeasuredDecode = measured_decode.DEEPSEEK_DECODE
) -> pl.DataFrame:
    """Each implied decode batch per chip against the sequences per chip measured systems run (``measured``)."""
    per_chip = (frame["implied_decode_batch_seqs"] / frame["replica_chips"]).fill_null(np.nan).to_numpy()
    labels = measured_decode.batch_check(per_chip, measured=measured.per_chip, what=f"per chip ({measured.what})")
    return frame.with_columns(pl.Series("implied_decode_batch_check", labels, dtype=pl.String).replace("", None))


def with_validated(frame: pl.DataFrame, groups: dict[str, str] | None = None) -> tuple[pl.DataFrame, dict]:
    """The prefill reading's published value, validated interval and evidence, and {quantity: summary}
    (:func:`econ.fits.validation.validate`, once): open standard rows with a true value are validated (each leaving
    its model's architecture group out, ``groups``: model -> ``model_derived.architecture_group``), every other row
    gets the correction and interval of every open model."""
    names = (
        "prefill_flop_published_per_input_token",
        "prefill_flop_validated_low_per_input_token",
        "prefill_flop_validated_high_per_input_token",
    )
    if frame.height == 0:
        return frame.with_columns(*(pl.lit(None, pl.Float64).alias(n) for n in names), *empty_evidence(EVIDENCE)), {}
    checked, summary = validate(validation_rows(frame, groups), role="reading")
    return frame.with_columns(
        *(checked[c].alias(n) for c, n in zip(("corrected", "validated_low", "validated_high"), names)),
        *evidence(checked, EVIDENCE),
    ), {QUANTITY: summary}


def validation_rows(frame: pl.DataFrame, groups: dict[str, str] | None = None) -> pl.DataFrame:
    """This table's rows in the layout :func:`econ.fits.validation.validate` reads (same order; ``group_key``: the
    architecture group of ``groups``, left out together)."""
    validated = (
        (pl.col("variant") == "standard")
        & pl.col("true_prefill_flop_per_input_token").is_not_null()
        & pl.col("prefill_flop_per_input_token").is_not_null()
    )
    return frame.select(
        "source",
        "provider",
        "model",
        "variant",
        "provider_kind",
        pl.when(validated).then(pl.col("arch_model")).alias("model_key"),
        pl.when(validated).then(architecture_of(groups or {})).alias("group_key"),
        pl.col("prefill_flop_per_input_token").alias("implied"),
        pl.col("prefill_flop_scenario_low_per_input_token").alias("scenario_low"),
        pl.col("prefill_flop_scenario_high_per_input_token").alias("scenario_high"),
        pl.col("true_prefill_flop_per_input_token").alias("true"),
    )


def table(
    prices: pl.DataFrame,
    models: pl.DataFrame,
    a,
    costs: TrafficCosts | None = None,
    measured: measured_decode.MeasuredDecode = measured_decode.DEEPSEEK_DECODE,
) -> pl.DataFrame:
    """``fit_io_prices`` (:func:`tables`)."""
    return tables(prices, models, a, costs, measured)[0]


def tables(
    prices: pl.DataFrame,
    models: pl.DataFrame,
    a,
    costs: TrafficCosts | None = None,
    measured: measured_decode.MeasuredDecode = measured_decode.DEEPSEEK_DECODE,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``fit_io_prices``, ``fit_io_price_quantities``): base-tier rows with positive input and output prices, one
    source per closed model, one per open model × seller; open models priced by the deployment model at the traffic
    mix (``costs``)."""
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("input_usd_per_mtok") > 0)
        & (pl.col("output_usd_per_mtok") > 0)
    )
    if base.height == 0:
        return FIT_IO_PRICES.empty_frame(), summary_frame({}, FIT_IO_PRICE_QUANTITIES, LABELS)
    rows = choose_schedules(attach_architecture(base, models))
    context = costs.mix.decode_context_tokens if costs is not None else a.central["context_tokens"]
    out = io_prices.model_ratios(rows, a, context_tokens=context)
    out = io_prices.prefill_reading(with_deployment(out, costs), a)
    derived = [c for c in out.columns if c not in rows.columns]
    frame = (
        batch_checks(out.select(*KEEP, *derived), measured)
        .with_columns(
            pl.lit(context).alias("decode_context_tokens"),
            pl.lit(costs.prompt_cache_hit_frac if costs is not None else None, pl.Float64).alias(
                "prompt_cache_hit_frac"
            ),
            *assumption_columns(a, NAMES),
        )
        .sort("provider", "model", "variant")
    )
    frame, summaries = with_validated(frame, architecture_groups(models))
    return with_declared(frame, FIT_IO_PRICES), summary_frame(summaries, FIT_IO_PRICE_QUANTITIES, LABELS)


def run(ctx) -> None:
    prices, models = inputs(ctx)
    measured = measured_decode.measured_decode(ctx.query("select * from measured_points"))
    frame, quantities = tables(prices, models, assumptions(ctx), traffic_costs(serving(ctx)), measured)
    ctx.write(FIT_IO_PRICES, frame)
    ctx.write(FIT_IO_PRICE_QUANTITIES, quantities)
