"""Figures: an Altair chart plus what the report publishes with it (caption, formula, source, data).

A chart function is ``frame -> alt.Chart``; a page wraps its result in a :class:`Figure`,
which checks the report's contract for every chart (a title, explicit encoding types,
axis titles with units, tooltips) before anything is written. The site writes each
figure's data as CSV beside the page; SVG and PNG come from the chart's own export menu in the browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from econ.errors import ReportError

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
UNIT_IN_TITLE = re.compile(r"\(.+\)\s*$|\[.+\]\s*$")
POSITION = ("x", "y", "theta", "radius")
SECONDARY = ("x2", "y2", "theta2", "radius2")


def records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``frame`` as JSON-ready dicts (ISO dates, nulls for NaN/inf, column order kept)."""
    exprs = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if dtype.is_temporal():
            exprs.append(col.cast(pl.String))
        elif dtype.is_float():
            exprs.append(pl.when(col.is_finite()).then(col).otherwise(None).alias(name))
        elif dtype == pl.Decimal:
            exprs.append(col.cast(pl.Float64))
        else:
            exprs.append(col)
    return frame.select(exprs).to_dicts() if exprs else []


@dataclass(frozen=True)
class Figure:
    """One chart of a page and what is published with it.

    Parameters
    ----------
    slug
        Name unique within the page (``[a-z0-9-]``); the chart id is ``<page>-<slug>`` and the
        data is ``<page>/<slug>.csv``.
    chart
        The chart (an Altair chart, or :class:`~econ.report.charts.data.ChartWithData` carrying its rows
        as named datasets).
    data
        The rows behind the chart, written as the CSV download (aggregate in SQL first: this is
        what ends up inline in the page too).
    caption
        What the chart shows, in a sentence or two.
    formula
        The formula used (with its lecture section), or how the plotted values are computed.
    source
        Where the data comes from: tables/views and their upstream sources.
    """

    slug: str
    chart: Any
    data: pl.DataFrame
    caption: str
    formula: str
    source: str
    _spec: dict = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if not SLUG.match(self.slug):
            raise ReportError(f"figure slug {self.slug!r} is not lowercase-with-dashes", "use [a-z0-9-] only")
        for name in ("caption", "formula", "source"):
            if not str(getattr(self, name) or "").strip():
                raise ReportError(
                    f"figure {self.slug}: every chart needs a {name}", "say what it shows, how and from where"
                )
        spec = self.chart.to_dict()
        spec.pop("$schema", None)
        problems = chart_problems(spec) + legend_problems(spec, self.data)
        if problems:
            raise ReportError(
                f"figure {self.slug}: " + "; ".join(problems),
                "give the chart a title, explicit encoding types, axis titles with units and a tooltip",
            )
        object.__setattr__(self, "_spec", fit_width(si_axes(spec)))

    @property
    def spec(self) -> dict:
        """The Vega-Lite spec (validated by Altair, ``$schema`` dropped: nothing refers to the network)."""
        return self._spec

    @property
    def title(self) -> str:
        title = self._spec.get("title")
        if isinstance(title, dict):
            title = title.get("text")
        return " ".join(title) if isinstance(title, list) else str(title)


COMPOUND = ("hconcat", "vconcat", "concat", "facet", "repeat")


def fit_width(spec: dict) -> dict:
    """A single-view spec drawn at its column's width (``width: "container"``, legends and axes inside it), so it
    neither overflows a phone nor sits narrow in a wide column; compound and faceted specs keep their widths and
    scroll inside their box."""
    faceted = any(k in (spec.get("encoding") or {}) for k in ("facet", "row", "column"))
    stepped = isinstance(spec.get("height"), dict)  # a band height ({"step": n}) cannot be fitted
    if any(k in spec for k in COMPOUND) or faceted or stepped or not isinstance(spec.get("width"), (int, float)):
        return spec
    return {**spec, "width": "container", "autosize": {"type": "fit-x", "contains": "padding"}}


SI_LABELS = (
    "abs(datum.value) >= 1e3 && abs(datum.value) < 1e18 ? format(datum.value, '.3~s') : "
    "format(datum.value, abs(datum.value) >= 1e18 ? '.2~e' : '~g')"
)
"""Axis labels with SI prefixes from 1,000 up to peta (``40T``, ``17G``, ``100k``), plain below, and FLOP-sized
numbers (10¹⁸ and up) in scientific notation, where prefixes stop being read (``1e+24``)."""
SI_LOG_LABELS = (
    "abs(log(abs(datum.value)) / LN10 - round(log(abs(datum.value)) / LN10)) < 1e-6 ? (" + SI_LABELS + ") : ''"
)
"""On a log axis, the SI labels of the powers of ten only (the ticks between stay unlabelled, as Vega's own)."""
SI_FORMATS = (None, "~s", "s", ",", ",.0f", "~g")
"""Axis formats the SI labels replace (none, or one of these generic ones); a percentage or a date keeps its own."""


