"""What-changed page: the same content as ``econ diff`` between the two newest snapshots (models added and
removed; per model, variant and tier every price component that changed, old, new and % change), a chart of
every price change over time, and the changes in inferred quantities when the analyses provide them.
The section on those inferred quantities is in :mod:`econ.report.pages.changes_inferred`, the history sections
(every first-party change since 2024, the price of each model family over time, where the sources disagree) in
:mod:`econ.report.pages.changes_history`.

``price_changes`` (written by the changes analysis with ``econ.fits.price_changes``) holds thousands of rows
when a price map adds or drops models, so the page shows every changed component of the
first-party prices, the largest changes of the imported maps, and counts per provider; every
row is a CSV download.
"""

from __future__ import annotations

from econ.report import findings
from econ.report.charts import changes as charts
from econ.report.figures import Figure
from econ.report.html import Col, details, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages import changes_history as history
from econ.report.pages.changes_inferred import inferred_section
from econ.report.pages.common import guarded, pct

NAME = "what-changed"
TITLE = "What changed"
SUMMARY = (
    "Price changes between the two newest snapshots (what econ diff prints), what they imply, and every price "
    "change over time."
)
REQUIRES = ("price_history",)  # with no snapshot (or one) the page says there is nothing to compare yet

LARGEST_IMPORTED = 60  # imported-map changes shown on the page (largest |change| first); the rest are in the CSV

SUMMARY_SQL = """
select source,
       count(distinct (provider, model)) filter (where change = 'added') as models_added,
       count(distinct (provider, model)) filter (where change = 'removed') as models_removed,
       count(distinct (provider, model, variant, tier_min_prompt_tokens)) filter (where change = 'changed') as
       prices_changed,
       count(*) filter (where change = 'changed') as components_changed
from price_changes group by source order by source
"""

FIRST_PARTY = findings.FIRST_PARTY_CHANGE

CHANGED = f"""
select source, provider, model, variant, tier_min_prompt_tokens, replace(component, '_usd_per_mtok', '') as component,
       old_value, new_value, change_frac, change_class, window_from_date, window_to_date, exact
from price_changes
where change = 'changed' and ({FIRST_PARTY} or ? = 'all')
order by source, provider, model, variant, tier_min_prompt_tokens, component
"""

FIRST_PARTY_KEYS = f"""
select count(distinct (source, provider, model)) as keys from price_changes where {FIRST_PARTY}
"""

LARGEST = """
select source, provider, model, variant, tier_min_prompt_tokens, replace(component, '_usd_per_mtok', '') as component,
       old_value, new_value, change_frac, change_class, window_from_date, window_to_date, exact
from price_changes
where change = 'changed' and source <> 'hand'
order by abs(coalesce(change_frac, 0)) desc nulls last, source, provider, model, variant, tier_min_prompt_tokens,
component
limit ?
"""

ADDED_REMOVED = """
select change, source, provider, count(distinct model) as models,
       array_to_string(list_slice(list_sort(list(distinct model)), 1, 3), ', ')
       || case when count(distinct model) > 3 then format(', … and {:d} more', count(distinct model) - 3) else '' end
       as model_list
from price_changes where change in ('added', 'removed')
group by change, source, provider order by change, models desc, source, provider
"""

