"""The tables and views of a built database as ``econ tables`` lists them and ``econ describe`` shows one: name,
kind, rows, description, and each column's type, unit, kind and meaning from its comment."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from econ.db import DatabaseError, connect_read_only, damaged, quote_ident, quote_literal
from econ.db.views import use_build_date


def table_summary(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, int, str]]:
    """(name, 'table'|'view', rows, description) for everything in the current database."""
    objects = con.execute(
        """
        select table_name, 'table', coalesce(comment, '') from duckdb_tables() where database_name = current_database()
        union all
        select view_name, 'view', coalesce(comment, '') from duckdb_views()
        where database_name = current_database() and not internal
        order by 2, 1
        """
    ).fetchall()
    counts = dict(con.execute(row_counts_sql([n for n, _, _ in objects])).fetchall()) if objects else {}
    return [(n, kind, counts[n], desc) for n, kind, desc in objects]


def object_counts(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(tables, views) in the current database: what a build's closing line says, without counting rows."""
    here = "where database_name = current_database()"
    return con.execute(
        f"select (select count(*) from duckdb_tables() {here}), "
        f"(select count(*) from duckdb_views() {here} and not internal)"
    ).fetchall()[0]


def row_counts_sql(names: list[str]) -> str:
    """One query giving (name, row_count) of each named table or view, in no particular order: one statement for
    DuckDB to plan and run instead of one per relation (a build's 95 counts: ~0.05 s against ~0.1 s)."""
    return " union all ".join(
        f"select {quote_literal(name)} as name, count(*) as row_count from {quote_ident(name)}" for name in names
    )


def list_objects(db_path: Path) -> list[tuple[str, str, int, str]]:
    """``econ tables``: :func:`table_summary` of the built database (``price_current`` at the build's date); a block
    that cannot be read is a :class:`DatabaseError` naming the file."""
    with connect_read_only(db_path) as con:
        try:
            use_build_date(con)
            return table_summary(con)
        except duckdb.Error as e:
            raise damaged(Path(db_path), e) from None


_UNIT = re.compile(r"\s*\[([^\[\]]*)\]")
_KIND = re.compile(r"\s+—\s+([a-z]+)$")


def split_comment(text: str | None) -> tuple[str, str, str]:
    """(meaning, unit, kind) of a column comment: ``meaning [unit] — kind`` (result tables) or ``meaning [unit]``
    (input tables and views); the unit is the last ``[...]``, '' when none."""
    text = (text or "").strip()
    kind = ""
    if m := _KIND.search(text):
        kind, text = m.group(1), text[: m.start()]
    units = list(_UNIT.finditer(text))
    unit = ""
    if units:
        last = units[-1]
        unit, text = last.group(1), text[: last.start()] + text[last.end() :]
    return text.strip(), unit, kind


class UnknownObject(DatabaseError):
    """No table or view of that name (``close``: the nearest names)."""

    def __init__(self, message: str, hint: str, close: list[str]):
        super().__init__(message, hint)
        self.close = close


def describe(db_path: Path, name: str) -> tuple[str, str, str, int, list[tuple[str, str, str, str, str]]]:
    """``econ describe``: (name, kind, description, rows, [(column, type, unit, kind, meaning)]) of a table or view,
    named in any case."""
    with connect_read_only(db_path) as con:
        try:
            objects = {n: (k, d) for n, k, _, d in _objects(con)}
            folded = {n.lower(): n for n in objects}
            name = name if name in objects else folded.get(name.strip().lower(), name)
            if name not in objects:
                import difflib

                close = difflib.get_close_matches(name.lower(), list(objects), n=3, cutoff=0.5)
                hint = f"did you mean {', '.join(close)}?" if close else "econ tables lists the tables and views"
                raise UnknownObject(f"no table or view {name!r} in {db_path}", hint, close)
            kind, description = objects[name]
            use_build_date(con)
            rows = con.execute(f"select count(*) from {quote_ident(name)}").fetchall()[0][0]
            columns = con.execute(
                "select column_name, data_type, comment from duckdb_columns() "
                "where database_name = current_database() and table_name = ? order by column_index",
                [name],
            ).fetchall()
        except duckdb.Error as e:
            raise damaged(Path(db_path), e) from None
    out = []
    for column, dtype, text in columns:
        meaning, unit, column_kind = split_comment(text)
        out.append((column, dtype.lower(), unit, column_kind, meaning))
    return name, kind, description, rows, out


def _objects(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, int, str]]:
    return [
        (n, k, 0, d)
        for n, k, d in con.execute(
            """
            select table_name, 'table', coalesce(comment, '') from duckdb_tables()
            where database_name = current_database()
            union all
            select view_name, 'view', coalesce(comment, '') from duckdb_views()
            where database_name = current_database() and not internal
            """
        ).fetchall()
    ]
