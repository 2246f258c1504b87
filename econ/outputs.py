"""Outputs never clobber what is not ours: checks made before a run stages anything (I/O edge).

- The report folder is replaced whole, so it must be new, empty, or carry econ's marker file
  :data:`MARKER` (every report econ writes has one; a report written by econ before the marker
  existed is recognised by its ``assets/econ.js``). Anything else — a user's folder, a regular
  file, a link — is an error naming the path, and nothing is touched.
- The database is replaced whole too: ``--db`` must be a new path or a database econ built (a DuckDB
  file with econ's ``build_info``); a folder, a link or any other file is an error.
- The cache folder must be new, empty, or carry :data:`~econ.markers.CACHE_MARKER` (a cache written
  before the marker existed is recognised by its entry folders); econ marks it.
- The data folder, the database, the report folder and the cache are four different places, and
  none may hold another (``--reports .`` would replace the project, ``--db data`` the inputs,
  ``--cache data`` would write among them).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from econ.errors import EconError
from econ.files import shown_path
from econ.lock import Locks
from econ.markers import (
    CACHE_MARKER,
    CACHE_MARKER_TEXT,
    REPORT_MARKER,
    REPORT_MARKER_TEXT,
    database_owner,
    is_our_report,
    write_report_marker,
)
from econ.recovery import finish_interrupted

MARKER = REPORT_MARKER
MARKER_TEXT = REPORT_MARKER_TEXT
write_marker = write_report_marker


DISTINCT_HINT = (
    "give the data (--data), the database (--db), the report (--reports) and the cache (--cache) places of their own"
)


class OutputError(EconError):
    """An output path points at something econ must not replace."""


def check_report_folder(folder: Path) -> None:
    """Raise :class:`OutputError` unless ``folder`` may be replaced by a report (see the module docstring)."""
    folder = Path(folder)
    shown = shown_path(folder)
    hint = "give --reports a new or empty folder, or a report folder econ wrote"
    if folder.is_symlink():
        raise OutputError(f"the report folder {shown} is a symbolic link; econ replaces it whole", hint)
    if not folder.exists():
        return
    if not folder.is_dir():
        raise OutputError(f"the report folder {shown} is a file, not a folder; econ will not replace it", hint)
    try:
        entries = sorted(p.name for p in folder.iterdir())
    except OSError as e:
        raise OutputError(f"cannot read the report folder {shown}: {e.strerror}", hint) from None
    if entries and not is_our_report(folder):
        listed = ", ".join(entries[:3]) + (", …" if len(entries) > 3 else "")
        raise OutputError(
            f"the report folder {shown} holds files econ did not write ({listed}) and no {MARKER} marker; "
            "econ replaces its report folder whole, so it will not use this one",
            hint,
        )


def check_database_path(db_path: Path) -> None:
    """Raise :class:`OutputError` unless ``db_path`` is new or a database econ built (it is replaced whole)."""
    shown = shown_path(db_path)
    hint = "give --db a new file path (such as build/econ.duckdb) or a database econ built"
    try:
        st = os.lstat(db_path)
    except (FileNotFoundError, NotADirectoryError):  # a new path (a folder that cannot be made is said when locking)
        return
    except OSError as e:
        raise OutputError(f"cannot read the database path {shown}: {e.strerror}", hint) from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(f"the database {shown} is a symbolic link; econ replaces the database whole", hint)
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"the database {shown} is a folder; econ writes the database as one file", hint)
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"the database {shown} is not a regular file (a pipe, a device or a socket)", hint)
    why = database_owner(Path(db_path))
    if why is not None:
        raise OutputError(
            f"the database {shown} is a file econ did not write ({why}); econ replaces its database whole, so it "
            "will not use this one",
            hint,
        )


_CACHE_NAMES = {"site", "report", "pages"}  # besides one folder per analysis, named like a Python module


def _looks_like_cache(folder: Path, entries: list[Path]) -> bool:
    """A cache written before the marker existed: only entry folders (``<name>/<key>/manifest.json``) and the
    report's files."""
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if not entry.is_dir() or entry.is_symlink() or not entry.name.replace("_", "").isalnum():
            return False
        if entry.name not in _CACHE_NAMES and not all((key / "manifest.json").is_file() for key in entry.iterdir()):
            return False
    return True


