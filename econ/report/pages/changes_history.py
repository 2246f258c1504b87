"""The What-changed page's history sections: every first-party price change since 2024 with its window and source
commit, the first-party price of each model family over time, and the days on which sources disagree.

Selection and formatting only: the tables are ``first_party_price_changes``, ``first_party_price_timeline`` and
``price_conflicts`` (the price timeline analysis) and ``price_snapshots``.
"""

from __future__ import annotations

import polars as pl

from econ.load.price_tables import HISTORY_REPOSITORIES
from econ.report.charts import changes as charts
from econ.report.figures import Figure
from econ.report.html import Col, Markup, details, fmt_num, source_link, table, tag
from econ.report.page import Download, Section, SiteContext, note
from econ.report.pages.common import pct

FAMILY_MODELS_SHOWN = 10  # models per family chart (those with the most periods); the rest are in the CSV
FAMILIES_SHOWN = 8  # family charts on the page (those with the most price periods); every family is in the CSV
PAGE_COMPONENTS = ("input", "output")  # the page's table; the CSV has every component
CONFLICTS_SHOWN = 40

COVERAGE = """
select source, count(*) as snapshots, min(snapshot_date) as first_date, max(snapshot_date) as last_date,
       count(commit) as commits
from price_snapshots group by source order by min(snapshot_date), source
"""

FIRST_PARTY = """
select change_date, window_from_date, window_to_date, exact, provider, canonical_model, variant, tier_min_prompt_tokens,
       component, old_usd_per_mtok, new_usd_per_mtok, change_frac, source, model, window_from_commit, window_to_commit,
       agreeing_sources,
       case when change_date > getvariable('as_of')::date then 'announced' else 'in effect' end as status
from first_party_price_changes
order by change_date, provider, canonical_model, variant, tier_min_prompt_tokens, component, source
"""

TIMELINE = """
select family, seller as provider, canonical_model, from_date,
       coalesce(to_date, getvariable('as_of')::date) as end_date, input_usd_per_mtok, output_usd_per_mtok, source
from first_party_price_timeline
where family is not null and input_usd_per_mtok > 0
order by family, canonical_model, seller, from_date
"""

CONFLICTS = """
select seller, region, canonical_model, variant, tier_min_prompt_tokens, from_date, to_date, source, provider, model,
       input_usd_per_mtok, output_usd_per_mtok, price_date, held_by, other_source, other_provider, other_model,
       other_input_usd_per_mtok, other_output_usd_per_mtok, other_price_date
from price_conflicts
order by (to_date is null) desc, seller, region, canonical_model, variant, tier_min_prompt_tokens, from_date,
         other_source, other_model
"""


def window_text() -> pl.Expr:
    """``2026-07-24…2026-07-30`` (after the last snapshot with the old price, by the first with the new), or the day
    itself where the source dates it ("its own date") or both ends fall on it."""
    start, end = pl.col("window_from_date").cast(pl.String), pl.col("window_to_date").cast(pl.String)
    return (
        pl.when(pl.col("exact"))
        .then(pl.concat_str(end, pl.lit(" (its own date)")))
        .when(start.is_null() | (start == end))
        .then(end)
        .otherwise(pl.concat_str(start, pl.lit("…"), end))
        .alias("window")
    )


def commit_url(column: str) -> pl.Expr:
    """The commit ``column`` names, as its URL in the source's repository (replayed histories; else null)."""
    repo = pl.col("source").replace_strict(HISTORY_REPOSITORIES, default=None, return_dtype=pl.String)
    return pl.concat_str(repo, pl.lit("/commit/"), pl.col(column))


def commit_cell(url) -> Markup | str:
    """A commit URL shown as its short id, linked."""
    return source_link(url, url.rsplit("/", 1)[-1][:8]) if url else ""


