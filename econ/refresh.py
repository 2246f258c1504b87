"""``econ refresh``: import a new price snapshot, rebuild, and say what changed (I/O edge).

The file is parsed and checked before anything is written (the importer rejects a
malformed or truncated file). If the rebuild then fails, the snapshot folder is put back as
it was, so data/, the database and the report stay consistent. Importing the same file
twice changes nothing: the snapshot is byte-identical, and the analyses restore from cache.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from econ import paths
from econ.analyses.inferred_changes import inference_inputs, inferred_between, inferred_changes
from econ.build import BuildResult, build
from econ.db import connect_read_only
from econ.errors import EconError
from econ.fits.price_changes import changes_between, default_dates, price_changes, state_on, summary
from econ.load.importers import ImportResult, import_parsed, snapshot_date
from econ.load.importers.common import read_json
from econ.load.loader import load_all, snapshot_path

FETCH_URLS = {
    "litellm": "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json",
    "openrouter": "https://openrouter.ai/api/v1/models",
}
FETCH_TIMEOUT_S = 30.0


@dataclass
class RefreshResult:
    imported: ImportResult
    built: BuildResult | None
    changes: pl.DataFrame
    implied: pl.DataFrame

    @property
    def counts(self) -> dict[str, int]:
        """Models added and removed, price rows and components changed (:func:`econ.fits.price_changes.summary`)."""
        return summary(self.changes)


def detect_source(obj) -> str:
    """``openrouter`` for a parsed ``{"data": [...]}`` API response, else ``litellm``."""
    return "openrouter" if isinstance(obj, dict) and isinstance(obj.get("data"), list) else "litellm"


def fetch(source: str, folder: Path, *, today: date, timeout_s: float = FETCH_TIMEOUT_S) -> Path:
    """Download the current public price map of ``source`` to ``folder``; returns the file."""
    if source not in FETCH_URLS:
        raise EconError(f"cannot fetch {source!r}", f"use one of: {', '.join(FETCH_URLS)}")
    url = FETCH_URLS[source]
    target = Path(folder) / f"{source}_{today.isoformat()}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310 (fixed https URLs)
            body = response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise EconError(
            f"cannot download {url}: {reason}",
            f"are you offline? download it elsewhere and run: econ refresh FILE --source {source}",
        ) from None
    tmp = target.with_name(target.name + ".part")
    tmp.write_bytes(body)
    tmp.replace(target)
    return target


def refresh(
    path: Path,
    *,
    source: str | None = None,
    as_of: date | None = None,
    data_dir: Path = paths.DATA_DIR,
    db_path: Path = paths.DB_PATH,
    cache_dir: Path | None = paths.CACHE_DIR,
    reports_dir: Path | None = paths.REPORTS_DIR,
    build_as_of: date | None = None,
) -> RefreshResult:
    """Import ``path`` as a snapshot, rebuild, and return the price changes it brought and what they imply.

    The changes compare the rows of the snapshot's source in effect on its date before and after the import.
    """
    path, data_dir = Path(path), Path(data_dir)
    obj = read_json(path)  # a missing, unreadable or truncated file stops here, before anything is written
    source = source or detect_source(obj)
    when, _ = snapshot_date(path, as_of)
    target = snapshot_path(data_dir, source, when)
    previous = target.read_bytes() if target.exists() else None
    before = load_all(data_dir)["prices"]
    imported = import_parsed(source, obj, path, data_dir=data_dir, as_of=as_of)
    try:
        built = build(
            data_dir=data_dir, db_path=db_path, cache_dir=cache_dir, reports_dir=reports_dir, as_of=build_as_of
        )
    except BaseException:
        if imported.status != "unchanged":
            if previous is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(previous)
        raise
    with connect_read_only(db_path) as con:
        after = con.sql("select * from prices where source = ?", params=[source]).pl()
        models, tiers, a = inference_inputs(con)
    old, new = (state_on(rows, when).filter(source=source) for rows in (before, after))
    return RefreshResult(imported, built, changes_between(old, new), inferred_changes(old, new, models, tiers, a))


@dataclass
class Diff:
    from_date: date
    to_date: date
    changes: pl.DataFrame
    implied: pl.DataFrame

    @property
    def counts(self) -> dict[str, int]:
        return summary(self.changes)


def diff_database(db_path: Path, *, from_date: date | None = None, to_date: date | None = None) -> Diff:
    """Price changes between two dates in the built database (default: the two newest snapshots), and what they
    imply."""
    with connect_read_only(db_path, current=True) as con:
        dates = [d for (d,) in con.execute("select distinct snapshot_date from price_snapshots").fetchall()]
        prices = con.sql("select * from prices order by all").pl()
        models, tiers, a = inference_inputs(con)
    start, end = default_dates(dates, from_date, to_date)
    return Diff(start, end, price_changes(prices, start, end), inferred_between(prices, start, end, models, tiers, a))
