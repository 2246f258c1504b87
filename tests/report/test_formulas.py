"""Formulas cite sections that exist in the lecture digest, and the lecture's worked numbers come out of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from econ.errors import ReportError
from econ.report.formulas import BY_KEY, FORMULAS, cite

LECTURE = Path(__file__).resolve().parents[1] / "fixtures" / "reference" / "lecture-math.md"


def lecture_sections() -> set[str]:
    text = LECTURE.read_text(encoding="utf-8")
    return set(re.findall(r"^### ([a-iX]\.\d+) ", text, flags=re.M))


def test_keys_are_unique_and_every_formula_has_a_kind():
    assert len(BY_KEY) == len(FORMULAS)
    assert {f.tag for f in FORMULAS} <= {"S", "R", "X"}


@pytest.mark.parametrize("formula", FORMULAS, ids=[f.key for f in FORMULAS])
def test_every_cited_section_exists_in_the_lecture_digest(formula):
    for section in (s.strip() for s in formula.section.split(",")):
        assert section in lecture_sections(), (formula.key, section)


def section_text(section: str) -> str:
    """The text of lecture section ``section`` (from its heading to the next one)."""
    text = LECTURE.read_text(encoding="utf-8")
    start = re.search(rf"^### {re.escape(section)} ", text, flags=re.M).start()
    end = re.search(r"^##", text[start + 4 :], flags=re.M)
    return text[start : start + 4 + end.start()] if end else text[start:]


@pytest.mark.parametrize(
    ("key", "quoted"),
    [
        ("implied_kv_bytes", "1,667"),  # f.1: (1/300) · 1e11 / 2e5
        ("kv_layout", "2,048"),  # f.2: 1 × 2 × 128 × 8
        ("fast_mode", "15×"),  # a.5: 6× the price at 2.5× the speed
        ("throughput", "128,000"),  # a.7: 2,000 × 64
        ("drain_time", "20 ms"),  # a.6 / g.4
        ("sparsity", "671/37 ≈ 18"),  # b.2: DeepSeek-V3 by parameters
        ("alpha_beta", "1.5"),  # e.3: the final α
    ],
)
def test_the_worked_numbers_in_the_notes_are_the_lectures(key, quoted):
    """A note quotes a worked number of the lecture: it must be the one in the section the formula cites."""
    formula = BY_KEY[key]
    assert quoted in formula.note
    assert any(quoted in section_text(s.strip()) for s in formula.section.split(",")), (key, formula.section)


def test_cite_names_the_section_and_refuses_unknown_keys():
    assert cite("io_ratio") == "ρ = p_out / p_in ≈ B*₀/B + L/L* (lecture §f.3)"
    with pytest.raises(ReportError, match="no formula 'nope' — add it to econ/report/formulas.py"):
        cite("nope")
