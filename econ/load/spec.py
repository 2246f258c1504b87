"""Declared table specs and the one validator that enforces them.

A :class:`TableSpec` says, for one input table: its columns (type, unit, range, allowed
values, references), its key and its table-level checks. :func:`read_table` reads a CSV by
column name, checks every cell with vectorised polars expressions, converts vendor units
to base units once (factors from ``econ.units``) and returns a frame with database column
names. Every bad cell becomes a :class:`~econ.errors.Problem` naming file, line, column,
value and what was expected; all problems are collected and raised together.
"""

from __future__ import annotations

import difflib
import functools
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypeVar

import polars as pl

from econ.errors import DataError, Problem
from econ.load.ceilings import TINY, Ceiling
from econ.load.csv_text import display_path, read_csv_rows

T = TypeVar("T", bound=tuple)
LINE = "_line"  # hidden column: the physical line of each row in its file
FILE = "_file"  # hidden column: the file a row came from

KINDS = ("str", "float", "int", "date")
# invisible characters that break a value: C0 controls other than tab, newline and carriage return,
# DEL, NEL and the Unicode line and paragraph separators (U+2028 ends a line in JavaScript and JSON
# viewers); in names and keys tab, newline and carriage return too
_INVISIBLE = r"[\x{0}-\x{8}\x{b}\x{c}\x{e}-\x{1f}\x{7f}\x{85}\x{2028}\x{2029}]"
_BREAKS = r"[\t\n\r]"
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The characters Python's ``str.strip()`` removes (``str.isspace``): a cell is stripped of these at both ends."""


@dataclass(frozen=True)
class Column:
    """One column of an input table.

    ``name`` and ``unit`` are as written in the CSV; ``db_name`` and ``factor`` say how the
    value lands in the database (``value * factor``, in ``db_unit``). ``required`` means the
    value may not be blank; ``optional`` means the whole column may be absent from the file.
    """

    name: str
    kind: str
    unit: str
    description: str
    required: bool = False
    optional: bool = False
    min: float | None = None
    max: float | None = None
    positive: bool = False  # strictly greater than zero
    allowed: tuple[str, ...] | None = None
    ref: tuple[str, str] | None = None  # (table, db column) the value must exist in
    ceiling: Ceiling | None = None  # physical ceiling of value * factor (base units), see econ.load.ceilings
    floor: Ceiling | None = None  # physical floor of a non-zero value * factor (a quantity the model divides by)
    db_name: str | None = None
    factor: float = 1.0
    db_unit: str | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name}: kind {self.kind!r} not in {KINDS}")

    @property
    def out_name(self) -> str:
        return self.db_name or self.name

    @property
    def out_unit(self) -> str:
        return self.db_unit if self.db_unit is not None else self.unit

    @property
    def comment(self) -> str:
        """Column comment for the database: meaning and unit."""
        unit = self.out_unit
        return f"{self.description} [{unit}]" if unit else self.description


@dataclass(frozen=True)
class TableSpec:
    """An input table: where it lives, its grain, its columns, key and table-level checks.

    ``checks`` are functions ``(frame, spec) -> list[Problem]`` run on the converted frame
    (database names, with ``_file``/``_line`` columns) after the cell checks pass. ``min_rows``
    is the fewest data rows the file may have (the analyses cannot run on no hardware at all).
    """

    name: str
    grain: str
    description: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    checks: tuple[Callable[[pl.DataFrame, TableSpec], list[Problem]], ...] = field(default=())
    min_rows: int = 0

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name or c.out_name == name:
                return c
        raise KeyError(name)

    @property
    def out_columns(self) -> list[str]:
        return [c.out_name for c in self.columns]

    def empty_frame(self) -> pl.DataFrame:
        return pl.DataFrame(schema={c.out_name: _DTYPES[c.kind] for c in self.columns})


_DTYPES = {"str": pl.String, "float": pl.Float64, "int": pl.Int64, "date": pl.Date}
_EXPECT = {
    "float": ("is not a number", "write a plain decimal number such as 12.5 (no units, no thousands separators)"),
    "int": ("is not a whole number", "write a whole number such as 200000 (no units, no separators)"),
    "date": ("is not a date", "write the date as YYYY-MM-DD"),
}


