"""When a price step is a suspected upstream data fix rather than the seller's move (pure: expressions in, expressions
out): the one rule of ``price_change_log`` (:mod:`econ.fits.change_log`, per step) and of ``econ diff`` /
``price_changes`` (:func:`econ.fits.price_changes.classify`, which reads the log's steps).
"""

from __future__ import annotations

import polars as pl

from econ.formula import formula

DATA_FIX_RATIO = 10.0
"""A price moving by more than this factor is a suspected upstream data fix when it is a unit slip or a revert."""
UNIT_SLIPS = (1e2, 1e3, 1e6)
"""Factors a price in cents and in dollars (x100), and a per-token, per-thousand and per-million price (x1,000 and
x1,000,000) differ by."""
SLIP_TOLERANCE_RATIO = 1.5
"""A move within this factor of a unit slip counts as one (3,200 -> 3.5 is a slip with a price change)."""


def slip_and_revert(old: pl.Expr, new: pl.Expr, before: pl.Expr, after: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Whether a move of more than :data:`DATA_FIX_RATIO` is a unit slip (within :data:`SLIP_TOLERANCE_RATIO` of
    10², 10³ or 10⁶) and whether it is a revert (the new value is the one before the old, or the old the one after
    the new)."""
    size = (new / old).abs().log10().abs()
    slip = pl.any_horizontal(
        ((size - pl.lit(s).log10()).abs() <= pl.lit(SLIP_TOLERANCE_RATIO).log10()) for s in UNIT_SLIPS
    )

    def same(a: pl.Expr, b: pl.Expr) -> pl.Expr:
        return (a - b).abs() <= 1e-9 * pl.max_horizontal(a.abs(), b.abs())

    reverts = (same(new, before) | same(old, after)).fill_null(False)
    big = (old > 0) & (new > 0) & (size > pl.lit(DATA_FIX_RATIO).log10())
    return (big & slip).fill_null(False), (big & reverts).fill_null(False)


FIX_REASONS = ("unit slip", "revert", "contradicted", "format switch")
"""Why a price step is a suspected upstream data fix (:func:`fix_reason`), in the order a reason lists them: a unit
slip or a revert of more than 10x, a move the other sources contradict, a move first seen at a format switch."""


@formula(
    "data fix = (|log10 new/old| > 1 and (within 1.5x of 10², 10³ or 10⁶, or a revert)) or contradicted by the other "
    "sources or first seen at a format switch (and not dated by its source)",
    "econ rule (econ.fits.price_changes)",
)
def fix_reason(slip: pl.Expr, revert: pl.Expr, contradicted: pl.Expr, format_change: pl.Expr) -> pl.Expr:
    """Why one price step (a component of one key moving from one period to the next) is a suspected upstream data
    fix rather than the seller's price move: the :data:`FIX_REASONS` that hold, joined by "; ", or null when none
    does. The one rule of ``price_change_log`` (:func:`econ.fits.change_log.change_log`, per step) and of ``econ
    diff`` / ``price_changes`` (:func:`classify`, which reads the log's steps)."""
    flags = (slip, revert, contradicted, format_change)
    text = pl.concat_str(
        [pl.when(f.fill_null(False)).then(pl.lit(r)) for f, r in zip(flags, FIX_REASONS, strict=True)],
        separator="; ",
        ignore_nulls=True,
    )
    return pl.when(text != "").then(text)


def step_class(reason: pl.Expr, old: pl.Expr, new: pl.Expr) -> pl.Expr:
    """A price step's class: a suspected data fix where :func:`fix_reason` gives a reason, else a move up or down."""
    return (
        pl.when(reason.is_not_null())
        .then(pl.lit("suspected data fix"))
        .when(new.fill_null(0.0) >= old.fill_null(0.0))
        .then(pl.lit("price move up"))
        .otherwise(pl.lit("price move down"))
    )
