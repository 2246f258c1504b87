"""``econ build`` and ``econ report``: load and check data/, write the database, run the analyses, write the report.

The one orchestrator of the flow (load, analyses, views, report). A run first takes the locks of its outputs and
checks that it may replace them (``econ.outputs``); it then stages the new database and the new
report at unique paths next to their targets and replaces nothing until both are complete; one
journal commit (``econ.journal``) then moves them in together. A run that fails, is interrupted or
is killed at any point leaves the previous database and report (or, once its journal is written,
the new ones: the next econ command finishes the moves).
"""

from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from econ import __version__, paths
from econ.cachefiles import restore_copy, store_copy
from econ.db import damaged, frame_fingerprint, staged_database, write_table
from econ.db.objects import object_counts
from econ.db.views import PendingViews, create_views, view_versions
from econ.faults import boundary
from econ.files import remove, source_date
from econ.fingerprint import code_fingerprint
from econ.journal import Transaction
from econ.lock import Locks
from econ.outputs import prepare_run, write_marker
from econ.previous import Previous, copy_previous, view_sources, write_keys
from econ.progress import step
from econ.uptodate import build_key, is_current, library_versions, record


@dataclass
class BuildResult:
    db_path: Path
    tables: int | None  # None when nothing was rebuilt (the database is not opened)
    views: int | None
    analyses: dict[str, str]
    elapsed_s: float
    reports_dir: Path | None
    current: bool = False
    """Nothing the build depends on changed since the database (and report) were written: nothing was rebuilt."""


def build(
    *,
    data_dir: Path = paths.DATA_DIR,
    db_path: Path = paths.DB_PATH,
    queries_dir: Path = paths.QUERIES_DIR,
    cache_dir: Path | None = paths.CACHE_DIR,
    reports_dir: Path | None = None,
    as_of: date | None = None,
    wait: bool = False,
    force: bool = False,
) -> BuildResult:
    """Build the database (and the report when ``reports_dir`` is given); see the module docstring.

    ``wait``: queue behind another run that holds an output's lock instead of failing with "busy". A database (and
    report) written from the same inputs (:func:`build_key`) is left as it is, as ``make`` would, unless ``force``.
    """
    started = time.perf_counter()
    as_of = as_of or default_as_of()
    key = build_key(Path(data_dir), Path(queries_dir), as_of=as_of, report=reports_dir is not None)
    with Locks(command="econ build") as locks:
        prepare_run(locks, db_path=db_path, data_dir=data_dir, reports_dir=reports_dir, cache_dir=cache_dir, wait=wait)
        if not force and is_current(Path(db_path), reports_dir, key):
            return BuildResult(Path(db_path), None, None, {}, time.perf_counter() - started, reports_dir, current=True)
        txn = Transaction(db_path, locks=locks)
        try:
            status, (tables, views) = stage_build(
                txn,
                data_dir=data_dir,
                db_path=db_path,
                queries_dir=queries_dir,
                cache_dir=cache_dir,
                reports_dir=reports_dir,
                as_of=as_of,
            )
            step("commit", Path(db_path).name, 0, 1)
            txn.commit()
        except BaseException:
            txn.abort()
            raise
        record(Path(db_path), reports_dir, key)
    return BuildResult(Path(db_path), tables, views, status, time.perf_counter() - started, reports_dir)


