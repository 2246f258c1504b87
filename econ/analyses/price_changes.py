"""``price_changes``: what changed between the two newest price snapshots (``econ diff``'s default).

Every model added or removed and every price component that moved (:mod:`econ.fits.price_changes`), classified with
the change log's verdict on each step (``price_change_log``: a suspected upstream data fix there is one here).
"""

from __future__ import annotations

import polars as pl

from econ.analyses.price_columns import PRICE_KEY_COLUMNS
from econ.fits import change_windows
from econ.fits import price_changes as pc
from econ.fits.price_ratios import price_change_frac
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "price_changes"
INPUTS = ("prices", "price_snapshots", "price_keys", "price_change_log")

DATES = (
    C("from_date", "date", "", "key", "Older date compared (the snapshot before the newest)"),
    C("to_date", "date", "", "key", "Newer date compared (the newest snapshot)"),
)

PRICE_CHANGES = ResultTable(
    name="price_changes",
    grain="added/removed price key, or changed component of a price key",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens", "component", "change"),
    description="Price changes between the two newest snapshots (econ diff's default)",
    columns=(
        *DATES,
        C("change", "str", "", "key", "added, removed or changed", pc.changes_between),
        *PRICE_KEY_COLUMNS,
        C("component", "str", "", "key", "Price component (column of prices); input_usd_per_mtok for added/removed"),
        C("old_value", "float", "", "input", "Value on from_date, in the component's unit"),
        C("new_value", "float", "", "input", "Value on to_date, in the component's unit"),
        C(
            "change_frac",
            "float",
            "",
            "derived",
            "Relative change (null when either side is blank or the old is 0)",
            price_change_frac,
        ),
        C(
            "window_from_date",
            "date",
            "",
            "derived",
            "Newest snapshot of the row's source that still had the old value (or no key): the change happened after "
            "it; the change day itself when exact",
            change_windows.windows,
        ),
        C(
            "window_to_date",
            "date",
            "",
            "derived",
            "First snapshot of the source with the new value (or the day a removed key left), or the day the source "
            "names: the change happened by it",
            change_windows.windows,
        ),
        C("window_from_commit", "str", "", "input", "Commit of the snapshot at window_from_date (replayed histories)"),
        C("window_to_commit", "str", "", "input", "Commit that first showed the new value (replayed histories)"),
        C(
            "exact",
            "bool",
            "",
            "derived",
            "The source dates the change itself (hand-kept row, dated price)",
            change_windows.windows,
        ),
        C("canonical_model", "str", "", "input", "Canonical model of the key (price_keys; null: unmapped)"),
        C(
            "counterpart_model",
            "str",
            "",
            "derived",
            "A renamed key's other name: the new key on its removed row, the old key on its added row",
            pc.classify,
        ),
        C(
            "change_class",
            "str",
            "",
            "derived",
            "price move up, price move down, price listed or price unlisted (a price component the key did not "
            "list before, or no longer lists: no price moved), new, removed, renamed key, suspected data fix (every "
            "step it spans is one in price_change_log: a unit slip or revert of more than 10x, contradicted by the "
            "other sources, or first seen at a format switch; or old -> new is a slip or revert itself) or limit "
            "change (max_input_tokens, speed_ratio)",
            pc.classify,
        ),
        C(
            "fix_reason",
            "str",
            "",
            "derived",
            "Why a suspected data fix is one (price_change_log.fix_reason of the steps it spans); null otherwise",
            pc.fix_reason,
        ),
    ),
)
TABLES = (PRICE_CHANGES,)


COMPARED_SQL = """
with snapshot_dates as (select distinct snapshot_date as day from price_snapshots)
select (select max(day) from snapshot_dates where day < (select max(day) from snapshot_dates)) as start_date,
       (select max(day) from snapshot_dates) as end_date
"""
"""(older, newer) snapshot dates compared: the newest snapshot date and the one before, as
:func:`econ.fits.price_changes.default_dates` picks them for ``econ diff``; a null start with fewer than two."""


def compared_dates(ctx):
    """(older, newer) snapshot dates compared, or (None, None) with fewer than two snapshot dates."""
    (start, end), *_ = ctx.query(COMPARED_SQL).iter_rows()
    return (start, end) if start is not None else (None, None)


def dated(frame: pl.DataFrame, start, end) -> pl.DataFrame:
    return frame.select(pl.lit(start, pl.Date).alias("from_date"), pl.lit(end, pl.Date).alias("to_date"), pl.all())


def run(ctx) -> None:
    start, end = compared_dates(ctx)
    if start is None:
        ctx.write(PRICE_CHANGES, PRICE_CHANGES.empty_frame())
        return
    names = ctx.query("select * from price_keys")
    log = ctx.query("select * from price_change_log")
    changes = pc.price_changes(ctx.query("select * from prices"), start, end, names=names, log=log)
    ctx.write(PRICE_CHANGES, dated(changes, start, end))
