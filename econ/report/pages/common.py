"""Helpers the analysis pages share: scenario settings, default selections, number formats.

Pages read the scenario the report was built for (``ctx.scenario``, falling back to
``base`` for an assumption the scenario does not override), pick a sensible default
selection when a table holds more than a chart can show, and format values for tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import duckdb
import polars as pl

from econ.report.html import fmt_interval, fmt_num
from econ.report.page import Section, SiteContext, note

UNDRAWABLE = "cannot be drawn from this database"
SCHEMA_ERRORS = (duckdb.BinderException, duckdb.CatalogException, pl.exceptions.ColumnNotFoundError)

SETTING = """
select value, text, alternatives from scenarios where scenario in ('base', ?) and name = ?
order by (scenario = ?) desc limit 1
"""


def setting(ctx: SiteContext, name: str) -> tuple[float | None, str | None, str | None]:
    """The scenario's (value, text, alternatives) of assumption ``name`` (``base`` when the scenario does not set
    it)."""
    if not ctx.has("scenarios"):
        return None, None, None
    rows = ctx.con.sql(SETTING, params=[ctx.scenario, name, ctx.scenario]).fetchall()
    return rows[0] if rows else (None, None, None)


def pick(available: Iterable[str], preferred: Iterable[str], n: int) -> list[str]:
    """The preferred names that are available (in preference order), topped up with the rest by name to ``n``."""
    available = sorted(set(a for a in available if a is not None))
    chosen = [p for p in preferred if p in available][:n]
    return chosen + [a for a in available if a not in chosen][: max(0, n - len(chosen))]


def nearest_on_log_grid(grid: Iterable[float], target: float | None, default: float) -> float:
    """The grid value closest to ``target`` in log terms (``default``'s nearest when there is no target)."""
    grid = sorted(g for g in grid if g and g > 0)
    if not grid:
        return default
    goal = target if target and target > 0 else default
    return min(grid, key=lambda g: (abs(math.log(g / goal)), g))


def pct(value: Any) -> str:
    """A fraction as a signed percentage (``-0.6`` → ``-60.0%``); blank for null."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{value * 100:+.1f}%"


def finite_interval(low: Any, high: Any, *, sig: int = 3) -> str:
    """``low–high``, or ``not identified`` when an end is infinite (an exact fit has no interval)."""
    if low is None or high is None:
        return ""
    if (isinstance(low, float) and math.isinf(low)) or (isinstance(high, float) and math.isinf(high)):
        return "not identified"
    return fmt_interval(low, high, sig=sig)


def interval_text(low: str, high: str) -> pl.Expr:
    """The text ``low–high`` of each row's interval (:func:`finite_interval`), for a table column."""
    return pl.struct(low, high).map_elements(lambda r: finite_interval(r[low], r[high]), return_dtype=pl.String)


def sig3(value: Any) -> str:
    return fmt_num(value, sig=3)


def guarded(heading: str, build: Callable[[], Section]) -> Section:
    """``build()``, or a section that says why it cannot be drawn when a table lacks a column it reads.

    An analysis writes the columns its data gives (no pooled fit, no market regression on a small
    data set), so a page section reading one that is absent explains itself instead of failing
    the whole build. Only schema errors are caught; any other error still fails the report.
    """
    try:
        return build()
    except SCHEMA_ERRORS as e:
        what = str(e).strip().splitlines()[0]
        return Section(
            heading,
            [
                note(
                    f"This section {UNDRAWABLE}: {what}. The analysis that writes it produced no such "
                    "column or table for this data.",
                    kind="pending",
                )
            ],
        )


def ensure_columns(frame: pl.DataFrame, names: Iterable[str]) -> pl.DataFrame:
    """``frame`` with every column of ``names`` (absent ones as nulls), for tables of optional columns."""
    return frame.with_columns(pl.lit(None).alias(n) for n in names if n not in frame.columns)


OK_STATUSES = ("ok",)


def with_status(value: Any, low: Any, high: Any, status: Any, *, ok: Iterable[str] = OK_STATUSES, sig: int = 3) -> str:
    """A number as the report may show it: ``value (low–high)``, and its status beside it unless the status is ok.

    An inferred number whose status is not ``ok`` is never shown bare: ``1,230 (456–3,210)
    [undercovered]``. No value gives the status alone.
    """
    interval = finite_interval(low, high, sig=sig)
    shown = fmt_num(value, sig=sig)
    if shown and interval:
        shown = f"{shown} ({interval})"
    if status is not None and status not in tuple(ok):
        shown = f"{shown} [{status}]" if shown else f"[{status}]"
    return shown


def status_text(value: str, low: str, high: str, status: str | pl.Expr, **kw: Any) -> pl.Expr:
    """:func:`with_status` of each row, for a table column (``status``: a column name or an expression)."""
    st = pl.col(status) if isinstance(status, str) else status
    return pl.struct(
        pl.col(value).alias("v"), pl.col(low).alias("lo"), pl.col(high).alias("hi"), st.alias("st")
    ).map_elements(lambda r: with_status(r["v"], r["lo"], r["hi"], r["st"], **kw), return_dtype=pl.String)
