"""Input/output & cache page: output/input price ratios and the decode batch they imply (lecture f.3), the
open-weight market regression, and prompt-cache prices against memory-tier hold costs and drain times (g.1–g.4).
"""

from __future__ import annotations

import polars as pl

from econ.report import inference_findings
from econ.report.charts import cache as cache_charts
from econ.report.charts import fold_series
from econ.report.charts import pricing as charts
from econ.report.figures import Figure
from econ.report.html import Col, details, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import ensure_columns, guarded, interval_text, pick, sig3, status_text

NAME = "io-cache"
TITLE = "Input/output & cache"
SUMMARY = (
    "Output/input price ratios and the implied decode batch, the open-weight market regression; prompt-cache "
    "prices against memory-tier hold costs and drain times."
)
REQUIRES = ("fit_io_prices", "fit_cache_tiers")

CACHE_ITEMS = {
    "write_5m": "5-minute cache write",
    "write_1h": "1-hour cache write",
    "write_12h": "12-hour cache write",
    "storage_1h": "storage, per hour",
}
TIER_MODELS = ("DeepSeek-V3", "Llama-3.1-70B", "gpt-oss-120b")
CACHE_DURATIONS_S = {"5 min": 300.0, "1 hour": 3600.0, "12 hours": 43200.0}

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

CACHE = """
select source, provider, model, variant, durations_sold, premium_fit_status,
       write_usd_per_mtok, hold_price_usd_per_mtok_hour, hold_price_low_usd_per_mtok_hour,
       hold_price_high_usd_per_mtok_hour, kv_method, kv_bytes_per_token_used, hold_cost_usd_per_gb_hour,
       hold_cost_low_usd_per_gb_hour, hold_cost_high_usd_per_gb_hour, consistent_tiers, identified_tier,
       tier_status, drain_time_tiers
from fit_cache_tiers
where source = 'hand' and variant = 'standard' and hold_cost_usd_per_gb_hour is not null
order by provider, model, kv_method
"""

CACHE_OUTCOMES = "select * from cache_tier_outcomes"

TIER_RATES = """
select tier, device, usd_per_hour / (capacity_bytes / 1e9) as usd_per_gb_hour, capacity_bytes / bandwidth_bytes_per_s
       as drain_time_s
from memory_tiers order by usd_per_gb_hour desc
"""

TIER_COSTS = """
select mechanism, device, hold_time_s, cost_usd_per_mtok, case when cheapest then 'cheapest' else '' end as cheapest,
       drain_time_s, retrieve_usd_per_mtok, hold_usd_per_mtok_s
from memory_tier_costs where model = ? order by mechanism, device, hold_time_s
"""


def render(ctx: SiteContext) -> PageContent:
    sections = [guarded("Output vs input price and the decode batch", lambda: _io(ctx))]
    if ctx.has("fit_io_market"):
        sections.append(guarded("The open-weight market regression", lambda: _market(ctx)))
    sections.append(guarded("Prompt-cache prices and memory tiers", lambda: _cache(ctx)))
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


