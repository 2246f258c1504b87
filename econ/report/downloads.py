"""What the site writes beside a page: CSV files of charts and tables, and the inline specs' time scales.

A chart's SVG or PNG is made in the reader's browser by the Vega embed's own export menu (the ⋯ button on every
chart), so the site renders no image itself. CSV text cells that a spreadsheet would run as formulas are
neutralised (:func:`write_csv`), and every CSV is gzip-compressed (``.csv.gz``, about a tenth of the size;
pandas, polars, DuckDB and most spreadsheets read it directly); temporal scales are drawn in UTC
(:func:`utc_times`) so a date does not move with the reader's time zone.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import polars as pl

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a text cell as a formula (OWASP, "CSV Injection")."""
CSV_SIGNIFICANT_DIGITS = 6
"""Significant digits of a float in a CSV download: beyond any input's precision, and about 40% fewer bytes than
Python's shortest round trip (the database keeps every digit)."""
SCALED_CHANNELS = ("x", "y", "color", "fill", "stroke", "size", "opacity", "shape", "theta", "radius")


def write_csv(frame: pl.DataFrame, path: Path, *, compress: bool = False) -> None:
    """Write a chart's or a table's data as CSV with every text cell that starts like a formula neutralised.

    OWASP's advice for CSV injection: a text cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage
    return gets a leading single quote, so a spreadsheet shows ``'=HYPERLINK(…)`` as text instead of running
    it. Only text columns are touched (a negative number is data, not a formula), and a text cell that does not
    start like a formula is unchanged. Floats keep :data:`CSV_SIGNIFICANT_DIGITS` significant digits (whole numbers
    every digit).
    """
    pattern = "^[" + "".join("\\" + c if c in "-" else c for c in FORMULA_START) + "]"
    text = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    safe = frame.with_columns(
        *(
            pl.when(pl.col(c).str.contains(pattern)).then(pl.lit("'") + pl.col(c)).otherwise(pl.col(c)).alias(c)
            for c in text
        ),
        *(
            pl.when(pl.col(c).is_finite() & (pl.col(c) != pl.col(c).round(0)))  # whole numbers keep every digit
            .then(pl.col(c).round_sig_figs(CSV_SIGNIFICANT_DIGITS))
            .otherwise(pl.col(c))
            .alias(c)
            for c in floats
        ),
    )
    if not compress:
        safe.write_csv(path)
        return
    buffer = io.BytesIO()
    safe.write_csv(buffer)
    # Level 6 (gzip's default): 3% more bytes than level 9 on the shipped report, in 40% of the time (0.14 s a build).
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as out:
        out.write(buffer.getvalue())  # no name or time in the header: the same rows give the same bytes


def utc_times(spec):
    """A copy of a Vega-Lite spec whose temporal position and mark scales are UTC (``scale.type = "utc"``).

    Dates are written as ISO text (UTC midnight); a local-time scale turns them into the renderer's local
    time, so the ticks moved with the reader's ``TZ``.
    """
    if isinstance(spec, list):
        return [utc_times(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    out = {}
    for key, value in spec.items():
        value = utc_times(value)
        if key in SCALED_CHANNELS and isinstance(value, dict) and value.get("type") == "temporal":
            if value.get("scale", {}) is not None:
                scale = dict(value.get("scale") or {})
                if scale.get("type", "time") == "time":
                    scale["type"] = "utc"
                value = {**value, "scale": scale}
        out[key] = value
    return out


def inline_csv(spec: dict) -> dict:
    """A copy of a spec whose named datasets are CSV text with an explicit ``format.parse`` on every reference.

    Rows as JSON objects repeat every field name on every row; as CSV the page carries the names once (the
    report's inline data is about a third the size). Each column is parsed back as Vega-Lite read it from JSON:
    numbers and booleans by an explicit ``parse`` entry, text as text; a dataset whose column mixes kinds stays
    JSON. Nulls are empty cells, which Vega parses back to null.
    """
    datasets = spec.get("datasets") or {}
    text, parse = {}, {}
    for name, rows in datasets.items():
        converted = _csv_rows(rows)
        if converted is not None:
            text[name], parse[name] = converted
    if not text:
        return spec

    def walk(value, key=None):
        if isinstance(value, list):
            return [walk(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: walk(v, k) for k, v in value.items()}
        if key == "data" and out.get("name") in text:
            out["format"] = {"type": "csv", "parse": parse[out["name"]]}
        return out

    out = walk({k: v for k, v in spec.items() if k != "datasets"})
    out["datasets"] = {name: text.get(name, rows) for name, rows in datasets.items()}
    return out


def _csv_rows(rows) -> tuple[str, dict] | None:
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return None
    columns = list(dict.fromkeys(k for r in rows for k in r))
    kinds = {}
    for c in columns:
        values = [r.get(c) for r in rows if r.get(c) is not None]
        if values and all(isinstance(v, bool) for v in values):
            kinds[c] = "boolean"
        elif values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            kinds[c] = "number"
        elif all(isinstance(v, str) for v in values):
            kinds[c] = "string"
        else:
            return None
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow(["" if (v := r.get(c)) is None else _cell(v) for c in columns])
    return buffer.getvalue(), {c: k for c, k in kinds.items() if k != "string"}


def _cell(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)
