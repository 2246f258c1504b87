"""Input/output & cache page: output/input price ratios and the decode batch they imply (lecture f.3) and the
open-weight market regression; its section on prompt-cache prices against memory-tier hold costs and drain times
(g.1–g.4) is in :mod:`econ.report.pages.io_cache_tiers`.
"""

from __future__ import annotations

import polars as pl

from econ.report import inference_findings
from econ.report.charts import fold_series
from econ.report.charts import pricing as charts
from econ.report.figures import Figure
from econ.report.html import Col, details, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages import io_cache_tiers
from econ.report.pages.common import ensure_columns, guarded, interval_text, sig3, status_text

NAME = "io-cache"
TITLE = "Input/output & cache"
SUMMARY = (
    "Output/input price ratios and the implied decode batch, the open-weight market regression; prompt-cache "
    "prices against memory-tier hold costs and drain times."
)
REQUIRES = ("fit_io_prices", "fit_cache_tiers")

IO_FIRST_PARTY = """
select provider, model, variant, input_usd_per_mtok, output_usd_per_mtok,
       output_over_input_ratio, regime, critical_context_source, critical_context_tokens, context_over_critical_ratio,
       batch_over_balance_ratio, batch_over_balance_scenario_low_ratio, batch_over_balance_scenario_high_ratio,
       implied_decode_mbu_frac, implied_decode_mbu_check, predicted_output_over_input_ratio, lecture_f3_check,
       implied_decode_batch_seqs, implied_decode_batch_status, implied_decode_batch_check,
       prefill_flop_per_input_token, prefill_flop_published_per_input_token, prefill_flop_validated_low_per_input_token,
       prefill_flop_validated_high_per_input_token, true_prefill_flop_per_input_token
from fit_io_prices where source = 'hand' and variant = 'standard'
order by provider, model
"""

IO_SUMMARY = """
select source, regime, lecture_f3_check, count(*) as price_rows,
       median(output_over_input_ratio) as median_ratio, median(batch_over_balance_ratio) as median_batch_ratio
from fit_io_prices group by all order by all
"""

IO_ASSUMPTIONS = """
select chip, number_format, kv_cache_format, decode_context_tokens, prompt_cache_hit_frac, decode_mbu_frac,
       prefill_mfu_frac, batch_multiple_over_balance_ratio, scenario_interval
from fit_io_prices where chip is not null limit 1
"""

MARKET = """
select arch_model, component, count(*) as providers, any_value(predicted_usd_per_mtok) as predicted_usd_per_mtok,
       median(observed_usd_per_mtok) as observed_median_usd_per_mtok,
       min(observed_usd_per_mtok) as observed_low_usd_per_mtok, max(observed_usd_per_mtok) as observed_high_usd_per_mtok
from fit_io_market_residuals where observed_usd_per_mtok > 0 and predicted_usd_per_mtok > 0
group by arch_model, component order by arch_model, component
"""


def render(ctx: SiteContext) -> PageContent:
    sections = [guarded("Output vs input price and the decode batch", lambda: _io(ctx))]
    if ctx.has("fit_io_market"):
        sections.append(guarded("The open-weight market regression", lambda: _market(ctx)))
    sections.append(guarded("Prompt-cache prices and memory tiers", lambda: io_cache_tiers.prompt_cache(ctx)))
    return PageContent(
        title=TITLE,
        lead=(
            "Two more readings of the price list. Output tokens cost more than input tokens because decode is "
            "memory-bound while prefill is compute-bound (lecture f.3), so the ratio says how large a decode batch "
            "the provider runs. Prompt-cache prices say how long a provider can afford to keep a prompt's KV "
            "cache, and so which memory tier it sits in (section g)."
        ),
        sections=sections,
        findings=inference_findings.io_cache(ctx),
    )


