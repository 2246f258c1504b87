"""Chart functions, one module per page family: ``frame -> alt.Chart`` with explicit encoding types.

Shared conventions live here: the chart size, the colours of price sources, and the
axis-title helper that puts the unit last (``Input price (USD/MTok)``), which
:func:`econ.report.figures.chart_problems` checks.
"""

from __future__ import annotations

import altair as alt

WIDTH = 620
HEIGHT = 320
SOURCE_DOMAIN = ["hand", "litellm", "openrouter"]
SOURCE_RANGE = ["#1f5fa8", "#e4892b", "#3b9c5a"]


def axis_title(quantity: str, unit: str) -> str:
    """``quantity (unit)``: every quantitative axis names its unit last."""
    return f"{quantity} ({unit})"


def source_color(field: str = "source", title: str = "Price source") -> alt.Color:
    """A fixed colour per price source, so every chart of the site agrees."""
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=SOURCE_DOMAIN, range=SOURCE_RANGE))
