"""Render a result (column names + rows) as table, csv, json or markdown text."""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import date, datetime
from decimal import Decimal

FORMATS = ("table", "csv", "json", "markdown")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return f"{value:.6g}"
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return str(value)


def _json_value(value):
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def render(columns: list[str], rows: list[tuple], *, fmt: str = "table") -> str:
    """Text for ``rows`` under ``columns`` in one of FORMATS, without a trailing newline.

    Blank (None) cells are empty in table, csv and markdown and null in json; NaN and inf show as such in
    table and markdown, empty in csv and null in json (JSON has neither). Dates are ISO 8601. A table or
    markdown row is one line (newlines in a cell become spaces).
    """
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([["" if v is None else _json_value(v) for v in row] for row in rows])
        return out.getvalue().rstrip("\n")
    if fmt == "json":
        return json.dumps([{c: _json_value(v) for c, v in zip(columns, row)} for row in rows], indent=2, default=str)
    cells = [[_cell(v).replace("\n", " ") for v in row] for row in rows]
    if fmt == "markdown":
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(esc(c) for c in columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in cells]
        return "\n".join(lines)
    if fmt != "table":
        raise ValueError(f"unknown format {fmt!r}; use one of {FORMATS}")
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(row[i], (int, float, Decimal)) or row[i] is None for row in rows) and rows
        for i in range(len(columns))
    ]

    def fmt_row(r):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(r, widths, numeric)).rstrip()

    lines = [fmt_row(columns), "  ".join("-" * w for w in widths)] + [fmt_row(r) for r in cells]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)