def read_table(
    path: Path, spec: TableSpec, *, extra: dict[str, object] | None = None, shown: Path | None = None
) -> pl.DataFrame:
    """Read, check and convert one CSV file against ``spec``.

    Returns a frame with the database column names (in spec order), base units, and the
    hidden ``_file``/``_line`` columns. ``extra`` adds constant columns (e.g. a snapshot's
    date) before the table-level checks run; ``shown`` names the file in messages when ``path`` is a
    staged copy of it. Raises :class:`DataError` listing every problem.
    """
    header, rows, lines = read_csv_rows(path, shown=shown)
    shown = display_path(shown if shown is not None else path)
    problems = _check_header(shown, header, spec)
    if len(rows) < spec.min_rows:
        problems.append(
            Problem(
                shown,
                None,
                None,
                f"has {len(rows)} data rows; the analyses need at least {spec.min_rows}",
                "data/README.md describes its columns",
            )
        )
    if problems:
        raise DataError(problems)
    width = len(header)
    for row, line in zip(rows, lines):
        if len(row) != width:
            problems.append(
                Problem(
                    shown,
                    line,
                    None,
                    f"has {len(row)} fields, the header has {width}",
                    "quote values that contain commas",
                )
            )
    if problems:
        raise DataError(problems)
    columns = zip(*rows) if rows else ([] for _ in header)  # every row has the header's width (checked above)
    raw = pl.DataFrame(
        [pl.Series(h, cells, pl.String) for h, cells in zip(header, columns)] + [pl.Series(LINE, lines, pl.Int64)]
    )
    frame, problems = convert_frame(raw, spec, shown)
    if problems:
        raise DataError(problems)
    frame = frame.with_columns(pl.lit(shown).alias(FILE), *(pl.lit(v).alias(k) for k, v in (extra or {}).items()))
    problems = check_key(frame, spec)
    if problems:  # the table-level checks assume unique keys
        raise DataError(problems)
    for check in spec.checks:
        problems += check(frame, spec)
    if problems:
        raise DataError(problems)
    return frame


def _check_header(shown: str, header: list[str], spec: TableSpec) -> list[Problem]:
    known = [c.name for c in spec.columns]
    problems = []
    for h in header:
        if h not in known:
            close = difflib.get_close_matches(h, known, n=1)
            hint = f"did you mean {close[0]}?" if close else f"known columns: {', '.join(known)}"
            problems.append(Problem(shown, 1, h, "unknown column", hint))
    seen = set()
    for h in header:
        if h in seen:
            problems.append(Problem(shown, 1, h, "column appears twice", "keep one"))
        seen.add(h)
    for c in spec.columns:
        if c.name not in header and not c.optional:
            problems.append(Problem(shown, 1, c.name, "missing column", f"add the {c.name} column ({c.description})"))
    return problems


_VALUE = "_value."  # prefix of a column's converted values beside its text while it is checked


class _CellCheck(NamedTuple):
    """Cells of ``column`` where ``mask`` holds are problems: ``what(cell)`` and ``hint``."""

    column: str
    mask: pl.Expr
    what: Callable[[str], str]
    hint: str


def convert_frame(raw: pl.DataFrame, spec: TableSpec, shown: str) -> tuple[pl.DataFrame, list[Problem]]:
    """Strip the text cells, cast them to their kinds, check ranges and allowed values, convert units.

    A few passes strip every column and convert it (beside its text, as ``_value.<name>``), one evaluates every cell
    check on the converted values; only a check that some cell fails reads its rows (a clean table costs five
    passes, not one per column and check).
    """
    stages, checks, flags, out = _plan(spec, tuple(c for c in raw.columns if c != LINE))
    wide = raw
    for stage in stages:  # eager: planning a lazy query of them took longer than running them
        wide = wide.with_columns(stage)
    problems: list[Problem] = []
    failed = wide.select(flags).row(0) if checks and wide.height else ()
    for check in (check for check, fails in zip(checks, failed) if fails):
        bad = wide.filter(check.mask)
        for line, cell in zip(bad[LINE], bad[check.column]):
            problems.append(Problem(shown, line, check.column, check.what(cell), check.hint))
    return wide.select(out), problems


