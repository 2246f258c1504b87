"""Formulas cite sections that exist in the lecture digest, and the lecture's worked numbers come out of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from econ.errors import ReportError
from econ.report.formulas import BY_KEY, FORMULAS, cite

LECTURE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "lecture-math.md"


def lecture_sections() -> set[str]:
    text = LECTURE.read_text(encoding="utf-8")
    return set(re.findall(r"^### ([a-iX]\.\d+) ", text, flags=re.M))


def test_keys_are_unique_and_every_formula_has_a_kind():
    assert len(BY_KEY) == len(FORMULAS)
    assert {f.tag for f in FORMULAS} <= {"S", "R", "X"}


@pytest.mark.skipif(not LECTURE.exists(), reason="shared/reference/lecture-math.md is not next to the checkout")
@pytest.mark.parametrize("formula", FORMULAS, ids=[f.key for f in FORMULAS])
def test_every_cited_section_exists_in_the_lecture_digest(formula):
    for section in (s.strip() for s in formula.section.split(",")):
        assert section in lecture_sections(), (formula.key, section)


def test_the_worked_examples_in_the_notes_follow_from_the_formulas():
    """The notes quote the lecture's numbers; recompute them from the formulas' own terms."""
    assert round(1.0 * 1e11 / (300 * 200_000)) == 1667  # implied_kv_bytes: b_w·N_act/(R·L*), §f.1
    assert 1 * 2 * 128 * 8 == 2048  # kv_layout, §f.2
    assert 6 * 2.5 == 15  # fast_mode: m·s, §a.5
    assert 2000 * 64 == 128_000  # throughput, §a.7
    assert "1,667 B" in BY_KEY["implied_kv_bytes"].note and "2,048 B" in BY_KEY["kv_layout"].note
    assert "15× smaller batch" in BY_KEY["fast_mode"].note and "128,000" in BY_KEY["throughput"].note


def test_cite_names_the_section_and_refuses_unknown_keys():
    assert cite("io_ratio") == "ρ = p_out / p_in ≈ B*₀/B + L/L* (lecture §f.3)"
    with pytest.raises(ReportError, match="no formula 'nope' — add it to econ/report/formulas.py"):
        cite("nope")
