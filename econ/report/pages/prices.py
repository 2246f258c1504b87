"""Prices page: the current first-party price table, the market at a glance, history and recent changes.

The price table holds thousands of imported rows (LiteLLM, OpenRouter), so the page shows
the hand-kept first-party rows in full, aggregates the rest per provider in SQL, and links
the full tables as CSV downloads.
"""

from __future__ import annotations

from econ.report import findings
from econ.report.charts import fold_series
from econ.report.charts import prices as charts
from econ.report.figures import Figure
from econ.report.html import Col, Markup, details, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import pct

NAME = "prices"
TITLE = "Prices"
SUMMARY = (
    "Current API prices (first-party in full, every imported provider aggregated), their history and recent changes."
)
REQUIRES = ("prices", "price_current", "price_history", "io_price_ratio", "billing_example_bills")

KEY_ORDER = "source, provider, model, variant, tier_min_prompt_tokens"
RECENT_CHANGES = 40

FIRST_PARTY = f"""
select provider, model, variant, tier_min_prompt_tokens, input_usd_per_mtok, output_usd_per_mtok,
       cache_read_usd_per_mtok, cache_write_5m_usd_per_mtok, cache_write_1h_usd_per_mtok,
       cache_storage_usd_per_mtok_hour, max_input_tokens, speed_ratio, from_date, source_url
from price_current where source = 'hand' order by {KEY_ORDER}
"""

SCATTER = f"""
select coalesce(s.organisation, r.provider) as provider, r.provider as seller, model, variant, tier_min_prompt_tokens,
input_usd_per_mtok, output_usd_per_mtok, output_over_input_ratio
from io_price_ratio as r left join providers as s on s.provider = r.provider
where r.source = 'hand' and r.output_usd_per_mtok > 0 order by {KEY_ORDER}
"""
"""One colour per seller organisation (Model Studio's regions are one Alibaba)."""

RATIO_BINS = """
with binned as (
    select source, floor(2 * log2(output_over_input_ratio)) as half_octave
    from io_price_ratio where output_over_input_ratio > 0
)
select source, pow(2, half_octave / 2) as ratio_low, pow(2, (half_octave + 1) / 2) as ratio_high, count(*) as price_rows
from binned group by source, half_octave order by source, half_octave
"""

COVERAGE = """
select source, count(*) as price_rows, count(distinct provider) as providers, count(distinct model) as models,
       min(from_date) as oldest_from_date, max(coalesce(snapshot_date, from_date)) as newest_date
from price_current group by source order by source
"""

PROVIDERS = """
select source, provider, count(distinct model) as models, count(*) as price_rows,
       median(input_usd_per_mtok) as median_input_usd_per_mtok,
       median(output_usd_per_mtok) as median_output_usd_per_mtok,
       median(output_usd_per_mtok / nullif(input_usd_per_mtok, 0)) as median_output_over_input_ratio,
       max(coalesce(snapshot_date, from_date)) as newest_date
from price_current
where tier_min_prompt_tokens = 0 and variant = 'standard'
group by source, provider order by source, provider
"""

CHANGES = """
with changes as (
    select from_date as change_date, 'input' as component, prev_input_usd_per_mtok as old_usd_per_mtok,
           input_usd_per_mtok as new_usd_per_mtok
    from price_history where prev_from_date is not null
    union all
    select from_date, 'output', prev_output_usd_per_mtok, output_usd_per_mtok
    from price_history where prev_from_date is not null
)
select change_date, component, case when new_usd_per_mtok < old_usd_per_mtok then 'cut' else 'raised' end as direction,
       count(*) as price_rows
from changes
where old_usd_per_mtok is not null and new_usd_per_mtok is not null and new_usd_per_mtok <> old_usd_per_mtok
group by all order by all
"""