def claim_cache_folder(cache_dir: Path | None) -> None:
    """Check the cache folder and mark it as econ's (see the module docstring).

    A folder that cannot be created or marked is left to the cache's own notice (a cache that cannot be
    written only costs time); a folder of someone else's files is an :class:`OutputError`.
    """
    if cache_dir is None:
        return
    folder = Path(cache_dir)
    if folder.is_symlink():  # its entries would be dropped and written in the folder it points to, someone's
        raise OutputError(
            f"the cache folder {shown_path(folder)} is a symbolic link; econ drops and writes entries inside it",
            "give --cache a folder of its own (not a link), or leave it out for build/cache/",
        )
    if folder.exists() and not folder.is_dir():
        return  # the cache says "cannot be written" and the run goes on without it
    try:
        entries = list(folder.iterdir()) if folder.exists() else []
    except OSError:
        return
    if (folder / CACHE_MARKER).is_file():
        return
    if entries and not _looks_like_cache(folder, entries):
        listed = ", ".join(sorted(p.name for p in entries)[:3]) + (", …" if len(entries) > 3 else "")
        raise OutputError(
            f"the cache folder {shown_path(folder)} holds files econ did not write ({listed}) and no {CACHE_MARKER} "
            "marker; econ replaces the entries of its cache, so it will not use this one",
            "give --cache a new or empty folder, or a cache folder econ wrote",
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / CACHE_MARKER).write_text(CACHE_MARKER_TEXT, encoding="utf-8")
    except OSError:
        pass


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_distinct(
    *,
    data_dir: Path | None = None,
    db_path: Path | None = None,
    reports_dir: Path | None = None,
    cache_dir: Path | None = None,
) -> None:
    """Raise :class:`OutputError` unless the data folder, the database, the report folder and the cache are
    four places of their own: none is or holds another. The database may not sit in the data folder either (its
    write-ahead log and staging files would land among the inputs)."""
    given = [
        ("report folder", "--reports", reports_dir),
        ("data folder", "--data", data_dir),
        ("database", "--db", db_path),
        ("cache", "--cache", cache_dir),
    ]
    places = [(name, flag, path, _real(path)) for name, flag, path in given if path is not None]
    if data_dir is not None and db_path is not None and _inside(_real(db_path).parent, _real(data_dir)):
        raise OutputError(
            f"the database {shown_path(db_path)} is in the data folder {shown_path(data_dir)}", DISTINCT_HINT
        )
    for i, (name_a, flag_a, shown_a, a) in enumerate(places):
        for name_b, flag_b, shown_b, b in places[i + 1 :]:
            if not (_inside(a, b) or _inside(b, a)):
                continue
            if name_a == "report folder":
                first, why = (
                    f"the report folder {shown_path(shown_a)} ({flag_a})",
                    "econ replaces the report folder whole",
                )
            else:
                first, why = f"the {name_a} {shown_path(shown_a)} ({flag_a})", "econ keeps its inputs and outputs apart"
            raise OutputError(
                f"{first} and the {name_b} {shown_path(shown_b)} ({flag_b}) overlap; {why}", DISTINCT_HINT
            )


def prepare_run(
    locks: Locks,
    *,
    db_path: Path,
    data_dir: Path | None = None,
    reports_dir: Path | None = None,
    cache_dir: Path | None = None,
    wait: bool = False,
    writes_data: bool = False,
    writes_db: bool = True,
) -> None:
    """Everything a writing run does before it stages anything.

    Check that the outputs may be written (four places of their own, a database and a report folder that are
    econ's or new, a cache folder that is), lock the database, the report folder and (``writes_data``:
    ``econ refresh``) the data folder, finish the commit of a run that died in it (``econ.journal``), and remove
    the staging paths that dead runs recorded in those locks. A build only reads data/: each snapshot moves in
    with one rename, so it reads every file old or new and never locks (or writes beside) the data folder.
    """
    check_distinct(data_dir=data_dir, db_path=db_path, reports_dir=reports_dir, cache_dir=cache_dir)
    if writes_db:
        check_database_path(db_path)
    if reports_dir is not None:
        check_report_folder(reports_dir)  # before waiting for a lock: a wrong folder is said at once
    claim_cache_folder(cache_dir)
    locks.acquire([p for p in (data_dir if writes_data else None, db_path, reports_dir) if p is not None], wait=wait)
    finish_interrupted(db_path, locks)
    locks.remove_inherited()
    if reports_dir is not None:
        check_report_folder(reports_dir)
