"""One price per seller: which of several price schedules of one seller, model and variant holds (pure).

The same offer (a seller, a region of it, a model, a variant) is often priced by several rows: the hand-kept
first-party row, the replayed genai-prices and llm-prices histories, the LiteLLM map under one or more keys, OpenRouter.
**The rule of the billing issue**:

1. **By date.** The schedule whose price is known to have taken effect latest holds. A source that states when a
   price took effect (hand-kept rows: ``from_date``; a replayed history's own dated price, ``declared``) dates it so; a
   source that only observes prices (a dated price-map snapshot, a commit of a history) dates a price by the change it
   saw: the day after the last snapshot that still showed the previous values (``prev_snapshot_date``), the earliest
   the change can have happened. A price a source shows from its first appearance has no known date: it never beats a
   dated one (first seen is not a change); nor has a move the change log classes as a suspected upstream data fix (a
   unit slip or revert, a move the other sources contradict), and a period in which no published price moved (a price
   newly listed, a limit changed) keeps the date of the one before (:func:`price_date`).
2. **Then by authority**: :data:`SOURCE_AUTHORITY` (hand-kept pages, then LiteLLM, then OpenRouter, then the replayed
   histories of genai-prices and llm-prices), then the shortest price key (``claude-sonnet-4-5`` before
   ``claude-sonnet-4-5-20250929``), then alphabetical. The histories come last: they date prices and fill the days
   before the maps' first snapshots, but their newest snapshots are older than the maps' (an undated price a map
   shows more recently holds), OpenRouter's own list is the authority on OpenRouter's prices, and a history's row may
   leave out a tier the map lists (genai-prices prices Sonnet 4.5 on Bedrock without its long-context tier).

:func:`rank_schedules` applies it to the schedules of one day (``econ cost``, the worked bills); :func:`prevailing`
applies it day by day over the whole price history (the conflicts between sources and the first-party price over time,
:func:`conflicts`). A new price source adds itself to :data:`SOURCE_AUTHORITY` and :data:`DATE_KIND`. The offer's region
comes from the price key (:func:`region`): Bedrock and Azure sell one model at different prices by region, and those
are different offers.
"""

from __future__ import annotations

import polars as pl

from econ.fits.model_identity import model_name
from econ.formula import formula

SOURCE_AUTHORITY: tuple[str, ...] = ("hand", "litellm", "openrouter", "genai_prices", "llm_prices")
"""Price sources, most authoritative first (also the preference of :mod:`econ.fits.price_selection`)."""

DATE_KIND: dict[str, str] = {
    "hand": "effective",
    "genai_prices": "observed",
    "llm_prices": "observed",
    "litellm": "observed",
    "openrouter": "observed",
}
"""How each source dates a price: ``effective`` (from_date is the day the price took effect) or ``observed`` (dated
snapshots or commits: from_date is the first snapshot that showed it). A row whose ``declared`` flag is set carries the
source's own date (genai-prices' and llm-prices' dated prices) and is dated like an ``effective`` one."""
SAME_PRICE_RTOL = 1e-6
"""Two prices closer than this (relative) are the same price (the maps round to 12 significant digits)."""
COMPARED = ("input_usd_per_mtok", "output_usd_per_mtok")
"""The prices whose disagreement is a conflict between sources."""

REGION_SEGMENT = r"^(?:[a-z]{2}(?:-gov)?-[a-z]+-\d+|us|eu|global|apac|claude_platform)$"
"""A price-key path segment that names a region or a separately run platform (``us-gov-east-1``, ``eu``)."""
REGION_PREFIX = r"^(us-gov|us|eu|apac|au|jp|ca|sa|global)\.[a-z]+\."
"""A Bedrock cross-region prefix of the key's last segment (``eu.anthropic.claude-…``)."""
HOST_PREFIX = r"^(fw)-"
"""A host prefix of the key's last segment naming another deployment of the model (Azure's ``FW-`` Fireworks ones)."""
TAG_SUFFIX = r":([a-z][a-z0-9_-]*)$"
"""A tag after the key naming another product of the seller (``:variant1``, ``:priority``; not Bedrock's ``:0``)."""


def region() -> pl.Expr:
    """What part of a seller a price key names, "" when none: a region or platform (:data:`REGION_SEGMENT`,
    :data:`REGION_PREFIX`), a host (:data:`HOST_PREFIX`) and a product tag (:data:`TAG_SUFFIX`), joined by '+'."""
    parts = pl.col("model").str.to_lowercase().str.split("/")
    last = parts.list.last()
    segment = (
        parts.list.slice(0, parts.list.len() - 1)
        .list.eval(pl.element().filter(pl.element().str.contains(REGION_SEGMENT)))
        .list.first()
    )
    place = pl.coalesce(segment, last.str.extract(REGION_PREFIX, 1))
    tags = [place, last.str.extract(HOST_PREFIX, 1), last.str.extract(TAG_SUFFIX, 1)]
    return pl.concat_str(tags, separator="+", ignore_nulls=True).fill_null("").alias("region")


