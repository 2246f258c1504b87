"""Scenarios: named sets of stated assumptions, each with unit, low/high range and rationale.

Scenario ``base`` holds the lecture's assumptions; another scenario lists only what it
changes and inherits the rest from ``base``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import polars as pl

from econ.errors import EconError


@dataclass(frozen=True)
class Assumption:
    name: str
    value: float | None
    text: str | None
    unit: str
    low: float | None
    high: float | None
    alternatives: tuple[str, ...]
    rationale: str
    source_url: str

    @property
    def range(self) -> tuple[float, float]:
        """(low, high), falling back to the value where a bound is blank."""
        return (self.value if self.low is None else self.low, self.value if self.high is None else self.high)


@dataclass(frozen=True)
class Scenario:
    name: str
    assumptions: dict[str, Assumption]

    def _get(self, name: str) -> Assumption:
        try:
            return self.assumptions[name]
        except KeyError:
            raise EconError(
                f"scenario {self.name!r} has no assumption {name!r}", f"add a row 'base,{name},…' to data/scenarios.csv"
            ) from None

    def __getitem__(self, name: str) -> float:
        """The central value of a numeric assumption."""
        a = self._get(name)
        if a.value is None:
            raise EconError(
                f"assumption {name!r} of scenario {self.name!r} is categorical ({a.text})", "use Scenario.text()"
            )
        return a.value

    def get(self, name: str, default: float | None = None) -> float | None:
        a = self.assumptions.get(name)
        return default if a is None or a.value is None else a.value

    def text(self, name: str) -> str:
        """The value of a categorical assumption (e.g. the serving chip)."""
        a = self._get(name)
        if a.text is None:
            raise EconError(f"assumption {name!r} of scenario {self.name!r} is numeric", "use scenario[name]")
        return a.text

    def range(self, name: str) -> tuple[float, float]:
        return self._get(name).range

    def assumption(self, name: str) -> Assumption:
        return self._get(name)


def scenarios_from_frame(frame: pl.DataFrame) -> dict[str, Scenario]:
    """Every scenario in a ``scenarios`` frame, each completed with ``base``'s assumptions."""
    by_name: dict[str, dict[str, Assumption]] = {}
    for row in frame.iter_rows(named=True):
        alternatives = tuple(a.strip() for a in (row.get("alternatives") or "").split("|") if a.strip())
        by_name.setdefault(row["scenario"], {})[row["name"]] = Assumption(
            row["name"],
            row["value"],
            row.get("text"),
            row["unit"],
            row["low"],
            row["high"],
            alternatives,
            row["rationale"],
            row["source_url"],
        )
    base = by_name.get("base", {})
    return {name: Scenario(name, base | own) for name, own in by_name.items()}


def load_scenarios(con: duckdb.DuckDBPyConnection) -> dict[str, Scenario]:
    """All scenarios in the database being built (I/O edge for analyses)."""
    return scenarios_from_frame(con.sql("select * from scenarios").pl())


def load_scenario(con: duckdb.DuckDBPyConnection, name: str = "base") -> Scenario:
    scenarios = load_scenarios(con)
    if name not in scenarios:
        raise EconError(f"no scenario {name!r}", f"known scenarios: {', '.join(sorted(scenarios))}")
    return scenarios[name]
