"""Run the analyses against the database being built, with a cache keyed by their inputs.

An analysis is a module with

- ``NAME``: short name (also the cache folder),
- ``INPUTS``: the tables and views it reads (their contents, the build's ``as_of`` date and the
  source of the ``econ`` package key the cache),
- ``READS`` (optional): {input: the SELECT over it that is all the analysis reads of it}: the key hashes that
  query's rows instead of the whole input (:func:`input_fingerprint`),
- ``TABLES``: the :class:`econ.results.ResultTable` declarations of everything it writes,
- ``run(ctx)``: reads with ``ctx.query`` and writes every declared table with ``ctx.write``.

When the key is the one the previous build recorded, its tables are kept from the database the build starts from
(``econ.previous``); else, when the key is unchanged, the stored result tables are loaded from ``build/cache/`` and
``run`` is skipped (so a rebuild with no new input does not refit, re-bootstrap or re-sweep).
A stored entry is used only if every file matches the SHA-256 in its manifest; otherwise the
analysis runs again and a notice says why (``econ.cachefiles``).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import ModuleType

import duckdb
import polars as pl

from econ.analyses.calibration_scenario import with_calibrated
from econ.analyses.scenario import Scenario, load_scenarios
from econ.cachefiles import begin_entry, cannot_store, commit_entry, notice, verify
from econ.db import comment, content_fingerprint, is_write_failure, quote_ident, quote_literal, write_table
from econ.db.views import relations_named
from econ.errors import EconError
from econ.files import remove
from econ.fingerprint import code_fingerprint
from econ.paths import QUERIES_DIR
from econ.previous import Previous
from econ.progress import step, took
from econ.results import ResultTable


class _Scenarios:
    """The scenarios table, read and typed once per build, on first use (by whichever analysis asks first, on its own
    connection: a DuckDB connection serves one thread at a time)."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con, self.value, self.lock = con, None, threading.Lock()

    def get(self, con: duckdb.DuckDBPyConnection | None = None) -> dict[str, Scenario]:
        with self.lock:
            if self.value is None:
                self.value = load_scenarios(con or self.con)
        return self.value


@dataclass
class BuildContext:
    """What an analysis sees: the database being built, the build date and the scenarios (read once per build)."""

    con: duckdb.DuckDBPyConnection
    as_of: date
    _scenarios: _Scenarios
    written: dict[str, ResultTable] = field(default_factory=dict)

    @property
    def scenarios(self) -> dict[str, Scenario]:
        """The scenarios of data/scenarios.csv."""
        return self._scenarios.get(self.con)

    @property
    def scenarios_with_calibrated(self) -> dict[str, Scenario]:
        """Those and ``calibrated`` once the calibration has written its parameters (an analysis that reads it lists
        ``calibration_parameters`` in its INPUTS)."""
        return with_calibrated(self.con, self.scenarios)

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame:
        """Run SQL against the database being built; returns a polars frame."""
        return pl.DataFrame(self.con.sql(sql, params=params or None))

    def scenario(self, name: str = "base") -> Scenario:
        known = self.scenarios_with_calibrated if name == "calibrated" else self.scenarios
        try:
            return known[name]
        except KeyError:
            raise EconError(f"no scenario {name!r}", f"known scenarios: {', '.join(sorted(known))}") from None

    def write(self, table: ResultTable, frames: pl.DataFrame | Iterable[pl.DataFrame]) -> int:
        """Write a declared result table (one frame or a stream of chunks), conformed to its declaration."""
        chunks = [frames] if isinstance(frames, pl.DataFrame) else frames
        conformed = (table.conform(chunk) for chunk in chunks)
        rows = write_table(
            self.con,
            table.name,
            _or_empty(conformed, table),
            description=table.table_comment,
            column_comments=table.column_comments,
        )
        self.written[table.name] = table
        return rows


def _or_empty(chunks: Iterable[pl.DataFrame], table: ResultTable) -> Iterable[pl.DataFrame]:
    """The chunks, or one empty frame of the declared schema when there are none (an empty table still exists)."""
    empty = True
    for chunk in chunks:
        empty = False
        yield chunk
    if empty:
        yield table.empty_frame()


def input_fingerprint(
    con: duckdb.DuckDBPyConnection,
    names: Iterable[str],
    seen: dict[str, str] | None = None,
    reads: dict[str, str] | None = None,
) -> str:
    """Hash of the full contents of the named tables/views (:func:`econ.db.content_fingerprint` of each).

    ``seen`` keeps each relation's line for the next call (a build writes each table once, so ``price_history`` is
    hashed once, not by each of its readers). ``reads`` (an analysis's ``READS``): {name: the SELECT over it that is
    all the analysis reads of it}; that query's rows are hashed instead of the whole relation, so a change the
    analysis does not read (a new snapshot of a price history, for ``model_catalog``) does not rerun it.
    """
    seen = {} if seen is None else seen
    reads = reads or {}
    h = hashlib.sha256()
    for name in names:
        if name in reads:
            h.update(content_fingerprint(con, name, shown=f"{name}|{reads[name]}", query=reads[name]).encode())
            continue
        if name not in seen:
            seen[name] = content_fingerprint(con, name)
        h.update(seen[name].encode())
    return h.hexdigest()


