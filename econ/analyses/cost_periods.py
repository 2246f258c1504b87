"""A workload whose requests carry times, billed at the prices of each request's own date (``econ cost``).

A price row holds from its ``from_date`` until its ``to_date``, and a billing rule the same way, so the days between
two consecutive such dates (of any row of ``price_history`` or ``billing_rules``) bill alike: a *price period*. The
requests are grouped by the period their date (UTC) falls in, each group is billed at its period's prices
(:func:`econ.analyses.billing.bill`), and the groups' bills are added up per offer (a seller's model and variant,
:func:`econ.fits.seller_precedence.offer`): the schedule that holds the offer may change between periods (a newer
snapshot of another source), and the total is what the seller billed, period by period. An offer with no price in
some period cannot bill the whole workload: it is refused, with the dates it has no price for.

genai-prices prices a request at its timestamp the same way (``calc_price(..., genai_request_timestamp=...)``).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.analyses.billing import COMPONENTS

SUMMED = ("cost_usd", *COMPONENTS)
DATES = ("from_date", "to_date")


def period_starts(days: pl.Series, history: pl.DataFrame, rules: pl.DataFrame) -> pl.Series:
    """For each day, the first day of its price period: the latest ``from_date`` or ``to_date`` of a price row or a
    billing rule at or before it (the day itself when none is)."""
    dated = [frame.select(pl.col(c).cast(pl.Date).alias("edge")) for frame in (history, rules) for c in DATES]
    edges = pl.concat(dated)
    edges = edges.drop_nulls().unique().sort("edge")
    looked_up = (
        pl.DataFrame({"day": days.cast(pl.Date)})
        .with_row_index("_i")
        .sort("day")
        .join_asof(edges, left_on="day", right_on="edge", strategy="backward")
        .sort("_i")
    )
    return looked_up.select(pl.coalesce("edge", "day").alias("period"))["period"]


def _days(first: str | pl.Expr, last: str | pl.Expr) -> pl.Expr:
    """``2026-07-20`` or ``2026-07-20…2026-08-05``."""
    first, last = (pl.col(x) if isinstance(x, str) else x for x in (first, last))
    return pl.when(first == last).then(first.cast(pl.String)).otherwise(pl.format("{}…{}", first, last))


def combine(parts: list[tuple[date, date, pl.DataFrame]], requests_total: int) -> pl.DataFrame:
    """The bills of the periods (first day, last day, :class:`~econ.analyses.billing.Bill` schedules) as one bill per
    offer, in the columns of one period's bill. Superseded schedules are kept per schedule, as in one period."""
    rows = pl.concat(
        [frame.with_columns(pl.lit(lo).alias("_first"), pl.lit(hi).alias("_last")) for lo, hi, frame in parts],
        how="diagonal_relaxed",
    )

    def total(column: str) -> pl.Expr:
        return pl.when(pl.col(column).is_null().any()).then(None).otherwise(pl.col(column).sum()).alias(column)

    def joined(column: str) -> pl.Expr:
        kept = pl.col(column).is_not_null() & (pl.col(column) != "")
        return pl.col(column).filter(kept).unique(maintain_order=True).str.join("; ")

    span = _days(pl.col("_first").min(), pl.col("_last").max())
    held = (
        rows.filter(pl.col("offer_rank") == 1)
        .group_by("offer", maintain_order=True)
        .agg(
            pl.col("source").unique(maintain_order=True).str.join(", "),
            pl.col("provider", "model", "variant", "is_first_party").first(),
            pl.col("requests").sum(),
            pl.col("tier_min_prompt_tokens").max(),
            pl.col("max_input_tokens").min(),
            *(total(c) for c in SUMMED),
            joined("price_row").alias("price_row"),
            pl.col("refusal").drop_nulls().first(),
            (pl.col("status") == "refused").any().alias("_refused"),
            joined("conflict").alias("conflict"),
            joined("note").alias("note"),
            pl.col("price_row").n_unique().alias("_rows"),
            pl.format("{} by {}", _days("_first", "_last"), "price_row").str.join(", ").alias("_periods"),
            span.alias("_span"),
        )
    )
    missing = requests_total - pl.col("requests")
    held = held.with_columns(
        pl.when(pl.col("refusal").is_null() & (missing > 0))
        .then(pl.format("no price for {} of the {} requests (priced only {})", missing, requests_total, "_span"))
        .otherwise(pl.col("refusal"))
        .alias("refusal")
    ).with_columns(
        pl.when(pl.col("_refused") | pl.col("refusal").is_not_null())
        .then(pl.lit("refused"))
        .otherwise(pl.lit("billed"))
        .alias("status"),
        pl.concat_str(
            [pl.col("note"), pl.when(pl.col("_rows") > 1).then(pl.format("priced {}", "_periods"))],
            separator="; ",
            ignore_nulls=True,
        )
        .str.strip_prefix("; ")
        .alias("note"),
    )
    held = held.with_columns(
        *(pl.when(pl.col("status") == "refused").then(None).otherwise(pl.col(c)).alias(c) for c in SUMMED)
    )
    superseded = (
        rows.filter(pl.col("offer_rank") > 1)
        .group_by("schedule", maintain_order=True)
        .agg(
            pl.col("offer", "source", "provider", "model", "variant", "is_first_party", "refusal", "conflict").first(),
            pl.col("requests").sum(),
            pl.col("tier_min_prompt_tokens").max(),
            pl.col("max_input_tokens").min(),
            *(total(c) for c in SUMMED),
            joined("price_row").alias("price_row"),
            joined("note").alias("note"),
        )
        .with_columns(pl.lit("superseded").alias("status"))
        .drop("schedule")
    )
    out = pl.concat([held.drop("_refused", "_rows", "_periods", "_span"), superseded], how="diagonal_relaxed")
    order = pl.col("status").replace_strict({"billed": 0, "refused": 1, "superseded": 2}, return_dtype=pl.Int8)
    return out.sort(order, pl.col("cost_usd"), "provider", "model", nulls_last=True)
