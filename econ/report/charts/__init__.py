"""Chart functions, one module per page family: ``frame -> alt.Chart`` with explicit encoding types.

Shared conventions live here: the chart size, the colours of price sources, the
axis-title helper that puts the unit last (``Input price (USD/MTok)``), which
:func:`econ.report.figures.chart_problems` checks, and the dashed guide line. Every chart
carries its rows as named datasets (:mod:`econ.report.charts.data`).
"""

from __future__ import annotations

import altair as alt
import numpy as np
import polars as pl

from econ.report.charts.data import named
from econ.report.figures import MAX_SERIES

WIDTH = 620
HEIGHT = 320
SOURCE_DOMAIN = ["hand", "litellm", "openrouter", "genai_prices", "llm_prices"]
SOURCE_RANGE = ["#1f5fa8", "#e4892b", "#3b9c5a", "#b07aa1", "#9c755f"]


CHIP_DOMAIN = [
    "A100", "H100", "H200", "H800", "H20", "B200", "GB200", "B300", "GB300", "MI300X", "MI325X", "MI355X",
    "TPU-v5e", "TPU-v5p", "TPU-v6e", "TPU7x", "Trainium2", "Trainium3",
]  # fmt: skip
"""The shipped chips in a fixed order: a chip keeps its colour on every chart of the site (a chip not listed takes
the next colour)."""
CHIP_RANGE = [
    "#7f7f7f", "#1f5fa8", "#17becf", "#6baed6", "#08306b", "#d62728", "#ff7f0e", "#8c1d18", "#fdae6b", "#2ca02c",
    "#98df8a", "#006d2c", "#c5b0d5", "#9467bd", "#5e3c99", "#e377c2", "#8c564b", "#bcbd22",
]  # fmt: skip
"""One hue per vendor family (NVIDIA Hopper blues, Blackwell reds and oranges, AMD greens, TPU purples, Trainium
browns), every two at least :data:`MIN_DELTA_E` apart (three near-identical pinks were B300, MI355X and Trainium2)."""
MIN_DELTA_E = 15.0
"""The least CIE76 colour difference between any two colours of a palette (tests/report/charts/test_palette.py)."""
PROVIDER_DOMAIN = [
    "anthropic",
    "openai",
    "google",
    "xai",
    "deepseek",
    "alibaba",
    "mistral",
    "moonshot",
    "zai",
    "minimax",
]
PROVIDER_RANGE = ["#c15f3c", "#10a37f", "#4285f4", "#444444", "#4d6bfe", "#ff6a00", "#e6b800", "#7e57c2", "#2e7d32",
                  "#e91e63"]  # fmt: skip
"""The first-party labs' colours, the same on every chart (other sellers take the next colours)."""


SPARE_RANGE = ["#393b79", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a"]


def fixed_color(field: str, title: str, present, domain: list[str], colours: list[str]) -> alt.Color:
    """The values ``present`` in a chart, each in its site-wide colour (``domain`` → ``colours``; values outside
    ``domain`` take spare colours in name order), so the legend lists only what is drawn."""
    present = {str(v) for v in present if v is not None}
    known = [v for v in domain if v in present]
    others = sorted(present - set(known))
    palette = dict(zip(domain, colours, strict=True)) | dict(zip(others, SPARE_RANGE * 3, strict=False))
    values = known + others
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=values, range=[palette[v] for v in values]))


def chip_color(present, field: str = "chip", title: str = "Chip") -> alt.Color:
    """A fixed colour per chip (:data:`CHIP_DOMAIN`), so a chip looks the same on every page."""
    return fixed_color(field, title, present, CHIP_DOMAIN, CHIP_RANGE)


def provider_color(present, field: str = "provider", title: str = "Provider") -> alt.Color:
    """A fixed colour per first-party lab (:data:`PROVIDER_DOMAIN`), so a provider looks the same on every page."""
    return fixed_color(field, title, present, PROVIDER_DOMAIN, PROVIDER_RANGE)


