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
from econ.physics.hardware import Chip
from econ.physics.model import Model


def _row(db, name: str, *, chip: bool) -> dict:
    """The row of the model or chip ``name`` (any spelling :mod:`econ.names` reads: ``deepseek-v3``, ``gb200``)."""
    from econ.names import resolve_chip, resolve_model

    con = db if isinstance(db, duckdb.DuckDBPyConnection) else connect_read_only(Path(db))
    try:
        if chip:
            source, key, found = "hardware", "chip", resolve_chip(con, name)
        else:
            source, key = "models join model_derived using (model)", "model"
            found = resolve_model(con, name, need="architecture").arch_model
        cursor = con.execute(f"select * from {source} where {key} = ?", [found])
        columns = [d[0] for d in cursor.description]
        return dict(zip(columns, cursor.fetchall()[0]))
    finally:
        if con is not db:
            con.close()


def load_model(name: str, db=paths.DB_PATH) -> Model:
    """The ``models`` row ``name`` (or its canonical name, repo or a price key, in any case) with its
    ``model_derived`` columns as a :class:`Model` (``db``: path or connection)."""
    return Model.from_row(_row(db, name, chip=False))


def load_chip(name: str, db=paths.DB_PATH) -> Chip:
    """The ``hardware`` row ``name`` (any case) as a :class:`Chip` (``db``: a database path or an open connection)."""
    return Chip.from_row(_row(db, name, chip=True))
