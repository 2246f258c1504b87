"""Which source's price holds when sources disagree about one seller's model on the same day (pure, polars).

**A minimal stand-in for the billing issue's precedence rule (issue 25), written for the price history (issue 28);
the lead reconciles the two at merge.** The rule, :func:`prevailing`: among the price rows of one seller, canonical
model, variant and context tier in effect on a day, the one with the **newest evidence** wins (the last snapshot that
carried the price, ``snapshot_date``; a hand-kept row's own ``from_date``, the day its first-party page set it), then
the **most authoritative source** (:data:`AUTHORITY`: the first-party page kept by hand, then the curated databases
genai-prices and llm-prices, then the LiteLLM map, then OpenRouter's own list). Rows **conflict** when they disagree
on the input or output price by more than :data:`SAME_PRICE_RTOL` (relative).
"""

from __future__ import annotations

import polars as pl

from econ.formula import formula

AUTHORITY = ("hand", "genai_prices", "llm_prices", "litellm", "openrouter")
"""Sources from most to least authoritative (the tie-break after the newest evidence)."""
SAME_PRICE_RTOL = 1e-6
"""Two prices closer than this (relative) are the same price (the maps round to 12 significant digits)."""
GROUP = ["provider", "canonical_model", "variant", "tier_min_prompt_tokens"]
COMPARED = ("input_usd_per_mtok", "output_usd_per_mtok")
FAR = pl.date(9999, 12, 31)


def authority_rank(source: pl.Expr) -> pl.Expr:
    """0 for the most authoritative source (:data:`AUTHORITY`), larger for less; unknown sources last."""
    return source.replace_strict({s: i for i, s in enumerate(AUTHORITY)}, default=len(AUTHORITY), return_dtype=pl.Int64)


def evidence_date(frame_columns: list[str]) -> pl.Expr:
    """The newest evidence of a price row: the last snapshot that carried it, else (hand-kept) its ``from_date``."""
    return pl.coalesce("snapshot_date", "from_date") if "snapshot_date" in frame_columns else pl.col("from_date")


def pieces(periods: pl.DataFrame) -> pl.DataFrame:
    """``periods`` (price rows with :data:`GROUP`, ``source``, ``from_date``, ``to_date``) cut at every date any row
    of the same group starts or ends: one row per original row x elementary interval it covers (``piece_from``,
    ``piece_to``; null: open)."""
    rows = periods.filter(pl.col("canonical_model").is_not_null()).with_row_index("_row")
    bounds = (
        pl.concat(
            [
                rows.select(*GROUP, pl.col("from_date").alias("b")),
                rows.select(*GROUP, pl.coalesce("to_date", FAR).alias("b")),
            ]
        )
        .unique()
        .sort(*GROUP, "b")
        .with_columns(pl.col("b").shift(-1).over(GROUP).alias("b_next"))
        .filter(pl.col("b_next").is_not_null())
    )
    cut = rows.join(bounds, on=GROUP).filter(
        (pl.col("from_date") <= pl.col("b")) & (pl.coalesce("to_date", FAR) >= pl.col("b_next"))
    )
    return cut.with_columns(
        pl.col("b").alias("piece_from"),
        pl.when(pl.col("b_next") == FAR).then(None).otherwise(pl.col("b_next")).alias("piece_to"),
    ).drop("b", "b_next")


@formula(
    "prevailing source = newest evidence (last snapshot carrying the price; a hand row's from_date), then authority "
    "hand > genai_prices > llm_prices > litellm > openrouter",
    "econ stand-in for the billing precedence rule (econ.fits.source_precedence)",
)
def prevailing(periods: pl.DataFrame) -> pl.DataFrame:
    """Per :data:`GROUP` x elementary interval, one row per source (its row with the newest evidence, then the
    shortest key), ranked: ``rank`` 1 prevails; ``candidates`` counts the sources in effect and ``conflict`` says
    whether they disagree on the input or output price."""
    cut = pieces(periods)
    piece = [*GROUP, "piece_from"]
    cut = cut.with_columns(evidence_date(cut.columns).alias("evidence_date"))
    own = (
        cut.sort(
            *piece,
            "source",
            "evidence_date",
            pl.col("model").str.len_chars(),
            "model",
            descending=[False] * 6 + [True, False, False],
        )  # fmt: skip
        .group_by(*piece, "source", maintain_order=True)
        .first()
    )
    ranked = (
        own.with_columns(authority_rank(pl.col("source")).alias("_a"))
        .sort(*piece, "evidence_date", "_a", descending=[False] * 5 + [True, False])
        .with_columns(pl.int_range(1, pl.len() + 1).over(piece).alias("rank"), pl.len().over(piece).alias("candidates"))
    )

    def spread(c: str) -> pl.Expr:
        top, low = pl.col(c).max().over(piece), pl.col(c).min().over(piece)
        return (top - low).abs() > SAME_PRICE_RTOL * top.abs()

    conflict = pl.any_horizontal(spread(c).fill_null(False) for c in COMPARED)
    return ranked.with_columns(conflict.alias("conflict")).drop("_a")