def _cache(ctx: SiteContext) -> Section:
    blocks = []
    outcomes = ctx.query(CACHE_OUTCOMES)
    if outcomes.height:
        blocks.append(
            table(
                outcomes,
                [
                    Col("outcome", "Memory tier"),
                    Col("schedules", "Cache schedules", kind="num"),
                    Col("providers", "Providers", kind="num"),
                    Col("provider_list", "Who", wrap=True),
                ],
                caption="What the prices support, over every source's standard cache prices with a hold cost: a tier "
                "is identified only when exactly one memory tier's holding cost lies inside the hold price's "
                "interval; otherwise every tier that remains is listed",
                id="cache-outcomes",
            )
        )
    cache = ctx.query(CACHE)
    tiers = ctx.query(TIER_RATES) if ctx.has("memory_tiers") else pl.DataFrame()
    if cache.height and tiers.height:
        hold = cache.filter(pl.col("hold_cost_usd_per_gb_hour") > 0).select(
            pl.format("{} · {}", "provider", "model").alias("label"),
            "kv_method",
            "hold_cost_usd_per_gb_hour",
            "hold_cost_low_usd_per_gb_hour",
            "hold_cost_high_usd_per_gb_hour",
            pl.coalesce("identified_tier", "tier_status").alias("tier"),
        )
        blocks.append(
            Figure(
                "cache-hold",
                cache_charts.cache_hold(hold, tiers.select("tier", "device", "usd_per_gb_hour")),
                hold,
                caption="What each first-party cache price charges to hold a GB of KV cache for an hour after the "
                "scenario's margin (hold of premium(T) = write + hold·T over the durations sold, per GB of the "
                "model's KV: architecture for open models, the validated long-context reading for closed ones; "
                "bars: its interval). Dashed: what holding a GB for an hour costs in each memory tier (device "
                "price per hour / capacity). A tier is named only where exactly one lies inside a bar.",
                formula=ctx.cite("econ.fits.cache_tiers.compare_tiers"),
                source="fit_cache_tiers table of the pricing fits (first-party cache prices) and memory_tiers table "
                "(device prices and capacities, linked on the Sources page)",
            )
        )
    if cache.height:
        shown = cache.with_columns(
            status_text(
                "hold_price_usd_per_mtok_hour",
                "hold_price_low_usd_per_mtok_hour",
                "hold_price_high_usd_per_mtok_hour",
                pl.when(pl.col("premium_fit_status").is_in(["ok", "exact"]))
                .then(pl.lit("ok"))
                .otherwise(pl.col("premium_fit_status")),
            ).alias("hold_price"),
            status_text(
                "hold_cost_usd_per_gb_hour",
                "hold_cost_low_usd_per_gb_hour",
                "hold_cost_high_usd_per_gb_hour",
                pl.lit("ok"),
            ).alias("hold_cost"),
            pl.coalesce("identified_tier", pl.col("tier_status")).alias("tier"),
        )
        blocks.append(
            table(
                shown,
                [
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("durations_sold", "Durations sold"),
                    Col("premium_fit_status", "premium(T) fit"),
                    Col("hold_price", "Hold price (USD/MTok-hour, interval) [status if not ok]"),
                    Col("kv_method", "KV bytes from"),
                    Col("kv_bytes_per_token_used", "KV (bytes/token)", kind="num", fmt=sig3),
                    Col("hold_cost", "Hold after margin (USD/GB-hour, interval)"),
                    Col("consistent_tiers", "Tiers consistent"),
                    Col("tier", "Tier (identified, or the status)", wrap=True),
                ],
                caption="First-party standard cache prices: premium(T) = write + hold·T fitted over the durations "
                "the provider sells (storage per hour is hold itself; one duration only bounds it), hold turned into "
                "USD per GB-hour with the model's KV bytes (architecture for open models, the validated long-context "
                "reading for closed ones) and compared with each memory tier's holding cost",
                id="cache-tiers",
            )
        )
    else:
        blocks.append(note("No first-party cache price gives a hold cost.", kind="pending"))
    model = _tier_model(ctx)
    if model:
        costs = ctx.query(TIER_COSTS, [model])
        marks = pl.concat(
            [
                costs.filter(pl.col("mechanism") != "recompute")
                .group_by("mechanism", "device")
                .agg(pl.col("drain_time_s").first())
                .sort("drain_time_s")
                .select(
                    pl.format("drain time of {}", pl.col("mechanism")).alias("label"),
                    pl.col("drain_time_s").alias("hold_time_s"),
                    pl.lit("drain time").alias("kind"),
                ),
                pl.DataFrame(
                    {
                        "label": [f"cache duration {k}" for k in CACHE_DURATIONS_S],
                        "hold_time_s": list(CACHE_DURATIONS_S.values()),
                        "kind": ["cache duration"] * 3,
                    }
                ),
            ]
        )
        blocks.append(
            Figure(
                "tier-costs",
                cache_charts.tier_costs(
                    costs.drop("drain_time_s", "retrieve_usd_per_mtok", "hold_usd_per_mtok_s"), marks, model=model
                ),
                costs,
                caption=f"For {model}: the cost of keeping one token's KV cache for a time T and reading it back "
                "once, by recomputing it or holding it in each memory tier (black points: the cheapest at each T). "
                "Dotted lines: each tier's drain time C/W, where its hold and retrieve costs are equal (the lecture's "
                "rule of thumb for picking the tier); dashed: the cache durations providers sell.",
                formula=f"{ctx.cite('econ.physics.memory_tiers.tier_cost_usd_per_token')}; "
                f"{ctx.cite('econ.physics.hardware.drain_time_s')}",
                source="memory_tier_costs table of the serving analysis, from memory_tiers (device prices) and the "
                "models table",
            )
        )
    if ctx.has("fit_cache_tiers_by_memory_tier"):
        blocks.append(
            Download(
                "cache-by-memory-tier",
                ctx.query("select * from fit_cache_tiers_by_memory_tier order by all"),
                "Every cache price against every memory tier",
            )
        )
    blocks.append(
        Download(
            "fit-cache-tiers",
            ctx.query("select * from fit_cache_tiers order by all"),
            "Every cache price read backwards: premium fit, hold cost, consistent and identified tiers",
        )
    )
    return Section("Prompt-cache prices and memory tiers", blocks)


def _tier_model(ctx: SiteContext) -> str | None:
    if not ctx.has("memory_tier_costs"):
        return None
    models = ctx.query("select distinct model from memory_tier_costs")["model"].to_list()
    chosen = pick(models, TIER_MODELS, 1)
    return chosen[0] if chosen else None
