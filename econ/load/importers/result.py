"""What an import did (:class:`ImportResult`), and the problems of a refused snapshot named by their entries."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from econ.errors import SHOWN_PROBLEMS, DataError
from econ.load.importers.common import Normalised, shown_name


@dataclass
class ImportResult:
    """What one import did.

    ``entries`` counts every entry of the file, ``imported_entries`` those that gave price
    rows, ``skipped`` the others by reason (``imported_entries + sum(skipped.values()) ==
    entries``). ``rows`` is the number of price rows written (an entry gives one row per
    variant and long-context tier). ``ignored_keys`` counts, by family, price keys of
    imported entries that no column holds; ``dropped_rows`` counts rows left out, by
    reason. ``as_of`` is the snapshot date and ``date_from`` says where it came from
    (``the file name``, ``--as-of``, ``the file's modification date``, or ``the same content as
    <snapshot>``). ``examples`` names the first entries skipped for an invalid or impossible price, by
    reason. ``status`` is ``new``, ``replaced`` (a snapshot of that source and date existed with other
    rows) or ``unchanged`` (a snapshot of that source, of any date, holds the same rows: nothing was
    written, and ``path`` and ``as_of`` are that snapshot's).
    """

    source: str
    input_path: Path
    path: Path
    as_of: date
    date_from: str
    entries: int
    imported_entries: int
    rows: int
    skipped: dict[str, int] = field(default_factory=dict)
    ignored_keys: dict[str, int] = field(default_factory=dict)
    dropped_rows: dict[str, int] = field(default_factory=dict)
    status: str = "new"
    examples: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, source: str, path: Path, target: Path, when: date, date_from: str, result: Normalised, status: str
    ) -> ImportResult:
        """What an import of ``result`` (the normalised file) did."""
        return cls(
            source,
            path,
            target,
            when,
            date_from,
            result.entries,
            result.imported,
            result.frame.height,
            result.skipped,
            result.ignored_keys,
            result.dropped_rows,
            status,
            result.examples,
        )


def by_entry(error: DataError, text: bytes) -> str:
    """The problems of a refused snapshot, each named by the entry (source_key) of the input it came from."""
    rows = text.decode("utf-8").splitlines()
    header = next(csv.reader(rows[:1]), [])
    lines = []
    for p in error.problems[:SHOWN_PROBLEMS]:
        key = None
        if p.line is not None and 1 < p.line <= len(rows) and "source_key" in header:
            try:
                cells = next(csv.reader([rows[p.line - 1]]), [])
            except csv.Error:  # a cell beyond the csv module's field limit
                cells = []
            at = header.index("source_key")
            key = shown_name(cells[at]) if at < len(cells) else None
        where = f"entry {key}" if key else "the snapshot"
        lines.append(f"{where}:{f' column {p.column}:' if p.column else ''} {p.what}")
    rest = len(error.problems) - len(lines)
    return "\n".join(lines + ([f"… and {rest:,} more"] if rest else []))
