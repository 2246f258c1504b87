"""@formula: one line per function, read by the catalog; every lecture section a formula cites exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from econ.catalog import all_formulas
from econ.formula import Formula, formula, formula_of

LECTURE = Path(__file__).resolve().parent / "fixtures" / "reference" / "lecture-math.md"


def test_the_decorator_attaches_the_formula_and_names_the_function():
    @formula("y = 2·x", "a worked example")
    def double(x):
        return 2 * x

    assert double(3) == 6
    assert formula_of(double) == Formula("y = 2·x", "a worked example", f"{__name__}.{double.__qualname__}")
    assert formula_of(len) is None and formula_of(None) is None


@pytest.mark.parametrize("text", ["", "a\nb"])
def test_a_formula_is_one_non_empty_line(text):
    with pytest.raises(ValueError, match="one non-empty line"):
        formula(text, "x")


def lecture_sections() -> set[str]:
    return set(re.findall(r"^### ([a-iX]\.\d+) ", LECTURE.read_text(encoding="utf-8"), flags=re.M))


SECTIONS = re.compile(r"lecture ([a-i]\.\d+(?:[–-][a-i]?\.?\d+)?(?:, [a-i]\.\d+)*)")


def cited(source: str) -> list[str]:
    """Sections named in a source like 'lecture a.2, f.3' or 'lecture e.3–e.4' (ranges give both ends)."""
    out = []
    for group in SECTIONS.findall(source):
        for part in group.split(", "):
            out += [p if "." in p else f"{part[0]}.{p}" for p in re.split(r"[–-]", part)]
    return out


@pytest.mark.parametrize("f", all_formulas(), ids=lambda f: f.function)
def test_every_lecture_section_a_formula_cites_exists(f):
    missing = [s for s in cited(f.source) if s not in lecture_sections()]
    assert not missing, (f.function, f.source, missing)


def test_formulas_cover_the_lecture_sections_econ_claims():
    cites = {s for f in all_formulas() for s in cited(f.source)}
    assert {
        "a.2",
        "a.3",
        "a.4",
        "a.5",
        "a.6",
        "b.1",
        "b.3",
        "c.5",
        "d.4",
        "d.6",
        "e.2",
        "e.3",
        "e.4",
        "f.1",
        "f.3",
        "g.2",
        "h.1",
    } <= cites
