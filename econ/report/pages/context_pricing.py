"""Context-pricing page: long-context price tiers read backwards (lecture f.1–f.2).

Each tiered first-party schedule is charted as steps with the fitted cost line
c(L) = a + k·L; the KV bytes per token it implies are shown by both readings (the slope, and
the crossover at the first threshold) with the fit interval and the scenario interval kept
apart, next to the true value for open-weight models. Every row of ``fit_context_tiers``
(all sources, variants, components and representative-context rules) is a download.
"""

from __future__ import annotations

import polars as pl

from econ.report.charts import pricing as charts
from econ.report.figures import Figure
from econ.report.html import Col, details, fmt_interval, fmt_num, table
from econ.report.page import Download, Headline, HeadlineRow, PageContent, Section, SiteContext, note
from econ.report.pages.common import SCHEMA_ERRORS, ensure_columns, guarded, guarded_headline, interval_text, sig3

NAME = "context-pricing"
TITLE = "Context pricing"
SUMMARY = (
    "Long-context price tiers read backwards: the implied KV-cache bytes per token, with intervals, next to the "
    "true value for open models."
)
REQUIRES = ("fit_context_tiers",)

LECTURE_GUIDES = pl.DataFrame(
    {
        "label": ["lecture f.1: 200k threshold ⇒ ≈ 1,667 B", "lecture f.2: 1 × 2 × 128 × 8 = 2,048 B"],
        "bytes_per_token": [1667.0, 2048.0],
    }
)
SOURCE = (
    "fit_context_tiers table of the pricing fits, from the prices table (first-party pages, LiteLLM / OpenRouter "
    "maps), the hardware table and the scenario"
)

FIRST_PARTY = """
select provider, model, variant, n_tiers, tier_thresholds_tokens, status,
       fit_interval_kind, fit_message, intercept_usd_per_mtok, slope_usd_per_mtok_per_mtok_context,
       slope_fit_low_usd_per_mtok_per_mtok_context, slope_fit_high_usd_per_mtok_per_mtok_context,
       uplift_per_mtok_context_frac, max_abs_residual_frac, crossover_threshold_tokens,
       kv_slope_bytes_per_token, kv_slope_fit_low_bytes_per_token, kv_slope_fit_high_bytes_per_token,
       kv_slope_scenario_low_bytes_per_token, kv_slope_scenario_high_bytes_per_token,
       kv_crossover_bytes_per_token, kv_crossover_scenario_low_bytes_per_token,
       kv_crossover_scenario_high_bytes_per_token, kv_true_bytes_per_token, arch_model, params_active_used,
       params_active_source
from fit_context_tiers
where default_rule and not pooled and component = 'input' and source = 'hand' and variant = 'standard'
order by provider, model
"""

STEPS = """
select * from fit_context_tier_steps order by provider, model, kind, context_tokens
"""

KV = """
with rows as (
    select source || ' · ' || provider || ' · ' || model as label, *
    from fit_context_tiers
    where default_rule and not pooled and component = 'input' and variant = 'standard'
      and (source = 'hand' or kv_true_bytes_per_token is not null)
)
select label, 'slope' as reading, kv_slope_bytes_per_token as bytes_per_token,
       kv_slope_fit_low_bytes_per_token as fit_low, kv_slope_fit_high_bytes_per_token as fit_high,
       kv_slope_scenario_low_bytes_per_token as scenario_low, kv_slope_scenario_high_bytes_per_token as scenario_high
from rows
union all
select label, 'crossover', kv_crossover_bytes_per_token, null, null, kv_crossover_scenario_low_bytes_per_token,
       kv_crossover_scenario_high_bytes_per_token
from rows
union all
select label, 'architecture (true)', kv_true_bytes_per_token, null, null, null, null
from rows where kv_true_bytes_per_token is not null
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
       frontier_active_params, scenario_interval
from fit_context_tiers where chip is not null limit 1
"""

