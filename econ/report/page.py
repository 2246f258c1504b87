"""What a page module sees (:class:`SiteContext`) and what it returns (:class:`PageContent`).

A page module has ``NAME`` (file stem), ``TITLE``, ``SUMMARY`` (one line for the index),
``REQUIRES`` (tables/views that must exist and hold rows, else the page is skipped with a
note on the index) and ``render(ctx) -> PageContent``. It reads only through
``ctx.query`` and returns blocks: HTML (:class:`~econ.report.html.Markup`), figures and CSV
downloads; the site builder writes the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

import duckdb
import polars as pl

from econ.db import quote_ident
from econ.errors import ReportError
from econ.report.figures import Figure
from econ.report.html import Markup, tag


@dataclass(frozen=True)
class Download:
    """A CSV file written beside the page (``<page>/<slug>.csv``) and linked where the block sits."""

    slug: str
    frame: pl.DataFrame
    label: str


@dataclass(frozen=True)
class HeadlineRow:
    subject: str  # what the figure is for (a chip, a provider, a cache duration)
    value: str  # formatted central value
    interval: str = ""  # formatted low–high, "" when there is none
    note: str = ""


@dataclass(frozen=True)
class Headline:
    """One headline figure on the index: a value per subject with its interval and where it comes from."""

    key: str  # stable id; a page may replace a fallback headline of the same key
    title: str
    unit: str
    rows: tuple[HeadlineRow, ...]
    interval_kind: str  # what the interval means ("scenario low–high", "range over number formats", …)
    formula: str
    source: str
    page: str | None = None  # page that explains it


Block = Markup | Figure | Download


@dataclass
class Section:
    heading: str
    blocks: list[Block]
    intro: str = ""  # a paragraph under the heading (plain text, escaped)
    anchor: str | None = None


@dataclass
class PageContent:
    title: str
    lead: str
    sections: list[Section]
    headlines: list[Headline] = field(default_factory=list)


@dataclass
class SiteContext:
    """Read access to the database for page modules, and the report's settings.

    Parameters
    ----------
    con
        Connection to the database (the one being built, or the built file opened read-only).
    as_of
        Date of "current" prices (the ``as_of`` variable of ``price_current``).
    generated_on
        Date printed as the report's date (``SOURCE_DATE_EPOCH`` when set, else ``as_of``).
    scenario
        Scenario the analyses' headline figures refer to.
    """

    con: duckdb.DuckDBPyConnection
    as_of: date
    generated_on: date
    scenario: str = "base"
    objects: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.objects:
            rows = self.con.sql(
                "select table_name, 'table' from duckdb_tables() where database_name = current_database() "
                "union all select view_name, 'view' from duckdb_views() "
                "where database_name = current_database() and not internal order by 1"
            ).fetchall()
            self.objects = dict(rows)

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        """Run a read-only query; returns a polars frame."""
        return self.con.sql(sql, params=params).pl()

    def scalar(self, sql: str, params: list | None = None) -> Any:
        """The first value of the first row of a query (``None`` when it returns no row)."""
        return first_value(self.con, sql, params)

    def has(self, name: str) -> bool:
        return name in self.objects

    def missing(self, names: tuple[str, ...]) -> list[str]:
        """Which of ``names`` are absent or empty, each with the reason (``"x (missing)"``, ``"x (empty)"``)."""
        out = []
        for name in names:
            if not self.has(name):
                out.append(f"{name} (missing)")
            elif not self.scalar(f"select exists (select 1 from {quote_ident(name)})"):
                out.append(f"{name} (empty)")
        return out

    def cite(self, function: str) -> str:
        """``formula (source)`` of a function, from the ``formulas`` table the build writes (econ.formula)."""
        row = self.con.execute("select formula, source from formulas where function = ?", [function]).fetchall()
        if not row:
            raise ReportError(f"no formula of {function!r} in the database", "mark the function with @formula")
        return f"{row[0][0]} ({row[0][1].replace('lecture ', 'lecture §', 1)})"

    def calibration_error(self) -> str:
        """The calibration's leave-one-source-out error in words (``calibration_errors``), for captions."""
        if not self.has("calibration_errors"):
            return "not measured: no calibration in this database"
        row = self.con.execute(
            "select error_factor, error_factor_p90, n_points from calibration_errors "
            "where basis = 'cv' and group_kind = 'overall'"
        ).fetchall()
        if not row:
            return "not measured: no calibration in this database"
        median, p90, n = row[0]
        return f"a typical factor of {median:.2f}, within {p90:.2f}x for 9 in 10 of {n} measured points"

    def description(self, name: str) -> str:
        """The stored comment of a table or view ("" when none)."""
        return (
            self.scalar(
                "select comment from duckdb_tables() where database_name = current_database() and table_name = ? "
                "union all select comment from duckdb_views() where database_name = current_database() and view_name "
                "= ?",
                [name, name],
            )
            or ""
        )


def first_value(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> Any:
    """The first value of the first row of ``sql`` on ``con`` (``None`` when there is no row)."""
    rows = con.sql(sql, params=params).limit(1).fetchall()
    return rows[0][0] if rows else None


def note(text: Any, *, kind: str = "") -> Markup:
    """A highlighted remark (``kind='pending'`` for something the report cannot show yet)."""
    return tag("p", text, class_=f"note {kind}".strip())
