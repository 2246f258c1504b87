"""One run at a time per output: an ``flock`` on a lock file next to each output (I/O edge).

``econ build``, ``econ refresh``, ``econ report`` and ``econ import`` lock every output they
write — the database (``build/.econ.duckdb.lock``), the report folder (``.reports.lock`` beside
it) and, for refresh and import, the data folder (``.data.lock`` beside it) — before they read or
stage anything. A
second run fails at once with a "busy" message naming the holder, or queues behind it with
``--wait``. Locks are taken in one order (sorted lock paths), so two waiting runs cannot deadlock,
and the kernel releases them when a process dies, so a killed run never leaves a stale lock.
Lock files stay in place (removing a lock file that another run has open would let two runs in).

A lock file is also the record of what its holder creates beside the output: before a run makes a staging
or backup path it appends ``staged <path>`` (relative to the lock's folder) to the lock and fsyncs it. The
next holder inherits those lines, keeps them while it works and removes the paths they name
(:meth:`Locks.remove_inherited`): clean-up removes only what a run of econ recorded, never a file because of
its name alone.
"""

from __future__ import annotations

import fcntl
import os
import warnings
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from econ.errors import EconError, EconNotice
from econ.files import remove, shown_path, staging_owner

RECORD = "staged "
JOURNAL = "journal "
"""A lock line naming the journal of a commit this lock's holder made (absolute path): while that journal exists the
commit is not finished, and what the holder staged is part of it, not litter."""
MAX_LOCK_BYTES = 1 << 20  # a lock file holds one holder line and a few records; more is not ours to read


class BusyError(EconError):
    """Another econ run holds the lock of an output this run writes."""


def lock_path(target: Path) -> Path:
    """The lock file of an output: ``.<name>.lock`` in the output's folder."""
    target = Path(os.path.abspath(target))
    if not target.name:
        raise EconError(
            f"{target} is the root folder; econ writes each output in a folder of its own",
            "give a file or folder below it",
        )
    return target.with_name(f".{target.name}.lock")


def _holder(fd: int) -> str:
    try:
        lines = os.pread(fd, 200, 0).decode("utf-8", "replace").splitlines()
    except OSError:
        lines = []
    return (lines[0].strip() if lines else "") or "another econ run"  # (a lock file its first holder has not
    # written yet)


