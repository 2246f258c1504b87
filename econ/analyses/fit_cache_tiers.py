"""``fit_cache_tiers`` and ``fit_cache_tiers_by_memory_tier``: prompt-cache prices read back into the memory tiers
they are consistent with (lecture g.1–g.4; :mod:`econ.fits.cache_tiers`).

premium(T) = write + hold·T fitted over the durations each provider sells; the hold price per GB-hour with the KV
bytes a prompt token *holds* (open models: the architecture at the traffic's mean prompt; closed models: the range
the open models span, their geometric mean in the middle — a closed model's bytes held are not known, and the bytes
it *reads* per context token are a different quantity); each memory tier, on one rental-equivalent $/GB-hour basis,
consistent or not; identified only when exactly one is; the nearest tier and the factor to its boundary.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs
from econ.analyses.fit_cache_tiers_columns import columns
from econ.analyses.fit_columns import INTERVALS
from econ.analyses.inference_serving import Serving, serving
from econ.analyses.pricing_inputs import ARCH_KEEP, assumption_columns, assumptions, inputs, with_declared
from econ.analyses.pricing_inputs import INPUTS as PRICING_INPUTS
from econ.analyses.pricing_inputs import READS as PRICING_READS
from econ.analyses.traffic import traffic_mix
from econ.fits import cache_tiers
from econ.fits.price_selection import attach_architecture, choose_schedules
from econ.physics import sharding
from econ.physics.sequence import kv_bytes_held_per_sequence
from econ.results import ResultTable

NAME = "fit_cache_tiers"
INPUTS = (*PRICING_INPUTS, "memory_tiers")
READS = PRICING_READS

NAMES = ("usd_per_chip_hour", "gross_margin_frac")
PRICE_COLUMNS = (
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_write_12h_usd_per_mtok",
    "cache_storage_usd_per_mtok_hour",
)
KEEP = (
    "row_id",
    "source",
    "provider",
    "model",
    "name_key",
    "variant",
    "provider_kind",
    "input_usd_per_mtok",
    *PRICE_COLUMNS,
    "durations_sold",
    "premium_fit_status",
    "write_usd_per_mtok",
    "hold_price_usd_per_mtok_hour",
    "hold_price_low_usd_per_mtok_hour",
    "hold_price_high_usd_per_mtok_hour",
    "kv_method",
    "kv_bytes_per_token_used",
    "kv_low_bytes_per_token",
    "kv_high_bytes_per_token",
    "hold_cost_usd_per_gb_hour",
    "hold_cost_low_usd_per_gb_hour",
    "hold_cost_high_usd_per_gb_hour",
    "consistent_tiers",
    "identified_tier",
    "tier_status",
    "nearest_tier",
    "boundary_distance_ratio",
    "drain_time_tiers",
    *ARCH_KEEP,
)

FIT_CACHE_TIERS = ResultTable(
    name="fit_cache_tiers",
    grain="price source x provider x model x variant with a cache price (row_id)",
    key=("row_id",),
    description=(
        "Prompt-cache prices read backwards (lecture g.1-g.4): premium(T) = write - input = w + h*T fitted over the "
        "durations a provider sells (5 min, 1 h, 12 h; a storage price per token-hour is h itself; one duration only "
        "bounds h by premium/T); hold cost = h*(1-margin)/b_held per GB-hour with b_held the KV bytes a prompt token "
        "holds: the architecture's (open models, at the traffic's mean prompt) or the open models' range (closed "
        "models); a memory tier, priced on one rental-equivalent $/GB-hour basis (memory_tiers), is consistent "
        "when its holding cost lies inside the implied interval (box over the margin range, the hold and KV "
        "intervals) and identified only when exactly one is; the nearest tier and the factor the price would move "
        "to cross to the next; the g.4 drain-time rule per duration beside it. Base tier; one source per closed "
        "model, one per open model x "
        "seller. " + INTERVALS
    ),
    columns=columns(
        *KEEP,
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "scenario_interval",
        "assumptions_defaulted",
    ),
)

FIT_CACHE_TIERS_BY_MEMORY_TIER = ResultTable(
    name="fit_cache_tiers_by_memory_tier",
    grain="fit_cache_tiers row_id x memory-tier device",
    key=("row_id", "tier", "device"),
    description=(
        "Each fit_cache_tiers row against each memory_tiers device (lecture g.2): the device's holding cost per "
        "GB-hour, whether it lies in the row's implied interval, and the implied over the device's cost"
    ),
    columns=columns(
        "row_id",
        "provider",
        "model",
        "variant",
        "kv_method",
        "tier",
        "device",
        "drain_time_s",
        "tier_hold_cost_usd_per_gb_hour",
        "tier_cost_basis",
        "consistent_with_price",
        "implied_over_tier_hold_cost_ratio",
    ),
)
TABLES = (FIT_CACHE_TIERS, FIT_CACHE_TIERS_BY_MEMORY_TIER)


def held_bytes(deployed: Serving | None) -> pl.DataFrame:
    """Per deployed open model: KV bytes a prompt token holds at the traffic's mean prompt, held(L̄)/L̄ (KV format)."""
    if deployed is None or deployed.cases.height == 0:
        return pl.DataFrame(schema={"arch_model": pl.String, "held": pl.Float64})
    mean = traffic_mix(deployed.scenario).mean_prompt_tokens
    model = deployment_inputs.model_arrays(deployed.cases)
    scale = deployed.kv_scale
    scaled = (
        "kv_bytes_per_token",
        "kv_window_bytes_per_sequence",
        "kv_chunk_bytes_per_token",
        "state_bytes_per_sequence",
    )
    parts = {k: model[k] * (scale if k in scaled else 1.0) for k in sharding.CACHE_KEYS}
    held = kv_bytes_held_per_sequence(mean, **parts) / mean
    return pl.DataFrame({"arch_model": deployed.cases["model"], "held": held})


