"""Filesystem helpers shared by the build, the report, the cache and the importers (I/O edge).

- :func:`source_date`: ``SOURCE_DATE_EPOCH`` as a date, checked once.
- :func:`staging_path` / :func:`clean_stale`: every temporary path is unique per run
  (``.<name>.stage-<pid>-<random>`` next to its target), and the ones left by runs that are no
  longer alive are removed at the next start.
- :func:`read_bounded`: an input is read only if it is a regular file below a stated size, so a
  FIFO, ``/dev/zero`` or a runaway file is refused instead of read forever.
- :func:`fsync_dir`, :func:`remove`: durable renames and removal of a file or a folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import stat
from datetime import UTC, date, datetime
from pathlib import Path

from econ.errors import DataError, EconError, Problem

# .<name>.stage-<pid>-<hex>[.wal|...] and .<name>.old-<pid>-<hex> (this code), and the names of econ before it:
# .<name>.tmp-<pid>[.wal] (database, report), .<name>.old-<pid> (report swap), .<name>.<pid>.tmp (cache files)
_STAGING = re.compile(r"^\.(?P<name>.+)\.(?:stage|old)-(?P<pid>\d+)-[0-9a-f]{8}(?:\..*)?$")
_LEGACY = re.compile(r"^\.(?P<name>.+?)(?:\.(?:tmp|old)-(?P<pid>\d+)(?:\.wal)?|\.(?P<pid2>\d+)\.tmp)$")


def source_date() -> date | None:
    """``SOURCE_DATE_EPOCH`` (reproducible builds) as a UTC date, or None when unset.

    Raises :class:`EconError` for a value that is not a whole number of seconds between 1970 and
    9999 (the CLI checks it before anything is imported: numpy reads the variable at import).
    """
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is None or raw.strip() == "":
        return None
    try:
        seconds = int(raw.strip())
        if seconds < 0:
            raise ValueError
        return datetime.fromtimestamp(seconds, tz=UTC).date()
    except (ValueError, OverflowError, OSError):
        raise EconError(
            f"SOURCE_DATE_EPOCH={raw[:40]!r} is not a Unix time",
            "set it to whole seconds since 1970-01-01 UTC (before the year 10000), or unset it",
        ) from None


def shown_path(path: Path) -> str:
    """``path`` as the user should see it: relative to the working directory when inside it."""
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(absolute)


def staging_path(target: Path, suffix: str = "") -> Path:
    """A fresh path next to ``target`` that no other run uses: ``.<name>.stage-<pid>-<random><suffix>``."""
    target = Path(target)
    return target.with_name(f".{target.name}.stage-{os.getpid()}-{secrets.token_hex(4)}{suffix}")


def backup_path(target: Path) -> Path:
    """Where the previous ``target`` is moved while a new one is swapped in."""
    target = Path(target)
    return target.with_name(f".{target.name}.old-{os.getpid()}-{secrets.token_hex(4)}")


def staging_owner(path: Path) -> int | None:
    """The pid that made a staging or backup path (this code's names or the older fixed ones), else None."""
    name = Path(path).name
    m = _STAGING.match(name) or _LEGACY.match(name)
    return None if m is None else int(m["pid"] or m.groupdict().get("pid2"))


def _boot_time() -> float | None:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        pass
    return None


def _started_at(pid: int) -> float | None:
    """When process ``pid`` started (Unix time), from /proc; None where /proc is not there."""
    boot = _boot_time()
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if boot is None:
        return None
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def owner_alive(pid: int, made_at: float) -> bool:
    """Whether the process that made a path at ``made_at`` (mtime) still runs.

    A live process with that pid that started after the path was made is another process that got
    the same pid again: the path's owner is gone.
    """
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    started = _started_at(pid)
    return started is None or started <= made_at + 1.0


def clean_stale(folder: Path, *, names: set[str] | None = None) -> list[Path]:
    """Remove the staging and backup paths in ``folder`` whose run is no longer alive; returns what was removed.

    ``names`` limits it to the staging paths of those targets (file names in ``folder``). A folder
    that does not exist or cannot be listed is left alone.
    """
    removed = []
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return removed
    for path in entries:
        m = _STAGING.match(path.name) or _LEGACY.match(path.name)
        if m is None or (names is not None and m["name"] not in names):
            continue
        try:
            made_at = path.lstat().st_mtime
        except OSError:
            continue
        if owner_alive(int(m["pid"] or m.groupdict().get("pid2")), made_at):
            continue
        remove(path)
        removed.append(path)
    return removed


def remove(path: Path) -> None:
    """Remove a file, a link or a folder tree; a path that is already gone is fine."""
    path = Path(path)
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def fsync_dir(folder: Path) -> None:
    """Make the renames inside ``folder`` durable (a no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def fsync_file(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_bounded(path: Path, *, max_bytes: int, shown: str, what: str, hint: str) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``; else a :class:`DataError`.

    The size is checked before reading and again while reading (a file that grows is cut off at the
    limit, not read until memory runs out). ``what`` names the kind of input in the message (e.g. "a
    price map"); ``hint`` says what to do for a missing file.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise DataError([Problem(shown, None, None, "does not exist", hint)]) from None
    except OSError as e:
        raise DataError([Problem(shown, None, None, f"cannot be read ({e.strerror})", hint)]) from None
    if stat.S_ISDIR(st.st_mode):
        raise DataError([Problem(shown, None, None, "is a folder, not a file", f"give the path of {what}")])
    if not stat.S_ISREG(st.st_mode):
        raise DataError(
            [
                Problem(
                    shown,
                    None,
                    None,
                    "is not a regular file (a pipe, a device or a socket)",
                    f"save {what} to a file first and give its path",
                )
            ]
        )
    too_big = DataError(
        [
            Problem(
                shown,
                None,
                None,
                f"is larger than {max_bytes / 2**20:g} MiB, the most econ reads for {what}",
                "is this the right file?",
            )
        ]
    )
    if st.st_size > max_bytes:
        raise too_big
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise DataError([Problem(shown, None, None, f"cannot be read ({e.strerror})", hint)]) from None
    if len(data) > max_bytes:
        raise too_big
    return data


def read_json_bounded(path: Path, *, max_bytes: int):
    """The JSON value of a file econ wrote itself (a journal, a manifest) of at most ``max_bytes``.

    Raises ``OSError`` or ``ValueError`` (not UTF-8, not JSON, too large, nested beyond what Python parses).
    """
    with open(path, "rb") as f:
        raw = f.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise ValueError(f"larger than {max_bytes / 2**20:g} MiB")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested deeper than it can be read") from None