WORKERS = max(1, min(4, os.cpu_count() or 1))
"""Analyses run at once (threads, each on its own cursor of the database being built): the heavy part of each is
in NumPy, SciPy, polars and DuckDB, which release the GIL, so two analyses on two cores take ~0.6 of the time of one
after the other (calibration beside serving_layouts: 2.2 s against 3.5 s)."""


def run_analyses(
    con: duckdb.DuckDBPyConnection,
    modules: list[ModuleType],
    *,
    as_of: date,
    cache_dir: Path | None,
    code_hash: str | None = None,
    after_each: Callable[[ModuleType], object] | None = None,
    queries_dir: Path = QUERIES_DIR,
    workers: int = WORKERS,
    previous: Previous | None = None,
    keys: dict[str, str] | None = None,
    hashed: dict[str, str] | None = None,
) -> dict[str, str]:
    """Run (or keep, or restore from cache) each analysis; returns {analysis: 'ran' | 'kept' | 'cached'} in the
    modules' order.

    An analysis starts once every earlier analysis whose tables it reads (its ``INPUTS``, directly or through the
    views of ``queries_dir``) is done, up to ``workers`` at a time, earliest first; with ``workers=1`` they run in
    order. ``after_each(module)`` runs after every analysis, before any analysis that reads its tables starts (the
    build creates the views whose tables now exist, so a later analysis can read a view over an earlier one's table:
    ``price_current`` over ``price_history``); an analysis that does not read them may start first, so no worker
    waits for the views. The first analysis that fails stops the scheduling; the ones running finish and its error is
    raised. ``previous``: the previous build's tables, set aside in this database (``econ.previous``): an analysis
    whose key is the one recorded there takes its tables back ('kept'). ``keys`` receives each analysis's key;
    ``hashed`` holds the :func:`econ.db.content_fingerprint` of relations already hashed (the build's input tables).
    """
    code_hash = code_hash or code_fingerprint()
    scenarios = _Scenarios(con)
    hashed = {} if hashed is None else hashed  # every relation is complete before an analysis reads it, never rewritten
    keys = {} if keys is None else keys
    waits_for = dependencies(con, modules, queries_dir)
    status: dict[str, str] = {}
    pending = list(modules)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        running: dict[Future, tuple[ModuleType, duckdb.DuckDBPyConnection]] = {}
        failure: BaseException | None = None
        fresh: set[str] = set()  # finished, their after_each not yet run: what waits for them waits for that too

        def start_ready() -> None:
            """Start the earliest ready analyses while a worker is free. One that waits only for the views of a
            just-finished analysis (``fresh``) keeps its place: a worker stays for it, and only what the earliest-first
            order would start anyway starts before the views are made."""
            held = 0
            for module in list(pending):
                if failure is not None or len(running) + held >= max(1, workers):
                    return
                if not waits_for[module.NAME] <= status.keys():
                    continue
                if waits_for[module.NAME] & fresh:
                    held += 1
                    continue
                pending.remove(module)
                step("analyses", module.NAME, len(status), len(modules))
                session = _session(con) if workers > 1 else con
                args = (session, module, as_of, cache_dir, code_hash, scenarios, hashed, previous, keys)
                running[pool.submit(_run_one, *args)] = (module, session)

        while pending or running:
            start_ready()
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            done = []
            for future in finished:
                module, session = running.pop(future)
                if session is not con:
                    session.close()
                try:
                    status[module.NAME], seconds = future.result()
                    took("analyses", module.NAME, seconds)
                    done.append(module)
                    fresh.add(module.NAME)
                except BaseException as e:  # noqa: BLE001  (re-raised below, once the running ones finish)
                    failure = failure or e
            if workers > 1:  # what does not wait for these starts before their views are made (on ``con``, a thread
                start_ready()  # of its own): no worker idles meanwhile; with one worker, in order on ``con``
            for module in done:
                if after_each is not None and failure is None:
                    after_each(module)
                fresh.discard(module.NAME)
        if failure is not None:
            raise failure
    return {m.NAME: status[m.NAME] for m in modules}


