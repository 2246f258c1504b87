"""One run at a time per output: an ``flock`` on a lock file next to each output (I/O edge).

``econ build``, ``econ refresh``, ``econ report`` and ``econ import`` lock every output they
write — the database (``build/.econ.duckdb.lock``), the report folder (``.reports.lock`` beside
it) and, for refresh and import, the data folder (``.data.lock`` beside it) — before they read or
stage anything. A
second run fails at once with a "busy" message naming the holder, or queues behind it with
``--wait``. Locks are taken in one order (sorted lock paths), so two waiting runs cannot deadlock,
and the kernel releases them when a process dies, so a killed run never leaves a stale lock.
Lock files stay in place (removing a lock file that another run has open would let two runs in).
"""

from __future__ import annotations

import fcntl
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

from econ.errors import EconError, EconNotice
from econ.files import shown_path


class BusyError(EconError):
    """Another econ run holds the lock of an output this run writes."""


def lock_path(target: Path) -> Path:
    """The lock file of an output: ``.<name>.lock`` in the output's folder."""
    target = Path(os.path.abspath(target))
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
            holder = f"{self.command} (pid {os.getpid()})\n".encode()
            os.pwrite(fd, holder, 0)  # then cut what an earlier holder left: a reader never sees an empty file
            os.ftruncate(fd, len(holder))
        except BaseException:
            os.close(fd)
            raise
        return fd

    def release(self) -> None:
        for fd in self._held.values():
            os.close(fd)
        self._held = {}