OVER_TIME = """
with long as (
    select from_date, source, provider, model, variant, tier_min_prompt_tokens, 'input' as component,
           prev_input_usd_per_mtok as old_usd_per_mtok, input_usd_per_mtok as new_usd_per_mtok
    from price_history where prev_from_date is not null
    union all
    select from_date, source, provider, model, variant, tier_min_prompt_tokens, 'output',
           prev_output_usd_per_mtok, output_usd_per_mtok
    from price_history where prev_from_date is not null
    union all
    select from_date, source, provider, model, variant, tier_min_prompt_tokens, 'cache read',
           prev_cache_read_usd_per_mtok, cache_read_usd_per_mtok
    from price_history where prev_from_date is not null
)
select from_date, case when from_date > getvariable('as_of')::date then 'announced' else 'in effect' end as status,
       source, provider, model, variant, tier_min_prompt_tokens, component, old_usd_per_mtok, new_usd_per_mtok,
       new_usd_per_mtok / old_usd_per_mtok as new_over_old_ratio, new_usd_per_mtok / old_usd_per_mtok - 1 as change_frac
from long
where old_usd_per_mtok > 0 and new_usd_per_mtok > 0 and new_usd_per_mtok <> old_usd_per_mtok
order by from_date, source, provider, model, variant, tier_min_prompt_tokens, component
"""

CHANGE_COLS = [  # the class beside the numbers (a suspected data fix must not read as the seller's move); the source,
    # one value in most lists, after them so that a narrow view hides it first; then the old value (the new one and
    # the change still say it), the new value, the change: what a narrow view keeps still reads
    Col("provider", "Provider"),
    Col("model", "Model"),
    Col("change_class", "Class", keep=4),
    Col("component", "Component", keep=4),
    Col("old_value", "Old", kind="num", keep=1),
    Col("new_value", "New", kind="num", keep=2),
    Col("change_frac", "Change (%)", kind="num", fmt=pct, keep=3),
    Col("source", "Source"),
    Col("variant", "Variant"),
    Col("tier_min_prompt_tokens", "Prompt above (tokens)", kind="num"),
    Col(
        "window",
        "When (window)",
        help="after the last snapshot of the source with the old value … by the first "
        "with the new; one day where the source dates it",
    ),  # fmt: skip
]


def render(ctx: SiteContext) -> PageContent:
    dates = (
        ctx.query("select distinct snapshot_date from price_snapshots order by 1")["snapshot_date"].to_list()
        if ctx.has("price_snapshots")
        else []
    )
    has_changes = ctx.has("price_changes") and bool(ctx.scalar("select exists (select 1 from price_changes)"))
    span = (
        ctx.query("select min(from_date) as from_date, max(to_date) as to_date from price_changes")
        if has_changes
        else None
    )
    if span is not None and span["from_date"][0] is not None:
        compared = f"between {span['from_date'][0].isoformat()} and {span['to_date'][0].isoformat()}"
    else:
        compared = "between the two newest snapshots"
    sections = [
        guarded("Between the two newest snapshots", lambda: _diff(ctx, has_changes, dates, compared)),
        guarded("What the changes imply", lambda: inferred_section(ctx)),
        guarded("Every first-party price change since 2024", lambda: history.first_party_section(ctx)),
        guarded("First-party price over time, by model family", lambda: history.family_section(ctx)),
        guarded("Price changes over time", lambda: _over_time(ctx)),
        guarded("Where the sources disagree", lambda: history.conflicts_section(ctx)),
    ]
    return PageContent(
        title=TITLE,
        lead=(
            f"What changed in API prices {compared} (the two newest snapshot dates; the same as econ diff with no "
            "dates), how every price has moved over time, and what the changes imply. Prices are USD per million "
            "tokens; max_input_tokens is in tokens and speed_ratio a multiple."
        ),
        sections=sections,
        findings=findings.what_changed(ctx),
    )


