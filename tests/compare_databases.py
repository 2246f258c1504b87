"""Compare every table and view of two built databases, row by row, numbers within a relative tolerance.

    python -m tests.compare_databases OLD.duckdb NEW.duckdb [--rtol 1e-9]

A refactoring must leave every result unchanged except the changes it names; this lists, per object,
the columns only one side has, the row counts, and for the shared columns the rows whose values differ
(rows matched on all shared text, date and integer columns, numbers compared with ``rtol``).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field

import duckdb

NUMERIC = ("DOUBLE", "FLOAT", "DECIMAL")


@dataclass
class ObjectDiff:
    name: str
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    rows_old: int = 0
    rows_new: int = 0
    value_diffs: dict[str, int] = field(default_factory=dict)  # column -> rows that differ
    unmatched_rows: int = 0

    @property
    def same(self) -> bool:
        return not (
            self.only_old or self.only_new or self.value_diffs or self.unmatched_rows or self.rows_old != self.rows_new
        )


def _columns(con, name: str) -> dict[str, str]:
    return {c: t for c, t, *_ in con.execute(f'describe select * from "{name}"').fetchall()}


def _has(con, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_tables() where database_name = 'new' and table_name = ?", [table]
        ).fetchall()[0][0]
    )


def _close(a, b, rtol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= rtol * max(abs(a), abs(b)) or abs(a - b) <= 1e-300
    return a == b


def compare(old_path: str, new_path: str, *, rtol: float = 1e-9) -> list[ObjectDiff]:
    con = duckdb.connect()
    con.execute(f"attach '{old_path}' as old (read_only)")
    con.execute(f"attach '{new_path}' as new (read_only)")
    declared = (
        {
            t: [k.strip() for k in key.split(",") if k.strip()]
            for t, key in con.execute("select table_name, key_columns from new.result_tables").fetchall()
        }
        if _has(con, "result_tables")
        else {}
    )
    names = [
        r[0]
        for r in con.execute(
            "select table_name from duckdb_tables() where database_name = 'old' union "
            "select view_name from duckdb_views() where database_name = 'old' and not internal order by 1"
        ).fetchall()
    ]
    out = []
    for name in names:
        d = ObjectDiff(name)
        try:
            old_cols, new_cols = _columns(con, f'old"."{name}'), _columns(con, f'new"."{name}')
        except duckdb.Error:
            d.only_old = ["(object missing in new)"]
            out.append(d)
            continue
        d.only_old = sorted(set(old_cols) - set(new_cols))
        d.only_new = sorted(set(new_cols) - set(old_cols))
        shared = [c for c in old_cols if c in new_cols]
        keys = [c for c in declared.get(name, []) if c in shared] or [
            c for c in shared if not old_cols[c].startswith(NUMERIC)
        ]
        values = [c for c in shared if c not in keys]
        cast = ", ".join(
            f'"{c}"::double as "{c}"' if old_cols[c].startswith(NUMERIC) else f'"{c}"::varchar as "{c}"' for c in shared
        )
        order = ", ".join(f'"{c}"' for c in shared)
        old_rows = con.execute(f'select {cast} from old."{name}" order by {order}').fetchall()
        new_rows = con.execute(f'select {cast} from new."{name}" order by {order}').fetchall()
        d.rows_old, d.rows_new = len(old_rows), len(new_rows)
        idx = [shared.index(c) for c in keys]
        vidx = {c: shared.index(c) for c in values}
        by_key: dict[tuple, list] = {}
        for r in new_rows:
            by_key.setdefault(tuple(r[i] for i in idx), []).append(r)
        for r in old_rows:
            bucket = by_key.get(tuple(r[i] for i in idx))
            if not bucket:
                d.unmatched_rows += 1
                continue
            match = next((m for m in bucket if all(_close(r[j], m[j], rtol) for j in vidx.values())), None)
            if match is None:
                m = bucket[0]
                for c, j in vidx.items():
                    if not _close(r[j], m[j], rtol):
                        d.value_diffs[c] = d.value_diffs.get(c, 0) + 1
                bucket.pop(0)
            else:
                bucket.remove(match)
        out.append(d)
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--rtol", type=float, default=1e-9)
    args = p.parse_args()
    diffs = compare(args.old, args.new, rtol=args.rtol)
    for d in diffs:
        if d.same:
            print(f"same      {d.name} ({d.rows_old} rows)")
            continue
        print(f"DIFFERENT {d.name}: rows {d.rows_old} -> {d.rows_new}; unmatched old rows {d.unmatched_rows}")
        if d.only_old:
            print(f"    only in old: {', '.join(d.only_old)}")
        if d.only_new:
            print(f"    only in new: {', '.join(d.only_new)}")
        for c, n in d.value_diffs.items():
            print(f"    {c}: {n} rows differ")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
