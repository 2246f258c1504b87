"""``econ sql``: run user SQL on a read-only connection to the built database, streaming the result.

The database is opened read-only and, unless ``allow_files``, with DuckDB's external access
disabled: a query can read and write nothing but the database (``COPY … TO``, ``read_csv``,
``read_text``, ``ATTACH`` and extensions are refused, and SQL cannot turn access back on).
Rows are fetched in batches of :data:`BATCH_ROWS`, so memory stays bounded whatever the row count;
Ctrl-C stops the query (DuckDB interrupts it) or the fetching between two batches.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb

from econ.db import connect_read_only, quote_ident
from econ.errors import EconError
from econ.sql_allow import FILES_HINT, READ_ONLY_HINT, check_query
from econ.sweep.store import views_sql as sweep_views

BATCH_ROWS = 2000
MAX_SQL_BYTES = 16 * 2**20
"""Largest query text ``econ sql -f`` reads."""


def build_as_of(con: duckdb.DuckDBPyConnection) -> date | None:
    """The date the database was built for, so price_current agrees with the analyses (None: not recorded)."""
    try:
        return con.execute("select max(as_of) from build_info").fetchall()[0][0]
    except duckdb.Error:
        return None


def _failed(error: Exception) -> Exception:
    """The error for people for a DuckDB error raised while running or fetching a query."""
    message = str(error).strip()
    if isinstance(error, duckdb.InterruptException) or message == "Query interrupted":
        return KeyboardInterrupt()
    if "corrupt database file" in message.lower():
        return EconError(f"cannot read the database: {message.splitlines()[0]}", "the file is damaged; run econ build")
    if isinstance(error, duckdb.PermissionException) or "disabled by configuration" in message:
        return EconError(f"file access is refused: {message.splitlines()[0]}", FILES_HINT)
    if "read-only" in message or "read only" in message:
        return EconError(f"write statements are refused: {message}", READ_ONLY_HINT)
    return EconError(f"the query failed: {message}", "check the SQL; econ tables lists what you can query")


@dataclass
class QueryResult:
    """The columns of a running query and its rows, fetched batch by batch."""

    columns: list[str]
    _cursor: duckdb.DuckDBPyConnection | None
    _rows: list[tuple] | None = None

    def batches(self) -> Iterator[list[tuple]]:
        """Lists of at most :data:`BATCH_ROWS` rows until the result is exhausted."""
        if self._cursor is None:
            yield self._rows or []
            return
        while True:
            try:
                batch = self._cursor.fetchmany(BATCH_ROWS)
            except (duckdb.Error, RuntimeError) as e:
                raise _failed(e) from None
            if not batch:
                return
            yield batch


@contextmanager
def _interrupt_on_ctrl_c(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Interrupt the running statement of ``con`` on SIGINT, whatever DuckDB is doing.

    Python runs a signal handler only between bytecodes of the main thread, and DuckDB checks for it
    only at some points of a query (a long fetch of a streamed result ran on for minutes). The C-level
    handler also writes the signal's number to a wakeup fd; a watcher thread reads it and calls
    ``con.interrupt()``, which DuckDB honours from any thread. The KeyboardInterrupt still follows.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter
        os.close(read_fd)
        os.close(write_fd)
        yield
        return

    def watch() -> None:
        while data := os.read(read_fd, 64):
            if signal.SIGINT in data:
                con.interrupt()

    watcher = threading.Thread(target=watch, name="econ-sql-ctrl-c", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        os.close(write_fd)  # the watcher reads end-of-file and stops
        watcher.join(timeout=1)
        os.close(read_fd)


@contextmanager
def open_query(
    db_path: Path,
    sql: str,
    *,
    as_of: date | None = None,
    allow_files: bool = False,
    sweep: Path | None = None,
) -> Iterator[QueryResult]:
    """Execute ``sql`` (one or more statements; the last one's result is streamed) while the block runs.

    With ``sweep`` (the output folder of ``econ sweep``) its tables are views of the same names as the built
    database's (``serving_frontier``, ``serving_layouts``) plus ``sweep_draws`` and ``sweep_partitions``; they
    shadow the database's tables, which stay readable as ``<database>.main.<table>``. Without a built database
    the views are all there is.
    """
    if not sql.strip():
        raise EconError("the query is empty", "pass a SELECT statement")
    check_query(sql, allow_files=allow_files, sweep=sweep is not None)
    views = sweep_views(Path(sweep)) if sweep is not None else []
    database = None if sweep is not None and not Path(db_path).exists() else db_path
    readable = [Path(sweep)] if sweep is not None else []
    with (
        connect_read_only(database, external_access=allow_files, readable=readable) as con,
        _interrupt_on_ctrl_c(con),
    ):
        for name, select in views:
            con.execute(f"create temp view {quote_ident(name)} as {select}")
        as_of = as_of or build_as_of(con)
        if as_of is not None:
            con.execute(f"set variable as_of = date '{as_of.isoformat()}'")
        try:
            cursor = con.execute(sql)
        except (duckdb.Error, RuntimeError) as e:
            raise _failed(e) from None
        if cursor is None:  # only comments or semicolons
            raise EconError("the query has no statement (only comments or semicolons)", "pass a SELECT statement")
        if cursor.description is None:
            yield QueryResult(["result"], None, [("ok",)])
            return
        yield QueryResult([d[0] for d in cursor.description], cursor)


def query_text(raw: bytes, shown: str) -> str:
    """The SQL text of a file's or stdin's bytes: at most :data:`MAX_SQL_BYTES`, UTF-8 (a BOM is accepted)."""
    if len(raw) > MAX_SQL_BYTES:
        raise EconError(
            f"{shown} is larger than {MAX_SQL_BYTES // 2**20} MiB, the most econ sql reads", "is this the right file?"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise EconError(
            f"{shown} is not UTF-8 text (byte 0x{raw[e.start]:02x} on line {line})", "save the file as UTF-8"
        ) from None


def read_query_file(path: Path) -> str:
    """The SQL of ``econ sql -f``: a file (or a pipe, such as ``<(…)``) of at most :data:`MAX_SQL_BYTES`."""
    path = Path(path)
    if path.is_dir():
        raise EconError(f"{path} is a folder, not a SQL file", "give the path of a .sql file to -f")
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SQL_BYTES + 1)
    except FileNotFoundError:
        raise EconError(f"no SQL file at {path}", "check the path given to -f") from None
    except OSError as e:
        raise EconError(f"cannot read {path}: {e.strerror}", "check the path given to -f") from None
    return query_text(raw, str(path))
