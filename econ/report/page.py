"""What a page module sees (:class:`SiteContext`) and what it returns (:class:`PageContent`).

A page module has ``NAME`` (file stem), ``TITLE``, ``SUMMARY`` (one line for the index),
``REQUIRES`` (tables/views that must exist and hold rows, else the page is skipped with a
note on the index) and ``render(ctx) -> PageContent``. It reads only through
``ctx.query`` and returns blocks: HTML (:class:`~econ.report.html.Markup`), figures and CSV
downloads; the site builder writes the files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import duckdb
import polars as pl

from econ.db import quote_ident
from econ.errors import ReportError
from econ.report.figures import Figure
from econ.report.html import Markup, esc, fmt_num, join, tag


@dataclass(frozen=True)
class Download:
    """A CSV file written beside the page (``<page>/<slug>.csv``) and linked where the block sits."""

    slug: str
    frame: pl.DataFrame
    label: str


STATUSES = {
    "measured": "measured: read from the data as published",
    "fitted": "fitted to published data, with its interval",
    "bound": "bound: the idealised roofline, not a measurement",
    "calibrated": "calibrated: fitted to measured systems, with its cross-validated error",
    "validated": "inference validated on open models",
    "weak": "weak: its validation or fit does not support it",
    "not validated": "not validated: no open model to check it on",
    "not identified": "not identified: the data allow several answers",
    "assumption": "assumption: a stated input, not derived",
}
"""The evidence status a finding carries, and the words its badge shows."""

PLACEHOLDER = re.compile(r"\{(\w+)\.(\w+)(?::(\w+))?\}")
FORMATS: dict[str, Callable[[Any], str]] = {
    "sig2": lambda v: fmt_num(float(v), sig=2),
    "sig3": lambda v: fmt_num(float(v), sig=3),
    "x": lambda v: fmt_num(float(v), sig=3) + "×",
    "pct": lambda v: fmt_num(float(v) * 100, sig=2) + "%",
    "pct_down": lambda v: _percent_down(float(v)),
    "int": lambda v: f"{float(v):,.0f}",
    "usd": lambda v: "$" + fmt_num(float(v), sig=3),
    "ms": lambda v: fmt_num(float(v) * 1000, sig=3) + " ms",
    "us": lambda v: fmt_num(float(v) * 1e6, sig=3) + " µs",
    "date": lambda v: v.isoformat(),
}
"""How a placeholder's value is written (``{key.column:fmt}``); ``text`` inserts a text value as it is."""


def _percent_down(frac: float) -> str:
    """A share as a percentage to 0.1, rounded down: a share a bound must reach in full never reads 100% short of it
    (0.9996 -> 99.9%; 1 -> 100%)."""
    tenths = math.floor(frac * 1000 + 1e-9)
    return "100%" if tenths >= 1000 else f"{tenths / 10:.1f}%"


