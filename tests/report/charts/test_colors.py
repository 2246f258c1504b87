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


def _lab(hex_colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* of an sRGB colour (D65), as the CIE and sRGB standards define them (IEC 61966-2-1)."""
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    r, g, b = (((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in (r, g, b))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_no_two_colours_of_a_palette_look_alike():
    """Issue 26: the serving frontier showed B300, MI355X and Trainium2 in three near-identical pinks. Every two
    chips (and every two providers, spare colours included) now differ by at least MIN_DELTA_E (CIE76; about 2.3 is
    a just-noticeable difference, and lines and small dots need far more)."""
    import itertools
    import math

    from econ.report.charts import CHIP_RANGE, MIN_DELTA_E, PROVIDER_RANGE, SPARE_RANGE

    for palette in (CHIP_RANGE, PROVIDER_RANGE + SPARE_RANGE):
        closest = min(math.dist(_lab(a), _lab(b)) for a, b in itertools.combinations(palette, 2))
        assert closest >= MIN_DELTA_E, closest
