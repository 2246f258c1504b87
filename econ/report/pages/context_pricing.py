"""Context-pricing page: long-context price tiers read backwards, per price component (lecture f.1–f.2).

Each tiered first-party schedule is charted as steps with the fitted cost line c(L) = a + k·L. The output-price
slope is read as the bytes a decode step reads per context token, the input-price slope as prefill attention FLOPs
per context token, the cache-read uplift as a billing rule; the lecture's crossover reading (first threshold = L*)
is shown only as the hypothesis it is, with its measured bias. Every number carries its validated interval (the
bias-corrected value times exp(±h), h the left-out prediction half-width of the open models' errors,
``inference_validation``) and its status where that is not ok. Every row of ``fit_context_tiers`` is a download.
The validation itself, a section of the page, is in :mod:`econ.report.pages.context_pricing_validation`, with the
status of each quantity and the words for it that the captions use.
"""

from __future__ import annotations

import polars as pl

from econ.report import inference_findings
from econ.report.charts import pricing as charts
from econ.report.figures import Figure
from econ.report.html import Col, details, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import SCHEMA_ERRORS, ensure_columns, guarded, sig3, status_text
from econ.report.pages.context_pricing_validation import evidence, quantity_status, validation_section

NAME = "context-pricing"
TITLE = "Context pricing"
SUMMARY = (
    "Long-context price tiers read backwards per price component: decode KV bytes read and prefill attention "
    "FLOPs per context token, with intervals validated on open models."
)
REQUIRES = ("fit_context_tiers",)

KV_QUANTITY = "decode_kv_read_bytes_per_context_token"
CROSSOVER = "kv_bytes_per_token_crossover"
FIT_OK = ("ok", "exact")
"""Fit statuses a reading may be shown under (exact: a line through every tier, no fit interval)."""
LECTURE_GUIDES = pl.DataFrame(
    {
        "label": ["lecture f.1: 200k threshold ⇒ ≈ 1,667 B", "lecture f.2: 1 × 2 × 128 × 8 = 2,048 B"],
        "bytes_per_token": [1667.0, 2048.0],
    }
)
SOURCE = (
    "fit_context_tiers table of the pricing fits, from the prices table (first-party pages, LiteLLM / OpenRouter "
    "maps), the hardware table, the deployment model and the scenario; validation: inference_validation"
)

READINGS = """
select provider, model, component, n_tiers, tier_thresholds_tokens,
       status as fit_status, slope_usd_per_mtok_per_mtok_context, quantity, arch_model,
       coalesce(kv_read_published_bytes_per_context_token, attention_published_flop_per_context_token)
           as reading_value,
       coalesce(kv_read_validated_low_bytes_per_context_token, attention_validated_low_flop_per_context_token)
           as validated_low,
       coalesce(kv_read_validated_high_bytes_per_context_token, attention_validated_high_flop_per_context_token)
           as validated_high,
       coalesce(true_kv_read_bytes_per_context_token, true_attention_flop_per_context_token) as true_value,
       implied_over_true_ratio, billing_rule
from fit_context_tiers
where default_rule and not pooled and source = 'hand' and variant = 'standard'
order by provider, model, component
"""

STEPS = """
select * from fit_context_tier_steps order by provider, model, kind, context_tokens
"""

KV = """
with rows as (
    select source || ' · ' || provider || ' · ' || model as label, *
    from fit_context_tiers
    where default_rule and not pooled and component = 'output' and variant = 'standard'
      and (source = 'hand' or true_kv_read_bytes_per_context_token is not null)
)
select label, 'slope' as reading, kv_read_published_bytes_per_context_token as bytes_per_token,
       kv_read_fit_low_bytes_per_context_token as fit_low, kv_read_fit_high_bytes_per_context_token as fit_high,
       kv_read_validated_low_bytes_per_context_token as scenario_low,
       kv_read_validated_high_bytes_per_context_token as scenario_high
from rows
union all
select label, 'crossover', kv_crossover_bytes_per_token, null, null, kv_crossover_validated_low_bytes_per_token,
       kv_crossover_validated_high_bytes_per_token
from rows
union all
select label, 'architecture (true)', true_kv_read_bytes_per_context_token, null, null, null, null
from rows where true_kv_read_bytes_per_context_token is not null
order by label, reading
"""

