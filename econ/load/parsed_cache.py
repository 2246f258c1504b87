"""Parsed input files kept in the build cache (I/O edge): each CSV's checked and converted frame, stored by the SHA-256
of its bytes, so a build whose data/ did not change reads Arrow files instead of parsing and checking its CSVs again
(0.1-0.15 s of every warm build and refresh, measured on `econ build --force`).

The key is the file's bytes, the name its messages show, the columns a snapshot adds and ``salt`` (econ's code and
the library versions: another parser or check reads the file again). A file that fails a check raises and is never
stored, so a stored frame is one that passed them all. An entry is checked against its manifest before it is read
(``econ.cachefiles``): a bad one is parsed again with a notice; a cache that cannot be written is a notice. Each file
keeps one entry (the newest)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import polars as pl

from econ.cachefiles import begin_entry, cannot_store, commit_entry, notice, verify
from econ.files import remove
from econ.load.csv_text import csv_bytes, display_path
from econ.load.spec import TableSpec, read_table

FOLDER = "inputs"
FRAME = "frame.arrow"


def read_cached(
    path: Path,
    spec: TableSpec,
    *,
    cache_dir: Path | None,
    salt: str,
    extra: dict[str, object] | None = None,
    shown: Path | None = None,
) -> pl.DataFrame:
    """:func:`econ.load.spec.read_table` of ``path``, from the cache entry of its bytes when there is a sound one (and
    stored there when not); ``cache_dir`` None reads the file."""
    if cache_dir is None:
        return read_table(path, spec, extra=extra, shown=shown)
    path = Path(path)
    name = display_path(shown if shown is not None else path)
    raw = csv_bytes(path, shown=shown)  # bounded: a pipe or a device is refused as read_table refuses it, not hashed
    parts = [salt, spec.name, hashlib.sha256(raw).hexdigest(), name, repr(sorted((extra or {}).items()))]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
    final = Path(cache_dir) / FOLDER / Path(name).name / key
    if final.is_dir():
        problem = verify(final)
        if problem is None:
            try:
                return pl.read_ipc(io.BytesIO((final / FRAME).read_bytes()))  # not mapped: entries get replaced
            except (OSError, pl.exceptions.PolarsError) as e:
                problem = f"it cannot be read ({e})"
        notice(f"the cached parse of {name} failed its check ({problem}); read the file again")
    frame = read_table(path, spec, extra=extra, shown=shown)
    staged = None
    try:
        staged = begin_entry(final)
        frame.write_ipc(staged / FRAME)
        commit_entry(staged, final)
    except OSError as e:
        if staged is not None:
            remove(staged)
        cannot_store(Path(cache_dir), e)
    return frame