def _run_one(
    con, module: ModuleType, as_of: date, cache_dir, code_hash: str, scenarios, hashed, previous, keys
) -> tuple[str, float]:
    """Keep one analysis's tables from the previous database, restore them from the cache, or run it (and store
    it); returns ('kept', 'cached' or 'ran', its seconds)."""
    started = time.perf_counter()
    inputs = input_fingerprint(con, module.INPUTS, hashed, getattr(module, "READS", None))
    key = hashlib.sha256(f"{code_hash}|{module.NAME}|{as_of.isoformat()}|{inputs}".encode()).hexdigest()[:24]
    keys[module.NAME] = key
    if previous is not None and previous.keep(con, module.NAME, key, [t.name for t in module.TABLES]):
        return "kept", time.perf_counter() - started
    folder = Path(cache_dir) / module.NAME / key if cache_dir else None
    if folder is not None and _restore(con, folder, module.NAME, module.TABLES):
        return "cached", time.perf_counter() - started
    ctx = BuildContext(con=con, as_of=as_of, _scenarios=scenarios)
    module.run(ctx)
    declared = {t.name for t in module.TABLES}
    if set(ctx.written) != declared:
        raise RuntimeError(f"analysis {module.NAME} wrote {sorted(ctx.written)}, declared {sorted(declared)}")
    if folder is not None:
        _store(con, folder, module.TABLES)
    return "ran", time.perf_counter() - started


def _session(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A cursor of ``con`` (its own DuckDB connection to the same database) in the same database and with the same
    ``as_of`` variable (both are per connection in DuckDB)."""
    cursor = con.cursor()
    ((database, as_of),) = con.execute("select current_database(), getvariable('as_of')").fetchall()
    cursor.execute(f"use {quote_ident(database)}")
    if as_of is not None:
        cursor.execute(f"set variable as_of = date '{as_of.isoformat()}'")
    return cursor


def dependencies(
    con: duckdb.DuckDBPyConnection, modules: list[ModuleType], queries_dir: Path = QUERIES_DIR
) -> dict[str, set[str]]:
    """{analysis: the earlier analyses whose tables it reads}: its ``INPUTS`` that an earlier analysis writes, and the
    tables each view of ``queries_dir`` it reads names (:func:`econ.db.views.relations_named`, DuckDB's parser; views
    over views followed to their tables; a view that does not parse waits for every earlier analysis)."""
    views = {p.stem: p.read_text(encoding="utf-8").strip().rstrip(";") for p in sorted(Path(queries_dir).glob("*.sql"))}
    writer: dict[str, str] = {}
    out: dict[str, set[str]] = {}
    for module in modules:
        names, seen = list(module.INPUTS), set()
        while names:
            name = names.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in views:
                read = relations_named(con, views[name], with_ctes=False)
                names += list(writer) if read is None else sorted(read)
        out[module.NAME] = {writer[n] for n in seen if n in writer and writer[n] != module.NAME}
        for table in module.TABLES:
            writer[table.name] = module.NAME
    return out


def _store(con: duckdb.DuckDBPyConnection, folder: Path, tables: tuple[ResultTable, ...]) -> None:
    """Keep the analysis's result tables as Parquet with a manifest of their SHA-256 (``econ.cachefiles``); older
    keys are dropped. A cache that cannot be written is a notice, not an error."""
    staged = None
    try:
        staged = begin_entry(folder)
        for t in tables:
            target = quote_literal(str(staged / (t.name + ".parquet")))
            con.execute(f"copy {quote_ident(t.name)} to {target} (format parquet)")
        (staged / "tables.json").write_text(json.dumps(sorted(t.name for t in tables)))
        commit_entry(staged, folder)
    except (OSError, duckdb.Error) as e:
        if staged is not None:
            remove(staged)
        if isinstance(e, duckdb.Error) and not is_write_failure(e):
            raise
        cannot_store(folder.parent.parent, e)


def _restore(con: duckdb.DuckDBPyConnection, folder: Path, name: str, tables: tuple[ResultTable, ...]) -> bool:
    """Load the stored result tables of an analysis if the entry passes its hash check; False to recompute.
    Comments come from the declarations, not the cache."""
    if not folder.is_dir():
        return False
    problem = verify(folder)
    if problem is None:
        try:
            stored = set(json.loads((folder / "tables.json").read_text()))
            if stored != {t.name for t in tables}:
                raise ValueError(f"it holds {sorted(stored)}, the analysis declares {sorted(t.name for t in tables)}")
            for t in tables:
                path = quote_literal(str(folder / (t.name + ".parquet")))
                con.execute(f"create or replace table {quote_ident(t.name)} as select * from read_parquet({path})")
                comment(con, t.name, t.table_comment, t.column_comments)
            return True
        except (OSError, ValueError, TypeError, duckdb.Error) as e:
            if isinstance(e, duckdb.Error) and is_write_failure(e):
                raise  # the database being built cannot be written: not the cache's fault
            problem = f"it cannot be loaded ({str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__})"
    notice(f"the cached result of analysis {name} failed its check ({problem}); recomputed")
    return False