POOLED = """
select * from fit_context_tiers
where pooled and default_rule and component = 'input'
order by provider, source
"""
POOL_COLUMNS = (
    "pool_model_count",
    "pool_plausible",
    "pool_spread_ratio",
    "uplift_per_mtok_context_frac",
    "uplift_fit_low_per_mtok_context_frac",
    "uplift_fit_high_per_mtok_context_frac",
    "status",
    "pool_models",
)

ASSUMPTIONS = """
select chip, number_format, kv_cache_format, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac,
       prefill_mfu_frac, tier_context_density_exponent_ratio, scenario_interval
from fit_context_tiers where chip is not null limit 1
"""


def render(ctx: SiteContext) -> PageContent:
    try:
        assumptions = ctx.query(ASSUMPTIONS)
    except SCHEMA_ERRORS:  # only the captions use it
        assumptions = pl.DataFrame()
    quantities = quantity_status(ctx)
    sections = [
        guarded("Prices against context, with the fitted cost line", lambda: _tiers(ctx, assumptions, quantities)),
        guarded("Implied KV bytes read per context token", lambda: _kv(ctx, assumptions, quantities)),
        guarded("Checked on open models", lambda: validation_section(ctx, quantities)),
        guarded("One slope per provider", lambda: _pooled(ctx)),
    ]
    return PageContent(
        title=TITLE,
        lead=(
            "Providers charge more per token once a prompt passes a threshold. Read backwards per price "
            "component, the output price's extra per token of context is the cost of the KV cache a decode step "
            "reads, and the input price's is prefill attention. The open models, whose architecture is known, "
            "measure how far each reading is off; that error sets every validated interval on this page."
        ),
        sections=sections,
        findings=inference_findings.context_pricing(ctx),
    )


def _assumption_text(assumptions: pl.DataFrame) -> str:
    if assumptions.is_empty():
        return ""
    a = assumptions.row(0, named=True)
    return (
        f"Assumed: {a['chip']} at {a['number_format']} (KV at {a['kv_cache_format']}), "
        f"{fmt_num(a['usd_per_chip_hour'])} USD/chip-hour, gross margin {fmt_num(a['gross_margin_frac'])}, decode "
        f"mbu {fmt_num(a['decode_mbu_frac'])}, prefill mfu {fmt_num(a['prefill_mfu_frac'])}, prompts inside a "
        f"tier with density ∝ L^-{fmt_num(a['tier_context_density_exponent_ratio'])}. "
        f"Scenario interval: {a['scenario_interval']}."
    )


def _status_of(fit_status, quantity_status) -> str:
    """ok only when the fit may be shown and the quantity's validation is ok; else what is wrong."""
    if fit_status not in FIT_OK:
        return f"fit {fit_status}"
    if quantity_status is None:
        return "not validated"
    return quantity_status


def _tiers(ctx: SiteContext, assumptions: pl.DataFrame, quantities: dict) -> Section:
    steps = ctx.query(STEPS) if ctx.has("price_current") else pl.DataFrame()
    readings = ctx.query(READINGS)
    blocks = []
    if steps.height:
        blocks.append(
            Figure(
                "tier-prices",
                charts.tier_prices(steps),
                steps,
                caption="Each first-party schedule with more than one context tier (standard variant, input price): "
                "steps are the published prices (a tier bills the whole request once the prompt passes its "
                "threshold), dashed lines the least-squares line through each tier's mean context under the "
                "stated within-tier prompt density.",
                formula=f"c(L) = a + k·L; {ctx.cite('econ.fits.context_tiers.fit_schedules')}",
                source=SOURCE,
            )
        )
    else:
        blocks.append(note("No first-party price schedule has more than one context tier.", kind="pending"))
    if readings.height:
        status = [
            _status_of(f, quantities.get(q, {}).get("status") if q else "ok")
            for f, q in zip(readings["fit_status"], readings["quantity"])
        ]
        shown = readings.with_columns(pl.Series("shown_status", status, dtype=pl.String)).with_columns(
            status_text("reading_value", "validated_low", "validated_high", "shown_status").alias("reading"),
            pl.when(pl.col("component") == "output")
            .then(pl.lit("decode KV bytes read per context token"))
            .when(pl.col("component") == "input")
            .then(pl.lit("prefill attention FLOPs per context token"))
            .otherwise(pl.col("billing_rule"))
            .alias("what"),
        )
        blocks.append(
            table(
                shown,
                [
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("component", "Price component"),
                    Col("tier_thresholds_tokens", "Thresholds (tokens)"),
                    Col("fit_status", "Fit status"),
                    Col(
                        "slope_usd_per_mtok_per_mtok_context", "k (USD/MTok per MTok of context)", kind="num", fmt=sig3
                    ),
                    Col("what", "Read as", wrap=True),
                    Col("reading", "Reading (validated interval) [status if not ok]"),
                    Col("true_value", "True, open models", kind="num", fmt=sig3),
                ],
                caption="First-party tiered schedules (standard variant, default rule): each component's slope and "
                "what it is read as (bytes/token for output, FLOP/token for input; cache reads are a billing rule). "
                "The value is the published reading (bias-corrected where the bias on open models is significant) and "
                "the interval its left-out prediction interval (inference_validation); a reading whose fit or "
                "validation is not ok carries its status",
                id="context-fits",
            )
        )
    text = _assumption_text(assumptions)
    if text:
        blocks.append(note(text))
    blocks.append(
        Download(
            "fit-context-tiers",
            ctx.query("select * from fit_context_tiers order by all"),
            "Every source, variant, component and representative-context rule",
        )
    )
    return Section("Prices against context, with the fitted cost line", blocks)


