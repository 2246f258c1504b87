"""A cache that is checked: every cached file carries its SHA-256 in a manifest (I/O edge).

The build cache (``build/cache/``) only saves time, so it must never change a result and never
stop a build:

- an entry (a folder of files) is written to a staging folder, its :data:`MANIFEST` listing the
  SHA-256 of every file is written last, and the folder is renamed into place;
- before an entry is used, every file is hashed and compared with the manifest; a missing,
  unreadable, truncated or altered file makes the whole entry unusable: the caller recomputes it
  and a one-line :class:`~econ.errors.EconNotice` says so;
- a cache that cannot be written (read-only folder, full disk, ``ulimit -f``) gives one notice and
  the run goes on without storing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings
from pathlib import Path

from econ.errors import EconNotice
from econ.files import clean_stale, remove, shown_path, staging_path

MANIFEST = "manifest.json"
_CHUNK = 1 << 20


def digest(path: Path) -> str:
    """SHA-256 of a file's bytes (read in 1 MiB chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def notice(text: str) -> None:
    """Issue a one-line notice (the CLI prints it on stderr)."""
    warnings.warn(text, EconNotice, stacklevel=3)


OS_REASONS = (
    "No space left on device",
    "File too large",
    "Disk quota exceeded",
    "Read-only file system",
    "Permission denied",
    "Not a directory",
    "Is a directory",
    "No such file or directory",
)
"""The operating system's words a library's write error may wrap (DuckDB 2: 'IO Error: Async write failed for range
…: {"exception_message": "…: No space left on device", "errno": "28"}')."""


def cannot_store(root: Path, error: Exception) -> None:
    """The notice for a cache that cannot be written (one per cause: the OS's reason, not the file's); the run goes
    on without storing."""
    text = str(error)
    reason = getattr(error, "strerror", None) or next((r for r in OS_REASONS if r in text), None)
    notice(
        f"the cache {shown_path(root)} cannot be written ({reason or text.strip().splitlines()[0]}); going on "
        "without caching"
    )


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST)


def write_manifest(folder: Path) -> None:
    """Hash every file under ``folder`` into its manifest (written last: an entry without one is incomplete)."""
    folder = Path(folder)
    files = {p.relative_to(folder).as_posix(): digest(p) for p in _files(folder)}
    (folder / MANIFEST).write_text(json.dumps({"sha256": files}, indent=1, sort_keys=True), encoding="utf-8")


def verify(folder: Path) -> str | None:
    """None when every file of the entry matches its manifest (and no file is missing or extra); else why not."""
    folder = Path(folder)
    try:
        listed = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["sha256"]
        if not isinstance(listed, dict):
            raise TypeError("not a mapping")
    except FileNotFoundError:
        return "it has no manifest"
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"its manifest cannot be read ({e})"
    try:
        present = {p.relative_to(folder).as_posix() for p in _files(folder)}
        for name in sorted(set(listed) | present):
            if name not in present:
                return f"{name} is missing"
            if name not in listed:
                return f"{name} is not in its manifest"
            if digest(folder / name) != listed[name]:
                return f"{name} does not match its hash"
    except OSError as e:
        return f"it cannot be read ({e.strerror or e})"
    return None


def begin_entry(final: Path) -> Path:
    """A fresh staging folder for the cache entry ``final`` (stale ones of dead runs are removed first)."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    clean_stale(final.parent)
    staged = staging_path(final)
    staged.mkdir()
    return staged


def commit_entry(staged: Path, final: Path, *, drop_siblings: bool = True) -> None:
    """Write the manifest of ``staged`` and rename it to ``final`` (other entries in the folder are dropped)."""
    staged, final = Path(staged), Path(final)
    write_manifest(staged)
    if drop_siblings:  # older entries of the same name: folders econ wrote (they carry a manifest), nothing else
        for sibling in final.parent.iterdir():
            if sibling != staged and not sibling.name.startswith(".") and _is_entry(sibling):
                remove(sibling)
    remove(final)
    os.rename(staged, final)


def _is_entry(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and (path / MANIFEST).is_file()


def store_copy(source: Path, final: Path, *, root: Path) -> None:
    """Keep a copy of the folder ``source`` as the cache entry ``final``; a cache that cannot be written is a notice."""
    staged = None
    try:
        staged = begin_entry(final)
        shutil.copytree(source, staged, dirs_exist_ok=True)
        commit_entry(staged, final)
    except OSError as e:
        if staged is not None:
            remove(staged)
        cannot_store(root, e)


def restore_copy(final: Path, target: Path, *, what: str) -> bool:
    """Copy the cache entry ``final`` to ``target`` if it passes :func:`verify`; False (with a notice) if not.

    An entry that does not exist is simply False.
    """
    final = Path(final)
    if not final.is_dir():
        return False
    problem = verify(final)
    if problem is None:
        try:
            shutil.copytree(final, target, dirs_exist_ok=True)
            (Path(target) / MANIFEST).unlink(missing_ok=True)
            return True
        except OSError as e:
            problem = f"it cannot be copied ({e.strerror or e})"
    remove(target)
    notice(f"the cached {what} failed its check ({problem}); recomputed")
    return False