class Locks:
    """The locks this run holds; :meth:`acquire` adds some, :meth:`release` drops them all.

    Use as a context manager: ``with Locks(command="econ build") as locks: locks.acquire([db, reports])``.
    """

    def __init__(self, *, command: str = "econ"):
        self.command = command
        self._held: dict[Path, int] = {}
        self._inherited: dict[Path, list[str]] = defaultdict(list)  # recorded by earlier holders, not removed yet
        self._own: dict[Path, list[str]] = defaultdict(list)  # recorded by this run
        self._journals: dict[Path, list[str]] = defaultdict(list)  # journals of commits (earlier holders' and ours)

    def __enter__(self) -> Locks:
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    @property
    def held(self) -> set[Path]:
        return set(self._held)

    def acquire(self, targets: Iterable[Path], *, wait: bool = False) -> None:
        """Lock the outputs ``targets`` (in sorted order); raise :class:`BusyError` if one is held elsewhere.

        With ``wait`` the run blocks until the holder is done (a notice says whom it waits for).
        """
        self.take([lock_path(t) for t in targets], wait=wait)

    def take(self, lock_files: Iterable[Path], *, wait: bool = False) -> None:
        """Lock these lock files (those not held yet, in sorted order)."""
        for path in sorted({Path(p) for p in lock_files} - set(self._held)):
            self._held[path] = self._lock(path, wait=wait)

    def _lock(self, path: Path, *, wait: bool) -> int:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            target = shown_path(path.with_name(path.name[1:-5]))
            raise EconError(
                f"cannot write {target}: its lock file {shown_path(path)} cannot be created ({e.strerror})",
                "check that the folder exists and is writable, or pass another --db, --reports or --data",
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                if not wait:
                    raise BusyError(
                        f"busy: {shown_path(path.with_name(path.name[1:-5]))} is being written by {holder}",
                        "wait for that run to finish and try again, or pass --wait to queue behind it",
                    ) from None
                warnings.warn(f"waiting for {holder} to finish with {path.name[1:-5]}", EconNotice, stacklevel=3)
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._inherited[path] = _records(fd)
            self._journals[path] = [j for j in _journals(fd) if os.path.lexists(j)]  # a finished one is gone
            self._write(path, fd)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _write(self, path: Path, fd: int) -> None:
        """The holder line, then every record not yet cleaned (an earlier holder's and this run's)."""
        lines = [f"{self.command} (pid {os.getpid()})\n"]
        lines += [f"{RECORD}{name}\n" for name in [*self._inherited[path], *self._own[path]]]
        lines += [f"{JOURNAL}{name}\n" for name in self._journals[path]]
        text = "".join(lines).encode()
        os.pwrite(fd, text, 0)  # then cut what an earlier holder left: a reader never sees an empty file
        os.ftruncate(fd, len(text))
        os.fsync(fd)

    def record(self, path: Path, *, output: Path) -> None:
        """Record ``path`` (which this run is about to create beside ``output``) in the lock of ``output``.

        The path must lie in the lock's folder or below it; the lock must be held.
        """
        lock = lock_path(output)
        fd = self._held.get(lock)
        if fd is None:
            raise RuntimeError(f"{lock} is not held: lock {output} before staging beside it")
        name = os.path.relpath(os.path.abspath(path), lock.parent)
        if Path(name).parts[0] == "..":
            raise RuntimeError(f"{path} is not beside {output}")
        self._own[lock].append(name)
        self._write(lock, fd)

    def note_journal(self, journal: Path) -> None:
        """Name ``journal`` in every held lock before it is written (the commit point): a run that takes one of these
        locks before the commit is finished must not clean up what the commit still moves in."""
        for lock, fd in self._held.items():
            self._journals[lock].append(os.path.abspath(journal))
            self._write(lock, fd)

    def remove_inherited(self) -> list[Path]:
        """Remove the paths earlier holders of the held locks recorded (runs that died before cleaning up); refused
        while a commit they made is unfinished (its journal exists: those paths are part of it)."""
        pending = sorted({j for lock in self._held for j in self._journals[lock] if os.path.lexists(j)})
        if pending:
            raise EconError(
                f"an interrupted commit is not finished (its journal {shown_path(Path(pending[0]))}); econ touched "
                "nothing",
                "run any econ command on that database first (econ tables --db DB finishes it), then this again",
            )
        removed = []
        for lock, names in self._inherited.items():
            if not names or lock not in self._held:
                continue
            for name in names:
                path = lock.parent / name
                if os.path.lexists(path):
                    remove(path)
                    removed.append(path)
            names.clear()
            self._write(lock, self._held[lock])
        return removed

    def release(self) -> None:
        for fd in self._held.values():
            os.close(fd)
        self._held = {}


def _journals(fd: int) -> list[str]:
    """The journals named in a lock file (:data:`JOURNAL` lines)."""
    try:
        text = os.pread(fd, MAX_LOCK_BYTES, 0).decode("utf-8", "replace")
    except OSError:
        return []
    return [line[len(JOURNAL) :] for line in text.splitlines()[1:] if line.startswith(JOURNAL) and line[len(JOURNAL) :]]


def _records(fd: int) -> list[str]:
    """The paths recorded in a lock file (relative to its folder, with econ's staging or backup names; anything else
    in it is ignored, so a lock file someone edited cannot name a folder to remove)."""
    try:
        text = os.pread(fd, MAX_LOCK_BYTES, 0).decode("utf-8", "replace")
    except OSError:
        return []
    names = []
    for line in text.splitlines()[1:]:
        name = line[len(RECORD) :] if line.startswith(RECORD) else ""
        parts = Path(name).parts
        ours = name and staging_owner(Path(name)) is not None  # only econ's staging and backup names, never data/
        if ours and not os.path.isabs(name) and ".." not in parts and name not in names:
            names.append(name)
    return names
