"""``price_history``: every price period next to the one before it for the same key, with each component's change,
the canonical model it sells (``price_keys``), whether the seller makes it and whether the row is free.

The arithmetic is :func:`econ.fits.price_ratios.history`; ``price_current`` is this table's rows in effect on a date.
Prices are read with the sellers' reading rules (``billing_rules``, rule ``zero_cache_price``): a cache price of 0
that a map writes where the seller lists none is blank here (``prices`` keeps what the map said). Each period carries
the day its price is known to have taken effect (``price_date``, :func:`econ.fits.seller_precedence.price_date`: the
date ``econ cost``'s one-price-per-seller rule compares), which a move the change log classes as a suspected upstream
data fix (:func:`econ.fits.change_log.change_log`) does not have.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.model_catalog import CANONICAL, IS_FIRST_PARTY
from econ.analyses.price_columns import PRICE_KEY_COLUMNS, PRICE_VALUE_COLUMNS
from econ.fits import billing_rules as br
from econ.fits import change_log as cl
from econ.fits import model_identity as mi
from econ.fits import price_ratios as pr
from econ.fits import seller_precedence as sp
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "price_history"
INPUTS = ("prices", "price_keys", "billing_rules", "providers", "price_snapshots")
IDENTITY = ("source", "provider", "model", "hugging_face_id")

PRICE_HISTORY = ResultTable(
    name="price_history",
    grain="source x provider x model x variant x context tier x effective period",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens", "from_date"),
    description="Every price period next to the period before it for the same key, with the change of each component, "
    "the canonical model the key sells (price_keys), whether its seller makes it, and whether the row is free",
    columns=(
        *PRICE_KEY_COLUMNS,
        *PRICE_VALUE_COLUMNS,
        C(CANONICAL.name, CANONICAL.dtype, CANONICAL.unit, "input", CANONICAL.meaning + " (price_keys)"),
        C(
            IS_FIRST_PARTY.name,
            IS_FIRST_PARTY.dtype,
            IS_FIRST_PARTY.unit,
            "input",
            IS_FIRST_PARTY.meaning + " (price_keys)",
        ),
        C(
            "is_free",
            "bool",
            "",
            "derived",
            "Free tier or placeholder: input and output prices both at most 0.001 USD/MTok (zero in the maps)",
            mi.is_free,
        ),
        C("prev_from_date", "date", "", "input", "from_date of the previous period of the same key (null: first)"),
        C(
            "prev_snapshot_date",
            "date",
            "",
            "input",
            "Newest snapshot that still showed the previous period's values (null: hand-kept, or first seen): with "
            "from_date, the window in which the change happened (exact when declared); the change happened after it "
            "(econ.fits.seller_precedence)",
        ),
        C("prev_input_usd_per_mtok", "float", "USD/MTok", "input", "Input price of the previous period"),
        C("prev_output_usd_per_mtok", "float", "USD/MTok", "input", "Output price of the previous period"),
        C("prev_cache_read_usd_per_mtok", "float", "USD/MTok", "input", "Cache-read price of the previous period"),
        C(
            "prev_cache_write_5m_usd_per_mtok",
            "float",
            "USD/MTok",
            "input",
            "5-minute cache-write price of the previous period",
        ),
        C(
            "prev_cache_write_1h_usd_per_mtok",
            "float",
            "USD/MTok",
            "input",
            "1-hour cache-write price of the previous period",
        ),
        C("prev_last_commit", "str", "", "input", "Commit of that snapshot (replayed histories)"),
        C(
            "price_change",
            "str",
            "",
            "check",
            "The move into this period: first (the key's first period), move (a published price moved), data fix (a "
            "suspected upstream data fix in price_change_log: a unit slip or revert of more than 10x, a move first "
            "seen where its source changed file, or one the other sources contradict) or listing (no published price "
            "moved: a price newly listed or dropped, a limit changed)",
            cl.change_log,
        ),
        C(
            "price_date",
            "date",
            "",
            "derived",
            "Day the price is known to have taken effect: from_date where the source dates it (hand-kept, declared), "
            "the day after prev_snapshot_date for a move, the previous period's for a listing; null when first seen "
            "or a data fix (econ cost's one-price-per-seller rule compares it)",
            sp.price_date,
        ),
        C("period_number", "int", "", "label", "1 for the key's first period, 2 for the next, ..."),
        C("input_change_frac", "float", "", "derived", "Relative change of the input price", pr.price_change_frac),
        C("output_change_frac", "float", "", "derived", "Relative change of the output price", pr.price_change_frac),
        C(
            "cache_read_change_frac",
            "float",
            "",
            "derived",
            "Relative change of the cache-read price",
            pr.price_change_frac,
        ),
    ),
)
TABLES = (PRICE_HISTORY,)


FORMAT_SWITCHES = """
select commit from (
    select commit, input_path, lag(input_path) over (partition by source order by committed_at, commit) as previous
    from price_snapshots where commit is not null
) where previous is not null and input_path <> previous
"""
"""The snapshots at which a replayed history started reading another file."""


def table(
    prices: pl.DataFrame,
    keys: pl.DataFrame,
    rules: pl.DataFrame,
    providers: pl.DataFrame,
    format_commits: list[str] | None = None,
) -> pl.DataFrame:
    """:func:`econ.fits.price_ratios.history` of ``prices`` (zero cache prices read by the sellers' rules) with the
    key's canonical model, the free flag, what the move into the period was (``price_change``: a price move or a
    suspected data fix by :func:`econ.fits.change_log.change_log`, ``format_commits`` as there) and the price's known
    date (:func:`econ.fits.seller_precedence.price_date`)."""
    identity = keys.select(*IDENTITY, "canonical_model", "is_first_party")
    named = prices.join(identity, on=list(IDENTITY), how="left", nulls_equal=True)
    ruled = br.with_rules(br.with_sellers(named, providers), rules, on="from_date")
    read = br.read_zero_prices(ruled).select(named.columns)
    history = pr.history(read).with_columns(  # pr.history adds prev_snapshot_date and prev_last_commit
        pl.col("is_first_party").fill_null(False),
        mi.is_free(pl.col("input_usd_per_mtok"), pl.col("output_usd_per_mtok")),
    )
    moves = (
        cl.change_log(history, format_commits=format_commits)
        .group_by(*cl.KEY, pl.col("change_date").alias("from_date"))
        .agg((pl.col("change_class") == "suspected data fix").any().alias("_fix"))
    )
    change = (
        pl.when(pl.col("prev_from_date").is_null())
        .then(pl.lit("first"))
        .when(pl.col("_fix"))
        .then(pl.lit("data fix"))
        .when(pl.col("_fix").is_not_null())
        .then(pl.lit("move"))
        .otherwise(pl.lit("listing"))
    )
    return (
        history.join(moves, on=[*cl.KEY, "from_date"], how="left", nulls_equal=True)
        .with_columns(change.alias("price_change"))
        .with_columns(sp.price_date(cl.KEY))
        .drop("_fix")
    )


def run(ctx) -> None:
    ctx.write(
        PRICE_HISTORY,
        table(
            ctx.query("select * from prices"),
            ctx.query("select * from price_keys"),
            ctx.query("select * from billing_rules"),
            ctx.query("select provider, seller from providers"),
            ctx.query(FORMAT_SWITCHES)["commit"].to_list(),
        ),
    )
