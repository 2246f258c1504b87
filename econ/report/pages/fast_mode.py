"""Fast-mode page: price and speed multiples of fast and priority variants and what they allow (lecture a.5).

On one replica, a fast variant that costs m times as much per token and runs s times faster
must serve a batch m·s times smaller (the chip-seconds per token grow by m, the step time
shrinks by s). The deployment model says whether a smaller batch, more chips per replica or
speculative decoding can be s times faster for at most m times the cost.
"""

from __future__ import annotations

import polars as pl

from econ.report import inference_findings
from econ.report.charts import fast_mode as charts
from econ.report.figures import Figure
from econ.report.html import Col, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import guarded, interval_text, sig3

NAME = "fast-mode"
TITLE = "Fast mode"
SUMMARY = "Price and speed multiples of fast and priority variants, and which explanations they allow."
REQUIRES = ("fit_fast_mode",)

FAST = """
select source, provider, model, variant, tier_min_prompt_tokens, status, input_usd_per_mtok, output_usd_per_mtok,
       standard_input_usd_per_mtok, standard_output_usd_per_mtok, output_price_ratio, input_price_ratio, speed_ratio,
       batch_ratio, context_used_tokens, smaller_batch_allowed_frac, more_chips_allowed_frac,
       speculation_allowed_frac, any_combination_allowed_frac, any_combination_too_dear_frac,
       any_combination_too_cheap_frac, implied_markup_ratio, implied_markup_low_ratio, implied_markup_high_ratio,
       reference_models, explanations, arch_model, chip, gross_margin_frac,
       number_format, usd_per_chip_hour, user_speed_target_tokens_per_s, scenario_interval
from fit_fast_mode order by source, provider, model, variant, tier_min_prompt_tokens
"""


def render(ctx: SiteContext) -> PageContent:
    frame = pl.DataFrame()

    def multiples() -> Section:
        nonlocal frame
        frame = ctx.query(FAST)
        return _multiples(ctx, frame)

    sections = [guarded("Price multiple × speed multiple", multiples)]
    sections.append(
        guarded("What the multiples allow", lambda: _explanations(ctx, frame))
        if frame.height
        else Section("What the multiples allow", [note("No fast variant to read.", kind="pending")])
    )
    return PageContent(
        title=TITLE,
        lead=(
            "Some providers sell the same model faster at a higher price. The lecture's identity (a.5): on the same "
            "replica, price multiple × speed multiple = how many times smaller the fast batch is. A fast replica may "
            "also use more chips or speculative decoding; the deployment model says which of these explanations "
            "the price multiple explains at the stated margin range, which it excludes on either side, and the "
            "markup the fast mode carries over standard."
        ),
        sections=sections,
        findings=inference_findings.fast_mode(ctx),
    )


