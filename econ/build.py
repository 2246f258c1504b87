"""``econ build``: load and check data/, write the database atomically, run the analyses, write the report.

The one orchestrator of the flow in DESIGN.md. Nothing is replaced unless every stage
succeeded: the database is written to a temporary file and renamed, and the report to a
temporary folder that is swapped in after the rename.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from datetime import date
from importlib import metadata
from pathlib import Path

import polars as pl

from econ import __version__, catalog, paths
from econ.analyses import ANALYSES
from econ.analyses.runner import input_fingerprint, run_analyses
from econ.db import atomic_database, connect_read_only, create_views, table_summary, write_table
from econ.files import source_date, swap_in
from econ.fingerprint import code_fingerprint
from econ.load.loader import column_comments, load_all, table_description
from econ.results import CATALOG_DESCRIPTIONS

REPORT_LIBRARIES = ("altair", "vl-convert-python", "duckdb", "polars")


@dataclass
class BuildResult:
    db_path: Path
    objects: list[tuple[str, str, int, str]]
    analyses: dict[str, str]
    elapsed_s: float
    reports_dir: Path | None


def build(
    *,
    data_dir: Path = paths.DATA_DIR,
    db_path: Path = paths.DB_PATH,
    queries_dir: Path = paths.QUERIES_DIR,
    cache_dir: Path | None = paths.CACHE_DIR,
    reports_dir: Path | None = None,
    as_of: date | None = None,
) -> BuildResult:
    """Build the database (and the report when ``reports_dir`` is given); see the module docstring."""
    started = time.perf_counter()
    as_of = as_of or default_as_of()
    frames = load_all(Path(data_dir))
    staged_reports = None if reports_dir is None else Path(reports_dir).with_name(Path(reports_dir).name + ".tmp")
    try:
        with atomic_database(Path(db_path)) as con:
            code_hash = code_fingerprint()
            for name, frame in frames.items():
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
            create_views(con, Path(queries_dir), allow_pending=True)  # the views over result tables come after
            status = run_analyses(con, ANALYSES, as_of=as_of, cache_dir=cache_dir, code_hash=code_hash)
            for name, frame in catalog.frames().items():
                write_table(con, name, frame, description=CATALOG_DESCRIPTIONS[name])
            create_views(con, Path(queries_dir))
            if staged_reports is not None:
                key = _report_key(con, frames, Path(queries_dir), as_of=as_of, code_hash=code_hash)
                _write_report(con, staged_reports, as_of=as_of, cache_dir=cache_dir, key=key)
    except BaseException:
        if staged_reports is not None:
            shutil.rmtree(staged_reports, ignore_errors=True)
        raise
    if staged_reports is not None:
        swap_in(staged_reports, Path(reports_dir))
    with connect_read_only(Path(db_path)) as ro:
        objects = table_summary(ro)
    return BuildResult(Path(db_path), objects, status, time.perf_counter() - started, reports_dir)


def _report_key(con, frames, queries_dir: Path, *, as_of: date, code_hash: str) -> str:
    """What the site is drawn from: the database (a function of the input tables, the views' SQL, the code and
    ``as_of``; the analyses are deterministic), ``SOURCE_DATE_EPOCH`` and the versions of the libraries that draw it."""
    parts = [
        code_hash,
        as_of.isoformat(),
        os.environ.get("SOURCE_DATE_EPOCH") or "",
        input_fingerprint(con, frames),
        *(f"{p.name}\n{p.read_text(encoding='utf-8')}" for p in sorted(queries_dir.glob("*.sql"))),
        *(f"{lib}={metadata.version(lib)}" for lib in REPORT_LIBRARIES),
    ]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:24]


def _write_report(con, staged: Path, *, as_of: date, cache_dir: Path | None, key: str) -> None:
    """Write the site to ``staged``; reuse the stored site when its key (:func:`_report_key`) is unchanged,
    so the same key means the same pages, byte for byte."""
    shutil.rmtree(staged, ignore_errors=True)
    stored = Path(cache_dir) / "site" / key if cache_dir is not None else None
    if stored is not None and stored.is_dir():
        shutil.copytree(stored, staged)
        return
    from econ.report.site import build_site  # altair and vl-convert load only when pages are drawn

    build_site(con, staged, as_of=as_of, cache_dir=cache_dir)
    if stored is not None:
        shutil.rmtree(stored.parent, ignore_errors=True)
        shutil.copytree(staged, stored.with_name(key + ".tmp"))
        stored.with_name(key + ".tmp").rename(stored)


def default_as_of() -> date:
    """``SOURCE_DATE_EPOCH`` (reproducible builds) as a UTC date when set, else today."""
    return source_date() or date.today()
