"""The effective periods of a replayed history: what a source said each price was, on every day since its first
snapshot (vectorised: polars over the change log, never a loop per row).

A key's **versions** are its ``set``/``drop`` changes (:mod:`econ.load.history`); version ``v`` holds from its
snapshot's date ``d_v`` until the key's next change. Dated by observation, a price that changed between two
snapshots changed somewhere in the **window** between the last snapshot that had the old value and the first that
had the new one: econ dates it at the first (the state on a day is the newest snapshot on or before it), and keeps
the last old one as the old period's ``snapshot_date``. The rows of a version carry the source's own dated periods
(``declared_from_date``/``declared_to_date``), which refine the dating:

* inside the version's span, the price on day ``t`` is the row whose declared period holds ``t`` (the latest
  declared start wins); a declared start after ``d_v`` is a change announced for that day (``declared``);
* a row whose declared start falls inside the observation window (after the source's snapshot before ``d_v``) dates
  the change to that day, which the source knows better than the window: the version then holds from there.

Consecutive days with the same values are one period (the values of :data:`PRICE_VALUE_COLUMNS`); a day on which a
version lasted less than a day (two commits on one date) is the later one's. Each period names the commit that first
showed it (``source_commit``; for a price the source dates ahead, the commit that announced it) and the last that still
did (``last_commit``, on ``snapshot_date``).
"""

from __future__ import annotations

import polars as pl

from econ.load.history import KEY, Store
from econ.load.spec import shift_in_key, starts_key
from econ.price_values import PRICE_VALUE_COLUMNS

CARRIED = ["hugging_face_id", "source_url", "source_key"]
FAR = pl.date(9999, 12, 31)


def history_periods(store: Store, source: str) -> pl.DataFrame:
    """``prices`` rows of one source's history: KEY, ``from_date``, ``to_date`` (null: open), the values, where they
    came from (``source_url``, ``source_key``), ``snapshot_date`` (newest snapshot that carried the value),
    ``source_commit``, ``last_commit`` and ``declared`` (``from_date`` is the source's own date)."""
    commits = store.commits.select(
        "snapshot", "commit", pl.col("snapshot_date").alias("d"), pl.col("snapshot_date").shift(1).alias("w")
    )
    last = store.size - 1
    versions = (
        store.changes.select(*KEY, "snapshot", "change")
        .unique(subset=[*KEY, "snapshot"])
        .sort(*KEY, "snapshot")
        .with_columns(shift_in_key("snapshot", KEY, -1).alias("next_snapshot"))
        .join(commits, on="snapshot", how="left")
        .join(
            commits.select(pl.col("snapshot").alias("next_snapshot"), pl.col("d").alias("d_next")),
            on="next_snapshot",
            how="left",
        )
        .with_row_index("version")
    )
    rows = store.changes.filter(pl.col("change") == "set").join(
        versions.select(*KEY, "snapshot", "version", "d", "w", "d_next"), on=[*KEY, "snapshot"], nulls_equal=True
    )
    # candidate days of each version: its snapshot date and every declared boundary inside its observation window
    bounds = pl.concat(
        [
            rows.select("version", pl.col("d").alias("t"), pl.lit(False).alias("dated")),
            rows.select("version", pl.col("declared_from_date").alias("t"), pl.lit(True).alias("dated"), "w", "d_next"),
            rows.select("version", pl.col("declared_to_date").alias("t"), pl.lit(True).alias("dated"), "w", "d_next"),
        ],
        how="diagonal_relaxed",
    ).filter(  # a declared day counts inside the version's window; its snapshot day always does
        pl.col("t").is_not_null()
        & (
            ~pl.col("dated")
            | (
                (pl.col("w").is_null() | (pl.col("t") > pl.col("w")))
                & (pl.col("d_next").is_null() | (pl.col("t") < pl.col("d_next")))
            )
        )
    )
    times = bounds.group_by("version", "t").agg(pl.col("dated").any())  # a day the source itself names
    active = (
        times.join(rows, on="version")
        .filter(
            (pl.col("declared_from_date").is_null() | (pl.col("declared_from_date") <= pl.col("t")))
            & (pl.col("declared_to_date").is_null() | (pl.col("t") < pl.col("declared_to_date")))
        )
        .sort("version", "t", pl.col("declared_from_date"), nulls_last=False)
        .group_by("version", "t", maintain_order=True)
        .last()
    )
    evaluated = times.join(active, on=["version", "t"], how="left").join(
        versions.select("version", "d", "d_next"), on="version", suffix="_v"
    )
    # a version holds from the earliest day inside its window that the source names, else from its snapshot date
    starts = (
        evaluated.filter((pl.col("t") < pl.col("d_v")) & pl.col("dated"))
        .group_by("version")
        .agg(pl.col("t").min().alias("start"))
    )
    versions = (
        versions.join(starts, on="version", how="left", maintain_order="left")  # still sorted by key and snapshot
        .with_columns(pl.coalesce("start", "d").alias("start"))
        .with_columns(shift_in_key("start", KEY, -1).alias("end"))  # the next version's start ends this one
    )
    segments = (
        evaluated.drop("d_v", "d_next")
        .join(versions.select("version", "start", "end", "d", "snapshot", "commit", "next_snapshot"), on="version")
        .filter(pl.col("t") >= pl.col("start"))
        .sort("version", "t")
        .with_columns(shift_in_key("t", ["version"], -1).alias("_next_t"))
        .with_columns(pl.min_horizontal(pl.coalesce("_next_t", FAR), pl.coalesce("end", FAR)).alias("_to"))
        .filter(pl.col("_to") >= pl.col("t"), pl.col("source_key").is_not_null())  # no price that day: a gap
        .with_columns(
            (pl.col("dated") & (pl.col("t") != pl.col("d"))).alias("declared"),
            pl.coalesce(pl.col("next_snapshot") - 1, pl.lit(last)).alias("_seen"),
        )
    )
    # a dated price was first shown by the earliest version that carried the same dated row (announced ahead)
    announced = (
        rows.filter(pl.col("declared_from_date").is_not_null())
        .group_by(*KEY, "declared_from_date", *PRICE_VALUE_COLUMNS)
        .agg(pl.col("snapshot").min().alias("_first"))
        .join(commits.select(pl.col("snapshot").alias("_first"), pl.col("commit").alias("_announced")), on="_first")
        .drop("_first")
    )
    segments = segments.join(
        announced, on=[*KEY, "declared_from_date", *PRICE_VALUE_COLUMNS], how="left", nulls_equal=True
    ).with_columns(
        pl.when(pl.col("declared"))
        .then(pl.coalesce("_announced", "commit"))
        .otherwise(pl.col("commit"))
        .alias("commit")
    )
    # a value that lasted less than a day (two commits on one date) is the later one's, but the commit that first
    # showed the day's value is kept: merge, drop what lasted no day, merge again
    segments = segments.sort(*KEY, "t", "snapshot").select(
        *KEY, "t", "_to", *PRICE_VALUE_COLUMNS, *CARRIED, "commit", "declared", "_seen"
    )
    merged = _merged(_merged(segments).filter(pl.col("_to") > pl.col("t")))
    return _named(merged, commits, source)


