"""Run the analyses against the database being built, with a cache keyed by their inputs.

An analysis is a module with

- ``NAME``: short name (also the cache folder),
- ``INPUTS``: the tables and views it reads (their contents, the build's ``as_of`` date and
  the source of the ``econ`` package key the cache),
- ``run(ctx)``: reads with ``ctx.query`` and writes every result table with ``ctx.write``.

When the key is unchanged the stored result tables are loaded from ``build/cache/`` and
``run`` is skipped (so a rebuild with no new input does not refit, re-bootstrap or re-sweep).
A stored entry is used only if every file matches the SHA-256 in its manifest; otherwise the
analysis runs again and a notice says why (``econ.cachefiles``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import ModuleType

import duckdb
import polars as pl

from econ.cachefiles import begin_entry, cannot_store, commit_entry, notice, verify
from econ.db import comment, is_write_failure, quote_ident, quote_literal, write_table
from econ.files import remove

PACKAGE_DIR = Path(__file__).resolve().parent.parent


@dataclass
class BuildContext:
    """What an analysis sees: a connection to the database being built and the build settings."""

    con: duckdb.DuckDBPyConnection
    as_of: date
    written: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        """Run SQL against the database being built; returns a polars frame."""
        return self.con.sql(sql, params=params or None).pl()

    def write(
        self,
        name: str,
        frames: pl.DataFrame | Iterable[pl.DataFrame],
        description: str,
        columns: dict[str, str] | None = None,
    ) -> int:
        """Write a result table (one frame or a stream of chunks) with its comments."""
        rows = write_table(self.con, name, frames, description=description, column_comments=columns or {})
        self.written[name] = (description, columns or {})
        return rows


def code_fingerprint() -> str:
    """Hash of every source file of the package: a code change invalidates every cache."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        h.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def input_fingerprint(con: duckdb.DuckDBPyConnection, names: Iterable[str]) -> str:
    """Hash of the full contents of the named tables/views, computed inside DuckDB.

    Each row is hashed as a whole (``hash(t)`` of the row struct) and the row hashes are
    summed, so the key is independent of row order and of the undefined bytes that Arrow
    keeps under null values; the column names and types are hashed too.
    """
    h = hashlib.sha256()
    for name in names:
        schema = con.execute(f"describe select * from {quote_ident(name)}").fetchall()
        rows, total = con.execute(
            f"select count(*), coalesce(sum(hash(t)::hugeint), 0) from {quote_ident(name)} as t"
        ).fetchall()[0]
        h.update(f"{name}|{schema}|{rows}|{total}".encode())
    return h.hexdigest()


def run_analyses(
    con: duckdb.DuckDBPyConnection,
    modules: list[ModuleType],
    *,
    as_of: date,
    cache_dir: Path | None,
    code_hash: str | None = None,
) -> dict[str, str]:
    """Run (or restore from cache) each analysis in order; returns {analysis: 'ran' | 'cached'}."""
    code_hash = code_hash or code_fingerprint()
    status = {}
    for module in modules:
        key = hashlib.sha256(
            f"{code_hash}|{module.NAME}|{as_of.isoformat()}|{input_fingerprint(con, module.INPUTS)}".encode()
        ).hexdigest()[:24]
        folder = Path(cache_dir) / module.NAME / key if cache_dir else None
        if folder is not None and _restore(con, folder, module.NAME):
            status[module.NAME] = "cached"
            continue
        ctx = BuildContext(con=con, as_of=as_of)
        module.run(ctx)
        if folder is not None:
            _store(con, folder, ctx.written)
        status[module.NAME] = "ran"
    return status


def _store(con: duckdb.DuckDBPyConnection, folder: Path, written: dict[str, tuple[str, dict[str, str]]]) -> None:
    """Keep the analysis's result tables as Parquet plus their comments and a manifest of their SHA-256
    (``econ.cachefiles``); older keys are dropped. A cache that cannot be written is a notice, not an error."""
    staged = None
    try:
        staged = begin_entry(folder)
        for name in written:
            target = quote_literal(str(staged / (name + ".parquet")))
            con.execute(f"copy {quote_ident(name)} to {target} (format parquet)")
        (staged / "tables.json").write_text(json.dumps({n: [d, c] for n, (d, c) in written.items()}, sort_keys=True))
        commit_entry(staged, folder)
    except (OSError, duckdb.Error) as e:
        if staged is not None:
            remove(staged)
        if isinstance(e, duckdb.Error) and not is_write_failure(e):
            raise
        cannot_store(folder.parent.parent, e)


def _restore(con: duckdb.DuckDBPyConnection, folder: Path, name: str) -> bool:
    """Load the stored result tables of an analysis if the entry passes its hash check; False to recompute."""
    if not folder.is_dir():
        return False
    problem = verify(folder)
    if problem is None:
        try:
            tables = json.loads((folder / "tables.json").read_text())
            for table, (description, columns) in tables.items():
                path = quote_literal(str(folder / (table + ".parquet")))
                con.execute(f"create or replace table {quote_ident(table)} as select * from read_parquet({path})")
                comment(con, table, description, columns)
            return True
        except (OSError, ValueError, TypeError, duckdb.Error) as e:
            if isinstance(e, duckdb.Error) and is_write_failure(e):
                raise  # the database being built cannot be written: not the cache's fault
            problem = f"it cannot be loaded ({str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__})"
    notice(f"the cached result of analysis {name} failed its check ({problem}); recomputed")
    return False
