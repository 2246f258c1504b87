"""``fit_fast_mode``: what the published (price, speed) multiples of fast and priority variants allow, through the
deployment model (lecture a.5 and beyond; :mod:`econ.fits.fast_mode`, :mod:`econ.analyses.fast_mode_search`)."""

from __future__ import annotations

import polars as pl

from econ.analyses.fast_mode_search import points
from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_fast_mode_columns import columns
from econ.analyses.inference_serving import Serving, serving
from econ.analyses.pricing_inputs import ARCH_KEEP, SCHEDULE, assumption_columns, assumptions, inputs, with_declared
from econ.analyses.pricing_inputs import INPUTS as PRICING_INPUTS
from econ.analyses.traffic import traffic_mix
from econ.fits import fast_mode
from econ.fits.price_selection import attach_architecture, choose_sources
from econ.physics import fast_mode as physics_fast_mode
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "fit_fast_mode"
INPUTS = PRICING_INPUTS
PRICE_COLUMNS = (
    "source",
    "provider",
    "model",
    "variant",
    "tier_min_prompt_tokens",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "speed_ratio",
    "hugging_face_id",
)
"""The columns of the prices :func:`tables` reads: a schedule, its prices, its published speed multiple and the
model it names (not the snapshot a price was last seen in, which every new snapshot of a map moves)."""
READS = {
    "inference_prices": f"""
select {", ".join(f"p.{c}" for c in PRICE_COLUMNS)} from inference_prices as p semi join (
    select distinct source, provider, model from inference_prices
    where variant in ({", ".join(f"'{v}'" for v in fast_mode.VARIANTS)})
) as offered using (source, provider, model)
"""
}
"""All the fit reads of the prices (:func:`run` queries exactly this): the schedules (source, seller, model) that
offer a fast or priority variant, whose variant rows it explains against their standard rows. A new snapshot of a
price map that moves no price of theirs leaves the fit's key, and so does any other model's price change: a refresh
of a LiteLLM map that cut one Mistral price no longer refits fast mode (1.2 s)."""

NAMES = ("decode_mbu_frac", "prefill_mfu_frac")
ROW_KEY = ("source", "provider", "model", "variant", "tier_min_prompt_tokens")
KEEP = (
    *ROW_KEY,
    "status",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "standard_tier_min_prompt_tokens",
    "standard_input_usd_per_mtok",
    "standard_output_usd_per_mtok",
    "speed_ratio",
    *ARCH_KEEP,
)
ALLOWED = tuple(f"{e}_allowed_frac" for e in physics_fast_mode.EXPLANATIONS)
SHARES = tuple(
    f"{e}_{what}_frac" for what in ("allowed", "too_dear", "too_cheap") for e in physics_fast_mode.EXPLANATIONS
)