HEADLINE = """
select provider, count(*) as models,
       median(kv_crossover_bytes_per_token) as crossover, median(kv_crossover_scenario_low_bytes_per_token) as low,
       median(kv_crossover_scenario_high_bytes_per_token) as high, median(kv_slope_bytes_per_token) as slope,
       min(kv_slope_bytes_per_token) as slope_min, max(kv_slope_bytes_per_token) as slope_max,
       string_agg(distinct crossover_threshold_tokens::bigint::varchar, ', ') as thresholds
from (select * from fit_context_tiers
      where default_rule and not pooled and component = 'input' and source = 'hand' and variant = 'standard')
group by provider order by provider
"""


def render(ctx: SiteContext) -> PageContent:
    try:
        assumptions = ctx.query(ASSUMPTIONS)
    except SCHEMA_ERRORS:  # only the captions use it
        assumptions = pl.DataFrame()
    sections = [
        guarded("Prices against context, with the fitted cost line", lambda: _tiers(ctx, assumptions)),
        guarded("Implied KV bytes per token", lambda: _kv(ctx, assumptions)),
        guarded("One slope per provider", lambda: _pooled(ctx)),
    ]
    return PageContent(
        title=TITLE,
        lead=(
            "Providers charge more per token once a prompt passes a threshold. Read backwards (lecture f.1), the "
            "extra price per token of context is the cost of holding and reading its KV cache, so the schedule "
            "implies the KV bytes per token of a closed model — which the open models let us check."
        ),
        sections=sections,
        headlines=guarded_headline(lambda: _headline(ctx)),
    )


def _assumption_text(assumptions: pl.DataFrame) -> str:
    if assumptions.is_empty():
        return ""
    a = assumptions.row(0, named=True)
    return (
        f"Assumed: {a['chip']} at {a['number_format']} (KV at {a['kv_cache_format']}), "
        f"{fmt_num(a['usd_per_chip_hour'])} USD/chip-hour, gross margin {fmt_num(a['gross_margin_frac'])}, decode "
        f"mbu {fmt_num(a['decode_mbu_frac'])}, closed models' N_act {fmt_num(a['frontier_active_params'], sig=3)}. "
        f"Scenario interval: {a['scenario_interval']}."
    )