def _io(ctx: SiteContext) -> Section:
    frame = ctx.query(IO_FIRST_PARTY)
    assumptions = ctx.query(IO_ASSUMPTIONS)
    blocks = []
    charted = fold_series(
        frame.filter(pl.col("batch_over_balance_ratio").is_not_null() & (pl.col("output_over_input_ratio") > 0))
    )
    if charted.height:
        a = assumptions.row(0, named=True) if assumptions.height else {}
        m = a.get("batch_multiple_over_balance_ratio")
        assumed = (
            f" Assumed: {a['chip']} at {a['number_format']}, the fleet's mean decode context "
            f"{fmt_num(a['decode_context_tokens'])} tokens, cached share {fmt_num(a['prompt_cache_hit_frac'])}, "
            f"prefill mfu {fmt_num(a['prefill_mfu_frac'])}, decode mbu {fmt_num(a['decode_mbu_frac'])}."
            if a
            else ""
        )
        guides = pl.DataFrame(
            {
                "label": ["B = B*₀"] + ([f"scenario's batch m = {fmt_num(m)}"] if m else []),
                "batch_over_balance_ratio": [1.0] + ([m] if m else []),
            }
        )
        blocks.append(
            Figure(
                "io-batch",
                charts.io_batch(charted, guides),
                charted,
                caption="First-party standard prices whose decode is memory-bound under the roofline: the batch, "
                "relative to B*₀, at which decode costs ρ times prefill per token (bars: scenario interval). A "
                "closed model has no L* (its tier threshold is not the crossover), so its KV term is dropped and "
                "the batch is a lower bound; points below the scenario's batch are the lecture's f.3 "
                f"inconsistency.{assumed}",
                formula=f"{ctx.cite('econ.fits.io_prices.price_ratio_roofline')}; B/B*₀ = 1/(ρ·mbu/mfu − L/L*)",
                source="fit_io_prices table of the pricing fits (first-party prices; L* from the architecture)",
            )
        )
    if frame.height:
        prefill = (
            ctx.query("select status from inference_quantities where quantity = 'prefill_flop_per_input_token'")
            if ctx.has("inference_quantities")
            else pl.DataFrame({"status": ["not validated"]})
        )
        prefill_status = prefill["status"][0] if prefill.height else "not validated"
        shown = frame.with_columns(
            interval_text("batch_over_balance_scenario_low_ratio", "batch_over_balance_scenario_high_ratio").alias(
                "batch_interval"
            ),
            status_text(
                "prefill_flop_published_per_input_token",
                "prefill_flop_validated_low_per_input_token",
                "prefill_flop_validated_high_per_input_token",
                pl.lit(prefill_status),
            ).alias("prefill_reading"),
        )
        blocks.append(
            details(
                f"Every first-party standard price ({frame.height})",
                table(
                    shown,
                    [
                        Col("provider", "Provider"),
                        Col("model", "Model"),
                        Col("input_usd_per_mtok", "Input (USD/MTok)", kind="num"),
                        Col("output_usd_per_mtok", "Output (USD/MTok)", kind="num"),
                        Col("output_over_input_ratio", "ρ (ratio)", kind="num", fmt=sig3),
                        Col("regime", "Regime"),
                        Col("critical_context_tokens", "L* (tokens)", kind="num", fmt=sig3),
                        Col("critical_context_source", "L* from"),
                        Col("batch_over_balance_ratio", "B/B*₀ (ratio)", kind="num", fmt=sig3),
                        Col("batch_interval", "Scenario interval"),
                        Col("implied_decode_mbu_frac", "Implied decode mbu (frac)", kind="num", fmt=sig3),
                        Col("implied_decode_mbu_check", "Mbu check", wrap=True),
                        Col("predicted_output_over_input_ratio", "Roofline's ρ (ratio)", kind="num", fmt=sig3),
                        Col("lecture_f3_check", "Lecture f.3 check", wrap=True),
                        Col("implied_decode_batch_seqs", "Open models: decode batch (sequences)", kind="num", fmt=sig3),
                        Col("implied_decode_batch_check", "Against measured systems", wrap=True),
                        Col("prefill_reading", "Input price as prefill FLOP/token (validated interval)"),
                        Col("true_prefill_flop_per_input_token", "True (FLOP/token)", kind="num", fmt=sig3),
                    ],
                    caption="Output/input ratio and what it implies, first-party standard prices; open models' "
                    "decode batch from the deployment model at the traffic mix, checked against DeepSeek's measured "
                    "decode batch; the input price read as prefill FLOPs per token with the interval validated on "
                    "open models (inference_quantities)",
                    id="io-prices",
                ),
            )
        )
    summary = ctx.query(IO_SUMMARY)
    blocks.append(
        table(
            summary,
            [
                Col("source", "Source"),
                Col("regime", "Regime"),
                Col("lecture_f3_check", "Lecture f.3 check", wrap=True),
                Col("price_rows", "Prices (rows)", kind="num"),
                Col("median_ratio", "Median ρ (ratio)", kind="num", fmt=sig3),
                Col("median_batch_ratio", "Median B/B*₀ (ratio)", kind="num", fmt=sig3),
            ],
            caption="Every priced model (one price source per model), by regime",
            id="io-summary",
        )
    )
    blocks.append(
        Download(
            "fit-io-prices",
            ctx.query("select * from fit_io_prices order by all"),
            "Every priced model: ratio, regime, implied batch and mbu",
        )
    )
    return Section("Output vs input price and the decode batch", blocks)


