"""The suite's time budget: the slowest tests may not grow past what ``pyproject.toml`` states.

``[tool.econ.test-budget]`` gives ``slowest_test_s`` (any one test: setup, call and teardown together, so a
session fixture's build counts against the first test that asks for it) and ``slowest_ten_s`` (the ten slowest
together). ``tests/conftest.py`` checks them when a run ends and fails the run, naming the tests, when either is
exceeded; ``--durations`` in ``addopts`` prints the slowest tests of every run.
"""

from __future__ import annotations

import tomllib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Budget:
    slowest_test_s: float
    slowest_ten_s: float


def read_budget(pyproject: Path) -> Budget:
    table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["econ"]["test-budget"]
    return Budget(float(table["slowest_test_s"]), float(table["slowest_ten_s"]))


def seconds_per_test(reports: Iterable) -> dict[str, float]:
    """Seconds per test (setup + call + teardown) from pytest's reports."""
    seconds: dict[str, float] = defaultdict(float)
    for report in reports:
        seconds[report.nodeid] += float(getattr(report, "duration", 0.0) or 0.0)
    return dict(seconds)


def over_budget(seconds: dict[str, float], budget: Budget) -> list[str]:
    """What exceeds the budget, one sentence each (empty when within it)."""
    slowest = sorted(seconds.items(), key=lambda kv: -kv[1])[:10]
    problems = [
        f"{node} took {s:.1f} s (budget {budget.slowest_test_s:.0f} s a test)"
        for node, s in slowest
        if s > budget.slowest_test_s
    ]
    total = sum(s for _, s in slowest)
    if total > budget.slowest_ten_s:
        problems.append(f"the ten slowest tests took {total:.1f} s together (budget {budget.slowest_ten_s:.0f} s)")
    return problems
