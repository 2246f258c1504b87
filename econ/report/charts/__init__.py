"""Chart functions, one module per page family: ``frame -> alt.Chart`` with explicit encoding types.

Shared conventions live here: the chart size, the colours of price sources, the
axis-title helper that puts the unit last (``Input price (USD/MTok)``), which
:func:`econ.report.figures.chart_problems` checks, and the dashed guide line. Every chart
carries its rows as named datasets (:mod:`econ.report.charts.data`).
"""

from __future__ import annotations

import altair as alt

from econ.report.charts.data import named

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


def guide_rule(dataset: str, position: alt.X | alt.Y, *tooltip: alt.Tooltip) -> alt.Chart:
    """A dashed reference line at each row of the named ``dataset`` (a lecture figure, break-even, B = B*₀),
    named in the tooltip by the row's ``label``."""
    return (
        alt.Chart(named(dataset))
        .mark_rule(strokeDash=[4, 4], color="#333")
        .encode(position, tooltip=[alt.Tooltip("label:N", title="Guide"), *tooltip])
    )
