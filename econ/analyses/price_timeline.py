"""The price history as a feature: every change dated to its window, the first-party changes across sources, the
conflicts between sources and the prevailing first-party price of each model over time.

``price_change_log`` is every price component that moved between two periods of a key (:func:`econ.fits.change_log.
change_log`); ``first_party_price_changes`` the first-party moves merged across sources and keys; ``price_conflicts``
the days on which two sources disagree about one seller's offer of a model and which one holds (the billing issue's
rule, :mod:`econ.fits.seller_precedence`: by date, then by authority, the rule ``econ cost`` bills by);
``first_party_price_timeline`` the holding first-party standard base-tier price of every canonical model over time,
by family (the What-changed page's "price over time" charts).
"""

from __future__ import annotations

import polars as pl

from econ.analyses.price_columns import PRICE_KEY_COLUMNS
from econ.analyses.price_history import FORMAT_SWITCHES
from econ.fits import billing_rules as br
from econ.fits import change_log as cl
from econ.fits import price_changes as pc
from econ.fits import seller_precedence as sp
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "price_timeline"
INPUTS = ("price_history", "model_catalog", "price_snapshots", "providers")

_WINDOW = (
    C("window_from_date", "date", "", "derived", "Newest snapshot of the source that still had the old price (the "
      "window's start, exclusive); the change day itself when exact", cl.change_log),
    C("window_to_date", "date", "", "derived", "First snapshot of the source with the new price (the window's end, "
      "inclusive), or the day the source names", cl.change_log),
    C("exact", "bool", "", "derived", "The source dates the new price itself (a hand-kept row or a dated price of a "
      "replayed history): the window is that day", cl.change_log),
    C("window_from_commit", "str", "", "input", "Commit of the snapshot at window_from_date (replayed histories)"),
    C("window_to_commit", "str", "", "input", "Commit of the snapshot that first showed the new price (replayed "
      "histories): the source commit of the change"),
)  # fmt: skip
_PRICES = (
    C("component", "str", "", "key", "Price component: input, output, cache_read, cache_write_5m, cache_write_1h"),
    C("change_date", "date", "", "key", "Day the new price holds from (prices.from_date of the new period)"),
    C("old_usd_per_mtok", "float", "USD/MTok", "input", "Price of the previous period"),
    C("new_usd_per_mtok", "float", "USD/MTok", "input", "Price of the new period"),
    C("change_frac", "float", "", "derived", "new / old - 1", cl.change_log),
)

_SELLER_MODEL = (
    C("provider", "str", "", "key", "Seller"),
    C("canonical_model", "str", "", "key", "Canonical model (the price key where it has none)"),
    C("variant", "str", "", "key", "Service variant"),
    C("tier_min_prompt_tokens", "int", "tokens", "key", "Long-context tier (0 = base)"),
)
_PRICE_PAIR = (
    C("input_usd_per_mtok", "float", "USD/MTok", "input", "Input price"),
    C("output_usd_per_mtok", "float", "USD/MTok", "input", "Output price"),
)

PRICE_CHANGE_LOG = ResultTable(
    name="price_change_log",
    grain="price key x effective period x price component that moved from the previous period",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens", "change_date", "component"),
    description="Every price change in the history (hand-kept pages, snapshots, replayed histories), dated to the "
    "window between the last snapshot that had the old price and the first that had the new one (exact where the "
    "source dates it), with the commits, classified as a price move or a suspected upstream data fix",
    columns=(
        *PRICE_KEY_COLUMNS,
        *_PRICES,
        *_WINDOW,
        C("canonical_model", "str", "", "input", "Canonical model of the key (price_keys)"),
        C("is_first_party", "bool", "", "input", "The seller makes the model (price_keys)"),
        C(
            "contradicted",
            "bool",
            "",
            "check",
            "Another source contradicts the move (had the new price during the "
            "old period and never the old, or the old during the new and never the new; a source's current price "
            "counts up to its newest snapshot, a dated or hand-kept one until changed)",
            cl.change_log,
        ),  # fmt: skip
        C(
            "format_change",
            "bool",
            "",
            "check",
            "First seen at the snapshot where its source started reading another file (genai-prices' v2 feed)",
            cl.change_log,
        ),
        C(
            "change_class",
            "str",
            "",
            "derived",
            "price move up, price move down or suspected data fix (a unit slip or revert of more than 10x, a move "
            "first seen where the source changed its file, or a move the other sources contradict)",
            cl.change_log,
        ),
        C(
            "fix_reason",
            "str",
            "",
            "derived",
            "Why a suspected data fix is one: unit slip or revert (of more than 10x), contradicted (by the other "
            "sources), format switch (first seen there); several joined by '; '; null for a price move. econ diff "
            "and price_changes read it",
            pc.fix_reason,
        ),
    ),
)

