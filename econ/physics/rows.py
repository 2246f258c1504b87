"""A database row as the fields of a physics record (``Chip``, ``Model``): the one place blanks are read."""

from __future__ import annotations

import math
from dataclasses import fields

from econ.errors import EconError


def _blank(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def record_fields(cls, row: dict, required: tuple[str, ...], *, table: str, hint: str) -> dict:
    """The non-blank values of ``row`` (None or NaN = blank) that name a field of the dataclass ``cls``.

    Blank or absent optional fields are left out, so the dataclass defaults apply. Raises
    ``EconError`` naming the ``required`` fields that are blank; ``required[0]`` is the row's key.
    """
    names = {f.name for f in fields(cls)}
    values = {k: v for k, v in row.items() if k in names and not _blank(v)}
    missing = [n for n in required if n not in values]
    if missing:
        raise EconError(f"{table} row {row.get(required[0])!r} lacks {', '.join(missing)}", hint)
    return values