def _market(ctx: SiteContext) -> Section:
    estimates = ensure_columns(
        ctx.query("select * from fit_io_market order by quantity"),
        (
            "unit",
            "estimate",
            "fit_low",
            "fit_high",
            "scenario_low",
            "scenario_high",
            "status",
            "status_reason",
            "check",
            "combined_low",
            "combined_high",
            "n_price_rows",
            "n_models",
            "n_providers",
            "meaning",
        ),
    )
    blocks = []
    frame = ctx.query(MARKET) if ctx.has("fit_io_market_residuals") else pl.DataFrame()
    if frame.height:
        blocks.append(
            Figure(
                "io-market",
                charts.market(frame),
                frame,
                caption="Every provider's standard price of an open-weight model with a known architecture, median and "
                "range per model, against the regression's price: input pays for FLOPs (weights and attention at "
                "the fleet's prompt mix, cached share removed), output for FLOPs plus the bytes of weights and KV "
                "read per token at the mix's decode context (deployment model). Points on the dashed line are "
                "priced as the regression predicts.",
                formula=ctx.cite("econ.fits.io_market.fit_market"),
                source="fit_io_market and fit_io_market_residuals tables (LiteLLM and OpenRouter price maps matched to "
                "the models table)",
            )
        )
    if estimates.height:
        shown = estimates.with_columns(
            status_text("estimate", "combined_low", "combined_high", "status").alias("shown"),
            interval_text("fit_low", "fit_high").alias("fit_interval"),
            interval_text("scenario_low", "scenario_high").alias("scenario"),
        )
        reasons = estimates.filter(pl.col("status") != "ok")["status_reason"].drop_nulls().unique().to_list()
        if reasons:
            blocks.append(note("The regression is not internally consistent: " + "; ".join(reasons) + "."))
        blocks.append(
            table(
                shown,
                [
                    Col("quantity", "Quantity"),
                    Col("unit", "Unit"),
                    Col("shown", "Estimate (fit and scenario combined) [status if not ok]"),
                    Col("fit_interval", "Fit interval"),
                    Col("scenario", "Scenario interval"),
                    Col("status", "Status"),
                    Col("check", "Check", wrap=True),
                    Col("n_price_rows", "Price rows", kind="num"),
                    Col("n_models", "Models", kind="num"),
                    Col("n_providers", "Providers", kind="num"),
                    Col("meaning", "Meaning", wrap=True),
                ],
                caption="What the regression implies (intervals at the level in interval_level_frac, 90%)",
                id="io-market",
            )
        )
    return Section(
        "The open-weight market regression", blocks or [note("No regression in this database.", kind="pending")]
    )