def stage_build(
    txn: Transaction,
    *,
    data_dir: Path,
    db_path: Path,
    queries_dir: Path = paths.QUERIES_DIR,
    cache_dir: Path | None,
    reports_dir: Path | None,
    as_of: date | None,
    pending: dict[Path, Path] | None = None,
) -> tuple[dict[str, str], tuple[int, int]]:
    """Stage the new database (and report) in ``txn`` without replacing anything; returns the analyses' status and
    how many tables and views the database holds (:func:`econ.db.objects.object_counts`).

    ``pending`` maps a snapshot's final path in data/ to the staged file holding its new content
    (``econ refresh``): the build reads it as if it were in place.
    """
    # The analyses, the catalog and the loader import SciPy and every analysis module: only a build that runs pays
    # for them (a build that finds its outputs current answers in a fraction of the import time).
    from econ.analyses import analyses
    from econ.analyses.runner import run_analyses
    from econ.load.loader import column_comments, load_all, table_description
    from econ.results import CATALOG_COLUMNS, CATALOG_DESCRIPTIONS

    as_of = as_of or default_as_of()
    code_hash = code_fingerprint()
    step("load", f"{Path(data_dir).name}/", 0, 1)
    staged_db = txn.stage(db_path, kind="database", companions=(".wal",))
    staged_reports = None if reports_dir is None else txn.stage(reports_dir, kind="reports")
    # The copy of the previous database and its SHA-256 run in the kernel and in hashlib, which release the GIL:
    # beside the load (mostly polars and Python), not after it (~0.1 s of a warm build's ~1.4 s).
    with ThreadPoolExecutor(max_workers=1) as beside:
        copying = beside.submit(copy_previous, Path(db_path), staged_db, code_hash=code_hash)
        salt = f"{code_hash}|{library_versions()}"
        frames = load_all(Path(data_dir), pending=pending, cache_dir=cache_dir, salt=salt)
        copied = copying.result()
    boundary("build:loaded")
    with staged_database(staged_db, shown=Path(db_path), copied=copied) as con:
        sources = view_sources(Path(queries_dir))
        previous = Previous.open(con, sources) if copied else None
        hashed = {name: frame_fingerprint(con, name, frame) for name, frame in frames.items()}
        for name, frame in frames.items():
            if previous is None or not previous.keep_input(con, name, hashed[name]):
                write_table(
                    con, name, frame, description=table_description(name), column_comments=column_comments(name)
                )
        write_table(
            con,
            "build_info",
            pl.DataFrame({"as_of": [as_of], "econ_version": [__version__], "code_fingerprint": [code_hash]}),
            description="How this database was built. Grain: one row.",
            column_comments={
                "as_of": "Date 'current' prices and the report refer to",
                "econ_version": "Version of econ that built the database",
                "code_fingerprint": "SHA-256 of econ's source files that built it (econ diff "
                "refuses a database built by other code)",
            },
        )
        con.execute(f"set variable as_of = date '{as_of.isoformat()}'")
        views = PendingViews(con, Path(queries_dir))  # the views over result tables come after their tables
        boundary("build:tables")
        keys: dict[str, str] = {}
        modules = analyses()
        status = run_analyses(
            con,
            modules,
            as_of=as_of,
            cache_dir=cache_dir,
            code_hash=f"{code_hash}|{library_versions()}",  # a library upgrade recomputes, never keeps, results
            after_each=lambda module: views.written(t.name for t in module.TABLES),
            queries_dir=Path(queries_dir),
            previous=previous,
            keys=keys,
            hashed=hashed,
        )
        step("views", "catalog and views", 0, 1)
        # A function of the code alone: the previous database, built by this code (copy_previous), holds it already.
        if previous is None or not previous.keep_code_tables(con, list(CATALOG_DESCRIPTIONS)):
            from econ import catalog  # imports every module of econ.fits and econ.physics for their formulas

            for name, frame in catalog.frames().items():
                write_table(
                    con, name, frame, description=CATALOG_DESCRIPTIONS[name], column_comments=CATALOG_COLUMNS[name]
                )
        write_keys(con, keys, {name: hashed[name] for name in frames}, sources)
        if previous is not None:
            previous.drop_rest(con)
        create_views(con, Path(queries_dir))
        boundary("build:analyses")
        if staged_reports is not None:
            key = _report_key(con, frames, Path(queries_dir), as_of=as_of, code_hash=code_hash, hashed=hashed)
            versions = {t.name: f"{m.NAME}:{keys[m.NAME]}" for m in modules for t in m.TABLES}
            versions |= {name: f"code:{code_hash}" for name in CATALOG_DESCRIPTIONS} | hashed
            versions |= view_versions(con, Path(queries_dir), versions)
            _write_report(con, staged_reports, as_of=as_of, cache_dir=cache_dir, key=key, versions=versions)
            write_marker(staged_reports)
            boundary("build:report")
        counts = object_counts(con)
    boundary("build:database")
    return status, counts