def conflicts(ranked: pl.DataFrame) -> pl.DataFrame:
    """The conflicting candidates of :func:`prevailing`, each beside the prevailing row of its interval, consecutive
    intervals with the same pair and prices merged: ``provider``, ``canonical_model``, ``variant``, tier, ``from_date``,
    ``to_date`` (null: open), the prevailing ``source``/``model``/prices and the ``other_`` ones."""
    piece = [*GROUP, "piece_from"]
    top = ranked.filter(pl.col("conflict") & (pl.col("rank") == 1)).select(
        *piece, "piece_to", "source", "model", *COMPARED, "evidence_date"
    )
    rest = ranked.filter(pl.col("conflict") & (pl.col("rank") > 1)).select(
        *piece,
        pl.col("source").alias("other_source"),
        pl.col("model").alias("other_model"),
        *(pl.col(c).alias(f"other_{c}") for c in COMPARED),
        pl.col("evidence_date").alias("other_evidence_date"),
    )
    pairs = top.join(rest, on=piece).filter(
        pl.any_horizontal(
            ((pl.col(c) - pl.col(f"other_{c}")).abs() > SAME_PRICE_RTOL * pl.col(c).abs()).fill_null(
                pl.col(c).is_null() != pl.col(f"other_{c}").is_null()
            )
            for c in COMPARED
        )
    )
    who = [*GROUP, "source", "model", "other_source", "other_model", *COMPARED, *(f"other_{c}" for c in COMPARED)]
    ordered = pairs.sort(*who, "piece_from", nulls_last=True)
    touching = (pl.col("piece_from") == pl.col("piece_to").shift(1).over(who)).fill_null(False)
    runs = ordered.with_columns((~touching).cast(pl.Int32).cum_sum().over(who).alias("_run"))
    return (
        runs.group_by(*who, "_run", maintain_order=True)
        .agg(
            pl.col("piece_from").first().alias("from_date"),
            pl.col("piece_to").last().alias("to_date"),
            pl.col("evidence_date").last(),
            pl.col("other_evidence_date").last(),
        )
        .drop("_run")
        .sort(*GROUP, "from_date", "other_source", "other_model")
    )


def one_source_per_seller(rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The price rows of one day (``price_current``) with one source per seller's model and variant: the source
    :func:`prevailing` would pick (newest evidence, then authority), all its keys and tiers; and the sources left out
    whose base-tier prices differ (``source``/``provider``/``model``/``variant`` of the kept schedule, the other
    ``other_source``, ``other_evidence_date``, ``other_input_usd_per_mtok``, ``other_output_usd_per_mtok``). Rows of a
    key no rule maps to a canonical model are each their own seller's model."""
    seller = ["provider", "_identity", "variant"]
    keyed = rows.with_columns(pl.coalesce("canonical_model", "model").alias("_identity"))
    evidence = keyed.group_by(*seller, "source").agg(
        evidence_date(keyed.columns).max().alias("evidence_date"),
        pl.col("model").sort_by(pl.col("model").str.len_chars(), "model").first().alias("_model"),
    )
    ranked = evidence.with_columns(authority_rank(pl.col("source")).alias("_a")).sort(
        *seller, "evidence_date", "_a", descending=[False, False, False, True, False], nulls_last=True
    )
    best = ranked.group_by(*seller, maintain_order=True).first().select(*seller, "source", "_model")
    kept = keyed.join(best.drop("_model"), on=[*seller, "source"], how="semi", nulls_equal=True)
    base = keyed.filter(pl.col("tier_min_prompt_tokens") == 0)
    top = base.join(best, left_on=[*seller, "source", "model"], right_on=[*seller, "source", "_model"], how="semi")
    others = (
        base.join(best.select(*seller, pl.col("source").alias("_kept")), on=seller, how="inner", nulls_equal=True)
        .filter(pl.col("source") != pl.col("_kept"))
        .join(
            ranked.select(*seller, "source", "_model"),
            left_on=[*seller, "source", "model"],
            right_on=[*seller, "source", "_model"],
            how="semi",
        )  # fmt: skip
        .select(
            *seller,
            pl.col("source").alias("other_source"),
            evidence_date(keyed.columns).alias("other_evidence_date"),
            *(pl.col(c).alias(f"other_{c}") for c in COMPARED),
        )
    )
    differ = top.select(*seller, "source", "model", *COMPARED).join(others, on=seller, nulls_equal=True)
    differ = differ.filter(
        pl.any_horizontal(
            ((pl.col(c) - pl.col(f"other_{c}")).abs() > SAME_PRICE_RTOL * pl.col(c).abs()).fill_null(
                pl.col(c).is_null() != pl.col(f"other_{c}").is_null()
            )
            for c in COMPARED
        )
    )
    return kept.drop("_identity"), differ.drop("_identity", *COMPARED).sort("provider", "model", "other_source")