RECENT = f"""
select source, provider, model, variant, tier_min_prompt_tokens, prev_from_date, from_date,
       case when from_date > getvariable('as_of')::date then 'announced' else 'in effect' end as status,
       prev_input_usd_per_mtok, input_usd_per_mtok, input_change_frac,
       prev_output_usd_per_mtok, output_usd_per_mtok, output_change_frac
from price_history
where prev_from_date is not null
  and (coalesce(input_change_frac, 0) <> 0 or coalesce(output_change_frac, 0) <> 0)
order by from_date desc,
         greatest(abs(coalesce(input_change_frac, 0)), abs(coalesce(output_change_frac, 0))) desc, {KEY_ORDER}
limit {RECENT_CHANGES}
"""

CHANGE_COUNTS = """
select
    count(*) filter (where prev_from_date is not null
                     and (coalesce(input_change_frac, 0) <> 0 or coalesce(output_change_frac, 0) <> 0)) as changed_rows,
    (select count(*) from (select distinct source, provider, model from prices
                           except select distinct source, provider, model from price_current)) as dropped_models
from price_history
"""

FIRST_PARTY_HISTORY = """
with changed as (
    select provider, model, variant, tier_min_prompt_tokens
    from prices where source = 'hand' group by all having count(*) > 1
),
periods as (
    select p.* from prices as p inner join changed using (provider, model, variant, tier_min_prompt_tokens)
    where p.source = 'hand'
),
points as (
    select provider, model, variant, tier_min_prompt_tokens, from_date, input_usd_per_mtok, output_usd_per_mtok
    from periods
    union all  -- carry the open period to the report date so its last step shows
    select provider, model, variant, tier_min_prompt_tokens, getvariable('as_of')::date, input_usd_per_mtok,
    output_usd_per_mtok
    from periods where to_date is null and from_date < getvariable('as_of')::date
)
unpivot points on input_usd_per_mtok as input, output_usd_per_mtok as output into name component value usd_per_mtok
order by provider, model, variant, tier_min_prompt_tokens, component, from_date
"""

PRICE_COLS = [
    Col("input_usd_per_mtok", "Input (USD/MTok)", kind="num", keep=True),
    Col("output_usd_per_mtok", "Output (USD/MTok)", kind="num", keep=True),
]


def render(ctx: SiteContext) -> PageContent:
    coverage = ctx.query(COVERAGE)
    sections = [
        _current(ctx, coverage),
        _billing(ctx),
        _market(ctx),
        _history(ctx),
    ]
    return PageContent(
        title=TITLE,
        lead=(
            f"API prices in effect on {ctx.as_of.isoformat()}: hand-kept first-party prices in full, every imported "
            "provider aggregated, and how prices changed between snapshots. Prices are USD per million tokens."
        ),
        sections=sections,
        findings=findings.prices(ctx),
    )


def _current(ctx: SiteContext, coverage) -> Section:
    blocks = [
        table(
            coverage,
            [
                Col("source", "Source"),
                Col("price_rows", "Current prices (rows)", kind="num"),
                Col("providers", "Providers", kind="num"),
                Col("models", "Models", kind="num"),
                Col("oldest_from_date", "Oldest price from", kind="date"),
                Col("newest_date", "Newest price or snapshot", kind="date"),
            ],
            caption="Current price rows per source (hand = first-party pages kept by hand; litellm, openrouter = "
            "imported price maps; genai_prices, llm_prices = the replayed git histories of those price lists)",
        )
    ]
    first_party = ctx.query(FIRST_PARTY)
    if first_party.is_empty():
        blocks.append(note("No hand-kept first-party prices are current on this date.", kind="pending"))
    else:
        blocks.append(
            table(
                first_party,
                [
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("variant", "Variant"),
                    Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
                    *PRICE_COLS,
                    Col("cache_read_usd_per_mtok", "Cache read (USD/MTok)", kind="num"),
                    Col("cache_write_5m_usd_per_mtok", "Cache write 5 min (USD/MTok)", kind="num"),
                    Col("cache_write_1h_usd_per_mtok", "Cache write 1 h (USD/MTok)", kind="num"),
                    Col("cache_storage_usd_per_mtok_hour", "Cache storage (USD/MTok/hour)", kind="num"),
                    Col("max_input_tokens", "Max prompt (tokens)", kind="num"),
                    Col("speed_ratio", "Speed (× standard)", kind="num"),
                    Col("from_date", "Since", kind="date"),
                    Col("source_url", "Source", kind="link"),
                ],
                caption="First-party prices (click a header to sort). A long-context tier bills the whole request at "
                "its "
                "rate once the prompt exceeds the tier's threshold.",
                id="first-party-prices",
            )
        )
    current_all = ctx.query(f"select * from price_current order by {KEY_ORDER}")
    blocks.append(Download("current-prices", current_all, "Every current price, all sources"))
    return Section("Current prices", blocks)


