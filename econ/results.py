"""Result-table declarations: the one description of every table an analysis writes.

A :class:`ResultTable` names its grain, its key and, per column, the type, the unit, the kind of
number (:data:`KINDS`), its meaning and the function that computes it (whose ``@formula`` gives the
math, :mod:`econ.formula`). From that one declaration come the database's column comments, the
``result_tables`` / ``result_columns`` / ``formulas`` catalog the report reads, and ``docs/tables.md``.
A frame written under a declaration must have exactly its columns (:meth:`ResultTable.conform`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import polars as pl

from econ.formula import Formula, formula_of

KINDS = {
    "key": "identifies the row",
    "input": "copied from an input table or a price",
    "assumption": "a stated assumption (scenario), carried so the row says what it assumed",
    "derived": "exact arithmetic on inputs: no idealisation, no fit",
    "bound": "roofline bound: the idealised limit (the column says lower or upper)",
    "calibrated": "a prediction of what real systems achieve, with the calibration's error factor",
    "inference": "read back from public prices under stated assumptions (validated where the table says)",
    "fit": "a fitted statistic or its interval",
    "check": "a status, flag, count or diagnostic",
    "label": "descriptive text",
}
"""What a number is: every declared column has one of these kinds."""

DTYPES = {"str": pl.String, "float": pl.Float64, "int": pl.Int64, "bool": pl.Boolean, "date": pl.Date}


@dataclass(frozen=True)
class ResultColumn:
    """One column: ``name`` (units in the name), polars ``dtype`` key, ``unit`` ('' if none), kind, meaning."""

    name: str
    dtype: str
    unit: str
    kind: str
    meaning: str
    function: Callable | None = None

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"column {self.name}: dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name}: kind {self.kind!r} is not one of {', '.join(KINDS)}")

    @property
    def formula(self) -> Formula | None:
        return formula_of(self.function)

    @property
    def function_name(self) -> str | None:
        if self.function is None:
            return None
        return f"{self.function.__module__}.{self.function.__qualname__}"

    @property
    def comment(self) -> str:
        """The database comment: meaning, formula and its source, unit and kind."""
        text = self.meaning.rstrip(".")
        f = self.formula
        if f is not None and f.text not in text:
            text += f"; {f.text} ({f.source})"
        if self.unit:
            text += f" [{self.unit}]"
        return f"{text} — {self.kind}"


@dataclass(frozen=True)
class Identity:
    """``lhs = rhs`` (SQL expressions over the table's columns) within ``rtol`` on every row matching ``where``."""

    lhs: str
    rhs: str
    rtol: float = 1e-9
    where: str = "true"


@dataclass(frozen=True)
class ResultTable:
    """One result table: name, grain (one row per …), key columns, description, columns, identities."""

    name: str
    grain: str
    key: tuple[str, ...]
    description: str
    columns: tuple[ResultColumn, ...]
    identities: tuple[Identity, ...] = ()
    _by_name: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        names = [c.name for c in self.columns]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"table {self.name}: columns declared twice: {', '.join(duplicated)}")
        missing = [k for k in self.key if k not in names]
        if missing:
            raise ValueError(f"table {self.name}: key columns not declared: {', '.join(missing)}")
        self._by_name.update({c.name: c for c in self.columns})

    def column(self, name: str) -> ResultColumn:
        return self._by_name[name]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def schema(self) -> dict[str, pl.DataType]:
        return {c.name: DTYPES[c.dtype] for c in self.columns}

    def empty_frame(self) -> pl.DataFrame:
        return pl.DataFrame(schema=self.schema)

    @property
    def table_comment(self) -> str:
        key = ", ".join(self.key) if self.key else "none"
        return f"{self.description.rstrip('.')}. Grain: one row per {self.grain}. Key: {key}."

    @property
    def column_comments(self) -> dict[str, str]:
        return {c.name: c.comment for c in self.columns}

    def conform(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` with exactly the declared columns, in declared order, cast to the declared types.

        A missing or undeclared column is a programming error (``ValueError`` naming them): every
        column a table holds is declared, and every declared column is written.
        """
        have, want = set(frame.columns), set(self.names)
        if have != want:
            missing, undeclared = ", ".join(sorted(want - have)) or "none", ", ".join(sorted(have - want)) or "none"
            raise ValueError(
                f"table {self.name}: written columns differ from its declaration "
                f"(missing: {missing}; undeclared: {undeclared})"
            )
        return frame.select(pl.col(c.name).cast(DTYPES[c.dtype], strict=True) for c in self.columns)


def catalog(tables: Iterable[tuple[str, ResultTable]]) -> dict[str, pl.DataFrame]:
    """The ``result_tables``, ``result_columns`` and ``formulas`` frames of (analysis name, table) pairs."""
    table_rows, column_rows, formulas = [], [], {}
    for analysis, t in tables:
        table_rows.append((t.name, analysis, t.grain, ", ".join(t.key), t.description))
        for position, c in enumerate(t.columns, start=1):
            f = c.formula
            column_rows.append(
                (
                    t.name,
                    c.name,
                    position,
                    c.dtype,
                    c.unit,
                    c.kind,
                    c.meaning,
                    c.function_name,
                    f.text if f else None,
                    f.source if f else None,
                    c.comment,
                )
            )
            if f is not None:
                formulas.setdefault(f.function, (f.function, f.text, f.source, []))[3].append(f"{t.name}.{c.name}")
    return {
        "result_tables": pl.DataFrame(
            table_rows, schema=["table_name", "analysis", "grain", "key_columns", "description"], orient="row"
        ),
        "result_columns": pl.DataFrame(
            column_rows,
            schema={
                "table_name": pl.String,
                "column_name": pl.String,
                "position": pl.Int64,
                "dtype": pl.String,
                "unit": pl.String,
                "kind": pl.String,
                "meaning": pl.String,
                "function": pl.String,
                "formula": pl.String,
                "source": pl.String,
                "comment": pl.String,
            },
            orient="row",
        ),
        "formulas": pl.DataFrame(
            [(name, text, source, ", ".join(used)) for name, text, source, used in sorted(formulas.values())],
            schema=["function", "formula", "source", "used_in"],
            orient="row",
        ),
    }


CATALOG_DESCRIPTIONS = {
    "result_tables": (
        "Every result table the analyses write: analysis, grain, key and description (from the "
        "declarations in econ/analyses). Grain: one row per result table."
    ),
    "result_columns": (
        "Every column of every result table: type, unit, kind of number (key, input, assumption, "
        "derived, bound, calibrated, inference, fit, check, label), meaning, and the function and "
        "formula that compute it. Grain: one row per result table x column."
    ),
    "formulas": (
        "Every formula the result tables use, written once next to the function that computes it "
        "(econ.formula), with its source and the columns it fills. Grain: one row per function."
    ),
}

CATALOG_COLUMNS = {
    "result_tables": {
        "table_name": "Result table",
        "analysis": "Analysis that writes it (econ/analyses/<analysis>.py)",
        "grain": "What one row is",
        "key_columns": "Columns that identify a row (comma-separated)",
        "description": "What the table holds",
    },
    "result_columns": {
        "table_name": "Result table",
        "column_name": "Column",
        "position": "Position of the column in the table (1 = first)",
        "dtype": "Type: str, float, int, bool or date",
        "unit": "Unit of the values ('' when none)",
        "kind": "Kind of number: " + ", ".join(KINDS),
        "meaning": "What the column holds",
        "function": "Function that computes it (module.name; null for keys, inputs and labels)",
        "formula": "Formula the function computes (econ.formula)",
        "source": "Where the formula comes from (lecture section, paper, datasheet, rule)",
        "comment": "The column's database comment: meaning, formula, unit and kind",
    },
    "formulas": {
        "function": "Function (module.name)",
        "formula": "Formula it computes, on one line",
        "source": "Where the formula comes from",
        "used_in": "Result columns it fills (table.column, comma-separated)",
    },
}
"""Column comments of the catalog tables."""
