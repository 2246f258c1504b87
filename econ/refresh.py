"""``econ refresh``: import a new price snapshot, rebuild, and say what changed (I/O edge).

The file is parsed and checked before anything is written (the importer rejects a
malformed or truncated file). The new snapshot is staged beside its target and moves into
data/ together with the rebuilt database and report (one journal commit), so data/, the
database and the report are all old or all new, whatever happens to the run. Importing the same file
twice changes nothing: the snapshot is byte-identical, and the analyses restore from cache.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from econ import paths
from econ.analyses.inferred_changes import inference_inputs, inferred_between, inferred_changes
from econ.build import BuildResult, stage_build
from econ.db import connect_read_only, table_summary
from econ.errors import EconError, EconNotice
from econ.faults import boundary
from econ.files import staging_path
from econ.fits.price_changes import changes_between, default_dates, price_changes, state_on, summary
from econ.journal import Transaction, journal_path
from econ.load.importers import ImportResult, import_parsed, snapshot_date
from econ.load.importers.common import read_json
from econ.load.loader import load_all, snapshot_path
from econ.lock import Locks
from econ.outputs import prepare_run

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
    tmp = staging_path(target)
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
    wait: bool = False,
) -> RefreshResult:
    """Import ``path`` as a snapshot, rebuild, and return the price changes it brought and what they imply.

    The snapshot, the database and the report are staged and move in together (one journal commit,
    ``econ.journal``): a failed or killed refresh leaves data/, the database and the report as they
    were. The changes compare the rows of the snapshot's source in effect on its date before and
    after the import.
    """
    path, data_dir = Path(path), Path(data_dir)
    obj = read_json(path)  # a missing, unreadable or truncated file stops here, before anything is written
    source = source or detect_source(obj)
    when, _ = snapshot_date(path, as_of)
    target = snapshot_path(data_dir, source, when)
    with Locks(command="econ refresh") as locks:
        prepare_run(
            locks,
            db_path=db_path,
            data_dir=data_dir,
            reports_dir=reports_dir,
            cache_dir=cache_dir,
            wait=wait,
            writes_data=True,
        )
        before = load_all(data_dir)["prices"]
        txn = Transaction(journal_path(db_path), locks=locks.held)
        try:
            staged = txn.stage(target)
            imported = import_parsed(source, obj, path, data_dir=data_dir, as_of=as_of, stage_at=staged)
            if imported.status == "unchanged":
                txn.moves.pop()
            boundary("refresh:snapshot")
            started = time.perf_counter()
            status = stage_build(
                txn,
                data_dir=data_dir,
                db_path=db_path,
                cache_dir=cache_dir,
                reports_dir=reports_dir,
                as_of=build_as_of,
                pending={} if imported.status == "unchanged" else {target: staged},
            )
            txn.commit()
            elapsed_s = time.perf_counter() - started
        except BaseException:
            txn.abort()
            raise
        with connect_read_only(db_path) as con:
            objects = table_summary(con)
            after = con.sql("select * from prices where source = ?", params=[source]).pl()
            models, tiers, a, deployed = inference_inputs(con)
    built = BuildResult(Path(db_path), objects, status, elapsed_s, reports_dir)
    old, new = (state_on(rows, when).filter(source=source) for rows in (before, after))
    implied = inferred_changes(old, new, models, tiers, a, deployed)
    return RefreshResult(imported, built, changes_between(old, new), implied)


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
        models, tiers, a, deployed = inference_inputs(con)
    start, end = default_dates(dates, from_date, to_date)
    if not any(start < d <= end for d in dates):
        shown = ", ".join(d.isoformat() for d in sorted(dates)) or "none"
        warnings.warn(
            f"no snapshot is dated after {start} up to {end} (snapshots: {shown}), so no imported price can have "
            "changed between them; only hand-kept prices are compared",
            EconNotice,
            stacklevel=2,
        )
    if dates and not any(d <= start for d in dates):
        warnings.warn(
            f"no snapshot is dated on or before {start}: imported prices are not compared (a source is compared "
            "only where it has prices on both dates)",
            EconNotice,
            stacklevel=2,
        )
    implied = inferred_between(prices, start, end, models, tiers, a, deployed)
    return Diff(start, end, price_changes(prices, start, end), implied)
