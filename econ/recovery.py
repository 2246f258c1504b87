"""Recovery of a run that died in its commit (I/O edge): read its journal, check that it is this project's and
names only econ's outputs, then finish the moves or undo them (:mod:`econ.journal` says how a commit is written and
why that leaves every output all old or all new)."""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

from econ.errors import EconNotice
from econ.files import fsync_dir, read_json_bounded, remove, shown_path
from econ.journal import (
    COMPANIONS,
    KINDS,
    MAX_JOURNAL_BYTES,
    VERSION,
    JournalError,
    Move,
    apply_move,
    database_of,
    drop_backups,
    exists,
    folder_identity,
    journal_path,
    with_suffix,
)
from econ.lock import BusyError, Locks, lock_path
from econ.markers import is_duckdb_file, is_our_report
from econ.paths import HISTORY_DIR, HISTORY_NAME, SNAPSHOT_DIR, SNAPSHOT_NAME

# ---------------------------------------------------------------------------- reading a journal: is it ours?


def _refused(journal: Path, what: str) -> JournalError:
    return JournalError(
        f"the journal {shown_path(journal)} of an interrupted run {what}; econ did not act on it and touched no file",
        "econ writes its journals itself and acts only on its own outputs: if you did not expect it, delete "
        f"{shown_path(journal)} (the database and report are whole either way) and run econ build",
    )


def _load(journal: Path) -> dict:
    try:
        body = read_json_bounded(journal, max_bytes=MAX_JOURNAL_BYTES)
    except (OSError, ValueError) as e:
        raise JournalError(
            f"the journal {shown_path(journal)} of an interrupted run cannot be read ({e})",
            "it is written whole and renamed into place, so something else changed it; look at the files it names, "
            "then delete it and run econ build",
        ) from None
    if not isinstance(body, dict) or not isinstance(body.get("moves"), list):
        raise _refused(journal, "is not a journal econ wrote (no list of moves)")
    return body


def _kind_of(target: Path, db: Path) -> str:
    """The kind of output a version-1 journal's target is (that version did not record it)."""
    if target == db:
        return "database"
    if target.parent.name == SNAPSHOT_DIR:
        return "snapshot"
    return "reports"


def _check_project(journal: Path, body: dict) -> None:
    """Refuse a journal written in another folder (a copy of the project, or a journal copied here)."""
    folder = journal.parent
    if body.get("version") == 1:  # absolute paths: its database must be this one
        targets = [m.get("target") for m in body["moves"] if isinstance(m, dict)]
        db = str(database_of(journal))
        if db not in targets:
            where = next((str(Path(t).parent) for t in targets if isinstance(t, str)), "another folder")
            raise _refused(journal, f"was written for the database in {where}, not for this one (a copied project?)")
        return
    project = body.get("project")
    if not isinstance(project, dict):
        raise _refused(journal, "names no project")
    here = folder_identity(folder)
    same_folder = project.get("folder") == here["folder"]
    same_inode = (project.get("device"), project.get("inode")) == (here["device"], here["inode"])
    if not (same_folder or same_inode):
        raise _refused(
            journal,
            f"was written in {project.get('folder')}, not here (this project is a copy of that one, or the journal "
            "was copied): a commit is finished only in the project where it was made",
        )


def _paths(journal: Path, body: dict, entry) -> Move:
    if not isinstance(entry, dict):
        raise _refused(journal, f"holds an entry that is not a move ({str(entry)[:80]})")
    names = [entry.get(k) for k in ("staged", "target", "backup")]
    companions = entry.get("companions", [])
    if not all(isinstance(n, str) and n for n in names) or not isinstance(companions, list):
        raise _refused(journal, f"holds a move without its paths ({json.dumps(entry)[:120]})")
    base = journal.parent
    staged, target, backup = (Path(os.path.normpath(base / n)) for n in names)  # absolute names stay absolute
    db = database_of(journal)
    kind = entry.get("kind") if body.get("version") != 1 else _kind_of(target, db)
    return Move(kind, staged, target, backup, tuple(c for c in companions if isinstance(c, str)))


_OUR_NAME = {"staged": "stage", "backup": "old"}


def _not_ours(move: Move, db: Path) -> str | None:
    """Why a move is not one econ makes, or None."""
    if move.kind not in KINDS:
        return f"an output of kind {move.kind!r}"
    if not set(move.companions) <= set(COMPANIONS):
        return f"companions {move.companions} of {move.target}"
    for role, suffix in _OUR_NAME.items():
        path = getattr(move, role)
        pattern = rf"^\.{re.escape(move.target.name)}\.{suffix}-\d+-[0-9a-f]{{8}}$"
        if path.parent != move.target.parent or not re.match(pattern, path.name):
            return f"{path} as the {role} copy of {move.target}"
    if move.kind == "database":
        if move.target != db:
            return f"{move.target} as the database (its database is {db})"
        for path in (move.staged, move.target, move.backup):
            if exists(path) and not is_duckdb_file(path):
                return f"{path}, which is not a DuckDB database"
    elif move.kind == "snapshot":
        if not _a_price_file(move.target):
            return f"{move.target} as a price snapshot"
        for path in (move.staged, move.target, move.backup):
            if exists(path) and (path.is_symlink() or not path.is_file()):
                return f"{path}, which is not a snapshot file"
    else:
        for path in (move.staged, move.target, move.backup):
            if exists(path) and (path.is_symlink() or not path.is_dir() or not _report_or_empty(path)):
                return f"{path}, which is not a report folder econ wrote"
    return None