def _kv(ctx: SiteContext, assumptions: pl.DataFrame, quantities: dict) -> Section:
    frame = ctx.query(KV)
    if frame.filter(pl.col("bytes_per_token").is_not_null()).is_empty():
        return Section(
            "Implied KV bytes read per context token", [note("No schedule gives a KV reading.", kind="pending")]
        )
    return Section(
        "Implied KV bytes read per context token",
        [
            Figure(
                "implied-kv",
                charts.implied_kv(frame, LECTURE_GUIDES),
                frame,
                caption="Two readings of each schedule's output price. Slope: the price of one more context token, "
                "after margin, buys the bytes a decode step reads for it at the chip's bandwidth — "
                f"{evidence(quantities.get(KV_QUANTITY))}. Crossover (the lecture's hypothesis, never a headline): "
                "the first threshold is taken as L*, where the KV read equals the weight read — "
                f"{evidence(quantities.get(CROSSOVER))}. Thin bars: the validated interval (the left-out prediction "
                "interval of the open models' errors around the published value); thick bars: the fit interval where "
                "the schedule identifies one. Black diamonds: the architecture's bytes read per context token for "
                "open-weight models. Dashed: the lecture's worked figures. " + _assumption_text(assumptions),
                formula=f"slope: {ctx.cite('econ.fits.context_readings.kv_bytes_from_slope')}; crossover: "
                f"{ctx.cite('econ.fits.context_readings.kv_bytes_at_crossover')}; interval: "
                f"{ctx.cite('econ.fits.validation.left_out')}",
                source=SOURCE + "; true values from the models table (config.json) through the deployment model",
            )
        ],
    )


def _pooled(ctx: SiteContext) -> Section:
    pooled = ensure_columns(ctx.query(POOLED), POOL_COLUMNS)  # pool columns exist only when some provider pools
    if pooled.is_empty():
        return Section(
            "One slope per provider", [note("No provider has enough tiered schedules to pool.", kind="pending")]
        )
    return Section(
        "One slope per provider",
        [
            details(
                f"Pooled relative slopes ({pooled.height} providers)",
                table(
                    pooled,
                    [
                        Col("source", "Sources"),
                        Col("provider", "Provider"),
                        Col("pool_model_count", "Models", kind="num"),
                        Col(
                            "uplift_per_mtok_context_frac", "κ: uplift per MTok of context (frac)", kind="num", fmt=sig3
                        ),
                        Col("uplift_fit_low_per_mtok_context_frac", "Fit low", kind="num", fmt=sig3),
                        Col("uplift_fit_high_per_mtok_context_frac", "Fit high", kind="num", fmt=sig3),
                        Col("pool_spread_ratio", "Members' spread (ratio)", kind="num", fmt=sig3),
                        Col("pool_plausible", "One slope plausible"),
                        Col("status", "Fit status"),
                        Col("pool_models", "Members", wrap=True),
                    ],
                    caption="One relative slope κ = k/a fitted over each provider's standard schedules; plausible "
                    "where the "
                    "members' own slopes differ by at most 1.25×",
                    id="pooled",
                ),
            )
        ],
    )