def _diff(ctx: SiteContext, has_changes: bool, dates: list, compared: str) -> Section:
    if not has_changes:
        reason = (
            "fewer than two snapshot dates are imported"
            if len(dates) < 2
            else "no price changed, and no model was added or removed"
        )
        return Section(
            "Between the two newest snapshots",
            [
                note(
                    f"Nothing to compare: {reason} (snapshots: {', '.join(d.isoformat() for d in dates) or 'none'}). "
                    "Import a newer price map with econ refresh FILE.",
                    kind="pending",
                )
            ],
        )
    summary = ctx.query(SUMMARY_SQL)
    blocks = [
        table(
            summary,
            [
                Col("source", "Source"),
                Col("models_added", "Models added", kind="num"),
                Col("models_removed", "Models removed", kind="num"),
                Col("prices_changed", "Prices changed (model × variant × tier)", kind="num"),
                Col("components_changed", "Components changed", kind="num"),
            ],
            caption=f"Changes {compared}, per source (a source is compared only where it has prices on both dates)",
            id="diff-summary",
        ),
    ]
    first_party = ctx.query(CHANGED, ["first-party" if ctx.has("price_keys") else "none"]).with_columns(
        history.window_text()
    )
    if first_party.height:
        blocks.append(
            table(
                first_party,
                CHANGE_COLS,
                caption="Every changed component of a first-party price: the seller makes the model (the hand-kept "
                "pages and the makers' own keys in the imported maps, price_keys.is_first_party)",
                id="changed-first-party",
            )
        )
    else:
        keys = ctx.scalar(FIRST_PARTY_KEYS) if ctx.has("price_keys") else 0
        blocks.append(
            note(
                f"No first-party price changed between these dates ({fmt_num(keys)} first-party keys were added or "
                "removed; a first-party key is one whose seller makes the model, price_keys.is_first_party).",
                kind="pending",
            )
        )
    largest = ctx.query(LARGEST, [LARGEST_IMPORTED]).with_columns(history.window_text())
    total = ctx.scalar("select count(*) from price_changes where change = 'changed' and source <> 'hand'")
    if largest.height:
        blocks.append(
            table(
                largest,
                CHANGE_COLS,
                caption=f"The {largest.height} largest changes of {fmt_num(total)} "
                "changed components in the imported price maps (largest "
                "relative change first; a blank old value means the "
                "component was added)",
                id="changed-imported",
            )
        )
    blocks.append(
        Download(
            "changed-components",
            ctx.query(CHANGED, ["all"]),
            "Every changed price component, all sources (old, new, % change)",
        )
    )
    moved = ctx.query(ADDED_REMOVED)
    if moved.height:
        blocks.append(
            details(
                f"Models added and removed, per provider ({moved.height} rows)",
                table(
                    moved,
                    [
                        Col("change", "Change"),
                        Col("source", "Source"),
                        Col("provider", "Provider"),
                        Col("models", "Models", kind="num"),
                        Col("model_list", "Models (the first three)", wrap=True),
                    ],
                    caption="Models added or removed per provider (the full list is the CSV download)",
                    id="added-removed",
                ),
            )
        )
    blocks.append(
        Download(
            "added-removed",
            ctx.query(
                "select change, source, provider, model, variant, tier_min_prompt_tokens, old_value as "
                "old_input_usd_per_mtok, "
                "new_value as new_input_usd_per_mtok from price_changes where change in ('added', 'removed') order "
                "by all"
            ),
            "Every added and removed price (model × variant × tier) with its input price",
        )
    )
    return Section("Between the two newest snapshots", blocks)


def _over_time(ctx: SiteContext) -> Section:
    frame = ctx.query(OVER_TIME)
    blocks = []
    if frame.height:
        blocks.append(
            Figure(
                "changes-over-time",
                charts.changes_over_time(frame),
                frame,
                caption="Each point is one price component (input, output, cache read) of one price key that changed, "
                "at the date its new price took effect, as the new price over the old one. Imported maps "
                "change on their snapshot dates; triangles are changes announced for after "
                f"{ctx.as_of.isoformat()}.",
                formula="new/old − 1 per component, from consecutive effective periods of the same source, provider, "
                "model, variant and tier",
                source="price_history view of the prices table (hand-kept first-party pages and imported LiteLLM / "
                "OpenRouter snapshots)",
            )
        )
    else:
        blocks.append(note("No price has changed between periods in this database yet.", kind="pending"))
    return Section("Price changes over time", blocks)
