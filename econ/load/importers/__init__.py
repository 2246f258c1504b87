"""``econ import SOURCE FILE``: a public price map becomes a dated snapshot.

LiteLLM and OpenRouter files become ``data/snapshots/<source>_<YYYY-MM-DD>.csv``; a genai-prices data file or
llm-prices data becomes the newest snapshot of that source's replayed history in ``data/history/``
(:mod:`econ.load.history`; ``econ history replay`` writes the whole history from the source's git repository).

:func:`import_file` is the I/O edge: it reads and parses the file, checks its top-level
shape, normalises it with the pure ``litellm.normalise`` / ``openrouter.normalise``, checks
the rows with the same ``PRICE_SNAPSHOT`` spec the loader uses, and only then writes
``data/snapshots/<source>_<YYYY-MM-DD>.csv`` (temporary file + rename). A malformed,
truncated or wrongly shaped file raises :class:`~econ.errors.DataError` before anything is
written. Rows are sorted and formatted deterministically, so importing the same file twice
gives a byte-identical snapshot: an import whose rows equal an existing snapshot of its source, whatever
that snapshot's date, reports ``unchanged`` and writes nothing. A snapshot is dated by the file's own
date (in its name), else ``--as-of``, else its modification time with a notice.
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

import polars as pl

from econ import paths
from econ.errors import DataError, EconError, EconNotice
from econ.files import staging_path
from econ.load import history
from econ.load.csv_text import display_path
from econ.load.importers import genai_prices, litellm, llm_prices, openrouter
from econ.load.importers.common import Normalised, read_json, shape_error
from econ.load.importers.history_import import import_history
from econ.load.importers.result import ImportResult, by_entry
from econ.load.loader import SNAPSHOT_DIR, snapshot_folder_problem, snapshot_path
from econ.load.price_tables import FILE_SOURCES, HISTORY_SOURCES, PRICE_SNAPSHOT
from econ.load.spec import read_table
from econ.lock import Locks

__all__ = ["ImportResult", "file_date", "import_file", "import_parsed", "normalise", "snapshot_date", "SOURCES"]

SOURCES = (*FILE_SOURCES, *HISTORY_SOURCES)
DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")


def snapshot_date(path: Path, as_of: date | None = None) -> tuple[date, str]:
    """The snapshot date and where it came from: the file's own date (a YYYY-MM-DD in its name, the last valid one),
    else ``as_of``, else its modification time, with a notice (a copied or re-downloaded file gets a new mtime).

    A ``--as-of`` that disagrees with the file's own date is not used, and a notice says so.
    """
    when, date_from, notice = file_date(Path(path), as_of)
    if notice:
        warnings.warn(notice, EconNotice, stacklevel=2)
    return when, date_from


def file_date(path: Path, as_of: date | None) -> tuple[date, str, str | None]:
    """:func:`snapshot_date` with its notice (or None) returned, not given (an import whose content is already stored
    uses that snapshot's date and gives none)."""
    for text in reversed(DATE_IN_NAME.findall(path.name)):
        try:
            own = date.fromisoformat(text)
        except ValueError:
            continue
        notice = None
        if as_of is not None and as_of != own:
            notice = (
                f"{path.name} carries its date {own} in its name; --as-of {as_of} is not used (rename the file to "
                "date it otherwise)"
            )
        return own, "the file name", notice
    if as_of is not None:
        return as_of, "--as-of", None
    when = datetime.fromtimestamp(path.stat().st_mtime).date()
    notice = (
        f"{path.name} carries no date (none in its name): dated {when} from its modification time; pass --as-of "
        "DATE with the day it was published if that is not it"
    )
    return when, "the file's modification date", notice


def normalise(source: str, obj, path: Path) -> Normalised:
    """Check the top-level shape of a parsed file for ``source`` and normalise it.

    ``path`` only names the file in errors. Raises :class:`DataError` for a wrong shape or a
    file without a single text-generation price.
    """
    if source == "litellm":
        if not isinstance(obj, dict):
            raise shape_error(
                path,
                f"is not a LiteLLM price map (expected a JSON object of model entries, found a {_kind(obj)})",
                "give LiteLLM's model_prices_and_context_window.json",
            )
        if isinstance(obj.get("data"), list):
            raise shape_error(
                path,
                'is not a LiteLLM price map (it has a "data" list, like an OpenRouter /api/v1/models response)',
                "import it with: econ import openrouter FILE",
            )
        result = litellm.normalise(obj)
    elif source == "openrouter":
        if not isinstance(obj, dict) or not isinstance(obj.get("data"), list):
            found = 'an object without a "data" list' if isinstance(obj, dict) else f"a {_kind(obj)}"
            hint = "give the saved response of GET https://openrouter.ai/api/v1/models"
            if isinstance(obj, dict) and obj and all(isinstance(v, dict) for v in obj.values()):
                hint = "this looks like a LiteLLM price map; import it with: econ import litellm FILE"
            raise shape_error(
                path, f'is not an OpenRouter models response (expected {{"data": [...]}}, found {found})', hint
            )
        result = openrouter.normalise(obj)
    elif source == "genai_prices":
        if not isinstance(obj, list) or not all(isinstance(p, dict) and "models" in p for p in obj):
            raise shape_error(
                path,
                "is not a genai-prices data file (expected a JSON list of providers with models, found "
                + ("a list whose items are not providers)" if isinstance(obj, list) else f"{_a(_kind(obj))})"),
                "give genai-prices' prices/data.json or prices/new_data/v2/data.json",
            )
        result = genai_prices.normalise(obj)
    elif source == "llm_prices":
        if not llm_prices.is_llm_prices(obj):
            raise shape_error(
                path,
                'is not llm-prices data (expected a vendor file {"vendor", "models"}, a list of them, or '
                '{"prices": [...]})',
                "give a file of llm-prices' data/ folder, or https://www.llm-prices.com/historical-v1.json",
            )
        if not (isinstance(obj, dict) and isinstance(obj.get("prices"), list)):
            # an import is the source's whole price list at one moment: a vendor file (or a few) would end every
            # other vendor's prices in the history from that day
            raise shape_error(
                path,
                "is one or a few of llm-prices' vendor files, not its whole price list; importing it would end every "
                "other vendor's prices",
                "give https://www.llm-prices.com/current-v1.json or historical-v1.json, or replay the repository "
                "(econ history replay llm_prices --repo CLONE)",
            )
        result = llm_prices.normalise(obj)
    else:
        raise EconError(f"unknown import source {source!r}", f"use one of: {', '.join(SOURCES)}")
    if result.imported == 0:
        reasons = sorted(result.skipped.items(), key=lambda kv: -kv[1])[:3]
        said = "; ".join(
            f"{n:,} skipped for {reason}"
            + (f": {', '.join(result.examples[reason])}" if result.examples.get(reason) else "")
            for reason, n in reasons
        )
        raise shape_error(
            path,
            f"has no text-generation price among its {result.entries:,} entries" + (f" ({said})" if said else ""),
            f"is this the right file for econ import {source}?",
        )
    return result


def import_file(
    source: str, path: Path, *, data_dir: Path = paths.DATA_DIR, as_of: date | None = None, wait: bool = False
) -> ImportResult:
    """Import a LiteLLM or OpenRouter file as the snapshot ``<data_dir>/snapshots/<source>_<date>.csv``.

    Parameters
    ----------
    source : str
        ``litellm`` or ``openrouter``.
    path : Path
        The JSON file.
    data_dir : Path
        The data folder (must exist); the snapshot goes to its ``snapshots/`` folder.
    as_of : date, optional
        Snapshot date of a file whose name carries none (a YYYY-MM-DD in the name wins); else the file's
        modification date, with a notice. A file whose rows equal an existing snapshot of its source takes that
        snapshot's date and writes nothing.
    wait : bool
        If another run holds the data folder's lock, wait for it instead of failing with "busy".

    Returns
    -------
    ImportResult
        Counts per skip reason, rows written, where and under which date.
    """
    obj = read_json(Path(path))
    with Locks(command="econ import") as locks:
        locks.acquire([data_dir], wait=wait)  # one writer of data/ at a time (econ refresh takes the same lock)
        locks.remove_inherited()  # what a killed import or refresh staged in data/snapshots/ or data/history/

        def record(staged: Path) -> None:
            locks.record(staged, output=data_dir)

        return import_parsed(source, obj, Path(path), data_dir=data_dir, as_of=as_of, record=record)


def import_parsed(
    source: str,
    obj,
    path: Path,
    *,
    data_dir: Path = paths.DATA_DIR,
    as_of: date | None = None,
    stage_at: dict[Path, Path] | None = None,
    record: Callable[[Path], None] | None = None,
) -> ImportResult:
    """:func:`import_file` for a file already parsed with :func:`~econ.load.importers.common.read_json` (``econ
    refresh``).

    With ``stage_at`` (target path -> staging path, :func:`targets`) the checked snapshot is written to the staging
    paths and not moved onto its targets (``econ refresh`` moves them in with the database); nothing is written when
    it is ``unchanged``. ``record`` is called with each staging path before it is made (:meth:`econ.lock.Locks.record`).
    """
    if source not in SOURCES:
        raise EconError(f"unknown import source {source!r}", f"use one of: {', '.join(SOURCES)}")
    data_dir = Path(data_dir)
    result = normalise(source, obj, path)
    if not data_dir.is_dir():
        raise EconError(
            f"no data folder at {display_path(data_dir)}", "run econ from the project folder or pass --data"
        )
    problem = snapshot_folder_problem(data_dir)
    if problem is not None:
        raise DataError([problem])
    when, date_from, notice = file_date(Path(path), as_of)
    if source in HISTORY_SOURCES:
        return import_history(
            source, result, Path(path), data_dir, when, date_from, notice, stage_at=stage_at, record=record
        )
    target = snapshot_path(data_dir, source, when)
    text = result.frame.write_csv(line_terminator="\n").encode("utf-8")
    twin = same_content(data_dir, source, text)
    if twin is not None and twin != target:
        if date_from == "--as-of":
            warnings.warn(
                f"--as-of {when} is not used: {display_path(twin)} holds the same rows (rename that file to date "
                "the snapshot otherwise)",
                EconNotice,
                stacklevel=2,
            )
        target, when, date_from = twin, _date_of(twin), f"the same content as {twin.name}"
        status = "unchanged"
    else:
        if notice:
            warnings.warn(notice, EconNotice, stacklevel=2)
        status = _write_checked(target, text, stage_at=(stage_at or {}).get(target), record=record)
    return ImportResult.of(source, path, target, when, date_from, result, status)


def targets(source: str, data_dir: Path, when: date) -> list[Path]:
    """The files an import of ``source`` dated ``when`` writes: its snapshot, or its history's two files."""
    if source in HISTORY_SOURCES:
        return list(history.store_paths(data_dir, source))
    return [snapshot_path(data_dir, source, when)]


def same_content(data_dir: Path, source: str, text: bytes) -> Path | None:
    """The existing snapshot of ``source`` whose content is ``text`` (the normalised rows), whatever its date.

    Snapshots are compared as written (the normaliser's sorted, deterministic CSV) and, for one written by another
    version of econ, cell by cell (every cell read as text): a re-import of a file already imported adds nothing.
    """
    folder = Path(data_dir) / SNAPSHOT_DIR
    candidates = sorted(folder.glob(f"{source}_*.csv")) if folder.is_dir() else []
    for path in candidates:
        try:
            old = path.read_bytes()
        except OSError:
            continue
        if old == text or _same_cells(old, text):
            return path
    return None


def _same_cells(a: bytes, b: bytes) -> bool:
    """Whether two snapshot CSVs hold the same cells (as text), whatever their row order."""
    try:
        x, y = (pl.read_csv(io.BytesIO(raw), infer_schema=False) for raw in (a, b))
    except (pl.exceptions.PolarsError, OSError):
        return False
    return x.columns == y.columns and x.sort(x.columns, nulls_last=True).equals(y.sort(y.columns, nulls_last=True))


def _date_of(snapshot: Path) -> date:
    return date.fromisoformat(DATE_IN_NAME.findall(snapshot.name)[-1])


def _write_checked(
    target: Path, text: bytes, *, stage_at: Path | None = None, record: Callable[[Path], None] | None = None
) -> str:
    """Check ``text`` with the snapshot spec and put it at ``target`` atomically (or leave it at ``stage_at``);
    returns the status."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.read_bytes() if target.exists() else None
    if old == text:
        return "unchanged"
    tmp = stage_at if stage_at is not None else staging_path(target)
    if stage_at is None and record is not None:
        record(tmp)
    try:
        tmp.write_bytes(text)
        try:
            read_table(tmp, PRICE_SNAPSHOT, shown=target)
        except DataError as e:  # the normalisers skip entries whose values the spec refuses, so this is a bug
            raise EconError(
                "the import produced rows that fail the snapshot checks, so nothing was written:\n" + by_entry(e, text),
                "check those entries of the input file; if they look valid, please report it to econ with the file",
            ) from None
        if stage_at is None:
            os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return "new" if old is None else "replaced"


def _a(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def _kind(obj) -> str:
    return {
        dict: "object",
        list: "list",
        str: "string",
        int: "number",
        float: "number",
        bool: "boolean",
        type(None): "null",
    }.get(type(obj), "value")
