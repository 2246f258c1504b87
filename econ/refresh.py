"""``econ refresh``: import a new price snapshot, rebuild, and say what changed (I/O edge).

The file is parsed and checked before anything is written (the importer rejects a
malformed or truncated file). The new snapshot is staged beside its target and moves into
data/ together with the rebuilt database and report (one journal commit), so data/, the
database and the report are all old or all new, whatever happens to the run. Importing a file whose rows
equal an existing snapshot changes nothing, whatever its date or modification time: no snapshot is written and,
when the database is current, nothing is rebuilt. The changes it reports are ``econ diff``'s between the snapshot
before it and its date (:func:`diff_database`), so refresh and diff count the same things.
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
from econ.analyses.inferred_changes import INFERENCE_PRICES_SQL, INFERRED_CHANGES, inference_inputs, inferred_between
from econ.analyses.price_changes import PRICE_CHANGES
from econ.build import BuildResult, default_as_of, stage_build
from econ.db import connect_read_only
from econ.errors import EconError, EconNotice
from econ.faults import boundary
from econ.files import staging_path
from econ.fits.price_changes import CHANGE_SCHEMA, default_dates, price_changes, summary
from econ.journal import Transaction
from econ.load.importers import ImportResult, file_date, import_parsed, targets
from econ.load.importers.common import read_json
from econ.load.importers.llm_prices import is_llm_prices
from econ.lock import Locks
from econ.outputs import prepare_run
from econ.progress import step
from econ.uptodate import build_key, record

FETCH_URLS = {
    "litellm": "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json",
    "openrouter": "https://openrouter.ai/api/v1/models",
    "genai_prices": "https://raw.githubusercontent.com/pydantic/genai-prices/main/prices/new_data/v2/data.json",
    "llm_prices": "https://www.llm-prices.com/historical-v1.json",
}
FETCH_TIMEOUT_S = 30.0


@dataclass
class RefreshResult:
    """What a refresh did: the import, the rebuild (None when nothing was new and the database is current) and the
    price changes it brought, which are ``econ diff --from <the snapshot before> --to <its date>`` (:attr:`diff`;
    None for the first snapshot, or when nothing was imported)."""

    imported: ImportResult
    built: BuildResult | None
    diff: Diff | None

    @property
    def changes(self) -> pl.DataFrame:
        return self.diff.changes if self.diff is not None else pl.DataFrame(schema=CHANGE_SCHEMA)

    @property
    def implied(self) -> pl.DataFrame:
        return self.diff.implied if self.diff is not None else pl.DataFrame()

    @property
    def counts(self) -> dict[str, int]:
        """Models added and removed, price rows and components changed (:func:`econ.fits.price_changes.summary`)."""
        return summary(self.changes)


def detect_source(obj) -> str:
    """``openrouter`` for a parsed ``{"data": [...]}`` API response, ``genai_prices`` for a list of providers with
    models, ``llm_prices`` for llm-prices data, else ``litellm``."""
    if isinstance(obj, dict) and isinstance(obj.get("data"), list):
        return "openrouter"
    if isinstance(obj, list) and obj and all(isinstance(p, dict) and "models" in p and "id" in p for p in obj):
        return "genai_prices"
    return "llm_prices" if is_llm_prices(obj) else "litellm"


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
    were. The changes are what ``econ diff`` gives between the snapshot before the new one (any source) and
    the new one's date, from the rebuilt database, so refresh and diff count the same things. A file whose rows
    equal an existing snapshot adds nothing and, when the database and report are current, rebuilds nothing.
    """
    path, data_dir = Path(path), Path(data_dir)
    obj = read_json(path)  # a missing, unreadable or truncated file stops here, before anything is written
    source = source or detect_source(obj)
    when, _, _ = file_date(path, as_of)  # its notice, if any, comes from the import (none if the content is known)
    written = targets(source, data_dir, when)
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
        txn = Transaction(db_path, locks=locks)
        try:
            staged = {target: txn.stage(target, kind="snapshot", output=data_dir) for target in written}
            step("import", path.name, 0, 1)
            imported = import_parsed(source, obj, path, data_dir=data_dir, as_of=as_of, stage_at=staged)
            if imported.status == "unchanged":
                del txn.moves[-len(written) :]
                if _current(db_path, reports_dir, data_dir=data_dir, as_of=build_as_of):
                    txn.abort()
                    return RefreshResult(imported, None, None)
            boundary("refresh:snapshot")
            started = time.perf_counter()
            status, (tables, views) = stage_build(
                txn,
                data_dir=data_dir,
                db_path=db_path,
                cache_dir=cache_dir,
                reports_dir=reports_dir,
                as_of=build_as_of,
                pending={} if imported.status == "unchanged" else staged,
            )
            step("commit", Path(db_path).name, 0, 1)
            txn.commit()
            elapsed_s = time.perf_counter() - started
        except BaseException:
            txn.abort()
            raise
        key = build_key(
            data_dir, paths.QUERIES_DIR, as_of=build_as_of or default_as_of(), report=reports_dir is not None
        )
        record(Path(db_path), reports_dir, key)  # the next build or refresh starts from this database (econ.previous)
        with connect_read_only(db_path) as con:
            dates = [d for (d,) in con.execute("select distinct snapshot_date from price_snapshots").fetchall()]
    built = BuildResult(Path(db_path), tables, views, status, elapsed_s, reports_dir)
    earlier = [d for d in dates if d < imported.as_of]
    if imported.status == "unchanged" or not earlier:
        return RefreshResult(imported, built, None)
    return RefreshResult(imported, built, diff_database(db_path, from_date=max(earlier), to_date=imported.as_of))


