"""What a bill's superseded schedules would have billed where it differs from the schedule that holds the offer
(the ``conflict`` column of :func:`econ.analyses.billing.bill`)."""

from __future__ import annotations

import polars as pl


def conflicts(out: pl.DataFrame, per: list[str]) -> pl.DataFrame:
    """``offer`` (and ``per``), ``conflict``: what the superseded schedules of the offer would bill, where it differs
    from the holding one."""
    said = (
        pl.when(pl.col("refusal").is_not_null())
        .then(pl.concat_str([pl.lit("refused: "), pl.col("refusal")]))
        .otherwise(pl.format("${}", pl.col("cost_usd").round_sig_figs(6)))
    )
    date_said = pl.when(pl.col("source") == "hand").then(pl.col("from_date")).otherwise(pl.col("snapshot_date"))
    winner = out.filter(pl.col("offer_rank") == 1).select(
        "offer",
        *per,
        pl.col("cost_usd").alias("_w_cost"),
        pl.col("refusal").alias("_w_refusal"),
        pl.col("price_date").alias("_w_date"),
    )
    losers = (
        out.filter(pl.col("offer_rank") > 1)
        .join(winner, on=["offer", *per])
        .filter(
            (pl.col("refusal").is_null() != pl.col("_w_refusal").is_null())
            | (
                pl.col("refusal").is_null()  # both refuse: they agree, whatever they would have billed
                & ((pl.col("cost_usd") - pl.col("_w_cost")).abs() > 1e-9 * pl.col("_w_cost").abs() + 1e-12).fill_null(
                    pl.col("cost_usd").is_null() != pl.col("_w_cost").is_null()
                )
            )
        )
        .with_columns(
            pl.format(
                "conflict: {} {} says {} ({}); held by {}",
                pl.col("source"),
                date_said,
                said,
                pl.col("model"),
                pl.when(
                    pl.col("_w_date").is_not_null()
                    & (pl.col("price_date").is_null() | (pl.col("_w_date") > pl.col("price_date")))
                )
                .then(pl.lit("date"))
                .otherwise(pl.lit("authority")),
            ).alias("_c")
        )
        .group_by("offer", *per)
        .agg(pl.col("_c").sort().str.join("; ").alias("conflict"))
    )
    return losers
