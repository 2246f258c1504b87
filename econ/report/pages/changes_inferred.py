"""What-changed page section on what the price changes imply: the change in each inferred quantity (implied KV bytes
per token, output/input ratio and decode batch, cache tier, fast-mode batch ratio) when the pricing fits rerun on the
prices before and after (table ``inferred_changes``, written by the changes analysis), with a readable name for each
quantity.
"""

from __future__ import annotations

import polars as pl

from econ.report.html import Col, Markup, fmt_num, table, tag
from econ.report.page import Download, Section, SiteContext, note
from econ.report.pages.common import pct

INFERRED_TABLE = "inferred_changes"  # what the price changes imply (written by the changes analysis)
INFERRED_SHOWN = 50  # moved quantities shown (first-party schedules first); the rest are in the CSV
QUANTITY_NAMES = {
    "kv_read_bytes_per_context_token": "Decode KV bytes read per context token (output-price slope)",
    "attention_flop_per_context_token": "Prefill attention FLOPs per context token (input-price slope)",
    "kv_crossover_bytes_per_token": "KV bytes per token, crossover hypothesis",
    "output_over_input_ratio": "Output/input price ratio",
    "batch_over_balance_ratio": "Implied decode batch B/B*₀",
    "implied_decode_mbu_frac": "Implied decode bandwidth use (mbu)",
    "hold_price_usd_per_mtok_hour": "Cache hold price (USD/MTok-hour)",
    "hold_cost_usd_per_gb_hour": "Cache hold cost after margin (USD/GB-hour)",
    "identified_tier": "Memory tier identified by the cache prices",
    "tier_status": "Memory tiers the cache prices allow",
    "batch_ratio": "Fast-mode batch ratio m·s",
    "implied_markup_ratio": "Fast mode: its markup over standard (price multiple / cost multiple)",
    "smaller_batch_allowed_frac": "Fast mode: share of architectures where (m, s) explain a smaller batch",
    "more_chips_allowed_frac": "Fast mode: share where (m, s) explain more chips",
    "speculation_allowed_frac": "Fast mode: share where (m, s) explain speculation alone",
    "any_combination_allowed_frac": "Fast mode: share where (m, s) explain any combination",
}

INFERRED_COUNTS = f"""
select quantity,
       count(*) filter (where (old_value is not null and new_value is not null)
                        or (old_label is not null and new_label is not null)) as changed,
       count(*) filter (where old_value is null and old_label is null) as appeared,
       count(*) filter (where new_value is null and new_label is null) as disappeared,
       median(change_frac) as median_change_frac
from {INFERRED_TABLE} group by quantity order by count(*) desc, quantity
"""

INFERRED_ROWS = f"""
select source, provider, model, variant, detail, quantity, old_value, new_value, change_frac, old_label, new_label
from {INFERRED_TABLE}
order by source <> 'hand', abs(coalesce(change_frac, 0)) desc, source, provider, model, variant, detail, quantity
limit ?
"""


def inferred_section(ctx: SiteContext) -> Section:
    heading = "What the changes imply"
    if not ctx.has(INFERRED_TABLE):
        return Section(
            heading,
            [
                note(
                    Markup(
                        tag("strong", "Pending: ")
                        + "the change in each inferred quantity that depends on these prices (implied KV "
                        "bytes per token, output/input ratio and implied decode batch, cache tier, fast-mode batch "
                        "ratio) — “this "
                        f"price cut implies …” — needs the table {INFERRED_TABLE} from the price-inference analyses, "
                        "which this "
                        "database does not have. The inferences for the current prices are on the Context pricing, "
                        "Input/output & cache and Fast mode pages."
                    ),
                    kind="pending",
                )
            ],
        )
    counts = ctx.query(INFERRED_COUNTS)
    if counts.is_empty():
        return Section(
            heading,
            [
                note(
                    "No inferred quantity moved: the changed prices do not change what the pricing fits read from them."
                )
            ],
        )
    counts = counts.with_columns(pl.col("quantity").replace(QUANTITY_NAMES).alias("shown"))
    blocks = [
        table(
            counts,
            [
                Col("shown", "Implied quantity"),
                Col("quantity", "Column"),
                Col("changed", "Changed", kind="num"),
                Col("appeared", "Newly inferable", kind="num"),
                Col("disappeared", "No longer inferable", kind="num"),
                Col("median_change_frac", "Median change (%)", kind="num", fmt=pct),
            ],
            caption=ctx.description(INFERRED_TABLE) or "Inferred quantities that moved",
            id="inferred-counts",
        )
    ]
    rows = ctx.query(INFERRED_ROWS, [INFERRED_SHOWN])
    rows = rows.with_columns(
        pl.col("quantity").replace(QUANTITY_NAMES).alias("shown"),
        pl.coalesce(pl.col("old_label"), pl.col("old_value").map_elements(fmt_num, return_dtype=pl.String))
        .fill_null("—")
        .alias("old"),
        pl.coalesce(pl.col("new_label"), pl.col("new_value").map_elements(fmt_num, return_dtype=pl.String))
        .fill_null("—")
        .alias("new"),
    )
    total = int(counts["changed"].sum() + counts["appeared"].sum() + counts["disappeared"].sum())
    blocks.append(
        table(
            rows,
            [
                Col("source", "Source"),
                Col("provider", "Provider"),
                Col("model", "Model"),
                Col("variant", "Variant"),
                Col("detail", "Component or cache item"),
                Col("shown", "Implied quantity"),
                Col("old", "Before"),
                Col("new", "After"),
                Col("change_frac", "Change (%)", kind="num", fmt=pct),
            ],
            caption=f"This price change implies …: {rows.height} of {fmt_num(total)} moved quantities, first-party "
            "schedules first, then the largest relative changes (— : not inferable on that side)",
            id="inferred-changes",
        )
    )
    blocks.append(
        Download(
            "inferred-changes",
            ctx.query(f"select * from {INFERRED_TABLE} order by all"),
            "Every implied quantity that moved, before and after",
        )
    )
    return Section(
        heading,
        blocks,
        intro="The pricing fits rerun on the prices before and after, for the schedules "
        "whose prices moved, under the scenario's assumptions.",
    )