BILLING_EXAMPLES = """
select rule_id, rule, provider, model, variant, as_of, request, arithmetic, hand_usd, econ_usd,
       coalesce(econ_refusal, '') as econ_refusal, case when matches then 'yes' else 'no' end as matches, quote,
       source_url
from billing_example_bills order by rule_id, example_id
"""


def _billing(ctx: SiteContext) -> Section:
    examples = ctx.query(BILLING_EXAMPLES)
    if examples.is_empty():
        return Section("How a bill is computed", [note("No worked billing examples in this build.", kind="pending")])
    right = int((examples["matches"] == "yes").sum())
    columns = [
        Col("rule_id", "Rule"),
        Col("rule", "What it says"),
        Col("provider", "Seller"),
        Col("model", "Model"),
        Col("variant", "Variant"),
        Col("as_of", "Prices of", kind="date"),
        Col("request", "Request", wrap=True),
        Col("arithmetic", "By hand, from the seller's rates", wrap=True),
        Col("hand_usd", "By hand (USD)", kind="num"),
        Col("econ_usd", "econ cost (USD)", kind="num"),
        Col("econ_refusal", "econ refuses because", wrap=True),
        Col("matches", "Same"),
        Col("quote", "The page's words", wrap=True),
        Col("source_url", "Page", kind="link"),
    ]
    blocks = [
        note(
            f"{right} of {examples.height} worked examples: econ cost bills what the hand arithmetic gives, or refuses "
            "as the seller does.",
        ),
        table(
            examples,
            columns,
            caption="One worked request per billing rule of data/billing_rules.csv and time-of-day window of "
            "data/billing_windows.csv (table billing_example_bills)",
            id="billing-examples",
        ),
    ]
    return Section(
        "How a bill is computed",
        blocks,
        intro="What a price list leaves open, each seller's page settles: whether a long-context tier bills at or "
        "only above its threshold, what a cache write costs without a listed price, how batch and cache discounts "
        "combine, time-of-day prices, retired models. One price holds per seller and model: the one known to have "
        "taken effect latest, then the most authoritative source (hand-kept pages, then LiteLLM, then OpenRouter).",
    )


def _market(ctx: SiteContext) -> Section:
    blocks = []
    scatter = fold_series(ctx.query(SCATTER))
    if scatter.height:
        blocks.append(
            Figure(
                "io-scatter",
                charts.io_price_scatter(scatter),
                scatter,
                caption="Each point is one current first-party price (every variant and context tier). Dashed lines "
                "mark "
                "output = input and output = 5 × input, the ratio the lecture reads as decode being about five "
                "times as expensive per token as prefill.",
                formula=ctx.cite("econ.fits.io_prices.price_ratio_roofline"),
                source="price_current / io_price_ratio views of the prices table (hand-kept first-party pages; links "
                "in "
                "the table above)",
            )
        )
    bins = ctx.query(RATIO_BINS)
    if bins.height:
        excluded = ctx.query("select count(*) as n from io_price_ratio where not (output_over_input_ratio > 0)")["n"][0]
        blocks.append(
            Figure(
                "io-ratio",
                charts.io_ratio_histogram(bins),
                bins,
                caption="Output/input price ratio of every current price row with a positive input price, in "
                "half-octave "
                f"bins, stacked by source. {excluded:,} rows with a zero output price are not shown.",
                formula="ρ = p_out / p_in per price row, binned at 2^(k/2) (lecture §f.3); "
                f"{ctx.cite('econ.fits.io_prices.price_ratio_roofline')}",
                source="io_price_ratio view over price_current: hand-kept first-party prices and imported LiteLLM and "
                "OpenRouter price maps",
            )
        )
    providers = ctx.query(PROVIDERS)
    blocks.append(
        details(
            f"Every provider of every source ({providers.height:,} rows): models, median prices, newest date",
            table(
                providers,
                [
                    Col("source", "Source"),
                    Col("provider", "Provider"),
                    Col("models", "Models", kind="num"),
                    Col("price_rows", "Prices (rows)", kind="num"),
                    Col("median_input_usd_per_mtok", "Median input (USD/MTok)", kind="num"),
                    Col("median_output_usd_per_mtok", "Median output (USD/MTok)", kind="num"),
                    Col("median_output_over_input_ratio", "Median output/input (ratio)", kind="num"),
                    Col("newest_date", "Newest", kind="date"),
                ],
                caption="Every provider in every source, base tier, standard variant (click a header to sort)",
                id="providers",
            ),
        )
    )
    return Section(
        "The market at a glance",
        blocks,
        intro="How output prices relate to input prices, first-party and across every imported provider.",
    )