def _merged(segments: pl.DataFrame) -> pl.DataFrame:
    """Consecutive segments of a key (sorted by key) with the same values and no gap between them become one segment
    (a run: its number counts up the whole frame, so the runs of a key are those of a window over the key)."""
    same = pl.all_horizontal(pl.col(c).eq_missing(pl.col(c).shift(1)) for c in PRICE_VALUE_COLUMNS)
    touching = pl.col("t") == pl.col("_to").shift(1)
    joins = (same & touching & ~starts_key(KEY)).fill_null(False)
    runs = segments.with_columns((~joins).cast(pl.Int32).cum_sum().alias("_run"))
    return (
        runs.group_by(*KEY, "_run", maintain_order=True)
        .agg(
            pl.col("t").first(),
            pl.col("_to").last(),
            *(pl.col(c).last() for c in PRICE_VALUE_COLUMNS),
            *(pl.col(c).last() for c in CARRIED),
            pl.col("commit").first(),
            pl.col("declared").first(),
            pl.col("_seen").last(),
        )
        .drop("_run")
    )


def _named(merged: pl.DataFrame, commits: pl.DataFrame, source: str) -> pl.DataFrame:
    """The merged segments as ``prices`` periods, with the snapshot that last carried each."""
    periods = merged.rename({"t": "from_date", "_to": "to_date", "commit": "source_commit"})
    seen = commits.select(
        pl.col("snapshot").alias("_seen"), pl.col("d").alias("snapshot_date"), pl.col("commit").alias("last_commit")
    )
    return (
        periods.join(seen, on="_seen", how="left")
        .with_columns(
            pl.lit(source).alias("source"),
            pl.when(pl.col("to_date") == FAR).then(None).otherwise(pl.col("to_date")).alias("to_date"),
        )
        .drop("_seen")
    )