def _current(db_path: Path, reports_dir: Path | None, *, data_dir: Path, as_of: date | None) -> bool:
    """Whether a rebuild would give what is there: the database (and the report, if one is asked for) exists, was
    built by this code for the same as-of date, and no data file is newer than it (as ``make`` judges). A refresh that
    imports nothing new then rebuilds nothing."""
    db_path = Path(db_path)
    if reports_dir is not None and not (Path(reports_dir) / "index.html").is_file():
        return False
    try:
        with connect_read_only(db_path, current=True) as con:
            built_for = con.execute("select max(as_of) from build_info").fetchall()[0][0]
    except EconError:
        return False
    if built_for != (as_of or default_as_of()):
        return False
    built_at = db_path.stat().st_mtime_ns
    inputs = (p for p in Path(data_dir).rglob("*.csv") if not p.name.startswith("."))
    return all(p.stat().st_mtime_ns <= built_at for p in inputs)


@dataclass
class Diff:
    """Price changes between two dates (classified, :func:`econ.fits.price_changes.classify`), what they imply, and
    the ``price_keys`` that name the models (``econ diff --model`` filters by canonical model)."""

    from_date: date
    to_date: date
    changes: pl.DataFrame
    implied: pl.DataFrame
    names: pl.DataFrame | None = None

    @property
    def counts(self) -> dict[str, int]:
        return summary(self.changes)


def _around(dates: list[date], start: date, end: date) -> str:
    """The snapshots around a window that holds none, in a few words (a replayed history has hundreds)."""
    if not dates:
        return "snapshots: none"
    ordered = sorted(dates)
    near = [f"the last before is {d}" for d in ordered if d <= start][-1:]
    near += [f"the next after is {d}" for d in ordered if d > end][:1]
    return f"{len(ordered):,} snapshots from {ordered[0]} to {ordered[-1]}" + (
        f"; {' and '.join(near)}" if near else ""
    )


def diff_database(db_path: Path, *, from_date: date | None = None, to_date: date | None = None) -> Diff:
    """Price changes between two dates in the built database (default: the two newest snapshots), and what they
    imply."""
    with connect_read_only(db_path, current=True) as con:
        dates = [d for (d,) in con.execute("select distinct snapshot_date from price_snapshots").fetchall()]
        start, end = default_dates(dates, from_date, to_date)
        names = pl.DataFrame(con.sql("select * from price_keys"))
        stored = _stored(con, start, end)
        if stored is None:
            prices = pl.DataFrame(con.sql("select * from prices order by all"))
            inferred = pl.DataFrame(con.sql(INFERENCE_PRICES_SQL + " order by all"))
            log = pl.DataFrame(con.sql("select * from price_change_log"))
            models, tiers, a, deployed = inference_inputs(con)
    if not any(start < d <= end for d in dates):
        warnings.warn(
            f"no snapshot is dated after {start} up to {end} ({_around(dates, start, end)}), so no imported price can "
            "have changed between them; only hand-kept prices are compared",
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
    if stored is None:
        stored = (
            price_changes(prices, start, end, names=names, log=log),
            inferred_between(inferred, start, end, models, tiers, a, deployed),
        )
    changes, implied = (frame.select(_columns(table)) for frame, table in zip(stored, STORED, strict=True))
    return Diff(start, end, changes, implied, names)


STORED = (PRICE_CHANGES, INFERRED_CHANGES)
"""The build's changes between the two newest snapshots and what they imply, computed by the same functions as
:func:`diff_database` (``inferred_changes`` is dated by when the prices it compares took effect, a function of the
same two snapshot dates): a diff between those dates reads them (rows in the order written), any other computes
them; either way in the tables' columns."""


def _columns(table) -> list[str]:
    return [c.name for c in table.columns if c.name not in ("from_date", "to_date")]


def _stored(con, start: date, end: date) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """(changes, implied) as the build stored them when it compared ``start`` and ``end``, or None when it compared
    other dates (or found no change: an empty table names no dates)."""
    compared = con.execute(f"select distinct from_date, to_date from {PRICE_CHANGES.name}").fetchall()
    if compared != [(start, end)]:
        return None
    changes, implied = (pl.DataFrame(con.sql(f"select * exclude (from_date, to_date) from {t.name}")) for t in STORED)
    return changes, implied
