"""Every price change in the history, dated to the window its source allows, and the first-party ones merged across
sources (pure: frames in, frames out).

A change is one price component of one key moving from one effective period to the next (``price_history``): it
happened after ``window_from_date`` (the newest snapshot of its source that had the old price) and by
``window_to_date`` (the first that had the new one), or on the day its source names (``exact``: a hand-kept row or a
dated price of a replayed history). Each is classified as a price move up or down or a suspected upstream data fix
(:func:`econ.fits.data_fixes.fix_reason`, the rule ``econ diff`` reads from this log too): a unit slip or revert
of more than 10x, a move first seen where the source changed the file it is read from (genai-prices' v2 feed counts
image output apart from text output), or a move the other sources contradict (during the old period another source
had the new price and none had the old, or during the new period another had the old price and none the new: one
database's error, not the seller's change). A seller moves a key's prices together, so a key's moves on one day are
one event: contradicted when some component it moved is and no other source confirms any of them (shows the same
move: the old price during the old period and the new during the new). Claude Sonnet 5's input and output rise,
which llm-prices shows too, makes its cache prices' rise a move, though llm-prices lists no cache price and the
other maps still showed the old one. Another source's current price witnesses only up to the day after its
newest snapshot that had it (a map not read since a move says nothing of it), unless it is a price the source dates
itself or a hand-kept row, which hold until changed.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.fits.data_fixes import fix_reason, slip_and_revert, step_class
from econ.fits.price_changes import shift_within, with_same_key
from econ.formula import formula
from econ.price_values import PRICE_KEY

KEY = PRICE_KEY
GROUP = ["provider", "canonical_model", "variant", "tier_min_prompt_tokens"]
COMPONENTS = {
    "input": "input_usd_per_mtok",
    "output": "output_usd_per_mtok",
    "cache_read": "cache_read_usd_per_mtok",
    "cache_write_5m": "cache_write_5m_usd_per_mtok",
    "cache_write_1h": "cache_write_1h_usd_per_mtok",
}
MOVES = ("price move up", "price move down")
SINCE = date(2024, 1, 1)
RTOL = 1e-6
FAR = pl.date(9999, 12, 31)


def _same(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return (a - b).abs() <= RTOL * pl.max_horizontal(a.abs(), b.abs())


@formula(
    "change = component of consecutive periods of one key that differs; window = (prev_snapshot_date, from_date], "
    "exact when the source dates it; contradicted = another source had the new price in the old period and none the "
    "old, or the old in the new and none the new (an undated current price until the day after its newest snapshot), "
    "judged per key and day: some component contradicted and no source showing any moving the same way",
    "price_history (econ.fits.change_log)",
)
def change_log(history: pl.DataFrame, *, format_commits: list[str] | None = None) -> pl.DataFrame:
    """One row per key x period x price component that moved from the previous period (both prices published).

    ``history``: ``price_history`` rows (periods with ``prev_*``, ``canonical_model``, ``is_first_party``,
    ``declared``, ``source_commit``, ``prev_snapshot_date``, ``prev_last_commit``). ``format_commits``: the snapshots
    at which a source started reading another file (genai-prices' v2 feed counts image output apart from text
    output): a move first seen there is ``format_change``, a suspected data fix.
    """
    # sorted by key then date: a shift within a key is a plain shift where the row that many places away has the same
    # key (the same rows as shift().over(KEY), without grouping the history once per expression)
    ordered = with_same_key(history.sort(*KEY, "from_date"), KEY, (1, 2, -1))
    parts = []
    for name, column in COMPONENTS.items():
        parts.append(
            ordered.with_columns(
                pl.lit(name).alias("component"),
                shift_within(column, 1).alias("old_usd_per_mtok"),
                pl.col(column).alias("new_usd_per_mtok"),
                shift_within(column, 2).alias("_before"),
                shift_within(column, -1).alias("_after"),
                shift_within("from_date", 1).alias("old_from_date"),
            ).drop("_same_key_1", "_same_key_2", "_same_key_-1")
        )
    long = pl.concat(parts).filter(
        pl.col("prev_from_date").is_not_null()
        & pl.col("old_usd_per_mtok").is_not_null()
        & pl.col("new_usd_per_mtok").is_not_null()
        & ~_same(pl.col("old_usd_per_mtok"), pl.col("new_usd_per_mtok"))
    )
    exact = pl.col("declared").fill_null(False)
    slip, revert = slip_and_revert(
        pl.col("old_usd_per_mtok"), pl.col("new_usd_per_mtok"), pl.col("_before"), pl.col("_after")
    )
    frame = long.with_columns(
        exact.alias("exact"),
        pl.when(exact).then(pl.col("from_date")).otherwise(pl.col("prev_snapshot_date")).alias("window_from_date"),
        pl.col("from_date").alias("window_to_date"),
        pl.when(exact).then(None).otherwise(pl.col("prev_last_commit")).alias("window_from_commit"),
        pl.col("source_commit").alias("window_to_commit"),
        (pl.col("new_usd_per_mtok") / pl.col("old_usd_per_mtok") - 1).alias("change_frac"),
        slip.alias("_slip"),
        revert.alias("_revert"),
    )
    frame = _contradicted(frame, history).with_columns(
        # one event per key and day: contradicted where a component is and no component is confirmed
        (pl.col("contradicted").any() & ~pl.col("_confirmed").any()).over(*KEY, "from_date").alias("contradicted")
    )
    frame = frame.with_columns(
        # a change first seen where a history changed its file format, unless the source dates it itself (then the
        # old and the new price stand in the same file: a real move the new file announced)
        (~pl.col("exact") & pl.col("window_to_commit").is_in(format_commits or []).fill_null(False)).alias(
            "format_change"
        )
    )
    reason = fix_reason(pl.col("_slip"), pl.col("_revert"), pl.col("contradicted"), pl.col("format_change"))
    cls = step_class(pl.col("fix_reason"), pl.col("old_usd_per_mtok"), pl.col("new_usd_per_mtok"))
    return (
        frame.with_columns(reason.alias("fix_reason"))
        .with_columns(cls.alias("change_class"))
        .select(
            *KEY,
            "component",
            pl.col("from_date").alias("change_date"),
            "window_from_date",
            "window_to_date",
            "exact",
            "old_usd_per_mtok",
            "new_usd_per_mtok",
            "change_frac",
            "window_from_commit",
            "window_to_commit",
            "canonical_model",
            "is_first_party",
            "contradicted",
            "format_change",
            "change_class",
            "fix_reason",
        )
        .sort(*KEY, "change_date", "component")
    )


def _contradicted(frame: pl.DataFrame, history: pl.DataFrame) -> pl.DataFrame:
    """``contradicted``: another source covering the same seller's model (canonical, else the same key) said the new
    price during this source's old period and none said the old one, or said the old price during its new period and
    none said the new one. A current period the other source does not date says so up to the day after its newest
    snapshot that had it (``snapshot_date``), not beyond. ``_confirmed``: another source shows the same move (the old
    price during the old period and the new during the new)."""
    others = history.with_columns(pl.coalesce("canonical_model", "model").alias("canonical_model")).select(
        *GROUP,
        pl.col("source").alias("_other"),
        pl.col("from_date").alias("_of"),
        # a current period witnesses up to its source's last look at it, not beyond: a source not refreshed since says
        # nothing of the days after its newest snapshot (a price the source dates itself, or a hand-kept row, holds
        # until changed)
        pl.coalesce(
            "to_date",
            pl.when(~pl.col("declared").fill_null(False)).then(pl.col("snapshot_date") + pl.duration(days=1)),
            FAR,
        ).alias("_ot"),
        *(pl.col(c).alias(f"_o_{n}") for n, c in COMPONENTS.items()),
    )
    value = pl.coalesce(*(pl.when(pl.col("component") == n).then(pl.col(f"_o_{n}")) for n in COMPONENTS))
    rows = frame.with_row_index("_row")
    identity = rows.with_columns(pl.coalesce("canonical_model", "model").alias("canonical_model"))
    pairs = (
        identity.select(
            "_row",
            "source",
            *GROUP,
            "component",
            "old_usd_per_mtok",
            "new_usd_per_mtok",
            "old_from_date",
            "from_date",
            pl.coalesce("to_date", FAR).alias("_to"),
        )  # fmt: skip
        .join(others, on=GROUP)
        .filter(pl.col("_other") != pl.col("source"))
        .with_columns(value.alias("_v"))
        .filter(pl.col("_v").is_not_null())
    )
    during_old = (pl.col("_of") < pl.col("from_date")) & (pl.col("_ot") > pl.col("old_from_date"))
    during_new = (pl.col("_of") < pl.col("_to")) & (pl.col("_ot") > pl.col("from_date"))
    said = pairs.group_by("_row").agg(
        (during_old & _same(pl.col("_v"), pl.col("new_usd_per_mtok"))).any().alias("_new_in_old"),
        (during_old & _same(pl.col("_v"), pl.col("old_usd_per_mtok"))).any().alias("_old_in_old"),
        (during_new & _same(pl.col("_v"), pl.col("old_usd_per_mtok"))).any().alias("_old_in_new"),
        (during_new & _same(pl.col("_v"), pl.col("new_usd_per_mtok"))).any().alias("_new_in_new"),
    )
    flag = (pl.col("_new_in_old") & ~pl.col("_old_in_old")) | (pl.col("_old_in_new") & ~pl.col("_new_in_new"))
    return (
        rows.join(said, on="_row", how="left")
        .with_columns(
            flag.fill_null(False).alias("contradicted"),
            (pl.col("_old_in_old") & pl.col("_new_in_new")).fill_null(False).alias("_confirmed"),
        )
        .drop("_row", "_new_in_old", "_old_in_old", "_old_in_new", "_new_in_new")
    )


@formula(
    "first-party change = a price move of a seller that makes the model; per source, one row per seller x model x "
    "component x old -> new (its best-dated key: exact first, then the narrowest window)",
    "price_change_log (econ.fits.change_log)",
)
def first_party_changes(log: pl.DataFrame, *, since: date = SINCE) -> pl.DataFrame:
    """The first-party price moves of :func:`change_log` since ``since``: per source, seller, model (canonical, else
    the key of an unmapped one such as DeepSeek's moving ``deepseek-chat``), variant, tier, component and (old, new)
    prices, the best-dated key (exact first, then the narrowest window, then the earliest), with
    ``agreeing_sources``: how many sources show the same move of that seller's model."""
    moves = log.filter(
        pl.col("is_first_party") & pl.col("change_class").is_in(MOVES) & (pl.col("change_date") >= since)
    ).with_columns(
        pl.coalesce("canonical_model", "model").alias("canonical_model"),
        pl.col("old_usd_per_mtok").round_sig_figs(9).alias("_old"),
        pl.col("new_usd_per_mtok").round_sig_figs(9).alias("_new"),
        (pl.col("window_to_date") - pl.col("window_from_date")).dt.total_days().alias("window_days"),
    )
    change = [*GROUP, "component", "_old", "_new"]
    best = (
        moves.sort(*change, "source", ~pl.col("exact"), "window_days", "change_date", "model", nulls_last=True)
        .group_by(*change, "source", maintain_order=True)
        .first()
        .with_columns(pl.len().over(change).alias("agreeing_sources"))
    )
    return best.drop("_old", "_new").sort("change_date", *GROUP, "component", "source")