def _a_price_file(target: Path) -> bool:
    """A dated snapshot in data/snapshots/ or a replayed history's file in data/history/ (both of kind snapshot)."""
    folder, name = target.parent.name, target.name
    return (folder == SNAPSHOT_DIR and SNAPSHOT_NAME.match(name) is not None) or (
        folder == HISTORY_DIR and HISTORY_NAME.match(name) is not None
    )


def _report_or_empty(folder: Path) -> bool:
    try:
        return is_our_report(folder) or not any(folder.iterdir())
    except OSError:
        return False


def read_journal(journal: Path) -> tuple[list[Move], int | None]:
    """The moves and pid of a journal, checked (see the module docstring); :class:`JournalError` if it is damaged,
    written for another project, or names anything but econ's outputs."""
    journal = Path(os.path.abspath(journal))
    body = _load(journal)
    if body.get("version") not in (1, VERSION):
        raise _refused(journal, f"has version {body.get('version')!r}, which this econ does not know")
    _check_project(journal, body)
    db = database_of(journal)
    moves = [_paths(journal, body, entry) for entry in body["moves"]]
    for move in moves:
        why = _not_ours(move, db)
        if why is not None:
            raise _refused(journal, f"names {why}: that is not an output econ writes for {shown_path(db)}")
    pid = body.get("pid")
    return moves, pid if isinstance(pid, int) else None


def _locks_of(moves: list[Move], db: Path) -> list[Path]:
    """The locks a run that made these moves held: the database's, each report folder's, each data folder's."""
    locks = {lock_path(db)}
    for move in moves:
        if move.kind == "reports":
            locks.add(lock_path(move.target))
        elif move.kind == "snapshot":
            locks.add(lock_path(move.target.parent.parent))
    return sorted(locks)


def recover(journal: Path, moves: list[Move], pid: int | None) -> str:
    """Finish or undo the commit of a run that died (the caller holds its locks); returns what was done.

    Roll forward when every move is either made or still staged; roll back (restore the backups)
    when a staged output has vanished before its move was made.
    """
    lost = [m for m in moves if not exists(m.staged) and not exists(m.target)]
    names = ", ".join(shown_path(m.target) for m in moves)
    if not lost:
        for move in moves:
            apply_move(move)
        drop_backups(moves, journal)
        return f"finished the commit of an interrupted run (pid {pid}): {names} are the new ones"
    for move in moves:
        if exists(move.staged):  # not moved yet: the old target stays (or comes back from its backup)
            remove(move.staged)
        elif exists(move.target):  # moved: the new output goes, the old one comes back
            remove(move.target)
        if exists(move.backup) and not exists(move.target):
            os.rename(move.backup, move.target)
        for suffix in move.companions:
            if exists(with_suffix(move.backup, suffix)) and not exists(with_suffix(move.target, suffix)):
                os.rename(with_suffix(move.backup, suffix), with_suffix(move.target, suffix))
        fsync_dir(move.target.parent)
    journal.unlink()
    fsync_dir(journal.parent)
    lost_names = ", ".join(shown_path(m.staged) for m in lost)
    return (
        f"undid the commit of an interrupted run (pid {pid}): its staged {lost_names} had vanished; "
        f"{names} are the old ones"
    )


def finish_interrupted(db_path: Path, locks: Locks) -> None:
    """Recover the journal of ``db_path`` if a run died in its commit; ``locks`` (held by the caller) gets the locks
    that run held as well (not waiting: a live holder is a :class:`~econ.lock.BusyError`)."""
    journal = journal_path(db_path)
    if not exists(journal):
        return
    moves, pid = read_journal(journal)
    locks.take(_locks_of(moves, Path(os.path.abspath(db_path))))
    if not exists(journal):  # finished by the run whose lock we waited for
        return
    moves, pid = read_journal(journal)
    warnings.warn(recover(journal, moves, pid), EconNotice, stacklevel=2)


def finish_interrupted_for_reading(db_path: Path) -> None:
    """:func:`finish_interrupted` for a command that only reads: it recovers when no run holds the locks, and
    otherwise leaves the journal to the run that is committing (the database file itself is never half-moved)."""
    if not exists(journal_path(db_path)):
        return
    with Locks(command="econ (recovering)") as locks:
        try:
            finish_interrupted(db_path, locks)
        except BusyError:
            return