def offer(*within: str) -> pl.Expr:
    """The offer a row prices: seller, region, model and variant (needs ``seller``, ``model``, ``canonical_model``).

    The model is the row's canonical model; a key the naming rules leave unmapped takes the canonical model of another
    key of the seller with the same name (LiteLLM's ``deepseek-chat`` is the hand-kept ``deepseek-chat``, which names
    DeepSeek-V3.2 by its Hugging Face id), else its own name. ``within``: columns that split the frame into frames of
    their own (another key is looked for only among rows that agree on them).
    """
    name = model_name(pl.col("model"))
    known = pl.col("canonical_model").drop_nulls().first().over(*within, pl.col("seller"), name)
    return pl.concat_str(
        [pl.col("seller"), region(), pl.coalesce("canonical_model", known, name), pl.col("variant")], separator="|"
    ).alias("offer")


PRICE_CHANGES = ("first", "move", "data fix", "listing")
"""What the move into a period was (``price_change``): the key's first period, a published price that moved, a move
the change log classes as a suspected upstream data fix, or no published price moved (a price newly listed or no
longer listed, a limit changed)."""
_BROKEN = pl.date(1, 1, 1)


@formula(
    "holds = argmax over the offer's schedules of (known price date, -authority rank, -len(key))",
    "econ.fits.seller_precedence (the rule of the billing issue: by date, then by authority)",
)
def price_date(key: list[str] | None = None) -> pl.Expr:
    """The day a row's price is known to have taken effect (null when unknown; needs ``source``, ``from_date``,
    ``prev_snapshot_date``, ``declared`` and ``price_change``, :data:`PRICE_CHANGES`).

    A hand-kept row takes effect on its ``from_date`` (the first-party page's date), and so does a price a history
    dates itself (``declared``) where it is new or moved; a published price that moved otherwise, the day after the
    last snapshot with the old one. A move the change log classes as a suspected upstream data fix (a
    unit slip, a revert, a move the other sources contradict) is not a known change of price: no date (llm-prices put
    o3 back to its launch price in 2025-10, after OpenAI's cut, which genai-prices and LiteLLM kept). With ``key`` (the
    price key's columns), a period in which no published price moved (genai-prices listing a 1-hour cache write it
    had not listed, or dating the day it dropped Opus 4.6's long-context tier while the base price stayed) keeps the
    date of the period before it: its prices took effect then.
    """
    change = pl.col("price_change")
    effective = pl.col("source").replace_strict(DATE_KIND, default="observed") == "effective"
    declared = pl.col("declared").fill_null(False) & change.is_in(["first", "move"])
    own = (
        pl.when(effective | declared)
        .then(pl.col("from_date"))
        .when(change == "move")
        .then(pl.col("prev_snapshot_date") + pl.duration(days=1))
        .when(change == "data fix")
        .then(_BROKEN)
    )
    if key is not None:
        own = pl.when(effective | (change != "listing")).then(own).forward_fill().over(key, order_by="from_date")
    return pl.when(own == _BROKEN).then(None).otherwise(own).alias("price_date")


def authority() -> pl.Expr:
    """0 for the most authoritative source (:data:`SOURCE_AUTHORITY`), larger for less; unknown sources last."""
    ranks = {s: i for i, s in enumerate(SOURCE_AUTHORITY)}
    return pl.col("source").replace_strict(ranks, default=len(SOURCE_AUTHORITY), return_dtype=pl.Int64)


def _ordered(frame: pl.DataFrame, group: list[str], *then: str) -> pl.DataFrame:
    """``frame`` sorted by ``group``, then the rule: the latest known price date (unknown last), the most
    authoritative source, the shortest key, the key, then ``then``."""
    return frame.sort(
        [*group, "price_date", authority(), pl.col("model").str.len_chars(), "model", *then],
        descending=[False] * len(group) + [True] + [False] * (3 + len(then)),
        nulls_last=True,
    )


def rank_schedules(schedules: pl.DataFrame) -> pl.DataFrame:
    """Add ``offer_rank`` (1 = the schedule that holds) and ``held_by`` (the holding schedule's ``schedule``).

    ``schedules``: one row per schedule with ``schedule``, ``offer``, ``source``, ``model`` and ``price_date``.
    """
    ranked = _ordered(schedules, ["offer"], "schedule").with_columns(
        pl.int_range(1, pl.len() + 1).over("offer").alias("offer_rank")
    )
    return ranked.with_columns(pl.col("schedule").first().over("offer", order_by="offer_rank").alias("held_by"))


PIECE = ["offer", "tier_min_prompt_tokens", "piece_from"]
FAR = pl.date(9999, 12, 31)