def _tiers(ctx: SiteContext, assumptions: pl.DataFrame) -> Section:
    steps = ctx.query(STEPS) if ctx.has("price_current") else pl.DataFrame()
    first_party = ctx.query(FIRST_PARTY)
    blocks = []
    if steps.height:
        blocks.append(
            Figure(
                "tier-prices",
                charts.tier_prices(steps),
                steps,
                caption="Each first-party schedule with more than one context tier (standard variant, input price): "
                "steps are the published prices (a tier bills the whole request once the prompt passes its "
                "threshold), dashed lines the least-squares line through each tier's midpoint context.",
                formula="c(L) = a + k·L fitted at each tier's midpoint context; "
                f"{ctx.cite('econ.fits.context_tiers.kv_bytes_at_crossover')}",
                source=SOURCE,
            )
        )
    else:
        blocks.append(note("No first-party price schedule has more than one context tier.", kind="pending"))
    if first_party.height:
        shown = first_party.with_columns(
            interval_text("kv_slope_fit_low_bytes_per_token", "kv_slope_fit_high_bytes_per_token").alias("slope_fit"),
            interval_text("kv_slope_scenario_low_bytes_per_token", "kv_slope_scenario_high_bytes_per_token").alias(
                "slope_scenario"
            ),
            interval_text(
                "kv_crossover_scenario_low_bytes_per_token", "kv_crossover_scenario_high_bytes_per_token"
            ).alias("crossover_scenario"),
        )
        blocks.append(
            table(
                shown,
                [
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("n_tiers", "Tiers", kind="num"),
                    Col("tier_thresholds_tokens", "Thresholds (tokens)"),
                    Col("status", "Fit status"),
                    Col("intercept_usd_per_mtok", "a (USD/MTok)", kind="num", fmt=sig3),
                    Col(
                        "slope_usd_per_mtok_per_mtok_context", "k (USD/MTok per MTok of context)", kind="num", fmt=sig3
                    ),
                    Col("kv_slope_bytes_per_token", "KV, slope reading (bytes/token)", kind="num", fmt=sig3),
                    Col("slope_fit", "Fit interval"),
                    Col("slope_scenario", "Scenario interval"),
                    Col("kv_crossover_bytes_per_token", "KV, crossover reading (bytes/token)", kind="num", fmt=sig3),
                    Col("crossover_scenario", "Scenario interval"),
                    Col("kv_true_bytes_per_token", "True, open models (bytes/token)", kind="num", fmt=sig3),
                ],
                caption="First-party tiered schedules (standard variant, input price, midpoint rule). A two-tier "
                "schedule "
                "is fitted exactly, so its fit interval is not identified; the scenario interval varies the "
                "assumptions",
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


def _kv(ctx: SiteContext, assumptions: pl.DataFrame) -> Section:
    frame = ctx.query(KV)
    if frame.filter(pl.col("bytes_per_token").is_not_null()).is_empty():
        return Section("Implied KV bytes per token", [note("No schedule gives a KV reading.", kind="pending")])
    return Section(
        "Implied KV bytes per token",
        [
            Figure(
                "implied-kv",
                charts.implied_kv(frame, LECTURE_GUIDES),
                frame,
                caption="Two readings of each schedule: the slope (the price of one more context token, after "
                "margin, buys "
                "its KV read at the chip's bandwidth) and the crossover (the first threshold is where the KV read "
                "equals the weight read, L*). Thin bars: the scenario interval (assumption ranges, Monte Carlo); "
                "thick bars: the fit interval where the schedule identifies one. Black diamonds: the architecture's "
                "true KV bytes per token for open-weight models. Dashed: the lecture's worked figures. "
                + _assumption_text(assumptions),
                formula="slope: b_kv = k·(1 − margin)·W·mbu/p; crossover: "
                f"{ctx.cite('econ.fits.context_tiers.kv_bytes_at_crossover')}; true: "
                f"{ctx.cite('econ.physics.kv_cache.kv_bytes_per_token')}",
                source=SOURCE + "; true values from the models table (config.json)",
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


def _thresholds(text: str | None) -> str:
    """``"256000, 32000"`` as ``"first thresholds 32,000 and 256,000"``."""
    values = sorted(int(v) for v in (text or "").split(",") if v.strip())
    return ("first thresholds " if len(values) > 1 else "first threshold ") + " and ".join(f"{v:,}" for v in values)


def _headline(ctx: SiteContext) -> Headline | None:
    frame = ctx.query(HEADLINE)
    rows = tuple(
        HeadlineRow(
            subject=r["provider"],
            value=fmt_num(r["crossover"], sig=3),
            interval=fmt_interval(r["low"], r["high"]),
            note=f"{_thresholds(r['thresholds'])} tokens; slope reading {fmt_num(r['slope'], sig=3)} "
            f"(median of {r['models']}, "
            f"{fmt_interval(r['slope_min'], r['slope_max']) or fmt_num(r['slope_min'], sig=3)})",
        )
        for r in frame.iter_rows(named=True)
        if r["crossover"] is not None
    )
    if not rows:
        return None
    return Headline(
        "kv_bytes_per_token",
        "Implied KV bytes per token, per provider (crossover reading)",
        "bytes/token",
        rows,
        interval_kind="scenario interval (Monte Carlo over the scenario's assumption ranges), median over the "
        "provider's first-party tiered models; the note gives the slope reading, which disagrees",
        formula=ctx.cite("econ.fits.context_tiers.kv_bytes_at_crossover"),
        source="fit_context_tiers table (first-party standard input prices)",
        page=NAME,
    )
