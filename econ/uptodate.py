"""Whether a build would only rewrite what is there: ``econ build`` with nothing changed answers at once, as ``make``.

A build is a function of its inputs (:func:`build_key`). After a build commits, :func:`record` writes a small record
beside the database (``.<name>.built``): the key, the database's SHA-256 and the SHA-256 of every file of the report.
:func:`is_current` is true only when the key is the same and the database and report are byte for byte what that
build wrote, so a database edited in the DuckDB CLI or a report page edited by hand is rebuilt. ``econ refresh`` writes
one too, and the next build starts from the database only when its bytes match the record (``econ.previous``). The
record is a hint written after the commit: a run that dies before writing it leaves none (or the previous run's,
which no longer matches), and the next build simply runs.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from datetime import date
from importlib import metadata
from pathlib import Path

from econ.fingerprint import code_fingerprint

LIBRARIES = ("numpy", "scipy", "polars", "duckdb", "pyarrow", "altair")
"""The libraries whose versions a build's numbers and pages depend on."""
_CHUNK = 1 << 20


@functools.cache
def library_versions() -> str:
    """``name=version`` of each of :data:`LIBRARIES`: part of every key that says a result is still current (the
    build's, each analysis's, each stored page's). Read once per process (the installed versions do not change under
    a running command; each read took ~0.03 s)."""
    return ";".join(f"{lib}={metadata.version(lib)}" for lib in LIBRARIES)


def build_key(data_dir: Path, queries_dir: Path, *, as_of: date, report: bool) -> str:
    """What a build is a function of, hashed: econ's code, the as-of date, every file of ``data_dir`` and
    ``queries_dir`` (names and bytes; hidden files such as locks and staging paths left out), the versions of
    :data:`LIBRARIES`, ``SOURCE_DATE_EPOCH`` and whether a report is drawn. The analyses are deterministic, so the same
    key means the same database and report."""
    h = hashlib.sha256()
    parts = [code_fingerprint(), as_of.isoformat(), os.environ.get("SOURCE_DATE_EPOCH") or "", f"report={report}"]
    parts.append(library_versions())
    for part in parts:
        h.update(part.encode() + b"\0")
    for folder in (Path(data_dir), Path(queries_dir)):
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + _sha256(path).encode())
    return h.hexdigest()


def record_path(db_path: Path) -> Path:
    return Path(db_path).with_name(f".{Path(db_path).name}.built")


def record(db_path: Path, reports_dir: Path | None, key: str) -> None:
    """Write the record of a committed build (see the module docstring); a record that cannot be written is no
    error (the next build runs)."""
    text = json.dumps(
        {"build_key": key, "database_sha256": _sha256(Path(db_path)), "report": _report_files(reports_dir)}, indent=1
    )
    path = record_path(db_path)
    staged = path.with_name(path.name + f".{os.getpid()}.tmp")
    try:
        staged.write_text(text, encoding="utf-8")
        os.replace(staged, path)
    except OSError:
        staged.unlink(missing_ok=True)


def is_current(db_path: Path, reports_dir: Path | None, key: str) -> bool:
    """Whether the database (and, if one is asked for, the report) are what a build with ``key`` wrote. A write-ahead
    log beside the database means someone wrote to it after the build (DuckDB keeps those writes in the .wal until a
    checkpoint, so the database file's own bytes did not change): not current."""
    if os.path.lexists(f"{db_path}.wal"):
        return False
    try:
        stored = json.loads(record_path(db_path).read_text(encoding="utf-8"))
        if stored["build_key"] != key or stored["database_sha256"] != _sha256(Path(db_path)):
            return False
        return reports_dir is None or stored["report"] == _report_files(reports_dir)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _report_files(reports_dir: Path | None) -> dict[str, str] | None:
    if reports_dir is None:
        return None
    folder = Path(reports_dir)
    return {p.relative_to(folder).as_posix(): _sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()
