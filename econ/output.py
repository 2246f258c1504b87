"""Render a result (column names + rows) as table, csv, json or markdown text."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from decimal import Decimal

FORMATS = ("table", "csv", "json", "markdown")


SI_FROM = 1e3
"""A float at least this large (in magnitude) reads in a table for people with an SI prefix: ``40 T``, ``17 G``."""


def _cell(value) -> str:
    """A value as a table for people shows it: floats to six significant digits, from :data:`SI_FROM` up (as
    :func:`human`) with an SI prefix and four (``4e13`` → ``40 T``, ``1.7e10`` → ``17 G``); whole numbers exact; csv
    and json keep every digit."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isfinite(value) and abs(value) >= SI_FROM:
            for scale, prefix in PREFIXES:
                if abs(value) >= scale * (1 - 5e-5):
                    return f"{value / scale:.4g} {prefix}"
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
    return "".join(render_stream(columns, [rows], fmt=fmt))


def render_stream(columns: list[str], batches: Iterable[list[tuple]], *, fmt: str = "table") -> Iterator[str]:
    """:func:`render` for rows that arrive in batches: yields pieces of text as each batch arrives.

    The pieces join to what :func:`render` gives for all the rows (no trailing newline), except that a
    table takes its column widths and alignment from the first batch: a later, longer cell is written
    whole and pushes its row out of line (nothing is cut, and memory stays one batch whatever the row
    count).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {FORMATS}")
    batches = iter(batches)
    if fmt == "csv":
        yield from _csv_stream(columns, batches)
    elif fmt == "json":
        yield from _json_stream(columns, batches)
    elif fmt == "markdown":
        yield from _markdown_stream(columns, batches)
    else:
        yield from _table_stream(columns, batches)


def _csv_stream(columns, batches) -> Iterator[str]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    pending = out.getvalue()
    for rows in batches:
        out.seek(0)
        out.truncate()
        writer.writerows([["" if v is None else _json_value(v) for v in row] for row in rows])
        text = out.getvalue()
        if text:
            yield pending
            pending = text
    yield pending.rstrip("\n")


def _json_stream(columns, batches) -> Iterator[str]:
    first = True
    for rows in batches:
        for row in rows:
            text = json.dumps({c: _json_value(v) for c, v in zip(columns, row)}, indent=2, default=str)
            yield ("[\n" if first else ",\n") + "\n".join("  " + line for line in text.splitlines())
            first = False
    yield "[]" if first else "\n]"


def _markdown_stream(columns, batches) -> Iterator[str]:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    yield "| " + " | ".join(esc(c) for c in columns) + " |\n|" + "|".join("---" for _ in columns) + "|"
    for rows in batches:
        for row in rows:
            yield "\n| " + " | ".join(esc(_cell(v).replace("\n", " ")) for v in row) + " |"


def _table_stream(columns, batches) -> Iterator[str]:
    first = next(batches, [])
    cells = [[_cell(v).replace("\n", " ") for v in row] for row in first]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(row[i], (int, float, Decimal)) or row[i] is None for row in first) and first
        for i in range(len(columns))
    ]

    def fmt_row(r):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(r, widths, numeric)).rstrip()

    yield "\n".join([fmt_row(columns), "  ".join("-" * w for w in widths)] + [fmt_row(r) for r in cells])
    count = len(first)
    for rows in batches:
        count += len(rows)
        for row in rows:
            yield "\n" + fmt_row([_cell(v).replace("\n", " ") for v in row])
    yield f"\n({count} row{'s' if count != 1 else ''})"


def terminal_width(default: int = 100) -> int:
    """Columns of the terminal (``COLUMNS`` or the tty's size), else ``default`` when output is not a terminal."""
    import os
    import shutil

    if os.environ.get("COLUMNS", "").isdigit():
        return max(int(os.environ["COLUMNS"]), 20)
    return max(shutil.get_terminal_size((default, 24)).columns, 20)


FLEXIBLE_MIN_CHARS = 24
"""The fewest characters :func:`render_fit` leaves its flexible column before it cuts the others."""


def render_fit(
    columns: list[str],
    rows: list[tuple],
    *,
    width: int,
    flexible: str | None = None,
    keys: tuple[str, ...] = (),
    wrap: bool = False,
    count: bool = True,
) -> str:
    """A table (as :func:`render`) whose lines fit ``width`` characters, cutting text that names nothing before text
    that does.

    The ``flexible`` column takes what the others leave, its text cut with "…" (or, with ``wrap``, continued on the
    lines below in the same column). When the other columns alone leave it less than :data:`FLEXIBLE_MIN_CHARS`,
    their text is cut too, widest first, down to the width of their header, and then the flexible one below it.
    ``keys`` (the columns that say which row it is: a price key, a provider, a quantity) are never cut: when the
    table is still too wide, the widest keys continue on the lines below (down to :data:`KEY_MIN_CHARS` a line), whole.
    Numbers are never cut: a table too narrow for them is wider than ``width``."""
    import textwrap
    from itertools import zip_longest

    cells = [[_cell(v).replace("\n", " ") for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [
        bool(rows) and all(isinstance(row[i], (int, float, Decimal)) or row[i] is None for row in rows)
        for i in range(len(columns))
    ]
    at = columns.index(flexible) if flexible is not None else None
    key_at = [i for i, c in enumerate(columns) if c in keys and not numeric[i] and i != at]
    gaps = 2 * (len(columns) - 1)
    floor = max(len(flexible), FLEXIBLE_MIN_CHARS) if flexible is not None else 0
    cuttable = [i for i in range(len(columns)) if i != at and not numeric[i] and i not in key_at]

    def others() -> int:
        return sum(w for i, w in enumerate(widths) if i != at) + gaps

    def shrink(candidates: list[int], least) -> bool:
        wide = [i for i in candidates if widths[i] > least(i)]
        if not wide:
            return False
        widths[max(wide, key=lambda i: widths[i])] -= 1
        return True

    while others() + (min(widths[at], floor) if at is not None else 0) > width:
        if not shrink(cuttable, lambda i: max(len(columns[i]), 2)):
            break
    if at is not None:
        widths[at] = min(widths[at], max(width - others(), len(columns[at]), 6))  # too narrow still: numbers overflow
    natural = list(widths)
    while others() + (widths[at] if at is not None else 0) > width:
        if not shrink(key_at, lambda i: max(len(columns[i]), KEY_MIN_CHARS)):
            break
    wrapped = {i for i in key_at if widths[i] < natural[i]} | ({at} if at is not None and wrap else set())

    def cut(text: str, w: int) -> str:
        return text if len(text) <= w else text[: w - 1] + "…"

    def line(r):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(r, widths, numeric)).rstrip()

    out = [line(columns), "  ".join("-" * w for w in widths)]
    for r in cells:
        parts = [
            (textwrap.wrap(v, widths[i]) or [""]) if i in wrapped else [v if numeric[i] else cut(v, widths[i])]
            for i, v in enumerate(r)
        ]
        out += [line(list(piece)) for piece in zip_longest(*parts, fillvalue="")]
    if count:
        out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


KEY_MIN_CHARS = 12
"""The fewest characters a line :func:`render_fit` gives a key column it continues on the lines below."""


SINGULAR = {
    plural: plural[:-1]
    for plural in ("chips", "ranks", "stages", "workers", "replicas", "requests", "nodes", "racks", "sequences",
                   "tokens", "prompts", "points", "runs", "layers", "experts")
}  # fmt: skip
"""Count units :func:`human` writes in the singular for exactly one (``1 chip``, not ``1 chips``)."""

PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
"""Decimal SI prefixes :func:`human` writes before a unit."""


def human(value, unit: str = "") -> str:
    """A number and its unit as people read them: three significant digits with a decimal SI prefix from 1,000 up
    (``1.32 M USD/day``), whole numbers below a million exact (``8 chips``, ``131,072 tokens``), a fraction as a
    percentage (``62.3 %``), seconds below one in ms or µs (``15.7 ms``), true/false as yes/no; text, dates and blanks
    as they are."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float, Decimal)):
        return f"{_cell(value)} {unit}".strip() if unit else _cell(value)
    if isinstance(value, float) and math.isinf(value):
        return f"{_cell(value)} {unit}".strip()
    if unit in SINGULAR and value == 1:
        unit = SINGULAR[unit]
    if unit == "frac":
        return f"{float(value) * 100:.3g} %"
    if isinstance(value, int) and abs(value) < 1e6:
        return f"{value:,} {unit}".strip()
    x = float(value)
    if unit == "s" and 0 < abs(x) < 0.9995:  # 0.0157 s reads as 15.7 ms
        return f"{x * 1e3:.3g} ms" if abs(x) >= 1e-3 else f"{x * 1e6:.3g} µs"
    for scale, prefix in PREFIXES:
        if abs(x) >= scale * (1 - 5e-4):  # 999,950 shows as 1 M, not 1e+03 k
            return f"{x / scale:.3g} {prefix}{unit}".strip() if not unit else f"{x / scale:.3g} {prefix} {unit}"
    return f"{x:.3g} {unit}".strip()


def render_object(obj) -> str:
    """One JSON object (``econ fleet --format json``): dates as ISO text, non-finite numbers as null."""

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return _json_value(v)

    return json.dumps(clean(obj), indent=2, allow_nan=False)
