"""Golden rows of every result table: a refactoring must move no number beyond what the libraries' own precision
allows (``RTOL``; fitted columns ``FIT_RTOL``).

    python -m tests.golden DB [--keys-from NEW_DB]    # (re)write tests/fixtures/golden/ from a built database

Each declared result table keeps ``ROWS`` of its rows (those whose key hashes lowest) with every column.
``tests/test_golden.py`` rebuilds the shipped data, finds each golden row by its key (a float key by its value to
``KEY_DIGITS`` significant digits: a grid point such as ``1e19`` may come back as ``1.0000000000000328e+19`` from
another numpy) and compares every cell, numbers within the tolerance of their column's kind.
A change that moves numbers on purpose rewrites the golden rows in the same commit, and
``tests/test_golden.py`` lists what differs from the rows in the repository and why until they are rewritten.
``--keys-from`` names the database whose declarations count when ``DB`` was built by older code.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import duckdb
import polars as pl

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
ROWS = 300
RTOL = 1e-9
"""Arithmetic (kinds input, derived, bound, check): the same formula on the same inputs agrees to ~1e-12 across
numpy, polars and DuckDB releases; 1e-9 leaves room for a reordered sum, and nothing more."""
FIT_RTOL = 1e-4
"""Fitted numbers (kinds fit, calibrated, inference): the wrapper's solvers stop once a step moves the cost or the
parameters by less than 1e-8 relative (``econ.fits.wrapper``), so another SciPy or BLAS build may stop anywhere within
~sqrt(1e-8) = 1e-4 relative of the optimum along a flat direction. The calibration's Gauss-Newton stops at 1e-5
(``econ.fits.calibration.TOLERANCE``): its parameters are reproduced to 1e-4 on the builds tried (the lock's and the
newest), which is measured, not derived."""
SCALE_ATOL = 1e-9
"""Absolute tolerance of a column, times its largest magnitude (:func:`column_atol`)."""
FIT_KINDS = frozenset({"fit", "calibrated", "inference"})
KEY_DIGITS = 9


def declared_keys(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Result table -> its key columns, as the database declares them."""
    rows = con.execute("select table_name, key_columns from result_tables order by table_name").fetchall()
    return {name: [k.strip() for k in keys.split(",")] for name, keys in rows}


def sample(con: duckdb.DuckDBPyConnection, table: str, key: list[str]) -> pl.DataFrame:
    """The ``ROWS`` rows of ``table`` whose key hashes lowest, every column."""
    key_text = " || '|' || ".join(f"coalesce(cast(\"{k}\" as varchar), '')" for k in key)
    return con.sql(f'select * from "{table}" order by hash({key_text}), {key_text} limit {ROWS}').pl()


def declared_kinds(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """Result table -> column -> its declared kind (``econ.results.KINDS``)."""
    rows = con.execute("select table_name, column_name, kind from result_columns").fetchall()
    kinds: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        kinds.setdefault(table, {})[column] = kind
    return kinds


def same(a, b, rtol: float = RTOL, atol: float = 0.0) -> bool:
    """Equal, numbers within ``rtol`` of each other or ``atol`` apart (NaN equals NaN)."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= rtol * max(abs(a), abs(b)) + atol
    return a == b


def column_atol(values: list) -> float:
    """``SCALE_ATOL`` times the largest finite magnitude of a column: a value at rounding noise beside the column's
    scale (a residual of 2e-16 where others are 0.1) differs by more than any relative tolerance between floating-point
    kernels (an AVX-512 BLAS against an AVX2 one) and means nothing."""
    finite = [abs(v) for v in values if isinstance(v, float) and math.isfinite(v)]
    return SCALE_ATOL * max(finite) if finite else 0.0


def _keyed(frame: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """The frame with its float key columns replaced by their value to ``KEY_DIGITS`` significant digits."""
    floats = [k for k in key if frame.schema[k].is_float()]
    return frame.with_columns(pl.col(k).round_sig_figs(KEY_DIGITS) for k in floats)


def differences(
    golden: pl.DataFrame, rebuilt: pl.DataFrame, key: list[str], kinds: dict[str, str] | None = None
) -> dict[str, str]:
    """Column -> what differs between the golden rows and the same keys rebuilt ('' key: rows not found); numbers
    are compared within the tolerance of their column's kind (``kinds``: column -> kind; ``RTOL`` when unknown)."""
    kinds = kinds or {}
    found: dict[str, str] = {}
    for column in sorted(set(golden.columns) ^ set(rebuilt.columns)):
        found[column] = "only in the golden rows" if column in golden.columns else "only in the rebuilt table"
    shared = [c for c in golden.columns if c in rebuilt.columns and c not in key]
    joined = _keyed(golden, key).join(
        _keyed(rebuilt.select(*key, *shared), key)
        .rename({c: f"{c}__rebuilt" for c in shared})
        .with_columns(_found=pl.lit(True)),
        on=key,
        how="left",
        nulls_equal=True,
    )
    if missing := joined.filter(pl.col("_found").is_null()).height:
        found[""] = f"{missing} of {golden.height} golden rows have no rebuilt row with their key"
    joined = joined.filter(pl.col("_found"))
    for column in shared:
        rtol = FIT_RTOL if kinds.get(column) in FIT_KINDS else RTOL
        pairs = list(zip(joined[column].to_list(), joined[f"{column}__rebuilt"].to_list(), strict=True))
        atol = column_atol(joined[column].to_list())
        bad = [i for i, (a, b) in enumerate(pairs) if not same(a, b, rtol, atol)]
        if bad:
            at = ", ".join(f"{k}={joined[k][bad[0]]!r}" for k in key)
            found[column] = (
                f"{len(bad)} of {len(pairs)} rows differ (at {at}: {pairs[bad[0]][0]!r} -> {pairs[bad[0]][1]!r})"
            )
    return found


def write(db: Path, keys_from: Path | None = None) -> list[str]:
    """Write the golden rows of every declared result table that ``db`` holds."""
    with duckdb.connect(str(keys_from or db), read_only=True) as declaring:
        keys = declared_keys(declaring)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    written = []
    with duckdb.connect(str(db), read_only=True) as con:
        present = {n for (n,) in con.execute("select table_name from duckdb_tables()").fetchall()}
        present |= {n for (n,) in con.execute("select view_name from duckdb_views() where not internal").fetchall()}
        for table, key in keys.items():
            if table in present:
                sample(con, table, key).write_parquet(GOLDEN / f"{table}.parquet")
                written.append(table)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--keys-from", type=Path, help="the database whose declarations name tables and keys")
    args = parser.parse_args()
    print(f"wrote {len(write(args.db, args.keys_from))} tables to {GOLDEN}")


if __name__ == "__main__":
    main()
