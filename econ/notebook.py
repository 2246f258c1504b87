"""The notebook API's I/O edge: a ``Model`` or ``Chip`` read from a built database, for the pure physics.

    >>> from econ.notebook import load_model, load_chip
    >>> from econ.physics import decode_step
    >>> step = decode_step(load_model("DeepSeek-V3"), load_chip("B200"), batch=2048, context_tokens=8192)

``econ.physics`` knows no files or databases; these two functions are where a notebook reads them.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from econ import paths
from econ.db import connect_read_only
from econ.errors import EconError
from econ.physics.hardware import Chip
from econ.physics.model import Model


def _row(db, source: str, table: str, key: str, name: str) -> dict:
    con = db if isinstance(db, duckdb.DuckDBPyConnection) else connect_read_only(Path(db))
    try:
        cursor = con.execute(f"select * from {source} where {key} = ?", [name])
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        if not rows:
            known = [r[0] for r in con.execute(f"select {key} from {table} order by 1").fetchall()]
            raise EconError(f"no {table} row named {name!r}", f"known: {', '.join(known) or 'none'}")
        return dict(zip(columns, rows[0]))
    finally:
        if con is not db:
            con.close()


def load_model(name: str, db=paths.DB_PATH) -> Model:
    """The ``models`` row ``name`` with its ``model_derived`` columns as a :class:`Model` (``db``: path or
    connection)."""
    return Model.from_row(_row(db, "models join model_derived using (model)", "models", "model", name))


def load_chip(name: str, db=paths.DB_PATH) -> Chip:
    """The ``hardware`` row ``name`` as a :class:`Chip` (``db``: a database path or an open connection)."""
    return Chip.from_row(_row(db, "hardware", "hardware", "chip", name))
