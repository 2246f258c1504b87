"""Named datasets for composite charts: each frame is written once at the top of the spec.

Inline ``data.values`` inside every layer or panel is copied and validated by Altair each time
charts are composed (slow for layered, concatenated charts) and may be written more than
once; a composite chart instead refers to its frames by name (:func:`named`) and carries them
once in the top-level ``datasets`` (:func:`with_datasets`).
"""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from econ.report.figures import records

SIGNIFICANT_DIGITS = 4


def named(name: str) -> alt.NamedData:
    """A reference to the dataset ``name`` given to :func:`with_datasets`."""
    return alt.NamedData(name=name)


def with_datasets(chart: Any, **frames: pl.DataFrame) -> ChartWithData:
    """``chart`` with each frame written once as a top-level named dataset (dates as ISO text, NaN/inf as null).

    Floats are written with :data:`SIGNIFICANT_DIGITS` significant digits (the page stays small;
    the figure's CSV download keeps full precision).
    """
    return ChartWithData(chart, {name: records(compact(frame)) for name, frame in frames.items()})


class ChartWithData:
    """An Altair chart whose named datasets are added after Altair has validated the spec.

    Altair validates every data row against the Vega-Lite schema on each ``properties`` and
    ``to_dict`` call, which costs more than building the chart; the rows here are plain JSON
    records from :func:`econ.report.figures.records`. The spec's structure comes from code, so
    the chart tests validate it (``to_dict(validate=True)``) and the site build does not; the
    report's own contract (:func:`econ.report.figures.chart_problems`) is checked on every build.
    """

    def __init__(self, chart: Any, datasets: dict[str, list[dict]]):
        self.chart = chart
        self.datasets = datasets

    def to_dict(self, *, validate: bool = False, **kwargs: Any) -> dict:
        """The Vega-Lite spec with the datasets; Altair's schema validation only when ``validate`` (the chart tests)."""
        spec = self.chart.to_dict(validate=validate, **kwargs)
        spec["datasets"] = {**spec.get("datasets", {}), **self.datasets}
        return spec


def compact(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with finite floats rounded to :data:`SIGNIFICANT_DIGITS` significant digits."""
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    return frame.with_columns(
        pl.when(pl.col(c).is_finite() & (pl.col(c) != 0))
        .then(pl.col(c).round_sig_figs(SIGNIFICANT_DIGITS))
        .otherwise(pl.col(c))
        .alias(c)
        for c in floats
    )


def equals(field: str, value: Any) -> alt.FieldEqualPredicate:
    """A filter keeping rows whose ``field`` equals ``value`` (no expression string, so any value is safe)."""
    return alt.FieldEqualPredicate(field=field, equal=value)
