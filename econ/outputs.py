"""Outputs never clobber what is not ours: checks made before a run stages anything (I/O edge).

- The report folder is replaced whole, so it must be new, empty, or carry econ's marker file
  :data:`MARKER` (every report econ writes has one; a report written by econ before the marker
  existed is recognised by its ``assets/econ.js``). Anything else — a user's folder, a regular
  file, a link — is an error naming the path, and nothing is touched.
- The data folder, the database's folder and the report folder must be different folders, and
  none may hold another (``--reports .`` would replace the project; ``--reports data`` the inputs).
"""

from __future__ import annotations

import os
from pathlib import Path

from econ.errors import EconError
from econ.files import clean_stale, shown_path
from econ.journal import finish_interrupted, journal_path
from econ.load.loader import SNAPSHOT_DIR
from econ.lock import Locks

MARKER = ".econ-report"
MARKER_TEXT = (
    "This folder is written by econ (econ build, econ report) and replaced whole by every run.\n"
    "Keep no files of your own here: they would be removed with it.\n"
)
_LEGACY_SCRIPT = "/* econ report: "  # first line of assets/econ.js in every report econ has written


class OutputError(EconError):
    """An output path points at something econ must not replace."""


def is_our_report(folder: Path) -> bool:
    """Whether ``folder`` is a report folder econ wrote (it has the marker, or the script of an older econ)."""
    folder = Path(folder)
    if (folder / MARKER).is_file():
        return True
    try:
        with open(folder / "assets" / "econ.js", encoding="utf-8") as f:
            return f.read(len(_LEGACY_SCRIPT)) == _LEGACY_SCRIPT and (folder / "index.html").is_file()
    except (OSError, UnicodeDecodeError):
        return False


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


def write_marker(folder: Path) -> None:
    """Mark a staged report folder as econ's."""
    (Path(folder) / MARKER).write_text(MARKER_TEXT, encoding="utf-8")


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
    """Raise :class:`OutputError` unless the data folder, the database's folder and the report folder differ.

    The report folder (replaced whole) may not hold or be the data folder, the database or the
    cache; the database may not sit in the data folder (its write-ahead log and staging files
    would land among the inputs).
    """
    data = _real(data_dir) if data_dir is not None else None
    db = _real(db_path) if db_path is not None else None
    reports = _real(reports_dir) if reports_dir is not None else None
    cache = _real(cache_dir) if cache_dir is not None else None
    hint = "give the data (--data), the database (--db) and the report (--reports) folders of their own"
    if reports is not None:
        for name, path, flag in (
            ("data folder", data, "--data"),
            ("database", db, "--db"),
            ("cache", cache, "--cache"),
        ):
            if path is not None and (_inside(path, reports) or _inside(reports, path)):
                raise OutputError(
                    f"the report folder {shown_path(reports_dir)} and the {name} {shown_path(path)} ({flag}) "
                    "overlap; econ replaces the report folder whole",
                    hint,
                )
    if data is not None and db is not None and _inside(db.parent, data):
        raise OutputError(f"the database {shown_path(db_path)} is in the data folder {shown_path(data_dir)}", hint)


def prepare_run(
    locks: Locks,
    *,
    db_path: Path,
    data_dir: Path | None = None,
    reports_dir: Path | None = None,
    cache_dir: Path | None = None,
    wait: bool = False,
    writes_data: bool = False,
) -> None:
    """Everything a writing run does before it stages anything.

    Check that the outputs may be written (distinct folders, a report folder that is ours), lock
    the database, the report folder and (``writes_data``: ``econ refresh``) the data folder, finish
    the commit of a run that died in it (``econ.journal``), and remove the staging paths that dead
    runs left beside each output. A build only reads data/: each snapshot moves in with one rename,
    so it reads every file old or new and never locks (or writes beside) the data folder.
    """
    check_distinct(data_dir=data_dir, db_path=db_path, reports_dir=reports_dir, cache_dir=cache_dir)
    if reports_dir is not None:
        check_report_folder(reports_dir)  # before waiting for a lock: a wrong folder is said at once
    locks.acquire([p for p in (data_dir if writes_data else None, db_path, reports_dir) if p is not None], wait=wait)
    finish_interrupted(db_path, locks)
    db_path = Path(os.path.abspath(db_path))
    clean_stale(db_path.parent, names={db_path.name, journal_path(db_path).name})
    if reports_dir is not None:
        reports_dir = Path(os.path.abspath(reports_dir))
        clean_stale(reports_dir.parent, names={reports_dir.name})
        check_report_folder(reports_dir)
    if writes_data:
        clean_stale(Path(data_dir) / SNAPSHOT_DIR)
