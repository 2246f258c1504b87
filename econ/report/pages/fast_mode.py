"""Fast-mode page: price and speed multiples of fast and priority variants and the batches they imply (lecture a.5).

On one replica, a fast variant that costs m times as much per token and runs s times faster
must serve a batch m·s times smaller (the chip-seconds per token grow by m, the step time
shrinks by s). The roofline then places the baseline and fast batches relative to B*₀.
"""

from __future__ import annotations

import polars as pl

from econ.report.charts import pricing as charts
from econ.report.figures import Figure
from econ.report.html import Col, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import guarded, interval_text, sig3

NAME = "fast-mode"
TITLE = "Fast mode"
SUMMARY = "Price and speed multiples of fast and priority variants, and the batches they imply."
REQUIRES = ("fit_fast_mode",)

FAST = """
select source, provider, model, variant, tier_min_prompt_tokens, status, input_usd_per_mtok, output_usd_per_mtok,
       standard_input_usd_per_mtok, standard_output_usd_per_mtok, output_price_ratio, input_price_ratio, speed_ratio,
       batch_ratio, solved, critical_context_source, context_over_critical_ratio,
       baseline_batch_over_balance_ratio, baseline_batch_over_balance_scenario_low_ratio,
       baseline_batch_over_balance_scenario_high_ratio, fast_batch_over_balance_ratio,
       fast_batch_over_balance_scenario_low_ratio, fast_batch_over_balance_scenario_high_ratio,
       baseline_step_over_weight_read_ratio, fast_step_over_weight_read_ratio, balance_batch_seqs,
       baseline_batch_seqs, fast_batch_seqs, chip, number_format, context_tokens, usd_per_chip_hour, scenario_interval
from fit_fast_mode order by source, provider, model, variant, tier_min_prompt_tokens
"""

BATCHES = """
with solved as (
    select provider || ' · ' || model || case when tier_min_prompt_tokens > 0
           then ' · >' || (tier_min_prompt_tokens // 1000) || 'k' else '' end as label, *
    from fit_fast_mode where solved
)
select label, 'baseline' as batch, baseline_batch_over_balance_ratio as batch_over_balance_ratio,
       baseline_batch_over_balance_scenario_low_ratio as scenario_low,
       baseline_batch_over_balance_scenario_high_ratio as scenario_high
from solved
union all
select label, 'fast', fast_batch_over_balance_ratio, fast_batch_over_balance_scenario_low_ratio,
       fast_batch_over_balance_scenario_high_ratio
from solved
order by label, batch
"""


def render(ctx: SiteContext) -> PageContent:
    frame = pl.DataFrame()

    def multiples() -> Section:
        nonlocal frame
        frame = ctx.query(FAST)
        return _multiples(ctx, frame)

    sections = [guarded("Price multiple × speed multiple", multiples)]
    sections.append(
        guarded("The batches behind fast mode", lambda: _batches(ctx, frame))
        if frame.height
        else Section("The batches behind fast mode", [note("No fast variant to read.", kind="pending")])
    )
    return PageContent(
        title=TITLE,
        lead=(
            "Some providers sell the same model faster at a higher price. The lecture's identity (a.5): on the same "
            "replica, price multiple × speed multiple = how many times smaller the fast batch is; the roofline "
            "then says where both batches sit relative to the balance batch B*₀."
        ),
        sections=sections,
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
    shown = frame.with_columns(pl.col("solved").cast(pl.String).fill_null(""))
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


def _batches(ctx: SiteContext, frame: pl.DataFrame) -> Section:
    batches = ctx.query(BATCHES)
    blocks = []
    if batches.height:
        a = frame.filter(pl.col("solved").fill_null(False)).row(0, named=True)
        blocks.append(
            Figure(
                "fast-batches",
                charts.fast_batches(batches),
                batches,
                caption="The baseline batch whose step the fast variant speeds up by s when its batch is m·s times "
                "smaller, both relative to B*₀, from the roofline at the scenario context (bars: scenario "
                f"interval). Assumed: {a['chip']} at {a['number_format']}, context {fmt_num(a['context_tokens'])} "
                f"tokens, {fmt_num(a['usd_per_chip_hour'])} USD/chip-hour. Scenario interval: "
                f"{a['scenario_interval']}.",
                formula=f"{ctx.cite('econ.physics.fast_mode.batch_ratio')}; "
                f"{ctx.cite('econ.physics.roofline.step_bounds')}; B₁ = B₀/(m·s)",
                source="fit_fast_mode table of the pricing fits",
            )
        )
        solved = frame.filter(pl.col("solved").fill_null(False)).with_columns(
            interval_text(
                "baseline_batch_over_balance_scenario_low_ratio", "baseline_batch_over_balance_scenario_high_ratio"
            ).alias("baseline_interval"),
            interval_text(
                "fast_batch_over_balance_scenario_low_ratio", "fast_batch_over_balance_scenario_high_ratio"
            ).alias("fast_interval"),
        )
        blocks.append(
            table(
                solved,
                [
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
                    Col("batch_ratio", "m·s (ratio)", kind="num", fmt=sig3),
                    Col("baseline_batch_over_balance_ratio", "Baseline B₀/B*₀ (ratio)", kind="num", fmt=sig3),
                    Col("baseline_interval", "Scenario interval"),
                    Col("fast_batch_over_balance_ratio", "Fast B₁/B*₀ (ratio)", kind="num", fmt=sig3),
                    Col("fast_interval", "Scenario interval"),
                    Col("fast_step_over_weight_read_ratio", "Fast step / weight read (ratio)", kind="num", fmt=sig3),
                    Col("baseline_batch_seqs", "Baseline batch, open models (sequences)", kind="num", fmt=sig3),
                    Col("fast_batch_seqs", "Fast batch, open models (sequences)", kind="num", fmt=sig3),
                ],
                caption="Implied batches of every solved fast variant",
                id="fast-batches",
            )
        )
    else:
        blocks.append(
            note("The roofline solves no fast variant (it needs s > 1 and m > 1 within reach).", kind="pending")
        )
    blocks.append(Download("fit-fast-mode", frame, "Every fast and priority variant with its implied batches"))
    return Section("The batches behind fast mode", blocks)
