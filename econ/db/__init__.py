"""The DuckDB file: atomic writes, read-only opens, views from ``queries/*.sql``, comments.

The database is always written to a staging file next to the target (:func:`staged_database`)
and moved over it only when everything succeeded (``econ.journal``), so a failed build leaves
the previous file byte-identical.
It is written in DuckDB's v1.5 storage format so the standalone ``duckdb`` CLI 1.5.x
(PyPI ``duckdb-cli``) can open it as well as the Python package that wrote it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl

from econ.errors import EconError
from econ.fingerprint import code_fingerprint
from econ.journal import finish_interrupted_for_reading

STORAGE_VERSION = "v1.5.0"
ATTACH_AS = "econ"


class DatabaseError(EconError):
    """The database file is missing, locked or cannot be read."""


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cannot_write(db_path: Path, error: Exception) -> DatabaseError:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return DatabaseError(
        f"cannot write the database {db_path}: {text}",
        "check that the folder exists and is writable and that the disk is not full (or pass --db); "
        "nothing was replaced",
    )


_WRITE_FAILURES = ("could not write", "file too large", "no space left", "disk quota", "could not truncate")


def is_write_failure(error: Exception) -> bool:
    """Whether a DuckDB error is a file that could not be written (full disk, ``ulimit -f``, a vanished folder).

    DuckDB raises these as IOException, or as TransactionException ("Failed to commit: Could not write
    file …") when the write-ahead log is the file that failed; the message says which.
    """
    text = str(error).lower()
    return any(k in text for k in _WRITE_FAILURES)


@contextmanager
def staged_database(
    path: Path, *, shown: Path | None = None, copied: bool = False
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Yield a connection whose default catalog is a fresh database file at ``path`` (a staging path), or, when
    ``copied``, the copy of a previous database already there (``econ.previous``).

    On success the file is checkpointed (no ``.wal`` stays beside it), closed and fsynced; moving it
    onto the real database is the caller's (:class:`econ.journal.Transaction`). On any exception the
    file and its ``.wal`` are removed. A file DuckDB cannot create or write (a read-only folder, a full
    disk, ``ulimit -f``) is a :class:`DatabaseError` naming ``shown`` (the target the user gave).
    """
    path = Path(path)
    shown = Path(shown) if shown is not None else path
    con = duckdb.connect()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in (path, path.with_name(path.name + ".wal"))[int(copied) :]:
            stale.unlink(missing_ok=True)
        con.execute(f"attach {quote_literal(str(path))} as {ATTACH_AS} (storage_version '{STORAGE_VERSION}')")
    except (OSError, duckdb.Error) as e:
        con.close()
        raise DatabaseError(
            f"cannot write a database next to {shown}: {e}",
            "check that the folder exists and is writable, or pass --db",
        ) from None
    try:
        try:
            con.execute(f"use {ATTACH_AS}")
            yield con
            con.execute("checkpoint")
            con.execute("use memory")
            con.execute(f"detach {ATTACH_AS}")
        except duckdb.Error as e:
            if not (isinstance(e, duckdb.IOException) or is_write_failure(e)):
                raise
            raise _cannot_write(shown, e) from None
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None
        con.close()
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        con.close()
        for leftover in (path, path.with_name(path.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise


def connect_read_only(
    db_path: Path | None, *, current: bool = False, external_access: bool = True, readable: Iterable[Path] = ()
) -> duckdb.DuckDBPyConnection:
    """Open the built database read-only (``econ sql``, the report, ``econ diff``, ``econ fleet``).

    With ``current=True`` the database must have been built by this code (commands that read
    result tables by column say "run econ build" instead of failing deep inside a query). With
    ``external_access=False`` (``econ sql``) DuckDB may read and write no file but the database:
    ``COPY … TO``, ``read_csv``, ``read_text``, ``ATTACH`` and extensions are refused, and the
    setting cannot be turned back on from SQL. ``readable`` folders (a sweep's output) stay readable then; a
    ``db_path`` of None opens an empty in-memory database instead (``econ sql --sweep`` without a build).
    """
    readable = [Path(os.path.abspath(p)) for p in readable]
    if db_path is None:
        return _limit_files(duckdb.connect(), external_access, readable)
    db_path = Path(db_path)
    finish_interrupted_for_reading(db_path)
    if not db_path.exists():
        raise DatabaseError(f"no database at {db_path}", "run econ build first (or pass --db)")
    config = {} if external_access or readable else {"enable_external_access": False}
    try:
        con = _limit_files(duckdb.connect(str(db_path), read_only=True, config=config), external_access, readable)
    except duckdb.Error as e:
        wal = db_path.with_name(db_path.name + ".wal")
        hint = "is another process writing it? run econ build again"
        if "corrupt" in str(e).lower() or "checksum" in str(e).lower():
            hint = "the file is damaged; run econ build to write a new one"
        elif wal.exists():
            hint = (
                f"{wal} was left by a process that wrote the file and died; econ build sets it aside with the old "
                "file and writes a new one"
            )
        raise DatabaseError(f"cannot open {db_path}: {_first_line(e)}", hint) from None
    if current:
        try:
            require_built_by(con, db_path, code_fingerprint())
        except DatabaseError:
            con.close()
            raise
    return con


def _limit_files(con: duckdb.DuckDBPyConnection, external_access: bool, readable: list[Path]):
    """Turn file access off except for the ``readable`` folders (DuckDB's ``allowed_directories``)."""
    if external_access or not readable:
        return con
    folders = ", ".join(quote_literal(str(p) + os.sep) for p in readable)
    con.execute(f"set allowed_directories = [{folders}]")
    con.execute("set enable_external_access = false")
    return con


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def damaged(db_path: Path, error: Exception) -> DatabaseError:
    """The error for a database whose blocks cannot be read (checksum mismatch, truncated file)."""
    return DatabaseError(
        f"cannot read {db_path}: {_first_line(error)}",
        "the file is damaged; run econ build to write a new one",
    )


def require_built_by(con: duckdb.DuckDBPyConnection, db_path: Path, code_hash: str) -> None:
    """Raise :class:`DatabaseError` unless ``build_info`` says this code (``code_hash``) built the database.

    A database from an older econ (or not from econ) then gives a message instead of a catalog
    or binder error deep inside a command that expects today's tables and columns.
    """
    try:
        built = con.execute("select any_value(code_fingerprint) from build_info").fetchall()[0][0]
    except (duckdb.CatalogException, duckdb.BinderException):  # no build_info, or one without the column: built
        built = None  # before econ recorded its code
    except duckdb.Error as e:  # a block that cannot be read
        raise damaged(db_path, e) from None
    if built != code_hash:
        raise DatabaseError(
            f"{db_path} was built by another version of econ", "run econ build to rebuild it with this one"
        )


class _ArrowStream:
    """A frame as an Arrow C stream (the PyCapsule interface): DuckDB reads it without pyarrow, whose import cost the
    first write of every process 0.1-0.3 s (frame.to_arrow() imports it)."""

    def __init__(self, frame: pl.DataFrame):
        self._frame = frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self._frame.__arrow_c_stream__(requested_schema)


def write_table(
    con: duckdb.DuckDBPyConnection,
    name: str,
    frames: pl.DataFrame | Iterable[pl.DataFrame],
    *,
    description: str = "",
    column_comments: dict[str, str] | None = None,
) -> int:
    """Create (or replace) table ``name`` from one frame or a stream of frames; returns rows written.

    A stream is written a few chunks at a time (:func:`_batched`), so a result larger than memory still lands.
    """
    chunks = [frames] if isinstance(frames, pl.DataFrame) else _batched(frames)
    rows, created = 0, False
    for chunk in chunks:
        con.register("_econ_chunk", _ArrowStream(chunk))
        if not created:
            con.execute(f"create or replace table {quote_ident(name)} as select * from _econ_chunk")
            created = True
        else:
            con.execute(f"insert into {quote_ident(name)} select * from _econ_chunk")
        con.unregister("_econ_chunk")
        rows += chunk.height
    if not created:
        raise ValueError(f"table {name}: no frames to write")
    comment(con, name, description, column_comments or {})
    return rows


WRITE_BATCH_BYTES = 256 * 2**20
"""Chunks of a stream gathered before one insert: each insert into a table on disk is a commit, and sixteen inserts of
serving_curves' ~21,000-row chunks took 0.59 s against 0.33 s for one of all 336,000 rows."""


def _batched(chunks: Iterable[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    """The chunks, consecutive ones concatenated (in order) up to :data:`WRITE_BATCH_BYTES` of memory."""
    held: list[pl.DataFrame] = []
    size = 0
    for chunk in chunks:
        held.append(chunk)
        size += chunk.estimated_size()
        if size >= WRITE_BATCH_BYTES:
            yield pl.concat(held) if len(held) > 1 else held[0]
            held, size = [], 0
    if held:
        yield pl.concat(held) if len(held) > 1 else held[0]


def content_fingerprint(con: duckdb.DuckDBPyConnection, name: str, *, shown: str | None = None) -> str:
    """The contents of a table or view in one line, computed inside DuckDB: its name (``shown``, if given), column
    names and types, row count and the sum of its rows' hashes (``hash(t)`` of the row struct: independent of row
    order and of the undefined bytes Arrow keeps under null values)."""
    schema = con.execute(f"describe select * from {quote_ident(name)}").fetchall()
    rows, total = con.execute(
        f"select count(*), coalesce(sum(hash(t)::hugeint), 0) from {quote_ident(name)} as t"
    ).fetchall()[0]
    return f"{shown or name}|{schema}|{rows}|{total}"


def frame_fingerprint(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> str:
    """:func:`content_fingerprint` of the table :func:`write_table` would write from ``frame``, without writing it."""
    con.register("_econ_frame", _ArrowStream(frame))
    try:
        return content_fingerprint(con, "_econ_frame", shown=name)
    finally:
        con.unregister("_econ_frame")


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


def comment(
    con: duckdb.DuckDBPyConnection, name: str, description: str, column_comments: dict[str, str], *, view: bool = False
) -> None:
    """Store the table's description and each column's meaning and unit as DuckDB comments.

    The comments of one table are one transaction: a build writes ~800 of them, and committing
    each on its own took ~0.2 s of every build.
    """
    kind = "view" if view else "table"
    existing = {
        r[0]
        for r in con.execute(
            "select column_name from duckdb_columns() where database_name = current_database() and table_name = ?",
            [name],
        ).fetchall()
    }
    statements = [f"comment on {kind} {quote_ident(name)} is {quote_literal(description)}"] if description else []
    statements += [
        f"comment on column {quote_ident(name)}.{quote_ident(column)} is {quote_literal(text)}"
        for column, text in column_comments.items()
        if column in existing
    ]
    if not statements:
        return
    con.execute("begin transaction")  # callers hold no transaction of their own (DuckDB has no nested ones)
    try:
        for statement in statements:
            con.execute(statement)
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")


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


def _comment_view_columns(con: duckdb.DuckDBPyConnection, name: str, sql: str) -> None:
    """Comment every column of view ``name``: its header's ``-- column`` line, else the comment of the column of that
    name in the first table or view the SQL names that has one."""
    notes = view_column_notes(sql)
    rows = con.execute(
        "select table_name, column_name, comment from duckdb_columns() where database_name = current_database()"
    ).fetchall()
    by_relation: dict[str, dict[str, str]] = {}
    for relation, column, text in rows:
        if text:
            by_relation.setdefault(relation, {})[column] = text
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql)
    sources = [w for w in dict.fromkeys(words) if w in by_relation and w != name]
    comments = {}
    for (column,) in con.execute(
        "select column_name from duckdb_columns() where database_name = current_database() and table_name = ?", [name]
    ).fetchall():
        text = notes.get(column) or next((by_relation[r][column] for r in sources if column in by_relation[r]), None)
        if text:
            comments[column] = text
    comment(con, name, "", comments, view=True)


def create_views(con: duckdb.DuckDBPyConnection, queries_dir: Path, *, allow_pending: bool = False) -> list[str]:
    """Create one view per ``queries/*.sql`` (file stem = view name), in dependency order.

    Views may use other views; creation is retried until every view binds. A view that never binds
    is reported with its file and DuckDB's message — unless ``allow_pending``: the build creates the
    views over input tables first, then again, after the analyses, those over result tables.
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
    known = {name for name, _ in relations}
    created: list[str] = []
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
            comment(con, name, view_header(sql), {}, view=True)
            _comment_view_columns(con, name, sql)
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
        self.update()

    def update(self) -> None:
        """Create every view whose tables exist; note what the others wait for."""
        create_views(self.con, self.queries_dir, allow_pending=True)
        here = "where database_name = current_database() and not internal"
        made = {r[0] for r in self.con.execute(f"select view_name from duckdb_views() {here}").fetchall()}
        self.waiting = {
            f.stem: relations_named(self.con, f.read_text(encoding="utf-8").strip().rstrip(";"), with_ctes=False)
            for f in sorted(self.queries_dir.glob("*.sql"))
            if f.stem not in made
        }

    def written(self, tables: Iterable[str]) -> None:
        """Tables were written: create the views that waited for one of them (or cannot say what they read)."""
        tables = set(tables)
        if any(needs is None or needs & tables for needs in self.waiting.values()):
            self.update()


def use_build_date(con: duckdb.DuckDBPyConnection) -> None:
    """Set the ``as_of`` variable ``price_current`` reads to the date the database was built for (if recorded)."""
    try:
        (when,) = con.execute("select max(as_of) from build_info").fetchall()[0]
    except duckdb.Error:
        return
    if when is not None:
        con.execute(f"set variable as_of = date '{when.isoformat()}'")
