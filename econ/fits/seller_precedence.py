"""One price per seller: which of several price schedules of one seller, model and variant holds (pure).

The same offer (a seller, a region of it, a model, a variant) is often priced by several rows: the hand-kept
first-party row, the LiteLLM map under one or more keys, OpenRouter. **The rule of the billing issue**:

1. **By date.** The schedule whose price is known to have taken effect latest holds. A source that states when a
   price took effect (hand-kept rows: ``from_date``) dates it so; a source that only observes prices (a dated price-map
   snapshot) dates a price by the change it saw: the day after the last snapshot that still showed the previous values
   (``prev_snapshot_date``), the earliest the change can have happened. A price a map shows from its first appearance
   has no known date: it never beats a dated one (first seen is not a change).
2. **Then by authority**: :data:`SOURCE_AUTHORITY` (hand-kept pages before LiteLLM before OpenRouter), then the shortest
   price key (``claude-sonnet-4-5`` before ``claude-sonnet-4-5-20250929``), then alphabetical.

:func:`rank_schedules` applies it; a new price source adds itself to :data:`SOURCE_AUTHORITY` and :data:`DATE_KIND`.
The offer's region comes from the price key (:func:`region`): Bedrock and Azure sell one model at different prices by
region, and those are different offers.
"""

from __future__ import annotations

import polars as pl

from econ.fits.model_identity import model_name
from econ.formula import formula

SOURCE_AUTHORITY: tuple[str, ...] = ("hand", "litellm", "openrouter")
"""Price sources, most authoritative first (also the preference of :mod:`econ.fits.price_selection`)."""

DATE_KIND: dict[str, str] = {"hand": "effective", "litellm": "observed", "openrouter": "observed"}
"""How each source dates a price: ``effective`` (from_date is the day the price took effect) or ``observed`` (dated
snapshots of a map: from_date is the first snapshot that showed it)."""

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


def offer() -> pl.Expr:
    """The offer a row prices: seller, region, model and variant (needs ``seller``, ``model``, ``canonical_model``).

    The model is the row's canonical model; a key the naming rules leave unmapped takes the canonical model of another
    key of the seller with the same name (LiteLLM's ``deepseek-chat`` is the hand-kept ``deepseek-chat``, which names
    DeepSeek-V3.2 by its Hugging Face id), else its own name.
    """
    name = model_name(pl.col("model"))
    known = pl.col("canonical_model").drop_nulls().first().over(pl.col("seller"), name)
    return pl.concat_str(
        [pl.col("seller"), region(), pl.coalesce("canonical_model", known, name), pl.col("variant")], separator="|"
    ).alias("offer")


@formula(
    "holds = argmax over the offer's schedules of (known price date, -authority rank, -len(key))",
    "econ.fits.seller_precedence (the rule of the billing issue: by date, then by authority)",
)
def price_date() -> pl.Expr:
    """The day a row's price is known to have taken effect (null when unknown; needs ``source``, ``from_date`` and
    ``prev_snapshot_date``)."""
    effective = pl.col("source").replace_strict(DATE_KIND, default="observed") == "effective"
    changed = pl.col("prev_snapshot_date") + pl.duration(days=1)
    return pl.when(effective).then(pl.col("from_date")).otherwise(changed).alias("price_date")


def rank_schedules(schedules: pl.DataFrame) -> pl.DataFrame:
    """Add ``offer_rank`` (1 = the schedule that holds) and ``held_by`` (the holding schedule's ``schedule``).

    ``schedules``: one row per schedule with ``schedule``, ``offer``, ``source``, ``model`` and ``price_date``.
    """
    authority = pl.col("source").replace_strict(
        {s: i for i, s in enumerate(SOURCE_AUTHORITY)}, default=len(SOURCE_AUTHORITY), return_dtype=pl.Int64
    )
    ranked = schedules.sort(
        ["offer", "price_date", authority, pl.col("model").str.len_chars(), "model", "schedule"],
        descending=[False, True, False, False, False, False],
        nulls_last=True,
    ).with_columns(pl.int_range(1, pl.len() + 1).over("offer").alias("offer_rank"))
    return ranked.with_columns(pl.col("schedule").first().over("offer", order_by="offer_rank").alias("held_by"))
