"""A chip or a provider keeps its colour on every chart, and a legend lists only what the chart draws."""

from __future__ import annotations

import polars as pl

from econ.report.charts import chip_color, provider_color
from econ.report.figures import MAX_SERIES, legend_problems


def colours(color) -> dict[str, str]:
    scale = color.to_dict()["scale"]
    return dict(zip(scale["domain"], scale["range"], strict=True))


def test_a_chip_has_one_colour_whichever_chips_share_its_chart():
    few, many = colours(chip_color(["B200", "H100"])), colours(chip_color(["MI355X", "B200", "TPU7x", "H100", "X9"]))
    assert few["B200"] == many["B200"] and few["H100"] == many["H100"]
    assert list(few) == ["H100", "B200"]  # the legend: only the chips drawn, in the site's order
    assert len(set(many.values())) == len(many)  # distinct within a chart, an unknown chip included


def test_a_provider_has_one_colour_on_every_chart():
    assert colours(provider_color(["openai", "anthropic"]))["openai"] == colours(provider_color(["openai"]))["openai"]


def test_a_legend_of_more_than_ten_series_is_refused():
    spec = {"mark": "line", "encoding": {"color": {"field": "model", "type": "nominal"}}}
    wide = pl.DataFrame({"model": [f"m{i}" for i in range(MAX_SERIES + 1)]})
    assert legend_problems(spec, wide) == [f"color legend of 'model' has {MAX_SERIES + 1} series (at most 10)"]
    assert legend_problems(spec, wide.head(MAX_SERIES)) == []
    labelled = {"mark": "line", "encoding": {"color": {"field": "model", "type": "nominal", "legend": None}}}
    assert legend_problems(labelled, wide) == []  # lines labelled at their ends instead of a legend
