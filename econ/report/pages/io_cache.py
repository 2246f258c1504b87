"""Input/output & cache page: output/input price ratios and the decode batch they imply (lecture f.3), the
open-weight market regression, and prompt-cache prices against memory-tier hold costs and drain times (g.1–g.4).
"""

from __future__ import annotations

import polars as pl

from econ.report.charts import pricing as charts
from econ.report.figures import Figure
from econ.report.html import Col, details, fmt_num, table
from econ.report.page import Download, Headline, HeadlineRow, PageContent, Section, SiteContext, note
from econ.report.pages.common import ensure_columns, guarded, guarded_headline, interval_text, pick, sig3

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
       implied_decode_mbu_frac, implied_decode_mbu_check, predicted_output_over_input_ratio, lecture_f3_check
from fit_io_prices where source = 'hand' and variant = 'standard'
order by provider, model
"""

IO_SUMMARY = """
select source, regime, lecture_f3_check, count(*) as price_rows,
       median(output_over_input_ratio) as median_ratio, median(batch_over_balance_ratio) as median_batch_ratio
from fit_io_prices group by all order by all
"""

IO_ASSUMPTIONS = """
select chip, number_format, kv_cache_format, context_tokens, decode_mbu_frac, prefill_mfu_frac,
       batch_multiple_over_balance_ratio, scenario_interval
from fit_io_prices where chip is not null limit 1
"""

MARKET = """
select arch_model, component, count(*) as providers, any_value(predicted_usd_per_mtok) as predicted_usd_per_mtok,
       median(observed_usd_per_mtok) as observed_median_usd_per_mtok,
       min(observed_usd_per_mtok) as observed_low_usd_per_mtok, max(observed_usd_per_mtok) as observed_high_usd_per_mtok
from fit_io_market_residuals where observed_usd_per_mtok > 0 and predicted_usd_per_mtok > 0
group by arch_model, component order by arch_model, component
"""

HOLD = """
select provider || ' · ' || model as label, provider, model,
       cache_item, kv_method, hold_time_s, item_price_usd_per_mtok, hold_price_usd_per_mtok_hour,
       kv_bytes_per_token_used, hold_cost_usd_per_gb_hour, hold_cost_scenario_low_usd_per_gb_hour,
       hold_cost_scenario_high_usd_per_gb_hour, cheapest_tier, fastest_covered_tier, drain_time_tier,
       margin_over_cheapest_frac
from fit_cache_tiers
where source = 'hand' and variant = 'standard' and hold_cost_usd_per_gb_hour > 0
qualify row_number() over (partition by provider, model, cache_item
                           order by kv_method = 'architecture' desc, kv_method = 'crossover' desc, kv_method) = 1
order by provider, model, cache_item
"""

TIER_RATES = """
select tier, device, usd_per_hour / (capacity_bytes / 1e9) as usd_per_gb_hour, capacity_bytes / bandwidth_bytes_per_s
       as drain_time_s
from memory_tiers order by usd_per_gb_hour desc
"""

TIERS_BY_ITEM = """
select cache_item, count(*) as cache_prices,
       mode(cheapest_tier) as cheapest_tier, count(*) filter (where cheapest_tier = mode_cheapest) as cheapest_count,
       mode(fastest_covered_tier) as fastest_covered_tier,
       count(*) filter (where fastest_covered_tier = mode_covered) as covered_count,
       mode(drain_time_tier) as drain_time_tier, median(hold_time_s) as hold_time_s,
       median(margin_over_cheapest_frac) as median_margin_frac
from (
    select *, mode(cheapest_tier) over (partition by cache_item) as mode_cheapest,
           mode(fastest_covered_tier) over (partition by cache_item) as mode_covered
    from fit_cache_tiers
    where variant = 'standard' and cheapest_tier is not null
    qualify row_number() over (partition by source, provider, model, cache_item
                               order by kv_method = 'architecture' desc, kv_method = 'crossover' desc, kv_method) = 1
)
group by cache_item order by median(hold_time_s)
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
        headlines=guarded_headline(lambda: _headline(ctx)),
    )


