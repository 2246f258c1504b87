"""The time budget fails a run whose slowest tests grew, and passes one within it."""

from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import REPO
from tests.guard.budget import Budget, over_budget, read_budget, seconds_per_test


def test_setup_call_and_teardown_count_together():
    reports = [SimpleNamespace(nodeid="t::a", duration=d) for d in (2.0, 3.0, 0.5)]
    reports.append(SimpleNamespace(nodeid="t::b", duration=1.0))
    assert seconds_per_test(reports) == {"t::a": 5.5, "t::b": 1.0}


def test_a_slow_test_or_slow_ten_fail_and_a_quick_suite_passes():
    budget = Budget(slowest_test_s=10, slowest_ten_s=30)
    assert over_budget({f"t::{i}": 2.0 for i in range(100)}, budget) == []
    assert over_budget({"t::slow": 11.0, "t::quick": 1.0}, budget) == ["t::slow took 11.0 s (budget 10 s a test)"]
    assert over_budget({f"t::{i}": 3.5 for i in range(12)}, budget) == [
        "the ten slowest tests took 35.0 s together (budget 30 s)"
    ]


def test_the_budget_is_stated_in_pyproject():
    budget = read_budget(REPO / "pyproject.toml")
    assert 0 < budget.slowest_test_s <= budget.slowest_ten_s