def pieces(periods: pl.DataFrame) -> pl.DataFrame:
    """``periods`` (price rows with ``offer``, ``tier_min_prompt_tokens``, ``from_date``, ``to_date``) cut at every date
    a row of the same offer and tier starts or ends: one row per original row x elementary interval it covers
    (``piece_from``, ``piece_to``; null: open)."""
    group = PIECE[:2]
    rows = periods.with_row_index("_row")
    bounds = (
        pl.concat(
            [
                rows.select(*group, pl.col("from_date").alias("b")),
                rows.select(*group, pl.coalesce("to_date", FAR).alias("b")),
            ]
        )
        .unique()
        .sort(*group, "b")
        .with_columns(pl.col("b").shift(-1).over(group).alias("b_next"))
        .filter(pl.col("b_next").is_not_null())
    )
    cut = rows.join(bounds, on=group).filter(
        (pl.col("from_date") <= pl.col("b")) & (pl.coalesce("to_date", FAR) >= pl.col("b_next"))
    )
    return cut.with_columns(
        pl.col("b").alias("piece_from"),
        pl.when(pl.col("b_next") == FAR).then(None).otherwise(pl.col("b_next")).alias("piece_to"),
    ).drop("b", "b_next", "_row")


def prevailing(periods: pl.DataFrame) -> pl.DataFrame:
    """The rule applied day by day: per offer, tier and elementary interval (:func:`pieces`) one row per source (its
    row the rule prefers), ranked by the rule (``rank`` 1 holds); ``candidates`` counts the sources in effect and
    ``conflict`` says whether they disagree on the input or output price (:data:`COMPARED`).

    ``periods``: price rows with ``offer``, ``source``, ``provider``, ``model``, ``tier_min_prompt_tokens``,
    ``from_date``, ``to_date``, ``price_date`` (:func:`price_date`) and the prices."""
    cut = _ordered(pieces(periods), PIECE)
    own = cut.group_by(*PIECE, "source", maintain_order=True).first()
    ranked = _ordered(own, PIECE).with_columns(
        pl.int_range(1, pl.len() + 1).over(PIECE).alias("rank"), pl.len().over(PIECE).alias("candidates")
    )

    def spread(c: str) -> pl.Expr:
        top, low = pl.col(c).max().over(PIECE), pl.col(c).min().over(PIECE)
        return (top - low).abs() > SAME_PRICE_RTOL * top.abs()

    return ranked.with_columns(pl.any_horizontal(spread(c).fill_null(False) for c in COMPARED).alias("conflict"))


def _differ() -> pl.Expr:
    return pl.any_horizontal(
        ((pl.col(c) - pl.col(f"other_{c}")).abs() > SAME_PRICE_RTOL * pl.col(c).abs()).fill_null(
            pl.col(c).is_null() != pl.col(f"other_{c}").is_null()
        )
        for c in COMPARED
    )


def conflicts(ranked: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The conflicting candidates of :func:`prevailing`, each beside the row that holds in its interval, consecutive
    intervals with the same pair and prices merged: ``keys`` (columns of the offer, such as seller and model), the
    tier, ``from_date``, ``to_date`` (null: open), the holding ``source``/``provider``/``model``/prices/``price_date``,
    ``held_by`` (``date`` when its price is known to have taken effect later, else ``authority``) and the ``other_``
    ones."""
    piece = [*PIECE, *keys]
    held = ["source", "provider", "model", *COMPARED, "price_date"]
    top = ranked.filter(pl.col("conflict") & (pl.col("rank") == 1)).select(*piece, "piece_to", *held)
    rest = ranked.filter(pl.col("conflict") & (pl.col("rank") > 1)).select(
        *piece, *(pl.col(c).alias(f"other_{c}") for c in held)
    )
    pairs = top.join(rest, on=piece, nulls_equal=True).filter(_differ())
    who = [*PIECE[:2], *keys, *held[:-1], *(f"other_{c}" for c in held[:-1])]
    ordered = pairs.sort(*who, "piece_from", nulls_last=True)
    touching = (pl.col("piece_from") == pl.col("piece_to").shift(1).over(who)).fill_null(False)
    runs = ordered.with_columns((~touching).cast(pl.Int32).cum_sum().over(who).alias("_run"))
    later = pl.col("price_date").is_not_null() & (
        pl.col("other_price_date").is_null() | (pl.col("price_date") > pl.col("other_price_date"))
    )
    return (
        runs.group_by(*who, "_run", maintain_order=True)
        .agg(
            pl.col("piece_from").first().alias("from_date"),
            pl.col("piece_to").last().alias("to_date"),
            pl.col("price_date").last(),
            pl.col("other_price_date").last(),
        )
        .drop("_run")
        .with_columns(pl.when(later).then(pl.lit("date")).otherwise(pl.lit("authority")).alias("held_by"))
        .sort(*keys, "tier_min_prompt_tokens", "from_date", "other_source", "other_model", nulls_last=True)
    )
