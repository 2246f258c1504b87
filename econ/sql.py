"""``econ sql``: run user SQL on a read-only connection to the built database."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from econ.db import connect_read_only
from econ.errors import EconError

READ_ONLY_HINT = (
    "econ sql opens the database read-only; change data/*.csv or queries/*.sql and run econ build, "
    "or copy results out with COPY (SELECT …) TO 'file.csv'"
)


def build_as_of(con: duckdb.DuckDBPyConnection) -> date | None:
    """The date the database was built for, so price_current agrees with the analyses (None: not recorded)."""
    try:
        return con.execute("select max(as_of) from build_info").fetchall()[0][0]
    except duckdb.Error:
        return None


def run_query(db_path: Path, sql: str, *, as_of: date | None = None) -> tuple[list[str], list[tuple]]:
    """Execute ``sql`` (one or more statements; the last one's result is returned)."""
    if not sql.strip():
        raise EconError("the query is empty", "pass a SELECT statement")
    with connect_read_only(db_path) as con:
        as_of = as_of or build_as_of(con)
        if as_of is not None:
            con.execute(f"set variable as_of = date '{as_of.isoformat()}'")
        try:
            cursor = con.execute(sql)
        except duckdb.Error as e:
            message = str(e).strip()
            if "read-only" in message or "read only" in message:
                raise EconError(f"write statements are refused: {message}", READ_ONLY_HINT) from None
            raise EconError(
                f"the query failed: {message}", "check the SQL; econ tables lists what you can query"
            ) from None
        if cursor.description is None:
            return ["result"], [("ok",)]
        columns = [d[0] for d in cursor.description]
        return columns, cursor.fetchall()