OTHER = "other"
LEGEND_PROVIDER = "legend_provider"


def fold_series(frame: pl.DataFrame, field: str = "provider", into: str = LEGEND_PROVIDER) -> pl.DataFrame:
    """``frame`` with ``into``: the value of ``field``, or "other" beyond the :data:`MAX_SERIES` − 1 values with the
    most rows, so a legend never holds more series than a reader tells apart whatever sellers the data holds (the
    rows keep their own ``field``, shown in the tooltip and the download). A frame that already has ``into`` is
    returned as it is."""
    if into in frame.columns:
        return frame
    counts = frame.group_by(field).len().sort(["len", field], descending=[True, False])
    if counts.height <= MAX_SERIES:
        return frame.with_columns(pl.col(field).alias(into))
    kept = counts[field].head(MAX_SERIES - 1).to_list()
    return frame.with_columns(
        pl.when(pl.col(field).is_in(kept)).then(pl.col(field)).otherwise(pl.lit(OTHER)).alias(into)
    )


def axis_title(quantity: str, unit: str) -> str:
    """``quantity (unit)``: every quantitative axis names its unit last."""
    return f"{quantity} ({unit})"


MONTH_TICKS_FROM_DAYS = 60
"""Dates spanning at least this many days get a tick at the start of every month (or every 2, 3, 6, 12 months, at
most :data:`MAX_DATE_TICKS`) labelled ``Nov 2026``; a shorter span a tick every day (or 2, 7, 14 days) labelled
``20 Nov 2026``. Vega's own ticks fell every half month, and a month's label repeated (``Nov 2026 Nov 2026 …``)."""
MAX_DATE_TICKS = 9


def date_axis(dates: pl.Series) -> alt.Axis:
    """The date axis of a time chart over ``dates``: ticks on whole months or days (:data:`MONTH_TICKS_FROM_DAYS`)."""
    span = dates.drop_nulls()
    days = (span.max() - span.min()).days if span.len() else 0
    if days >= MONTH_TICKS_FROM_DAYS:
        step = next((k for k in (1, 2, 3, 6, 12) if days / 30.44 / k <= MAX_DATE_TICKS), 24)
        return alt.Axis(format="%b %Y", tickCount={"interval": "month", "step": step})
    step = next((k for k in (1, 2, 7) if days / k <= MAX_DATE_TICKS), 14)
    return alt.Axis(format="%d %b %Y", tickCount={"interval": "day", "step": step})


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


LABEL_GAP_PX = 12
"""Least vertical distance between two line-end labels of one panel (a 10 px font and a little air)."""


def spread(px: np.ndarray, *, gap: float = LABEL_GAP_PX, low: float = 0.0, high: float = float("inf")) -> np.ndarray:
    """Vertical label positions (pixels from the top, sorted ascending) moved apart to at least ``gap``, as little as
    possible and within ``[low, high]``: pushed down where they crowd, then up from the bottom edge."""
    px = np.maximum(np.asarray(px, dtype=float), low)
    step = gap * np.arange(px.size)
    down = np.maximum.accumulate(px - step) + step
    up = step[::-1]
    return np.maximum(np.minimum.accumulate(np.minimum(down + up, high)[::-1])[::-1] - up, low)


LOG = alt.Scale(type="log")
BOTH_ENDS = "isValid(datum.{low}) && isValid(datum.{high}) && datum.{low} > 0"  # a range bar needs two ends (log axis)


def if_any_interval(frame: pl.DataFrame, low: str, high: str, layer: alt.Chart) -> list[alt.Chart]:
    """``[layer]`` when some row has both ends of the interval (finite, low > 0), else ``[]``.

    Vega warns about an infinite extent when a layer's filter leaves no row, so a chart whose
    intervals are all unidentified (an exact fit) leaves the layer out.
    """
    ok = frame.filter(pl.col(low).is_finite() & pl.col(high).is_finite() & (pl.col(low) > 0))
    return [layer] if ok.height else []