FIRST_PARTY_PRICE_CHANGES = ResultTable(
    name="first_party_price_changes",
    grain="source x seller x model x variant x tier x component x (old, new) price",
    key=(
        "provider",
        "canonical_model",
        "variant",
        "tier_min_prompt_tokens",
        "component",
        "change_date",
        "source",
        "old_usd_per_mtok",
    ),  # fmt: skip
    description="Every first-party price move since 2024 (the seller makes the model), as each source dates it: "
    "per source the best-dated price key (exact first, then the narrowest window), its window and commits, and how "
    "many sources show the same move",
    columns=(
        *_SELLER_MODEL,
        *_PRICES,
        *_WINDOW,
        C(
            "window_days",
            "int",
            "days",
            "derived",
            "Days between window_from_date and window_to_date (0: exact or within a day)",
            cl.first_party_changes,
        ),  # fmt: skip
        C("source", "str", "", "key", "Source of this dating"),
        C("model", "str", "", "input", "Its price key"),
        C(
            "agreeing_sources",
            "int",
            "",
            "check",
            "Sources that show the same move of this seller's model",
            cl.first_party_changes,
        ),  # fmt: skip
        C("change_class", "str", "", "derived", "price move up or price move down", cl.change_log),
    ),
)

_OFFER = (
    C("seller", "str", "", "key", "Seller (providers.seller: gemini and google are one)"),
    C("region", "str", "", "key", 'Region, host or product tag of the price keys ("" for the seller\'s main offer)'),
    C("canonical_model", "str", "", "key", "Canonical model"),
    C("variant", "str", "", "key", "Service variant"),
    C("tier_min_prompt_tokens", "int", "tokens", "key", "Long-context tier (0 = base)"),
)
_HOLDS = "Source whose price holds by the billing rule (by date, then by authority; econ.fits.seller_precedence)"
_PRICE_DATE = "Day its price is known to have taken effect (its own date, else the day after the last snapshot "
"with the previous price; null: first seen, undated)"

PRICE_CONFLICTS = ResultTable(
    name="price_conflicts",
    grain="seller x region x canonical model x variant x tier x period x pair of disagreeing sources",
    key=(
        "seller",
        "region",
        "canonical_model",
        "variant",
        "tier_min_prompt_tokens",
        "from_date",
        "other_source",
        "other_provider",
        "other_model",
    ),  # fmt: skip
    description="Days on which two sources price one seller's offer of a model differently (input or output), the "
    "source whose price holds by the billing rule (by date, then by authority: the rule econ cost bills by) and the "
    "one it overrides",
    columns=(
        *_OFFER,
        C("from_date", "date", "", "key", "First day of the disagreement"),
        C("to_date", "date", "", "input", "First day it no longer holds (null: still)"),
        C("source", "str", "", "derived", _HOLDS, sp.price_date),
        C("provider", "str", "", "input", "Its provider name (prices.provider)"),
        C("model", "str", "", "input", "Its price key"),
        *_PRICE_PAIR,
        C("price_date", "date", "", "derived", _PRICE_DATE, sp.price_date),
        C(
            "held_by",
            "str",
            "",
            "derived",
            "Why it holds: date (its price took effect later) or authority",
            sp.price_date,
        ),
        C("other_source", "str", "", "key", "Source it overrides"),
        C("other_provider", "str", "", "key", "That source's provider name"),
        C("other_model", "str", "", "key", "That source's price key"),
        C("other_input_usd_per_mtok", "float", "USD/MTok", "input", "Its input price"),
        C("other_output_usd_per_mtok", "float", "USD/MTok", "input", "Its output price"),
        C("other_price_date", "date", "", "derived", "Its known price date", sp.price_date),
    ),
)

