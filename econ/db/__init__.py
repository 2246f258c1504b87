"""The DuckDB file: atomic writes, read-only opens, table writes and comments (views: :mod:`econ.db.views`).

The database is always written to a staging file next to the target (:func:`staged_database`)
and moved over it only when everything succeeded (``econ.journal``), so a failed build leaves
the previous file byte-identical.
It is written in DuckDB's v1.5 storage format so the standalone ``duckdb`` CLI 1.5.x
(PyPI ``duckdb-cli``) can open it as well as the Python package that wrote it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import polars as pl

from econ.errors import EconError
from econ.fingerprint import code_fingerprint
from econ.recovery import finish_interrupted_for_reading

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


def content_fingerprint(
    con: duckdb.DuckDBPyConnection, name: str, *, shown: str | None = None, query: str | None = None
) -> str:
    """The contents of a table or view in one line, computed inside DuckDB: its name (``shown``, if given), column
    names and types, row count and the sum of its rows' hashes (``hash(t)`` of the row struct: independent of row
    order and of the undefined bytes Arrow keeps under null values). ``query``: the rows of that SELECT instead of
    the relation ``name``'s."""
    relation = f"({query})" if query is not None else quote_ident(name)
    schema = con.execute(f"describe select * from {relation}").fetchall()
    rows, total = con.execute(f"select count(*), coalesce(sum(hash(t)::hugeint), 0) from {relation} as t").fetchall()[0]
    return f"{shown or name}|{schema}|{rows}|{total}"


def frame_fingerprint(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> str:
    """:func:`content_fingerprint` of the table :func:`write_table` would write from ``frame``, without writing it."""
    con.register("_econ_frame", _ArrowStream(frame))
    try:
        return content_fingerprint(con, "_econ_frame", shown=name)
    finally:
        con.unregister("_econ_frame")


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