def _history(ctx: SiteContext) -> Section:
    counts = ctx.query(CHANGE_COUNTS).row(0, named=True)
    blocks = [
        Markup(
            f"<p>{fmt_num(counts['changed_rows'])} price rows changed their input or output price between "
            f"snapshots; {fmt_num(counts['dropped_models'])} models priced earlier have no current price "
            "(dropped from a later snapshot or ended by hand).</p>"
        )
    ]
    changes = ctx.query(CHANGES)
    if changes.height:
        blocks.append(
            Figure(
                "changes",
                charts.price_changes(changes),
                changes,
                caption="Input and output price changes per date a new price first appeared (a snapshot date for "
                "imported "
                "maps), split into cuts and raises.",
                formula="count of price periods whose input (or output) price differs from the period before it for "
                "the "
                "same source, provider, model, variant and tier",
                source="price_history view of the prices table (all sources)",
            )
        )
    else:
        blocks.append(note("No price has changed between the snapshots in this database yet.", kind="pending"))
    history = ctx.query(FIRST_PARTY_HISTORY)
    if history.height:
        blocks.append(
            Figure(
                "first-party-history",
                charts.first_party_history(history),
                history,
                caption="Every first-party price that changed, as a step line from each effective date (the open "
                "period "
                "is carried to the report date).",
                formula="price per effective period [from_date, to_date) of the hand-kept prices table",
                source="prices table (hand-kept first-party pages)",
            )
        )
    recent = ctx.query(RECENT)
    if recent.height:
        blocks.append(
            table(
                recent,
                [
                    Col("source", "Source"),
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("variant", "Variant"),
                    Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
                    Col("prev_from_date", "Old from", kind="date"),
                    Col("from_date", "New from", kind="date"),
                    Col("status", "Status"),
                    Col("prev_input_usd_per_mtok", "Old input (USD/MTok)", kind="num"),
                    Col("input_usd_per_mtok", "New input (USD/MTok)", kind="num"),
                    Col("input_change_frac", "Input change (%)", kind="num", fmt=pct),
                    Col("prev_output_usd_per_mtok", "Old output (USD/MTok)", kind="num"),
                    Col("output_usd_per_mtok", "New output (USD/MTok)", kind="num"),
                    Col("output_change_frac", "Output change (%)", kind="num", fmt=pct),
                ],
                caption=f"The {RECENT_CHANGES} most recent input or output price changes, largest first within a date; "
                f"a change dated after {ctx.as_of.isoformat()} is announced, not yet in effect",
                id="recent-changes",
            )
        )
    blocks.append(
        Download(
            "price-history",
            ctx.query(f"select * from price_history order by {KEY_ORDER}, from_date"),
            "Every price period with the change from the period before, all sources",
        )
    )
    return Section("History and recent changes", blocks)