def coverage(ctx: SiteContext) -> Markup:
    frame = ctx.query(COVERAGE)
    parts = []
    for row in frame.iter_rows(named=True):
        kind = f"{row['commits']} commits" if row["commits"] else f"{row['snapshots']} snapshot files"
        parts.append(f"{row['source']}: {kind}, {row['first_date']} to {row['last_date']}")
    return tag(
        "p",
        "Prices are dated by every snapshot: " + "; ".join(parts) + ". A change happened after the last snapshot "
        "of its source that had the old price and by the first that had the new one: that window is what each "
        "date below says, or the day itself where the source dates the price (a hand-kept first-party page, a "
        "dated price in genai-prices or llm-prices).",
    )


def first_party_section(ctx: SiteContext) -> Section:
    heading = "Every first-party price change since 2024"
    if not ctx.has("first_party_price_changes"):
        return Section(heading, [note("No price history in this database.", kind="pending")])
    frame = ctx.query(FIRST_PARTY)
    if not frame.height:
        return Section(heading, [coverage(ctx), note("No first-party price moved in this history.")])
    shown = frame.filter(pl.col("component").is_in(PAGE_COMPONENTS)).with_columns(
        window_text(),
        commit_url("window_to_commit").alias("commit"),
        commit_url("window_from_commit").alias("from_commit"),
    )
    columns = [
        Col("window", "When (window)", help="after the last snapshot with the old price … by the first with the new"),
        Col("provider", "Seller"),
        Col("canonical_model", "Model"),
        Col("component", "Component", keep=4),  # a narrow view hides the old value, then the new one, then the change
        Col("old_usd_per_mtok", "Old (USD/MTok)", kind="num", keep=1),
        Col("new_usd_per_mtok", "New (USD/MTok)", kind="num", keep=2),
        Col("change_frac", "Change (%)", kind="num", fmt=pct, keep=3),
        Col("status", "Status"),
        Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
        Col("source", "Source"),
        Col("from_commit", "Last old (commit)", fmt=commit_cell),
        Col("commit", "First new (commit)", fmt=commit_cell),
        Col("agreeing_sources", "Sources showing it", kind="num"),
    ]
    moves = frame.select("provider", "canonical_model", "variant", "tier_min_prompt_tokens", "component",
                         "old_usd_per_mtok", "new_usd_per_mtok").unique().height  # fmt: skip
    blocks = [
        coverage(ctx),
        table(
            shown,
            columns,
            caption=f"{moves} first-party price moves (the seller makes the model) as {frame['source'].n_unique()} "
            f"sources date them, oldest first: input and output prices here ({shown.height} rows, one per source "
            f"that shows a move), every component in the CSV ({frame.height} rows); 'announced' moves take effect "
            "after the report's date",
            id="first-party-changes",
        ),
        Download("first-party-changes", frame, "Every first-party price change with its window and commits"),
    ]
    return Section(heading, blocks)