FIRST_PARTY_PRICE_TIMELINE = ResultTable(
    name="first_party_price_timeline",
    grain="seller x canonical model x period (first-party, main offer, standard variant, base tier)",
    key=("seller", "canonical_model", "from_date"),
    description="The first-party price of every canonical model over time (the seller's main offer: no region or tag; "
    "standard variant, base tier; the source whose price holds each day by the billing rule), with its family: the "
    "price-over-time charts",
    columns=(
        C("family", "str", "", "input", "Model family (model_catalog)"),
        C("seller", "str", "", "key", "Seller (a maker's own API; providers.seller)"),
        C("canonical_model", "str", "", "key", "Canonical model"),
        C("from_date", "date", "", "key", "First day of the period"),
        C("to_date", "date", "", "input", "First day after it (null: current)"),
        *_PRICE_PAIR,
        C("source", "str", "", "derived", _HOLDS, sp.price_date),
        C("provider", "str", "", "input", "Its provider name (prices.provider)"),
        C("sources", "int", "", "check", "Sources in effect over the period (most on any day)"),
    ),
)
TABLES = (PRICE_CHANGE_LOG, FIRST_PARTY_PRICE_CHANGES, PRICE_CONFLICTS, FIRST_PARTY_PRICE_TIMELINE)


def offers(history: pl.DataFrame, providers: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``price_history`` that name a canonical model and price something (not free), with their seller,
    offer and region (:mod:`econ.fits.seller_precedence`; ``price_date`` is price_history's)."""
    named = history.filter(pl.col("canonical_model").is_not_null() & ~pl.col("is_free"))
    return br.with_sellers(named, providers).with_columns(sp.offer(), sp.region())


def timeline(ranked: pl.DataFrame, families: pl.DataFrame) -> pl.DataFrame:
    """The holding rows of first-party standard base-tier prices, consecutive days with one price merged."""
    top = ranked.filter(pl.col("rank") == 1).sort("seller", "canonical_model", "piece_from")
    key = ["seller", "canonical_model"]
    same = pl.all_horizontal(
        pl.col(c).eq_missing(pl.col(c).shift(1).over(key)) for c in ("input_usd_per_mtok", "output_usd_per_mtok")
    ) & (pl.col("piece_from") == pl.col("piece_to").shift(1).over(key))
    runs = top.with_columns((~same.fill_null(False)).cast(pl.Int32).cum_sum().over(key).alias("_run"))
    merged = runs.group_by(*key, "_run", maintain_order=True).agg(
        pl.col("piece_from").first().alias("from_date"),
        pl.col("piece_to").last().alias("to_date"),
        pl.col("input_usd_per_mtok").first(),
        pl.col("output_usd_per_mtok").first(),
        pl.col("source").last(),
        pl.col("provider").last(),
        pl.col("candidates").max().alias("sources"),
    )
    return merged.join(families, on="canonical_model", how="left").select(FIRST_PARTY_PRICE_TIMELINE.names)


def run(ctx) -> None:
    history = ctx.query("select * from price_history")
    switches = ctx.query(FORMAT_SWITCHES)["commit"].to_list()
    log = cl.change_log(history, format_commits=switches)
    ctx.write(PRICE_CHANGE_LOG, log.select(PRICE_CHANGE_LOG.names))
    ctx.write(FIRST_PARTY_PRICE_CHANGES, cl.first_party_changes(log).select(FIRST_PARTY_PRICE_CHANGES.names))
    priced = offers(history, ctx.query("select provider, seller from providers"))
    ranked = sp.prevailing(priced)
    keys = ["seller", "region", "canonical_model", "variant"]
    ctx.write(PRICE_CONFLICTS, sp.conflicts(ranked, keys).select(PRICE_CONFLICTS.names))
    first_party = priced.filter(
        pl.col("is_first_party") & (pl.col("region") == "") & (pl.col("variant") == "standard")
        & (pl.col("tier_min_prompt_tokens") == 0) & pl.col("input_usd_per_mtok").is_not_null()
    )  # fmt: skip
    families = ctx.query("select canonical_model, family from model_catalog")
    ctx.write(FIRST_PARTY_PRICE_TIMELINE, timeline(sp.prevailing(first_party), families))
