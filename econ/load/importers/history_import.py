"""``econ import genai_prices|llm_prices FILE``: a file becomes the newest snapshot of its source's replayed history
(:mod:`econ.load.history`), named by its SHA-256 and dated by the end of its day (UTC)."""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from pathlib import Path

import polars as pl

from econ.errors import DataError, EconError, EconNotice
from econ.files import staging_path
from econ.load import history
from econ.load.importers.common import Normalised
from econ.load.importers.result import ImportResult, by_entry
from econ.load.price_tables import DATED_SNAPSHOT
from econ.load.spec import read_table


def import_history(
    source: str,
    result: Normalised,
    path: Path,
    data_dir: Path,
    when: date,
    date_from: str,
    notice: str | None,
    *,
    stage_at: dict[Path, Path] | None,
    record: Callable[[Path], None] | None = None,
) -> ImportResult:
    """Add the file as the snapshot of ``source``'s history dated ``when`` (its end of day, UTC), named by the file's
    SHA-256; a file already in the history (same bytes) adds nothing. ``record`` is called with each staging path
    before it is made (:meth:`econ.lock.Locks.record`), so a killed import leaves nothing behind."""
    commits_path, changes_path = history.store_paths(data_dir, source)
    store = history.read_store(data_dir, source) or history.empty_store()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    _check_rows(result.frame, changes_path, record)
    snapshot = history.Snapshot(
        f"sha256:{digest}",
        datetime.combine(when, time(23, 59, 59), tzinfo=UTC),
        path.name,
        digest,
        f"econ import {source} {path.name}",
        result.frame,
    )
    store, status = history.append(store, snapshot)
    if status == "new":
        if notice:
            warnings.warn(notice, EconNotice, stacklevel=3)
        for target, frame in ((commits_path, store.commits), (changes_path, store.changes)):
            staged = (stage_at or {}).get(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = staged if staged is not None else staging_path(target)
            if staged is None and record is not None:
                record(tmp)
            tmp.write_bytes(history.write_csv(frame))
            if staged is None:
                os.replace(tmp, target)
    else:
        date_from = "the same file, already in the history"
        known = store.commits.filter(pl.col("input_sha256") == digest)
        when = known["snapshot_date"][0] if known.height else when
    return ImportResult.of(source, path, changes_path, when, date_from, result, status)


def _check_rows(frame: pl.DataFrame, shown: Path, record: Callable[[Path], None] | None) -> None:
    """Check a dated snapshot's rows with :data:`DATED_SNAPSHOT` (the normalisers skip what the spec refuses, so a
    failure is a bug), in a scratch file beside the target."""
    shown.parent.mkdir(parents=True, exist_ok=True)
    tmp = staging_path(shown)
    if record is not None:
        record(tmp)
    try:
        text = frame.write_csv(line_terminator="\n").encode("utf-8")
        tmp.write_bytes(text)
        read_table(tmp, DATED_SNAPSHOT, shown=shown)
    except DataError as e:
        raise EconError(
            "the import produced rows that fail the snapshot checks, so nothing was written:\n" + by_entry(e, text),
            "check those entries of the input file; if they look valid, please report it to econ with the file",
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
