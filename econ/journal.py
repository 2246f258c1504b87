"""Crash consistency: database, report and snapshot move together, by a journal (I/O edge).

A run stages every output at a unique path next to its target (:func:`econ.files.staging_path`),
recorded first in the lock of that output (:meth:`econ.lock.Locks.record`), and replaces nothing until
all of them are complete. :meth:`Transaction.commit` then

1. writes the journal ``.<db name>.journal`` beside the database — the project it belongs to and the
   list of (kind, staged path, target, backup path), each path relative to the journal's folder — to a
   staging file, fsyncs it and renames it into place: **this rename is the commit point**;
2. for each output in turn, moves the old target (and its companions, e.g. DuckDB's ``.wal``) to
   its backup path and the staged path onto the target, fsyncing the folder after each rename;
3. removes the backups, then the journal.

A run that dies before step 1 leaves every target as it was (its staging paths are recorded in its
locks and removed by the next run); one that dies after it leaves a journal, and the next econ command
on that database finishes the renames (rolls forward: every staged part was complete before the
journal was written). Only if a staged part has vanished (removed by hand) are the moves already
made undone from their backups (rolled back). Either way the three outputs are all old or all new.

A journal is obeyed only where it was written and only for econ's own outputs (:func:`read_journal`):
its folder must be the one it records (the same folder, by path or by inode: a project that was
moved keeps its journal, a copy does not finish the original's commit); each move must be the
database beside the journal, a report folder econ wrote, or a price file (a snapshot of a
``snapshots`` folder or a replayed history's file of a ``history`` folder), with staging and backup
paths of econ's names beside its target. Anything else is refused whole, with a message naming the
entry, and no file is touched.

The old database's write-ahead log moves aside with it, so a ``.wal`` left by a dead writer never
meets the new file (DuckDB would replay it into the wrong database and refuse to open it). SIGINT
and SIGTERM are held back during the commit, so Ctrl-C lands after it, never inside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from econ.errors import EconError, EconNotice
from econ.faults import boundary
from econ.files import backup_path, fsync_dir, fsync_file, read_json_bounded, remove, shown_path, staging_path
from econ.lock import BusyError, Locks, lock_path
from econ.markers import is_duckdb_file, is_our_report
from econ.paths import HISTORY_DIR, HISTORY_NAME, SNAPSHOT_DIR, SNAPSHOT_NAME

VERSION = 2
KINDS = ("database", "reports", "snapshot")
COMPANIONS = (".wal",)
MAX_JOURNAL_BYTES = 1 << 20


class JournalError(EconError):
    """The journal of an interrupted run cannot be read, is not this project's, or names what is not econ's."""


@dataclass(frozen=True)
class Move:
    """One output of a transaction: ``staged`` replaces ``target``; the old one waits at ``backup``."""

    kind: str  # database, reports or snapshot
    staged: Path
    target: Path
    backup: Path
    companions: tuple[str, ...] = ()  # suffixes of files that move with the target (".wal")

    def to_json(self, base: Path) -> dict:
        def rel(path: Path) -> str:
            return os.path.relpath(path, base)

        return {
            "kind": self.kind,
            "staged": rel(self.staged),
            "target": rel(self.target),
            "backup": rel(self.backup),
            "companions": list(self.companions),
        }


def journal_path(db_path: Path) -> Path:
    """The journal of the runs that write ``db_path``."""
    db_path = Path(os.path.abspath(db_path))
    return db_path.with_name(f".{db_path.name}.journal")


def database_of(journal: Path) -> Path:
    """The database a journal belongs to (``.econ.duckdb.journal`` -> ``econ.duckdb`` beside it)."""
    journal = Path(os.path.abspath(journal))
    return journal.with_name(journal.name[1 : -len(".journal")])


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _with(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _identity(folder: Path) -> dict:
    st = os.stat(folder)
    return {"folder": str(folder), "device": st.st_dev, "inode": st.st_ino}


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back until the block is done (they are delivered right after).

    Blocking them at the kernel is not enough: a signal that arrived just before the block has already tripped
    Python's flag, and its handler would run at the next bytecode inside the block. So the handlers are swapped for
    one that only records the signal, and each recorded signal is raised again once the block is done.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def record(signum, frame) -> None:
        received.append(signum)

    held = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, record) for s in held}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(received):
            signal.raise_signal(s)


class Transaction:
    """Outputs staged by one run, replaced together by :meth:`commit` (see the module docstring).

    ``db_path`` is the database (its journal is :func:`journal_path`); ``locks`` the locks the run holds, in
    which every staging and backup path is recorded before it is made.
    """

    def __init__(self, db_path: Path, *, locks: Locks):
        self.db_path = Path(os.path.abspath(db_path))
        self.journal = journal_path(self.db_path)
        self.locks = locks
        self.moves: list[Move] = []
        self.committed = False

    def stage(self, target: Path, *, kind: str, companions: tuple[str, ...] = (), output: Path | None = None) -> Path:
        """A unique staging path for ``target`` (next to it); the caller writes the new output there.

        The staging and backup paths are recorded in the lock of ``output`` (default: ``target``; a snapshot's is
        the data folder) before anything is made there.
        """
        target = Path(os.path.abspath(target))
        move = Move(kind, staging_path(target), target, backup_path(target), companions)
        for path in (move.staged, move.backup):
            for suffix in ("", *companions):
                self.locks.record(_with(path, suffix), output=output or target)
        self.moves.append(move)
        return move.staged

    def abort(self) -> None:
        """Remove everything staged (a failed or interrupted run); the targets are untouched."""
        if self.committed:
            return
        for move in self.moves:
            for path in (move.staged, _with(move.staged, ".wal")):
                remove(path)

    def commit(self) -> None:
        """Write the journal (the commit point), move every staged output onto its target, clean up."""
        with _signals_held():
            base = self.journal.parent
            body = {"version": VERSION, "pid": os.getpid(), "project": _identity(base)}
            body["moves"] = [m.to_json(base) for m in self.moves]
            tmp = staging_path(self.journal)
            self.locks.record(tmp, output=self.db_path)
            try:
                tmp.write_text(json.dumps(body, indent=1), encoding="utf-8")
                fsync_file(tmp)
                self.locks.note_journal(self.journal)  # a clean-up of the data folder's lock must wait for it
                os.replace(tmp, self.journal)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            fsync_dir(self.journal.parent)
            self.committed = True
            boundary("commit:journal")
            for move in self.moves:
                _apply(move)
            boundary("commit:moved")
            _finish(self.moves, self.journal)


def _apply(move: Move) -> None:
    """Move the old target (and companions) aside and the staged output in; a move already made is skipped."""
    if not _exists(move.staged):
        return
    name = move.target.name
    if _exists(move.target):
        os.rename(move.target, move.backup)
    for suffix in move.companions:  # also when the target was gone: a stray .wal must not meet the new file
        if _exists(_with(move.target, suffix)):
            os.rename(_with(move.target, suffix), _with(move.backup, suffix))
    fsync_dir(move.target.parent)
    boundary(f"commit:{name}:aside")
    os.rename(move.staged, move.target)
    fsync_dir(move.target.parent)
    boundary(f"commit:{name}:in")


def _finish(moves: list[Move], journal: Path) -> None:
    for move in moves:
        remove(move.backup)
        for suffix in move.companions:
            remove(_with(move.backup, suffix))
    boundary("commit:cleaned")
    journal.unlink(missing_ok=True)
    fsync_dir(journal.parent)


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
    here = _identity(folder)
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
            if _exists(path) and not is_duckdb_file(path):
                return f"{path}, which is not a DuckDB database"
    elif move.kind == "snapshot":
        if not _a_price_file(move.target):
            return f"{move.target} as a price snapshot"
        for path in (move.staged, move.target, move.backup):
            if _exists(path) and (path.is_symlink() or not path.is_file()):
                return f"{path}, which is not a snapshot file"
    else:
        for path in (move.staged, move.target, move.backup):
            if _exists(path) and (path.is_symlink() or not path.is_dir() or not _report_or_empty(path)):
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
    lost = [m for m in moves if not _exists(m.staged) and not _exists(m.target)]
    names = ", ".join(shown_path(m.target) for m in moves)
    if not lost:
        for move in moves:
            _apply(move)
        _finish(moves, journal)
        return f"finished the commit of an interrupted run (pid {pid}): {names} are the new ones"
    for move in moves:
        if _exists(move.staged):  # not moved yet: the old target stays (or comes back from its backup)
            remove(move.staged)
        elif _exists(move.target):  # moved: the new output goes, the old one comes back
            remove(move.target)
        if _exists(move.backup) and not _exists(move.target):
            os.rename(move.backup, move.target)
        for suffix in move.companions:
            if _exists(_with(move.backup, suffix)) and not _exists(_with(move.target, suffix)):
                os.rename(_with(move.backup, suffix), _with(move.target, suffix))
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
    if not _exists(journal):
        return
    moves, pid = read_journal(journal)
    locks.take(_locks_of(moves, Path(os.path.abspath(db_path))))
    if not _exists(journal):  # finished by the run whose lock we waited for
        return
    moves, pid = read_journal(journal)
    warnings.warn(recover(journal, moves, pid), EconNotice, stacklevel=2)


def finish_interrupted_for_reading(db_path: Path) -> None:
    """:func:`finish_interrupted` for a command that only reads: it recovers when no run holds the locks, and
    otherwise leaves the journal to the run that is committing (the database file itself is never half-moved)."""
    if not _exists(journal_path(db_path)):
        return
    with Locks(command="econ (recovering)") as locks:
        try:
            finish_interrupted(db_path, locks)
        except BusyError:
            return