def tables(prices, models, tiers, a, deployed: Serving | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``fit_cache_tiers`` (one row per price row with a cache price) and its per-device detail."""
    cols = [c for c in PRICE_COLUMNS[1:] if c in prices.columns]
    base = prices.filter(
        (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("input_usd_per_mtok") > 0)
        & pl.any_horizontal(*(pl.col(c).is_not_null() for c in cols))
    )
    if base.height == 0:
        return FIT_CACHE_TIERS.empty_frame(), FIT_CACHE_TIERS_BY_MEMORY_TIER.empty_frame()
    rows = cache_tiers.fit_premiums(choose_schedules(attach_architecture(base, models)))
    held = held_bytes(deployed)
    rows = rows.join(held, on="arch_model", how="left")
    span = held["held"].drop_nulls()
    prior = (float(np.exp(np.log(span).mean())), float(span.min()), float(span.max())) if span.len() else (None,) * 3
    is_open = pl.col("held").is_not_null()
    is_closed = pl.col("arch_model").is_null() & pl.lit(prior[0] is not None)
    rows = rows.with_columns(
        pl.when(is_open)
        .then(pl.lit("architecture"))
        .when(is_closed)
        .then(pl.lit("open models' range"))
        .otherwise(pl.lit("none"))
        .alias("kv_method"),
        pl.when(is_open).then(pl.col("held")).when(is_closed).then(pl.lit(prior[0])).alias("kv_bytes_per_token_used"),
        pl.when(is_open).then(pl.col("held")).when(is_closed).then(pl.lit(prior[1])).alias("kv_low_bytes_per_token"),
        pl.when(is_open).then(pl.col("held")).when(is_closed).then(pl.lit(prior[2])).alias("kv_high_bytes_per_token"),
    )
    rows = cache_tiers.hold_costs(
        rows, margin=a.central["gross_margin_frac"], margin_range=a.ranges["gross_margin_frac"]
    ).with_row_index("row_id")
    verdict, detail = cache_tiers.compare_tiers(rows, tiers.sort("tier", "device"))
    main = verdict.select(*[c for c in KEEP if c in verdict.columns]).with_columns(*assumption_columns(a, NAMES))
    keys = ["row_id", "provider", "model", "variant", "kv_method"]
    detail = detail.join(main.select(keys), on="row_id", how="left").select(*keys, pl.exclude(keys))
    main = main.with_columns(pl.col("row_id").cast(pl.Int64))
    detail = detail.with_columns(pl.col("row_id").cast(pl.Int64))
    return (
        with_declared(main.sort("row_id"), FIT_CACHE_TIERS),
        with_declared(detail.sort("row_id", "tier", "device"), FIT_CACHE_TIERS_BY_MEMORY_TIER),
    )


def run(ctx) -> None:
    prices, models = inputs(ctx)
    tiers = ctx.query("select * from memory_tiers order by tier, device")
    main, detail = tables(prices, models, tiers, assumptions(ctx), serving(ctx))
    ctx.write(FIT_CACHE_TIERS, main)
    ctx.write(FIT_CACHE_TIERS_BY_MEMORY_TIER, detail)