@functools.lru_cache(maxsize=256)
def _plan(
    spec: TableSpec, header: tuple[str, ...]
) -> tuple[list[list[pl.Expr]], list[_CellCheck], list[pl.Expr], list[pl.Expr]]:
    """The expressions that convert and check a file of ``spec`` with columns ``header`` (built once per spec and
    header: building them took longer than running them): the stages that strip the text and convert each column
    present, the cell checks in the order their problems are listed, whether each fails (one row), and the output
    columns."""
    present = [c for c in spec.columns if c.name in header]
    stages: list[list[pl.Expr]] = [[pl.col(list(header)).str.strip_chars(WHITESPACE)], [], []]
    for c in present:
        for stage, expr in zip(stages[1:], _typed(c)):
            stage.append(expr.alias(_VALUE + c.name))
    checks = [_invisible(c, strict=c.name in spec.key or c.ref is not None) for c in present if c.kind == "str"]
    checks += [check for c in present for check in _cell_checks(c, pl.col(_VALUE + c.name))]
    out = []
    for c in spec.columns:
        value = pl.col(_VALUE + c.name) if c.name in header else pl.lit(None, dtype=_DTYPES[c.kind])
        out.append((value * c.factor if c.factor != 1.0 else value).alias(c.out_name))
    flags = [check.mask.any().alias(str(i)) for i, check in enumerate(checks)]
    return [stage for stage in stages if stage], checks, flags, [*out, pl.col(LINE)]


def _typed(c: Column) -> tuple[pl.Expr, ...]:
    """The value of a present column's (stripped) text cells in its kind, null where blank or not readable (a blank
    cell does not parse as a number or date, so only text needs blanks made null); a number in two steps, the second
    on the first's result (``_value.<name>``: one parse per cell, not one per use)."""
    value = pl.col(_VALUE + c.name)
    if c.kind == "str":
        return (pl.when(pl.col(c.name) == "").then(None).otherwise(pl.col(c.name)),)
    if c.kind == "date":
        return (pl.col(c.name).str.strptime(pl.Date, "%Y-%m-%d", strict=False),)
    if c.kind == "int":
        as_float = pl.col(c.name).str.replace_all("_", "", literal=True).cast(pl.Float64, strict=False)
        return as_float, pl.when(value == value.round(0)).then(value).otherwise(None).cast(pl.Int64, strict=False)
    # "nan", "inf" and "1e999" cast to non-finite floats; a value in a data file is finite or it is an error
    return pl.col(c.name).cast(pl.Float64, strict=False), pl.when(value.is_finite()).then(value)


def _cell_checks(c: Column, value: pl.Expr) -> list[_CellCheck]:
    """The checks of one column's cells, in the order their problems are listed: kind, blank, allowed, range."""
    blank = pl.col(c.name) == ""
    checks = []
    if c.kind in _EXPECT:
        what, hint = _EXPECT[c.kind]
        checks.append(_CellCheck(c.name, ~blank & value.is_null(), lambda cell, what=what: f'"{cell}" {what}', hint))
    if c.required:
        checks.append(_CellCheck(c.name, blank, lambda cell: "is blank", f"fill in {c.description.lower()}"))
    if c.allowed is not None:
        checks.append(
            _CellCheck(
                c.name,
                ~blank & ~pl.col(c.name).is_in(list(c.allowed)),
                lambda cell: f'"{cell}" is not allowed',
                f"use one of: {', '.join(c.allowed)}",
            )
        )
    if c.kind not in ("float", "int"):
        return checks
    unit = f" {c.unit}" if c.unit else ""
    ranges = []
    if c.min is not None:
        ranges.append((value < c.min, f"must be at least {c.min:g}{unit}"))
    if c.max is not None:
        ranges.append((value > c.max, f"must be at most {c.max:g}{unit}"))
    if c.positive:
        ranges.append((value <= 0, f"must be greater than 0{unit}"))
    if c.ceiling is not None:
        top = c.ceiling.value / c.factor
        ranges.append((value > top, f"must be at most {top:g}{unit}: {c.ceiling.why}"))
    if c.floor is not None:
        bottom = c.floor.value / c.factor
        ranges.append(((value != 0) & (value.abs() < bottom), f"must be at least {bottom:g}{unit}: {c.floor.why}"))
    elif c.kind == "float":
        ranges.append(((value != 0) & (value.abs() < TINY), f"a non-zero value is at least {TINY:g}{unit} (a typo?)"))
    checks += [
        _CellCheck(c.name, bad.fill_null(False), lambda cell: f'"{cell}" is out of range', hint) for bad, hint in ranges
    ]
    return checks