FIT_FAST_MODE = ResultTable(
    name="fit_fast_mode",
    grain="price source x provider x model x variant x context tier",
    key=ROW_KEY,
    description=(
        "Fast and priority variants: price multiple m (output, fast/standard at the same tier) and published speed "
        "multiple s; the lecture's identity B0/B1 = m*s on the same replica (a.5); and, through the deployment model "
        "at the scenario chip, which explanations the published (m, s) allow: a smaller batch on the same replica, "
        "more chips per replica, speculative decoding, any combination. An explanation is allowed on a reference "
        "architecture when the cost multiple its cheapest point s x faster per user needs lies between m/rho_hi and "
        "m/rho_lo, rho the fast mode's markup over standard with both gross margins anywhere in the scenario's range "
        "(tested on both sides: too dear, or too cheap for the price multiple); the implied markup of the fast mode "
        "is m / that cost multiple; open models are read against their own architecture, closed ones "
        "against every deployed open model (the share says how much the multiples constrain them). The tier "
        "threshold plays no part (it is not the crossover L*). The baseline is the cheapest point without "
        "speculation meeting the scenario's speed per user. One price source per model; rows without a "
        "published speed multiple are listed with status. " + INTERVALS
    ),
    columns=columns(
        *KEEP,
        "output_price_ratio",
        "input_price_ratio",
        "batch_ratio",
        "context_used_tokens",
        *SHARES,
        "reference_models",
        "implied_markup_ratio",
        "implied_markup_low_ratio",
        "implied_markup_high_ratio",
        "explanations",
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "prefill_mfu_frac",
        "user_speed_target_tokens_per_s",
        "scenario_interval",
        "assumptions_defaulted",
    ),
)
FIT_FAST_MODE_EXPLANATIONS = ResultTable(
    name="fit_fast_mode_explanations",
    grain="fast or priority row of fit_fast_mode x reference architecture x explanation",
    key=(*ROW_KEY, "reference_model", "explanation"),
    description=(
        "Per fast variant with a published speed multiple, per reference architecture and explanation: the cost "
        "multiple the deployment model needs to be s x faster per user than the baseline (the cheapest point without "
        "speculation meeting the scenario's speed per user), how far the explanation's points reach, and whether the "
        "price multiple m covers it"
    ),
    columns=columns(
        *ROW_KEY,
        "reference_model",
        "explanation",
        "output_price_ratio",
        "speed_ratio",
        "context_used_tokens",
        "baseline_batch_seqs",
        "baseline_replica_chips",
        "baseline_tokens_per_s_per_user",
        "speed_reach_ratio",
        "cost_multiple_needed_ratio",
        "allowed",
        "implied_markup_ratio",
        "verdict",
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
TABLES = (FIT_FAST_MODE, FIT_FAST_MODE_EXPLANATIONS, FIT_FAST_MODE_GUIDES)


def tables(
    prices: pl.DataFrame, models: pl.DataFrame, a, deployed: Serving | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``fit_fast_mode``, ``fit_fast_mode_explanations``): every fast/priority row with a published speed multiple
    (and fast rows without one), read through ``deployed`` (none: the identity only)."""
    variants = prices.filter(
        pl.col("variant").is_in(fast_mode.VARIANTS)
        & (pl.col("speed_ratio").is_not_null() | (pl.col("variant") == "fast"))
    )
    if variants.height == 0:
        return FIT_FAST_MODE.empty_frame(), FIT_FAST_MODE_EXPLANATIONS.empty_frame()
    chosen = choose_sources(variants).select(*SCHEDULE).unique()
    variants = variants.join(chosen, on=SCHEDULE, how="semi")
    rows = attach_architecture(fast_mode.with_standard_prices(variants, prices), models)
    context = (
        traffic_mix(deployed.scenario).decode_context_tokens if deployed is not None else a.central["context_tokens"]
    )
    rows = fast_mode.multiples(rows).with_columns(
        pl.max_horizontal(pl.lit(float(context)), pl.col("tier_min_prompt_tokens").cast(pl.Float64)).alias(
            "context_used_tokens"
        )
    )
    by_context = {}
    if deployed is not None and deployed.cases.height:
        wanted = rows.filter(pl.col("speed_ratio") > 1)["context_used_tokens"].unique().to_list()
        by_context = {c: points(deployed, c) for c in wanted}
    out, detail = fast_mode.explain(rows, by_context, band=fast_mode.markup_band(*a.ranges["gross_margin_frac"]))
    status = (
        pl.when(pl.col("speed_ratio").is_null())
        .then(pl.lit("no published speed multiple"))
        .when(pl.col("standard_output_usd_per_mtok").is_null())
        .then(pl.lit("no standard price"))
        .when(pl.col("speed_ratio") <= 1)
        .then(pl.lit("not faster than standard"))
        .when(pl.col("reference_models") == 0)
        .then(pl.lit("no deployed reference architecture"))
        .otherwise(pl.lit("ok"))
    )
    out = out.with_columns(status.alias("status"))
    frame = (
        out.select(*(c for c in FIT_FAST_MODE.schema if c in out.columns))
        .with_columns(
            *assumption_columns(a, NAMES),
            pl.lit(
                deployed.scenario.user_speed_target_tokens_per_s if deployed is not None else None, pl.Float64
            ).alias("user_speed_target_tokens_per_s"),
        )
        .sort(*ROW_KEY)
    )
    frame = with_declared(frame, FIT_FAST_MODE)
    if detail.height:
        detail = (
            out.with_row_index("_row")
            .select(pl.col("_row").cast(pl.Int64), *ROW_KEY, "output_price_ratio", "speed_ratio", "context_used_tokens")
            .join(detail.with_columns(pl.col("_row").cast(pl.Int64)), on="_row")
            .drop("_row")
            .with_columns(pl.col("cost_multiple_needed_ratio").replace(float("inf"), None))
            .sort(*ROW_KEY, "reference_model", "explanation")
        )
        detail = with_declared(detail, FIT_FAST_MODE_EXPLANATIONS)
    else:
        detail = FIT_FAST_MODE_EXPLANATIONS.empty_frame()
    return frame, detail


def table(prices: pl.DataFrame, models: pl.DataFrame, a, deployed: Serving | None = None) -> pl.DataFrame:
    """``fit_fast_mode`` alone (:func:`tables`)."""
    return tables(prices, models, a, deployed)[0]


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
    prices, models = inputs(ctx, READS)
    fits, detail = tables(prices, models, assumptions(ctx), serving(ctx))
    ctx.write(FIT_FAST_MODE, fits)
    ctx.write(FIT_FAST_MODE_EXPLANATIONS, detail)
    ctx.write(FIT_FAST_MODE_GUIDES, guides(fits))
