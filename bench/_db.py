"""Shared by the benchmarks: a database of a data folder built once, and best-of-n timing."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import duckdb

from econ.build import build

AS_OF = date(2026, 11, 30)


@contextmanager
def built(data_dir: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A writable connection to ``data_dir`` built with every analysis (no report, no cache), in a temp folder."""
    with tempfile.TemporaryDirectory() as name:
        db = Path(name) / "bench.duckdb"
        build(data_dir=data_dir, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
        with duckdb.connect(str(db)) as con:
            con.execute(f"set variable as_of = date '{AS_OF.isoformat()}'")
            yield con


def best_of(fn, repeat: int = 3) -> tuple[float, object]:
    """(best wall time in seconds, the last result) of ``repeat`` calls."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out
