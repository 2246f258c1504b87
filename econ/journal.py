"""Crash consistency: database, report and snapshot move together, by a journal (I/O edge).

A run stages every output at a unique path next to its target (:func:`econ.files.staging_path`)
and replaces nothing until all of them are complete. :meth:`Transaction.commit` then

1. writes the journal ``.<db name>.journal`` beside the database — the list of (staged path,
   target, backup path) — to a staging file, fsyncs it and renames it into place: **this rename
   is the commit point**;
2. for each output in turn, moves the old target (and its companions, e.g. DuckDB's ``.wal``) to
   its backup path and the staged path onto the target, fsyncing the folder after each rename;
3. removes the backups, then the journal.

A run that dies before step 1 leaves every target as it was (its staging paths are stale and are
removed by the next run); one that dies after it leaves a journal, and the next econ command on
that database finishes the renames (rolls forward: every staged part was complete before the
journal was written). Only if a staged part has vanished (removed by hand) are the moves already
made undone from their backups (rolled back). Either way the three outputs are all old or all new.

The old database's write-ahead log moves aside with it, so a ``.wal`` left by a dead writer never
meets the new file (DuckDB would replay it into the wrong database and refuse to open it). SIGINT
and SIGTERM are held back during the commit, so Ctrl-C lands after it, never inside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from econ.errors import EconError, EconNotice
from econ.faults import boundary
from econ.files import backup_path, fsync_dir, fsync_file, remove, shown_path, staging_path
from econ.lock import BusyError, Locks, lock_path

VERSION = 1


class JournalError(EconError):
    """The journal of an interrupted run cannot be read or finished."""


@dataclass(frozen=True)
class Move:
    """One output of a transaction: ``staged`` replaces ``target``; the old one waits at ``backup``."""

    staged: Path
    target: Path
    backup: Path
    companions: tuple[str, ...] = ()  # suffixes of files that move with the target (".wal")

    def to_json(self) -> dict:
        return {
            "staged": str(self.staged),
            "target": str(self.target),
            "backup": str(self.backup),
            "companions": list(self.companions),
        }

    @classmethod
    def from_json(cls, obj: dict) -> Move:
        return cls(Path(obj["staged"]), Path(obj["target"]), Path(obj["backup"]), tuple(obj.get("companions", ())))


def journal_path(db_path: Path) -> Path:
    """The journal of the runs that write ``db_path``."""
    db_path = Path(os.path.abspath(db_path))
    return db_path.with_name(f".{db_path.name}.journal")


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _with(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back until the block is done (they are delivered right after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Transaction:
    """Outputs staged by one run, replaced together by :meth:`commit` (see the module docstring).

    ``journal`` is the journal file (:func:`journal_path` of the database); ``locks`` the lock
    paths the run holds, recorded so that a recovering run takes the same ones.
    """

    def __init__(self, journal: Path, *, locks: set[Path] | None = None):
        self.journal = Path(journal)
        self.locks = sorted(str(p) for p in (locks or ()))
        self.moves: list[Move] = []
        self.committed = False

    def stage(self, target: Path, *, companions: tuple[str, ...] = ()) -> Path:
        """A unique staging path for ``target`` (next to it); the caller writes the new output there."""
        target = Path(os.path.abspath(target))
        move = Move(staging_path(target), target, backup_path(target), companions)
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
            body = {"version": VERSION, "pid": os.getpid(), "locks": self.locks}
            body["moves"] = [m.to_json() for m in self.moves]
            tmp = staging_path(self.journal)
            tmp.write_text(json.dumps(body, indent=1), encoding="utf-8")
            fsync_file(tmp)
            os.replace(tmp, self.journal)
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


def read_journal(journal: Path) -> tuple[list[Move], list[str], int | None]:
    """The moves, lock paths and pid recorded in a journal; :class:`JournalError` if it is damaged."""
    try:
        body = json.loads(Path(journal).read_text(encoding="utf-8"))
        moves = [Move.from_json(m) for m in body["moves"]]
        return moves, [str(p) for p in body.get("locks", [])], body.get("pid")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise JournalError(
            f"the journal {shown_path(journal)} of an interrupted run cannot be read ({e})",
            "it is written whole and renamed into place, so something else changed it; look at the files it names, "
            "then delete it and run econ build",
        ) from None


def recover(journal: Path) -> str | None:
    """Finish or undo the commit of a run that died (the caller holds its locks); returns what was done, or None.

    Roll forward when every move is either made or still staged; roll back (restore the backups)
    when a staged output has vanished before its move was made.
    """
    journal = Path(journal)
    if not _exists(journal):
        return None
    moves, _, pid = read_journal(journal)
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
    _, lock_files, _ = read_journal(journal)
    locks.take([lock_path(db_path), *map(Path, lock_files)])
    message = recover(journal)
    if message:
        warnings.warn(message, EconNotice, stacklevel=2)


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
