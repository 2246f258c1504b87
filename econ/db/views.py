"""Views from ``queries/*.sql``: their header comments, what their SQL reads (DuckDB's parser), creating them in
dependency order during a build, and the build date ``price_current`` reads."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path

import duckdb

from econ.db import comment, quote_ident
from econ.errors import EconError


def relations_named(con: duckdb.DuckDBPyConnection, sql: str, *, with_ctes: bool = True) -> set[str] | None:
    """The tables and views a query names, from DuckDB's parser (``json_serialize_sql``; nothing is bound); None when
    it does not parse. ``with_ctes``: the names of its common table expressions come along (an over-estimate);
    else they are left out (a common table expression that shadows a table hides it)."""
    if sql not in _PARSED:
        tree = json.loads(con.execute("select json_serialize_sql(?)", [sql]).fetchall()[0][0])
        _PARSED[sql] = None if tree.get("error") else _names(tree)
    if _PARSED[sql] is None:
        return None
    tables, ctes = _PARSED[sql]
    return set(tables) if with_ctes else tables - ctes


_PARSED: dict[str, tuple[set[str], set[str]] | None] = {}
"""Each query parsed once per process (``create_views`` asks after every analysis; a page asks again per query)."""


def _names(node) -> tuple[set[str], set[str]]:
    """(``table_name`` of every ``BASE_TABLE`` node, every common table expression's name) of a parse tree."""
    tables: set[str] = set()
    ctes: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if item.get("type") == "BASE_TABLE" and isinstance(item.get("table_name"), str):
                tables.add(item["table_name"])
            cte_map = item.get("cte_map")
            if isinstance(cte_map, dict):
                ctes.update(entry["key"] for entry in cte_map.get("map", []) if isinstance(entry, dict))
            stack.extend(item.values())
    return tables, ctes


_HEADER = re.compile(r"^\s*--\s?(.*)$")
_COLUMN = re.compile(r"^column\s+([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.+)$")


def _header_lines(sql: str) -> list[str]:
    lines = []
    for line in sql.splitlines():
        m = _HEADER.match(line)
        if not m:
            break
        lines.append(m.group(1).strip())
    return lines


def view_header(sql: str) -> str:
    """The leading comment block of a view's SQL file (its description and grain), without its column lines."""
    return " ".join(x for x in _header_lines(sql) if x and not _COLUMN.match(x))


def view_column_notes(sql: str) -> dict[str, str]:
    """The ``-- column NAME: meaning [unit]`` lines of a view's header: comments of the columns it computes or
    renames (a column it passes through keeps the comment of the column it selects)."""
    return {m.group(1): m.group(2).strip() for x in _header_lines(sql) if (m := _COLUMN.match(x))}


def _column_comments(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """{relation: {column: comment}} of every commented column in the current database."""
    rows = con.execute(
        "select table_name, column_name, comment from duckdb_columns() where database_name = current_database()"
    ).fetchall()
    by_relation: dict[str, dict[str, str]] = {}
    for relation, column, text in rows:
        if text:
            by_relation.setdefault(relation, {})[column] = text
    return by_relation


def _view_column_comments(
    con: duckdb.DuckDBPyConnection, name: str, sql: str, by_relation: dict[str, dict[str, str]]
) -> dict[str, str]:
    """The comment of every column of view ``name``: its header's ``-- column`` line, else the comment of the column
    of that name in the first table or view the SQL names that has one (``by_relation``: :func:`_column_comments`)."""
    notes = view_column_notes(sql)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql)
    sources = [w for w in dict.fromkeys(words) if w in by_relation and w != name]
    comments = {}
    for (column,) in con.execute(
        "select column_name from duckdb_columns() where database_name = current_database() and table_name = ?", [name]
    ).fetchall():
        text = notes.get(column) or next((by_relation[r][column] for r in sources if column in by_relation[r]), None)
        if text:
            comments[column] = text
    return comments


def create_views(
    con: duckdb.DuckDBPyConnection, queries_dir: Path, *, allow_pending: bool = False, ready: set[str] | None = None
) -> list[str]:
    """Create one view per ``queries/*.sql`` (file stem = view name), in dependency order.

    Views may use other views; creation is retried until every view binds. A view that never binds
    is reported with its file and DuckDB's message — unless ``allow_pending``: the build creates the
    views over input tables first, then again, after the analyses, those over result tables. ``ready``: the relations a
    view may read yet (a table another thread is still writing, and commenting, is not), None for every one there.
    """
    files = sorted(Path(queries_dir).glob("*.sql"))
    here = "where database_name = current_database()"
    relations = con.execute(
        f"select view_name, true from duckdb_views() {here} and not internal union all "
        f"select table_name, false from duckdb_tables() {here}"
    ).fetchall()
    pending = {f.stem: f for f in files if (f.stem, True) not in relations}
    if not pending:
        return []
    known = {name for name, _ in relations if ready is None or name in ready}
    created: list[str] = []
    by_relation: dict[str, dict[str, str]] | None = None  # read once, kept current as the views are commented
    while pending:
        errors, progress = {}, False
        for name, path in list(pending.items()):
            sql = path.read_text(encoding="utf-8")
            body = sql.strip().rstrip(";")
            needs = relations_named(con, body, with_ctes=False) if allow_pending else None
            if needs is not None and not needs <= known:  # a table it reads is not written yet: no need to try
                errors[name] = f"it reads {', '.join(sorted(needs - known))}, not there yet"
                continue
            try:
                con.execute(f"create or replace view {quote_ident(name)} as {body}")
            except duckdb.CatalogException as e:
                errors[name] = str(e)
                continue
            except duckdb.Error as e:
                raise EconError(
                    f"{path}: view {name} does not compile: {e}".strip(), "fix the SQL in that file"
                ) from None
            if by_relation is None:
                by_relation = _column_comments(con)
            columns = _view_column_comments(con, name, sql, by_relation)
            comment(con, name, view_header(sql), columns, view=True)
            if columns:
                by_relation[name] = columns
            created.append(name)
            known.add(name)
            del pending[name]
            progress = True
        if errors and not progress:
            if allow_pending:
                break
            name, msg = next(iter(errors.items()))
            raise EconError(f"{pending[name]}: view {name} does not compile: {msg}", "fix the SQL in that file")
    return created


class PendingViews:
    """The views of ``queries/*.sql`` a build creates as the tables they read are written (:func:`create_views` with
    ``allow_pending``), asking DuckDB only when a table a waiting view reads was just written."""

    def __init__(self, con: duckdb.DuckDBPyConnection, queries_dir: Path):
        self.con, self.queries_dir = con, Path(queries_dir)
        self.waiting: dict[str, set[str] | None] = {}
        here = "where database_name = current_database()"
        self.ready = {  # what is there now is whole; an analysis's tables are once it has finished (written)
            r[0]
            for r in con.execute(
                f"select table_name from duckdb_tables() {here} union all "
                f"select view_name from duckdb_views() {here} and not internal"
            ).fetchall()
        }
        self.update()

    def update(self) -> None:
        """Create every view whose tables exist; note what the others wait for."""
        create_views(self.con, self.queries_dir, allow_pending=True, ready=self.ready)
        here = "where database_name = current_database() and not internal"
        made = {r[0] for r in self.con.execute(f"select view_name from duckdb_views() {here}").fetchall()}
        self.ready |= made  # a view is whole once made (this thread made it, comments included)
        self.waiting = {
            f.stem: relations_named(self.con, f.read_text(encoding="utf-8").strip().rstrip(";"), with_ctes=False)
            for f in sorted(self.queries_dir.glob("*.sql"))
            if f.stem not in made
        }

    def written(self, tables: Iterable[str]) -> None:
        """Tables were written: create the views that waited for one of them (or cannot say what they read)."""
        tables = set(tables)
        self.ready |= tables
        if any(needs is None or needs & tables for needs in self.waiting.values()):
            self.update()


def view_versions(con: duckdb.DuckDBPyConnection, queries_dir: Path, versions: dict[str, str]) -> dict[str, str]:
    """A version of each view of ``queries/*.sql`` without reading its rows: the SHA-256 of its SQL and of the versions
    of the relations it reads (``versions``: the build's tables; a view it reads, in turn). Its rows are a function of
    those and of the ``as_of`` variable, which whoever compares versions keys apart (the report's pages:
    ``econ.report.reuse``). A view that reads a relation without a version, or whose SQL does not parse, has none."""
    bodies = {
        f.stem: f.read_text(encoding="utf-8").strip().rstrip(";") for f in sorted(Path(queries_dir).glob("*.sql"))
    }
    out: dict[str, str] = {}

    def version(name: str, seen: frozenset[str]) -> str | None:
        if name in versions:
            return versions[name]
        if name not in bodies or name in seen:
            return None
        if name not in out:
            reads = relations_named(con, bodies[name], with_ctes=False)
            if reads is None:
                return None
            read = {r: version(r, seen | {name}) for r in sorted(reads)}
            if None in read.values():
                return None
            parts = [bodies[name], *(f"{r}={v}" for r, v in read.items())]
            out[name] = "view:" + hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
        return out[name]

    for name in bodies:
        version(name, frozenset())
    return out


def use_build_date(con: duckdb.DuckDBPyConnection) -> None:
    """Set the ``as_of`` variable ``price_current`` reads to the date the database was built for (if recorded)."""
    try:
        (when,) = con.execute("select max(as_of) from build_info").fetchall()[0]
    except duckdb.Error:
        return
    if when is not None:
        con.execute(f"set variable as_of = date '{when.isoformat()}'")