def _invisible(c: Column, *, strict: bool) -> _CellCheck:
    """A text cell holding an invisible character that breaks it (see _INVISIBLE); in names and keys (``strict``)
    tabs and line breaks too."""
    pattern = f"{_INVISIBLE}|{_BREAKS}" if strict else _INVISIBLE

    def what(cell: str) -> str:
        char = next(
            ch for ch in cell if unicodedata.category(ch) in ("Cc", "Zl", "Zp") and (strict or ch not in "\t\n\r")
        )
        name = unicodedata.name(char, "control character")
        return f"contains the invisible character U+{ord(char):04X} ({name}) at position {cell.index(char) + 1}"

    return _CellCheck(
        c.name,
        pl.col(c.name).str.contains(pattern),
        what,
        "retype the value without it (it breaks lines in the report and in SQL output)",
    )


def failing(frame: pl.DataFrame, checks: Sequence[T]) -> list[T]:
    """The checks (tuples whose second item is a boolean mask expression) that some row of ``frame`` fails, in order:
    one pass over the frame for all of them, so only a failing check costs a pass of its own to list its rows."""
    if not checks or frame.is_empty():
        return []
    failed = frame.select([check[1].fill_null(False).any().alias(str(i)) for i, check in enumerate(checks)]).row(0)
    return [check for check, fails in zip(checks, failed) if fails]


def starts_key(key: Sequence[str]) -> pl.Expr:
    """True on the first row of each key of a frame sorted by (at least) ``key`` (its rows are contiguous)."""
    return (pl.int_range(pl.len()) == 0) | ~pl.all_horizontal(pl.col(k).eq_missing(pl.col(k).shift(1)) for k in key)


def shift_in_key(column: str, key: Sequence[str], n: int) -> pl.Expr:
    """``pl.col(column).shift(n).over(key)`` on a frame sorted by ``key`` (then by the order to shift along), without
    the window: the row ``n`` rows away when it has the same key (the rows between do too), else null. A shift over a
    key maps every group back to its rows: ~10x slower (3.6 ms against 0.3 ms on a 5,000-row snapshot)."""
    row = pl.int_range(pl.len())
    inside = row >= n if n > 0 else row < pl.len() + n
    same = pl.all_horizontal(pl.col(k).eq_missing(pl.col(k).shift(n)) for k in key)
    return pl.when(inside & same).then(pl.col(column).shift(n))


def check_key(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """Every key appears once; the duplicate rows name the line of the first occurrence."""
    if not spec.key or frame.is_empty():
        return []
    key = list(spec.key)
    dup = frame.with_columns(pl.col(LINE).min().over(key).alias("_first"), pl.len().over(key).alias("_n")).filter(
        (pl.col("_n") > 1) & (pl.col(LINE) != pl.col("_first"))
    )
    problems = []
    for row in dup.iter_rows(named=True):
        values = ", ".join(f"{k}={row[k]}" for k in key)
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                None,
                f"duplicate key ({values}), first on line {row['_first']}",
                "merge or remove one row",
            )
        )
    return problems


def check_refs(frame: pl.DataFrame, spec: TableSpec, tables: dict[str, pl.DataFrame]) -> list[Problem]:
    """Values of reference columns exist in the referenced table."""
    problems = []
    for c in spec.columns:
        if c.ref is None or c.out_name not in frame.columns:
            continue
        table, column = c.ref
        if table not in tables:  # the referenced table failed its own checks; its problems are reported
            continue
        known = tables[table][column].unique().to_list()
        bad = frame.filter(pl.col(c.out_name).is_not_null() & ~pl.col(c.out_name).is_in(known))
        for row in bad.iter_rows(named=True):
            cell = row[c.out_name]
            close = difflib.get_close_matches(str(cell), [str(k) for k in known], n=1)
            hint = f"did you mean {close[0]}?" if close else f"add it to {table} first"
            problems.append(Problem(row[FILE], row[LINE], c.name, f'unknown {column} "{cell}" (not in {table})', hint))
    return problems