@dataclass(frozen=True)
class Finding:
    """One sentence a page opens with: numbers read from rows of result tables, and its evidence status.

    ``html`` is the sentence; each number in it is a ``span.num`` naming the table, row (``where``) and column it
    was read from, so the browser test re-reads every number from the database. ``table`` and ``column`` are the
    first number's (the finding's headline number); ``evidence`` is the link to the section holding the evidence.
    """

    html: Markup
    table: str
    column: str
    where: str
    status: str
    evidence: str
    page: str = ""


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
    findings: list[Finding] = field(default_factory=list)


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
    comments: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not self.objects:
            rows = self.con.sql(
                "select table_name, 'table', comment from duckdb_tables() where database_name = current_database() "
                "union all select view_name, 'view', comment from duckdb_views() "
                "where database_name = current_database() and not internal order by 1"
            ).fetchall()
            self.objects = {name: kind for name, kind, _ in rows}
            self.comments = {name: text or "" for name, _, text in rows}

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        """Run a read-only query; returns a polars frame."""
        return pl.DataFrame(self.con.sql(sql, params=params))

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

    def finding(
        self, sentence: str, sources: dict[str, tuple[str, str]], *, status: str, evidence: str
    ) -> Finding | None:
        """A :class:`Finding` whose numbers are read from the database (``None`` when a row or value is missing).

        ``sources`` maps a key to ``(table, where)``, a SQL predicate selecting exactly one row; the sentence
        writes ``{key.column:fmt}`` (formats in :data:`FORMATS`, ``text`` for a text value) where a value goes.
        No number is typed into a sentence: a finding whose row is absent or whose value is null or not finite
        is left out, and a predicate matching several rows is an error.
        """
        if status not in STATUSES:
            raise ReportError(f"unknown finding status {status!r}", f"use one of {', '.join(STATUSES)}")
        rows = {}
        for key, (table, where) in sources.items():
            if not self.has(table):
                return None
            frame = self.query(f"select * from {quote_ident(table)} where {where}")
            if frame.height > 1:
                raise ReportError(f"finding source {table} where {where} matches {frame.height} rows", "select one")
            if frame.height == 0:
                return None
            rows[key] = frame.row(0, named=True)
        parts, first, pos = [], None, 0
        for m in PLACEHOLDER.finditer(sentence):
            key, column, fmt = m.groups()
            value = rows[key][column]
            parts.append(esc(sentence[pos : m.start()]))
            pos = m.end()
            if fmt == "text":
                if value is None:
                    return None
                parts.append(esc(value))
                continue
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                return None
            table, where = sources[key]
            number = value.isoformat() if fmt == "date" else repr(float(value))
            parts.append(
                tag(
                    "span",
                    FORMATS[fmt or "sig3"](value),
                    class_="num",
                    data_table=table,
                    data_where=where,
                    data_column=column,
                    data_value=number,
                )
            )
            first = first or (table, column, where)
        parts.append(esc(sentence[pos:]))
        if first is None:
            raise ReportError(f"finding {sentence!r} has no number", "a finding states a number from a table")
        return Finding(join(parts), first[0], first[1], first[2], status, evidence)

    def calibration_error(self) -> str:
        """The calibration's leave-one-model-out error of time per output token in words (``calibration_errors``),
        for captions."""
        if not self.has("calibration_errors"):
            return "not measured: no calibration in this database"
        row = self.con.execute(
            "select error_factor, error_factor_p90, n_points from calibration_errors "
            "where basis = 'model_out' and target = 'tpot' and group_kind = 'overall'"
        ).fetchall()
        if not row:
            return "not measured: no calibration in this database"
        median, p90, n = row[0]
        return (
            f"held out by model, time per output token a typical factor of {median:.2f}, within {p90:.2f}x for 9 in "
            f"10 of {n:,} measured runs (econ predict prints the band of each point's regime)"
        )

    def description(self, name: str) -> str:
        """The stored comment of a table or view ("" when none)."""
        return self.comments.get(name, "")


def first_value(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> Any:
    """The first value of the first row of ``sql`` on ``con`` (``None`` when there is no row)."""
    rows = con.sql(sql, params=params).limit(1).fetchall()
    return rows[0][0] if rows else None


def note(text: Any, *, kind: str = "") -> Markup:
    """A highlighted remark (``kind='pending'`` for something the report cannot show yet)."""
    return tag("p", text, class_=f"note {kind}".strip())


def anchor(heading: str) -> str:
    """The id of a section's heading (what a finding's ``evidence`` names)."""
    return "".join(c if c.isalnum() else "-" for c in heading.lower()).strip("-")


def findings_html(findings: list[Finding], *, link_pages: bool = False) -> Markup:
    """The findings as a list: each sentence, its status badge and a link to its evidence (on its page, or on
    another page when ``link_pages``)."""
    items = []
    for f in findings:
        href = (f"{f.page}.html" if link_pages else "") + f"#{f.evidence}"
        items.append(
            tag(
                "li",
                join(
                    [
                        f.html,
                        Markup(" "),
                        tag("span", STATUSES[f.status], class_="status"),
                        Markup(" "),
                        tag("a", "evidence", href=href, class_="evidence"),
                    ]
                ),
                class_=f"finding status-{f.status.replace(' ', '-')}",
                data_table=f.table,
                data_column=f.column,
                data_where=f.where,
            )
        )
    return Markup('<ul class="findings">' + "".join(items) + "</ul>")
