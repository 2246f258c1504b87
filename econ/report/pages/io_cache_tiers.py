"""Input/output & cache page section on prompt caching: cache prices read backwards into a hold cost per GB-hour
and compared with each memory tier's holding cost and drain time (lecture g.1–g.4; tables ``fit_cache_tiers``,
``cache_tier_outcomes``, ``memory_tiers``, ``memory_tier_costs``)."""

from __future__ import annotations

import polars as pl

from econ.report.charts import cache as cache_charts
from econ.report.figures import Figure
from econ.report.html import Col, table
from econ.report.page import Download, Section, SiteContext, note
from econ.report.pages.common import pick, sig3, status_text

TIER_MODELS = ("DeepSeek-V3", "Llama-3.1-70B", "gpt-oss-120b")
CACHE_DURATIONS_S = {"5 min": 300.0, "1 hour": 3600.0, "12 hours": 43200.0}

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


def prompt_cache(ctx: SiteContext) -> Section:
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