def _multiples(ctx: SiteContext, frame: pl.DataFrame) -> Section:
    blocks = []
    known = frame.filter(
        pl.col("speed_ratio").is_not_null()
        & pl.col("output_price_ratio").is_not_null()
        & (pl.col("speed_ratio") > 0)
        & (pl.col("output_price_ratio") > 0)
    )
    if known.height:
        guides = ctx.query("select * from fit_fast_mode_guides order by batch_ratio, speed_ratio")
        chart_rows = known.select(
            "provider", "model", "tier_min_prompt_tokens", "speed_ratio", "output_price_ratio", "batch_ratio"
        )
        blocks.append(
            Figure(
                "fast-multiples",
                charts.fast_multiples(chart_rows, guides),
                chart_rows,
                caption="Each fast variant with a published speed multiple: its output price over the standard price "
                "at "
                "the same context tier (m) against its speed over standard (s). Dashed lines: constant m·s, the "
                "factor by which the fast batch must be smaller on the same replica (Claude Opus 4.6: 6 × 2.5 = 15).",
                formula=ctx.cite("econ.physics.fast_mode.batch_ratio"),
                source="fit_fast_mode table of the pricing fits (prices table: first-party pages and price maps; speed "
                "multiples as published)",
            )
        )
    else:
        blocks.append(note("No fast variant has both a price and a published speed multiple.", kind="pending"))
    shown = frame
    blocks.append(
        table(
            shown,
            [
                Col("source", "Source"),
                Col("provider", "Provider"),
                Col("model", "Model"),
                Col("variant", "Variant"),
                Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
                Col("output_usd_per_mtok", "Output (USD/MTok)", kind="num"),
                Col("standard_output_usd_per_mtok", "Standard output (USD/MTok)", kind="num"),
                Col("output_price_ratio", "m (× standard)", kind="num", fmt=sig3),
                Col("input_price_ratio", "Input multiple (× standard)", kind="num", fmt=sig3),
                Col("speed_ratio", "s (× standard)", kind="num", fmt=sig3),
                Col("batch_ratio", "m·s = B₀/B₁ (ratio)", kind="num", fmt=sig3),
                Col("status", "Status"),
            ],
            caption="Every fast and priority variant; rows without a published speed multiple cannot be read",
            id="fast-mode",
        )
    )
    if ctx.has("fast_mode_identity"):
        blocks.append(
            Download(
                "fast-mode-identity",
                ctx.query("select * from fast_mode_identity order by all"),
                "The identity m·s for every current fast variant (serving analysis)",
            )
        )
    return Section("Price multiple × speed multiple", blocks)


def _explanations(ctx: SiteContext, frame: pl.DataFrame) -> Section:
    read = frame.filter(pl.col("status") == "ok")
    blocks = []
    if not read.height:
        blocks.append(note("No fast variant with a published speed multiple could be read.", kind="pending"))
    else:
        a = read.row(0, named=True)
        shown = read.with_columns(
            pl.when(pl.col("arch_model").is_null())
            .then(pl.lit("every deployed open model"))
            .otherwise(pl.col("arch_model"))
            .alias("against"),
            interval_text("implied_markup_low_ratio", "implied_markup_high_ratio").alias("markup_range"),
        )
        blocks.append(
            table(
                shown,
                [
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
                    Col("output_price_ratio", "m (× standard)", kind="num", fmt=sig3),
                    Col("speed_ratio", "s (× standard)", kind="num", fmt=sig3),
                    Col("context_used_tokens", "Decode context (tokens)", kind="num", fmt=sig3),
                    Col("against", "Read against"),
                    Col("implied_markup_ratio", "Implied markup over standard (ratio)", kind="num", fmt=sig3),
                    Col("markup_range", "Over the architectures"),
                    Col("explanations", "Explained on (reference architectures), and excluded on either side"),
                ],
                caption="An explanation is explained on a reference architecture when the deployment model's cheapest "
                "point at least s times faster per user than the baseline (the cheapest point without speculation "
                f"meeting {fmt_num(a['user_speed_target_tokens_per_s'])} tokens/s per user) needs a cost multiple "
                "the price multiple m explains with both modes' gross margins anywhere in the scenario's range; it "
                "is excluded as too dear (no margin pays for it) or too cheap (the price multiple exceeds what any "
                "margin explains: the fast mode carries a markup of its own). Implied markup: m over the cost "
                "multiple of the cheapest way to be that fast. Assumed: {a['chip']} at {a['number_format']}, "
                f"{fmt_num(a['usd_per_chip_hour'])} USD/chip-hour. A closed model has no architecture of its own: "
                "the count says on how many open architectures the published multiples fit each explanation. "
                f"Scenario: {a['scenario_interval']}.",
                id="fast-explanations",
            )
        )
    if ctx.has("fit_fast_mode_explanations"):
        blocks.append(
            Download(
                "fit-fast-mode-explanations",
                ctx.query("select * from fit_fast_mode_explanations order by all"),
                "Per variant, reference architecture and explanation: the cost multiple needed and whether m covers it",
            )
        )
    blocks.append(Download("fit-fast-mode", frame, "Every fast and priority variant with what its multiples allow"))
    return Section("What the multiples allow", blocks)