def si_axes(spec: dict) -> dict:
    """``spec`` with every quantitative x and y axis labelled by :data:`SI_LABELS` (issue 26: ``4e13`` and
    ``1,000,000,000`` read as ``40T`` and ``1G``), powers of ten only on a log axis (:data:`SI_LOG_LABELS`), unless the
    axis has its own label format. The layers of one view share their axes, so they get one expression each."""
    if isinstance(spec, list):
        return [si_axes(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    if "layer" in spec or "encoding" in spec:
        units = list(_unit_specs(spec))
        log = {ch for unit in units for ch, enc in _encodings(unit) if _is_log(enc)}
        own = {ch for unit in units for ch, enc in _encodings(unit) if _own_labels(enc)}
        return _label_view(spec, log, own)
    return {k: si_axes(v) for k, v in spec.items()}


def _is_log(enc: dict) -> bool:
    return enc.get("type") == "quantitative" and (enc.get("scale") or {}).get("type") == "log"


def _own_labels(enc: dict) -> bool:
    axis = enc.get("axis") or {}
    return "labelExpr" in axis or "formatType" in axis or axis.get("format") not in SI_FORMATS


def _label_view(spec: dict, log: set[str], own: set[str]) -> dict:
    """A view (and its layers) with the SI label expression on its x and y axes (``log``: the log-scale channels;
    ``own``: channels a layer labels its own way, left as they are)."""
    out = dict(spec)
    if "layer" in out:
        out["layer"] = [_label_view(child, log, own) for child in out["layer"]]
    encoding = out.get("encoding")
    if not isinstance(encoding, dict):
        return out
    for channel in ("x", "y"):
        enc = encoding.get(channel)
        if not isinstance(enc, dict) or enc.get("type") != "quantitative" or enc.get("axis", {}) is None:
            continue
        if channel in own:
            continue
        axis = dict(enc.get("axis") or {})
        axis.pop("format", None)
        axis["labelExpr"] = SI_LOG_LABELS if channel in log else SI_LABELS
        encoding = {**encoding, channel: {**enc, "axis": axis}}
    out["encoding"] = encoding
    return out


def _unit_specs(spec: dict) -> Iterator[dict]:
    """Every single-view spec inside a (layered, concatenated, faceted) spec."""
    yield spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from _unit_specs(child)
    if isinstance(spec.get("spec"), dict):
        yield from _unit_specs(spec["spec"])


def _encodings(unit: dict) -> Iterator[tuple[str, dict]]:
    for channel, enc in (unit.get("encoding") or {}).items():
        for item in enc if isinstance(enc, list) else [enc]:
            if isinstance(item, dict):
                yield channel, item


MAX_SERIES = 10
"""Most series a legend may hold: a reader cannot tell more colours or dashes apart (issue 17)."""
LEGEND_CHANNELS = ("color", "fill", "stroke", "strokeDash", "shape")


def legend_problems(spec: dict, data: pl.DataFrame) -> list[str]:
    """Legends with more than :data:`MAX_SERIES` entries, counted in the figure's data (a nominal field it holds)."""
    problems = []
    for unit in _unit_specs(spec):
        for channel, enc in _encodings(unit):
            field_name = enc.get("field")
            if channel not in LEGEND_CHANNELS or enc.get("type") != "nominal" or enc.get("legend", {}) is None:
                continue
            if field_name in data.columns and (n := data[field_name].n_unique()) > MAX_SERIES:
                problems.append(f"{channel} legend of {field_name!r} has {n} series (at most {MAX_SERIES})")
    return sorted(set(problems))


def chart_problems(spec: dict) -> list[str]:
    """What a spec lacks of the report's chart contract (empty when it complies).

    Every chart has a title; every encoded field an explicit type; every quantitative axis
    a title ending in its unit in parentheses or brackets (``Price (USD/MTok)``); every
    other axis a title; and at least one layer has a tooltip.
    """
    problems = []
    if not spec.get("title"):
        problems.append("no title")
    has_tooltip = False
    for unit in _unit_specs(spec):
        mark = unit.get("mark")
        if isinstance(mark, dict) and mark.get("tooltip"):
            has_tooltip = True
        for channel, enc in _encodings(unit):
            if channel == "tooltip" and ("field" in enc or "aggregate" in enc):
                has_tooltip = True
            if "field" in enc and "type" not in enc and channel not in SECONDARY:  # x2/y2 take the type of x/y
                problems.append(f"{channel} encoding of {enc['field']!r} has no explicit type")
            if channel in POSITION and ("field" in enc or "aggregate" in enc):
                title = enc.get("title")
                if not title and (enc.get("axis") or {}).get("title"):
                    title = enc["axis"]["title"]
                if not title:
                    problems.append(f"{channel} axis of {enc.get('field', enc.get('aggregate'))!r} has no title")
                elif enc.get("type") == "quantitative" and not UNIT_IN_TITLE.search(str(title)):
                    problems.append(f"{channel} axis title {title!r} does not end with its unit in parentheses")
    if not has_tooltip:
        problems.append("no tooltip")
    return problems
