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

A journal is obeyed only where it was written and only for econ's own outputs (:func:`econ.recovery.read_journal`):
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
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from econ.errors import EconError
from econ.faults import boundary
from econ.files import backup_path, fsync_dir, fsync_file, remove, staging_path
from econ.lock import Locks

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


def exists(path: Path) -> bool:
    """Whether ``path`` is there, a dangling link included (a move must never step over one)."""
    return os.path.lexists(path)


def with_suffix(path: Path, suffix: str) -> Path:
    """``path`` with ``suffix`` appended to its name (a companion: ``econ.duckdb`` -> ``econ.duckdb.wal``)."""
    return path.with_name(path.name + suffix)


def folder_identity(folder: Path) -> dict:
    """The folder a journal is written in, by path and by inode (a moved project keeps its journal)."""
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
                self.locks.record(with_suffix(path, suffix), output=output or target)
        self.moves.append(move)
        return move.staged

    def abort(self) -> None:
        """Remove everything staged (a failed or interrupted run); the targets are untouched."""
        if self.committed:
            return
        for move in self.moves:
            for path in (move.staged, with_suffix(move.staged, ".wal")):
                remove(path)

    def commit(self) -> None:
        """Write the journal (the commit point), move every staged output onto its target, clean up."""
        with _signals_held():
            base = self.journal.parent
            body = {"version": VERSION, "pid": os.getpid(), "project": folder_identity(base)}
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
                apply_move(move)
            boundary("commit:moved")
            drop_backups(self.moves, self.journal)


def apply_move(move: Move) -> None:
    """Move the old target (and companions) aside and the staged output in; a move already made is skipped."""
    if not exists(move.staged):
        return
    name = move.target.name
    if exists(move.target):
        os.rename(move.target, move.backup)
    for suffix in move.companions:  # also when the target was gone: a stray .wal must not meet the new file
        if exists(with_suffix(move.target, suffix)):
            os.rename(with_suffix(move.target, suffix), with_suffix(move.backup, suffix))
    fsync_dir(move.target.parent)
    boundary(f"commit:{name}:aside")
    os.rename(move.staged, move.target)
    fsync_dir(move.target.parent)
    boundary(f"commit:{name}:in")


def drop_backups(moves: list[Move], journal: Path) -> None:
    """The last step of a commit: the backups go, then the journal."""
    for move in moves:
        remove(move.backup)
        for suffix in move.companions:
            remove(with_suffix(move.backup, suffix))
    boundary("commit:cleaned")
    journal.unlink(missing_ok=True)
    fsync_dir(journal.parent)