def report(
    db_path: Path,
    reports_dir: Path,
    *,
    as_of: date | None = None,
    cache_dir: Path | None = paths.CACHE_DIR,
    wait: bool = False,
) -> Path:
    """``econ report``: write the site from a built database and swap it in (locked, journalled like a build).

    Returns the path of ``index.html``. A database whose blocks cannot be read is a
    :class:`~econ.db.DatabaseError`; the previous report stays.
    """
    from econ.report.site import write_report  # altair loads only when pages are drawn

    with Locks(command="econ report") as locks:
        prepare_run(locks, db_path=db_path, reports_dir=reports_dir, cache_dir=cache_dir, wait=wait, writes_db=False)
        txn = Transaction(db_path, locks=locks)
        try:
            staged = txn.stage(reports_dir, kind="reports")
            try:
                write_report(db_path, staged, as_of=as_of, cache_dir=cache_dir)
                step("commit", Path(reports_dir).name, 0, 1)
            except duckdb.Error as e:
                if not _is_damage(e):
                    raise
                raise damaged(Path(db_path), e) from None
            write_marker(staged)
            boundary("report:staged")
            txn.commit()
        except BaseException:
            txn.abort()
            raise
    return Path(reports_dir) / "index.html"


def _is_damage(error: duckdb.Error) -> bool:
    """A read error from the file itself (checksum mismatch, truncated block), not a mistake in a query."""
    text = str(error).lower()
    return type(error) in (
        duckdb.Error,
        duckdb.IOException,
        duckdb.InternalException,
        duckdb.SerializationException,
    ) or ("corrupt" in text or "checksum" in text)


def _report_key(con, frames, queries_dir: Path, *, as_of: date, code_hash: str, hashed: dict[str, str]) -> str:
    """What the site is drawn from: the database (a function of the input tables, the views' SQL, the code and
    ``as_of``; the analyses are deterministic), ``SOURCE_DATE_EPOCH`` and the versions of the libraries that draw it."""
    from econ.analyses.runner import input_fingerprint

    parts = [
        code_hash,
        as_of.isoformat(),
        os.environ.get("SOURCE_DATE_EPOCH") or "",
        input_fingerprint(con, frames, hashed),
        *(f"{p.name}\n{p.read_text(encoding='utf-8')}" for p in sorted(queries_dir.glob("*.sql"))),
        library_versions(),
    ]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:24]


def _write_report(
    con, staged: Path, *, as_of: date, cache_dir: Path | None, key: str, versions: dict[str, str]
) -> None:
    """Write the site to ``staged``; reuse the stored site when its key (:func:`_report_key`) is unchanged and every
    stored file matches its hash, so the same key means the same pages, byte for byte."""
    remove(staged)
    stored = Path(cache_dir) / "site" / key if cache_dir is not None else None
    if stored is not None and restore_copy(stored, staged, what="report site"):
        step("report", "the stored site (nothing changed)", 0, 1)
        return
    from econ.report.site import build_site  # altair loads only when pages are drawn

    build_site(con, staged, as_of=as_of, cache_dir=cache_dir, versions=versions)
    if stored is not None:
        store_copy(staged, stored, root=Path(cache_dir))


def default_as_of() -> date:
    """``SOURCE_DATE_EPOCH`` (reproducible builds) as a UTC date when set, else today."""
    return source_date() or date.today()