def _io(ctx: SiteContext) -> Section:
    frame = ctx.query(IO_FIRST_PARTY)
    assumptions = ctx.query(IO_ASSUMPTIONS)
    blocks = []
    charted = frame.filter(pl.col("batch_over_balance_ratio").is_not_null() & (pl.col("output_over_input_ratio") > 0))
    if charted.height:
        a = assumptions.row(0, named=True) if assumptions.height else {}
        m = a.get("batch_multiple_over_balance_ratio")
        assumed = (
            f" Assumed: {a['chip']} at {a['number_format']}, context {fmt_num(a['context_tokens'])} tokens, "
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
                "relative "
                "to B*₀, at which decode costs ρ times prefill per token (bars: scenario interval). Points far "
                "below the scenario's batch are the lecture's f.3 inconsistency: ρ ≈ 5 with L* ≈ 200k needs a batch "
                f"below B*₀.{assumed}",
                formula=f"{ctx.cite('econ.fits.io_prices.price_ratio_roofline')}; B/B*₀ = 1/(ρ·mbu/mfu − L/L*)",
                source="fit_io_prices table of the pricing fits (first-party prices; L* from the architecture or the "
                "first "
                "tier threshold)",
            )
        )
    if frame.height:
        shown = frame.with_columns(
            interval_text("batch_over_balance_scenario_low_ratio", "batch_over_balance_scenario_high_ratio").alias(
                "batch_interval"
            )
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
                    ],
                    caption="Output/input ratio and what it implies, first-party standard prices",
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
                "range per model, against the regression's price: input pays for FLOPs, output for FLOPs plus "
                "the bytes of weights and KV read per token at the scenario's context. Points on the dashed line "
                "are priced as the regression predicts.",
                formula="input = c_flop·2·N_act; output = c_flop·2·N_act + c_byte·(N_tot·b_w/B_eff + L·b_kv), "
                f"weights 1/price (lecture f.3, a.2); {ctx.cite('econ.fits.io_prices.price_ratio_roofline')}",
                source="fit_io_market and fit_io_market_residuals tables (LiteLLM and OpenRouter price maps matched to "
                "the models table)",
            )
        )
    if estimates.height:
        shown = estimates.with_columns(
            interval_text("fit_low", "fit_high").alias("fit_interval"),
            interval_text("scenario_low", "scenario_high").alias("scenario"),
        )
        blocks.append(
            table(
                shown,
                [
                    Col("quantity", "Quantity"),
                    Col("unit", "Unit"),
                    Col("estimate", "Estimate", kind="num", fmt=sig3),
                    Col("fit_interval", "Fit interval"),
                    Col("scenario", "Scenario interval"),
                    Col("status", "Status"),
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
    hold = ctx.query(HOLD)
    tiers = ctx.query(TIER_RATES) if ctx.has("memory_tiers") else pl.DataFrame()
    if hold.height and tiers.height:
        blocks.append(
            Figure(
                "cache-hold",
                charts.cache_hold(hold, tiers.select("tier", "device", "usd_per_gb_hour")),
                hold,
                caption="What each first-party cache price charges to hold a GB of KV cache for an hour after the "
                "scenario's margin: a write premium (write − input) spread over the time it buys, or the storage "
                "price; KV bytes per token from the architecture for open models, else from the long-context "
                "crossover reading (bars: scenario interval). Dashed: what holding a GB for an hour costs in each "
                "memory tier (device price per hour / capacity).",
                formula="hold = (p_write − p_in)·(1 − margin)/T / b_kv; tier = p_device/C; "
                f"{ctx.cite('econ.physics.memory_tiers.tier_cost_usd_per_token')}",
                source="fit_cache_tiers table of the pricing fits (first-party cache prices) and memory_tiers table "
                "(device prices and capacities, linked on the Sources page)",
            )
        )
    by_item = ctx.query(TIERS_BY_ITEM)
    if by_item.height:
        blocks.append(
            table(
                by_item.with_columns(pl.col("cache_item").replace(CACHE_ITEMS).alias("item")),
                [
                    Col("item", "Cache price"),
                    Col("hold_time_s", "Hold time (s)", kind="num"),
                    Col("cache_prices", "Prices", kind="num"),
                    Col("cheapest_tier", "Cheapest tier (most common)"),
                    Col("cheapest_count", "of which", kind="num"),
                    Col("fastest_covered_tier", "Fastest tier the price covers"),
                    Col("covered_count", "of which", kind="num"),
                    Col("drain_time_tier", "Drain-time rule (g.4)"),
                    Col("median_margin_frac", "Median margin over cheapest (frac)", kind="num", fmt=sig3),
                ],
                caption="The memory tier behind each cache duration, over every source's standard cache prices",
                id="cache-tiers",
            )
        )
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
                charts.tier_costs(
                    costs.drop("drain_time_s", "retrieve_usd_per_mtok", "hold_usd_per_mtok_s"), marks, model=model
                ),
                costs,
                caption=f"For {model}: the cost of keeping one token's KV cache for a time T and reading it back "
                "once, by "
                "recomputing it or holding it in each memory tier (black points: the cheapest at each T). Dotted "
                "lines: each tier's drain time C/W, where its hold and retrieve costs are equal (the lecture's "
                "rule of thumb for picking the tier); dashed: the cache durations providers sell.",
                formula=f"{ctx.cite('econ.physics.memory_tiers.tier_cost_usd_per_token')}; "
                f"{ctx.cite('econ.physics.hardware.drain_time_s')}",
                source="memory_tier_costs table of the serving analysis, from memory_tiers (device prices) and the "
                "models "
                "table",
            )
        )
    if ctx.has("fit_cache_tiers_by_memory_tier"):
        blocks.append(
            Download(
                "cache-by-memory-tier",
                ctx.query("select * from fit_cache_tiers_by_memory_tier order by all"),
                "Every cache price against every memory tier and recompute",
            )
        )
    blocks.append(
        Download(
            "fit-cache-tiers",
            ctx.query("select * from fit_cache_tiers order by all"),
            "Every cache price read backwards: hold cost, cheapest and covered tiers, drain-time tier",
        )
    )
    return Section("Prompt-cache prices and memory tiers", blocks)


def _tier_model(ctx: SiteContext) -> str | None:
    if not ctx.has("memory_tier_costs"):
        return None
    models = ctx.query("select distinct model from memory_tier_costs")["model"].to_list()
    chosen = pick(models, TIER_MODELS, 1)
    return chosen[0] if chosen else None


def _headline(ctx: SiteContext) -> Headline | None:
    frame = ctx.query(TIERS_BY_ITEM)
    rows = tuple(
        HeadlineRow(
            subject=CACHE_ITEMS.get(r["cache_item"], r["cache_item"]),
            value=r["cheapest_tier"] or "",
            interval=f"{r['cheapest_tier']} … {r['fastest_covered_tier']}" if r["fastest_covered_tier"] else "",
            note=f"cheapest for {r['cheapest_count']} of {r['cache_prices']} prices; drain-time rule: "
            f"{r['drain_time_tier']}",
        )
        for r in frame.iter_rows(named=True)
    )
    if not rows:
        return None
    return Headline(
        "cache_tier",
        "Memory tier behind each cache duration",
        "tier",
        rows,
        interval_kind="from the cheapest tier to the fastest tier whose cost the price still covers at the scenario's "
        "margin (most common over every source's standard cache prices)",
        formula=ctx.cite("econ.physics.memory_tiers.tier_cost_usd_per_token"),
        source="fit_cache_tiers table (cache prices, memory_tiers device prices)",
        page=NAME,
    )
