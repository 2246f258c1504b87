"""Helpers the analysis pages share: scenario settings, default selections, number formats.

Pages read the scenario the report was built for (``ctx.scenario``, falling back to
``base`` for an assumption the scenario does not override), pick a sensible default
selection when a table holds more than a chart can show, and format values for tables.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from econ.report.html import fmt_interval, fmt_num
from econ.report.page import SiteContext

SETTING = """
select value, text from scenarios where scenario in ('base', ?) and name = ?
order by (scenario = ?) desc limit 1
"""


def setting(ctx: SiteContext, name: str) -> tuple[float | None, str | None]:
    """The scenario's (value, text) of assumption ``name`` (``base`` when the scenario does not set it)."""
    if not ctx.has("scenarios"):
        return None, None
    rows = ctx.con.sql(SETTING, params=[ctx.scenario, name, ctx.scenario]).fetchall()
    return rows[0] if rows else (None, None)


def pick(available: Iterable[str], preferred: Iterable[str], n: int) -> list[str]:
    """The preferred names that are available (in preference order), topped up with the rest by name to ``n``."""
    available = sorted(set(a for a in available if a is not None))
    chosen = [p for p in preferred if p in available][:n]
    return chosen + [a for a in available if a not in chosen][: max(0, n - len(chosen))]


def nearest_on_log_grid(grid: Iterable[float], target: float | None, default: float) -> float:
    """The grid value closest to ``target`` in log terms (``default``'s nearest when there is no target)."""
    grid = sorted(g for g in grid if g and g > 0)
    if not grid:
        return default
    goal = target if target and target > 0 else default
    return min(grid, key=lambda g: (abs(math.log(g / goal)), g))


def pct(value: Any) -> str:
    """A fraction as a signed percentage (``-0.6`` → ``-60.0%``); blank for null."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{value * 100:+.1f}%"


def finite_interval(low: Any, high: Any, *, sig: int = 3) -> str:
    """``low–high``, or ``not identified`` when an end is infinite (an exact fit has no interval)."""
    if low is None or high is None:
        return ""
    if (isinstance(low, float) and math.isinf(low)) or (isinstance(high, float) and math.isinf(high)):
        return "not identified"
    return fmt_interval(low, high, sig=sig)


def sig3(value: Any) -> str:
    return fmt_num(value, sig=3)
