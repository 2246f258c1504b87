"""The formula a function computes, written once, next to the function.

    @formula("B*₀ = R·N_tot/N_act", "lecture b.1")
    def balance_batch(critical_ratio, params_total, params_active): ...

The text is what a reader checks against the source: one line, the symbols of
``docs/formulas.md``. Result-table declarations (:mod:`econ.results`) point at the function, so
the database's column comments, the report's formula list and ``docs/`` all quote this one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

F = TypeVar("F", bound=Callable)


@dataclass(frozen=True)
class Formula:
    """One formula: its text, where it comes from, and the function (``module.qualname``) computing it."""

    text: str
    source: str
    function: str


def formula(text: str, source: str) -> Callable[[F], F]:
    """Mark ``fn`` as computing ``text`` (one line), taken from ``source`` (lecture section, paper, datasheet)."""
    if "\n" in text or not text.strip():
        raise ValueError(f"a formula is one non-empty line: {text!r}")

    def mark(fn: F) -> F:
        fn.formula = Formula(text.strip(), source.strip(), f"{fn.__module__}.{fn.__qualname__}")
        return fn

    return mark


def formula_of(fn: Callable | None) -> Formula | None:
    """The :class:`Formula` of a marked function, None for an unmarked one (or None)."""
    f = getattr(fn, "formula", None)
    return f if isinstance(f, Formula) else None
