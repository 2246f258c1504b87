"""Start a build from the previous database, keeping every result whose inputs did not change (I/O edge).

A build's analyses are deterministic: a result table is a function of its analysis's key (``econ.analyses.runner``:
the code, the analysis, ``as_of`` and the contents of what it reads). Every build records those keys in the table
:data:`KEYS_TABLE`. The next build, when the database at its output path was written by the same code and is byte
for byte what that build wrote (the SHA-256 in the build record, ``econ.uptodate``), starts from a copy of it in
its staging file instead of an empty one:

1. :func:`copy_previous` copies the database to the staging path and checks the copy's SHA-256;
2. :func:`Previous.open` reads the recorded keys and versions, renames every table aside
   (``__econ_previous__<name>``), so no analysis can read a stale result, and drops the views unless no
   ``queries/*.sql`` changed (a kept view reads its tables by name, so it reads the new ones): the database then
   holds what an empty one would, plus tables no query names;
3. an analysis whose key equals the recorded one takes its tables back (:meth:`Previous.keep`, a rename) instead of
   running or restoring them from the Parquet cache; any other runs as before;
4. the build writes the input tables (those whose contents changed: :meth:`Previous.keep_input`, against the
   fingerprints recorded in :data:`VERSIONS_TABLE`) and the new keys (:func:`write_keys`) as it would in an empty
   file, takes back the catalog (a function of the code alone, :meth:`Previous.keep_code_tables`), and
   :meth:`Previous.drop_rest` drops every table not taken back.

The previous database itself is only read: the copy is a staging file the journal moves into place, so a failed
or killed build leaves it as it was. The result is the database a build from an empty file writes, table for
table (``tests/test_previous.py`` compares them after a price change). When the copy leaves the file mostly
free space (DuckDB reuses freed blocks but does not shrink a file), the build starts from an empty file instead.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from econ.cachefiles import digest
from econ.db import quote_ident, write_table
from econ.files import remove
from econ.uptodate import record_path

KEYS_TABLE = "build_analyses"
KEYS_DESCRIPTION = (
    "The cache key of each analysis of the build that wrote this database (the next build keeps the result tables "
    "of an analysis whose key is unchanged). Grain: one row per analysis."
)
KEYS_COLUMNS = {
    "analysis": "Analysis module (econ/analyses/<analysis>.py)",
    "cache_key": "SHA-256 (24 hex digits) of econ's code, the analysis, the as-of date and the contents of what it "
    "reads",
}
VERSIONS_TABLE = "build_versions"
VERSIONS_DESCRIPTION = (
    "The version of each input table and each view of the build that wrote this database: the next build keeps an "
    "input table whose contents are unchanged, and the views when no queries/*.sql file changed, without hashing or "
    "creating them again. Grain: one row per input table or view."
)
VERSIONS_COLUMNS = {
    "relation": "Input table (loaded from data/) or view (queries/<relation>.sql)",
    "kind": "'input' or 'view'",
    "version": "An input table's econ.db.content_fingerprint (columns, types, row count, the sum of its rows' hashes); "
    "a view's SHA-256 of its SQL file",
}
PREFIX = "__econ_previous__"
MAX_FREE_FRAC = 0.4
"""A copy whose file is more than this share free blocks is not used: the build starts empty and writes a compact
file (DuckDB reuses the blocks of replaced tables but never shrinks the file)."""


def copy_previous(db_path: Path, staged: Path, *, code_hash: str) -> bool:
    """Copy the previous database to ``staged`` if a build may start from it; False (nothing at ``staged``) if not.

    It may when it exists with no write-ahead log beside it (a write after the build), its bytes match the SHA-256
    in the build record, and it was built by this code and records its analyses' keys.
    """
    db_path, staged = Path(db_path), Path(staged)
    if not db_path.is_file() or os.path.lexists(f"{db_path}.wal"):
        return False
    try:
        recorded = json.loads(record_path(db_path).read_text(encoding="utf-8"))["database_sha256"]
        shutil.copyfile(db_path, staged)  # in the kernel (copy_file_range / sendfile)
        if digest(staged) != recorded or not _usable(staged, code_hash):  # the copy's own bytes are checked
            remove(staged)
            return False
    except (OSError, ValueError, KeyError, TypeError, duckdb.Error):
        remove(staged)
        remove(Path(f"{staged}.wal"))
        return False
    return True


def _usable(path: Path, code_hash: str) -> bool:
    with duckdb.connect(str(path), read_only=True) as con:
        names = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
        if KEYS_TABLE not in names or "build_info" not in names:
            return False
        built_by = con.execute("select code_fingerprint from build_info").fetchall()
        total, free = con.execute("select total_blocks, free_blocks from pragma_database_size()").fetchall()[0]
    return built_by == [(code_hash,)] and free <= MAX_FREE_FRAC * max(total, 1)


@dataclass
class Previous:
    """The previous build's result tables, set aside in the database being built, and their analyses' keys."""

    keys: dict[str, str]
    inputs: dict[str, str] = field(default_factory=dict)
    aside: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)  # analyses run side by side

    @classmethod
    def open(cls, con: duckdb.DuckDBPyConnection, views: dict[str, str]) -> Previous:
        """Read the recorded keys and versions, rename every table aside (the build writes the input tables again,
        takes back the results it keeps, and :meth:`drop_rest` drops the others) and drop the views, unless they are
        the ones ``views`` (:func:`view_sources`) would make: a view is its SQL and the comments of the columns it
        reads, which this code wrote (:func:`copy_previous`), and it reads its tables by name when queried, so it
        reads the new ones (an analysis that reads a view waits for the tables under it: econ.analyses.runner)."""
        keys = dict(con.execute(f"select analysis, cache_key from {KEYS_TABLE}").fetchall())
        here = "where database_name = current_database()"
        names = [r[0] for r in con.execute(f"select view_name from duckdb_views() {here} and not internal").fetchall()]
        tables = [r[0] for r in con.execute(f"select table_name from duckdb_tables() {here}").fetchall()]
        recorded: dict[str, dict[str, str]] = {"input": {}, "view": {}}
        if VERSIONS_TABLE in tables:
            for relation, kind, version in con.execute(
                f"select relation, kind, version from {VERSIONS_TABLE}"
            ).fetchall():
                recorded[kind][relation] = version
        views_kept = bool(views) and recorded["view"] == views and set(names) == set(views)
        con.execute("begin transaction")
        for view in [] if views_kept else names:
            con.execute(f"drop view {quote_ident(view)}")
        for name in tables:
            con.execute(f"alter table {quote_ident(name)} rename to {quote_ident(PREFIX + name)}")
        con.execute("commit")
        return cls(keys, recorded["input"], set(tables))

    def keep(self, con: duckdb.DuckDBPyConnection, analysis: str, key: str, tables: list[str]) -> bool:
        """Take back the tables of ``analysis`` if its key is the recorded one (and all its tables were there)."""
        with self.lock:
            if self.keys.get(analysis) != key or not set(tables) <= self.aside:
                return False
            self.aside.difference_update(tables)
        self._take_back(con, tables)
        return True

    def keep_input(self, con: duckdb.DuckDBPyConnection, name: str, fingerprint: str) -> bool:
        """Take back the input table ``name`` if its previous contents have this :func:`econ.db.content_fingerprint`
        (the build then need not write it again): the one :data:`VERSIONS_TABLE` records, true of the copy because its
        bytes are what that build wrote (:func:`copy_previous`)."""
        if name not in self.aside or self.inputs.get(name) != fingerprint:
            return False
        self.aside.discard(name)
        self._take_back(con, [name])
        return True

    def keep_code_tables(self, con: duckdb.DuckDBPyConnection, names: list[str]) -> bool:
        """Take back tables that are a function of the code alone (the catalog): the previous database was built by
        this code (:func:`copy_previous` checks its code fingerprint), so they are what the build would write."""
        if not set(names) <= self.aside:
            return False
        self.aside.difference_update(names)
        self._take_back(con, names)
        return True

    def _take_back(self, con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
        con.execute("begin transaction")
        for name in tables:
            con.execute(f"alter table {quote_ident(PREFIX + name)} rename to {quote_ident(name)}")
        con.execute("commit")

    def drop_rest(self, con: duckdb.DuckDBPyConnection) -> None:
        """Drop every previous table no analysis took back."""
        if not self.aside:
            return
        con.execute("begin transaction")
        for name in sorted(self.aside):
            con.execute(f"drop table {quote_ident(PREFIX + name)}")
        con.execute("commit")
        self.aside.clear()


def view_sources(queries_dir: Path) -> dict[str, str]:
    """{view: SHA-256 of ``queries/<view>.sql``}: what a view of the build is, with econ's code."""
    return {f.stem: digest(f) for f in sorted(Path(queries_dir).glob("*.sql"))}


def write_keys(
    con: duckdb.DuckDBPyConnection, keys: dict[str, str], inputs: dict[str, str], views: dict[str, str]
) -> None:
    """Record each analysis's key in :data:`KEYS_TABLE`, and each input table's fingerprint and each view's
    :func:`view_sources` in :data:`VERSIONS_TABLE`."""
    frame = pl.DataFrame(
        {"analysis": list(keys), "cache_key": list(keys.values())},
        schema={"analysis": pl.String, "cache_key": pl.String},
    )
    write_table(con, KEYS_TABLE, frame, description=KEYS_DESCRIPTION, column_comments=KEYS_COLUMNS)
    frame = pl.DataFrame(
        {
            "relation": [*inputs, *views],
            "kind": ["input"] * len(inputs) + ["view"] * len(views),
            "version": [*inputs.values(), *views.values()],
        },
        schema={"relation": pl.String, "kind": pl.String, "version": pl.String},
    )
    write_table(con, VERSIONS_TABLE, frame, description=VERSIONS_DESCRIPTION, column_comments=VERSIONS_COLUMNS)