def family_section(ctx: SiteContext) -> Section:
    heading = "First-party price over time, by model family"
    if not ctx.has("first_party_price_timeline"):
        return Section(heading, [note("No price history in this database.", kind="pending")])
    frame = ctx.query(TIMELINE)
    periods = frame.group_by("family", "canonical_model").len()
    changed = periods.filter(pl.col("len") > 1)
    every = changed.group_by("family").agg(pl.col("len").sum()).sort("len", "family", descending=[True, False])
    families = every.head(FAMILIES_SHOWN)
    blocks = [
        tag(
            "p",
            "The list price a model's maker charges for it (standard, base tier), as the sources that price it say "
            "on each day (where they disagree, the billing rule's choice, as econ cost bills: the price known to "
            "have taken effect latest, then the most authoritative source). One chart per family in which a price "
            f"moved, the {families.height} with the most price periods of {every.height} such families "
            f"({periods['family'].n_unique()} in all; every one is in the CSV); each shows its "
            f"{FAMILY_MODELS_SHOWN} models with the most price periods, solid input and dashed output.",
        )
    ]
    for family in families["family"].to_list():
        keep = (
            changed.filter(pl.col("family") == family)
            .sort("len", "canonical_model", descending=[True, False])
            .head(FAMILY_MODELS_SHOWN)["canonical_model"]
        )
        rows = frame.filter((pl.col("family") == family) & pl.col("canonical_model").is_in(keep.to_list()))
        points = _points(rows)
        blocks.append(
            Figure(
                f"family-{_slug(family)}",
                charts.family_prices_over_time(points, family),
                points,
                caption=f"{family}: the first-party list price of {keep.len()} models over time (each segment one "
                "period of one price; the source that prevails that day in the tooltip).",
                formula="the holding first-party price per day: by date, then by authority "
                "(first_party_price_timeline)",
                source="first_party_price_timeline (prices: hand-kept pages, LiteLLM / OpenRouter snapshots, the "
                "replayed genai-prices and llm-prices histories)",
            )
        )
    blocks.append(Download("first-party-timeline", frame, "The first-party price of every model over time"))
    return Section(heading, blocks)


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    return "-".join(p for p in out.split("-") if p) or "family"


def _points(rows: pl.DataFrame) -> pl.DataFrame:
    """Two points per period and component (its first day and its end), for horizontal segments."""
    base = rows.with_row_index("period")
    long = pl.concat(
        [
            base.select(
                pl.col(day).alias("date"),
                "canonical_model",
                "provider",
                pl.lit(name).alias("component"),
                pl.col(column).alias("usd_per_mtok"),
                "source",
                (pl.col("period") * 2 + i).alias("period"),
            )
            for day in ("from_date", "end_date")
            for i, (name, column) in enumerate((("input", "input_usd_per_mtok"), ("output", "output_usd_per_mtok")))
        ]
    )
    return long.filter(pl.col("usd_per_mtok") > 0).sort("canonical_model", "component", "date")


def conflicts_section(ctx: SiteContext) -> Section:
    heading = "Where the sources disagree"
    if not ctx.has("price_conflicts"):
        return Section(heading, [note("No conflicts table in this database.", kind="pending")])
    frame = ctx.query(CONFLICTS)
    if not frame.height:
        return Section(heading, [note("No two sources price one seller's model differently on the same day.")])
    current = frame.filter(pl.col("to_date").is_null())
    columns = [
        Col("seller", "Seller"),
        Col("canonical_model", "Model"),
        Col("region", "Region"),
        Col("variant", "Variant"),
        Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
        Col("from_date", "From", kind="date"),
        Col("to_date", "Until", kind="date"),
        Col("source", "Holds"),
        Col("input_usd_per_mtok", "Input", kind="num"),
        Col("output_usd_per_mtok", "Output", kind="num"),
        Col("held_by", "Held by"),
        Col("other_source", "Overrides"),
        Col("other_input_usd_per_mtok", "Its input", kind="num"),
        Col("other_output_usd_per_mtok", "Its output", kind="num"),
    ]
    intro = (
        f"{fmt_num(frame.height)} periods in which two sources price one seller's offer of a model differently "
        f"(input or output), {fmt_num(current.height)} of them still open. The billing rule econ cost bills by "
        "decides which holds: by date (the price known to have taken effect latest: a hand-kept row's or a "
        "source's own date, else the day after the last snapshot that still showed the previous price; a price "
        "only first seen has no date), then by authority (hand-kept first-party page, LiteLLM, OpenRouter, "
        "genai-prices, llm-prices)."
    )
    blocks = [
        tag("p", intro),
        details(
            f"The {min(CONFLICTS_SHOWN, frame.height)} first of them, open ones first",
            table(frame.head(CONFLICTS_SHOWN), columns, caption="Conflicting prices (USD/MTok)", id="conflicts"),
        ),
        Download("price-conflicts", frame, "Every conflict between sources, with the one that holds"),
    ]
    return Section(heading, blocks)
