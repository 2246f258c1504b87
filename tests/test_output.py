"""econ.output.render: every format on one table with blanks, non-finite floats, dates and awkward text."""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from decimal import Decimal

import pytest

from econ.output import render

COLUMNS = ["n", "s", "f", "d", "t"]
ROWS = [(1, None, float("nan"), date(2026, 1, 2), "a|b"), (2.5, "x", float("inf"), None, "two\nlines")]


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        (
            "table",
            "  n  s    f  d           t\n"
            "---  -  ---  ----------  ---------\n"
            "  1     NaN  2026-01-02  a|b\n"
            "2.5  x  inf              two lines\n"
            "(2 rows)",
        ),
        ("csv", 'n,s,f,d,t\n1,,,2026-01-02,a|b\n2.5,x,,,"two\nlines"'),
        (
            "markdown",
            "| n | s | f | d | t |\n|---|---|---|---|---|\n| 1 |  | NaN | 2026-01-02 | a\\|b |\n"
            "| 2.5 | x | inf |  | two lines |",
        ),
    ],
)
def test_formats(fmt, expected):
    assert render(COLUMNS, ROWS, fmt=fmt) == expected


def test_json_is_valid_with_nulls_for_blanks_and_non_finite_floats():
    result = json.loads(render(COLUMNS, ROWS, fmt="json"))
    assert result == [
        {"n": 1, "s": None, "f": None, "d": "2026-01-02", "t": "a|b"},
        {"n": 2.5, "s": "x", "f": None, "d": None, "t": "two\nlines"},
    ]


def test_csv_round_trips_through_a_csv_reader():
    rows = list(csv.reader(io.StringIO(render(COLUMNS, ROWS, fmt="csv"))))
    assert rows == [COLUMNS, ["1", "", "", "2026-01-02", "a|b"], ["2.5", "x", "", "", "two\nlines"]]


def test_decimal_and_empty_results():
    assert json.loads(render(["x"], [(Decimal("0.125"),)], fmt="json")) == [{"x": 0.125}]
    assert render(["x"], [], fmt="table") == "x\n-\n(0 rows)"
    assert render(["x"], [], fmt="json") == "[]"


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown format 'xml'"):
        render(["x"], [(1,)], fmt="xml")


@pytest.mark.parametrize("width", [50, 80, 200])
def test_render_fit_keeps_every_line_within_the_width(width):
    """The flexible column shrinks first, then the other text columns (widest first, to their header), then the
    flexible one again; numbers are never cut."""
    from econ.output import render_fit

    columns = ["provider", "model", "variant", "old_value", "new_value"]
    rows = [
        ("vertex_ai-mistral_models", "vertex_ai/mistral-small-2503@001-long-name", "standard", 3.0, 0.3),
        ("oci", "oci/xai.grok-3", "batch", 0.15, 15.0),
    ]
    text = render_fit(columns, rows, width=width, flexible="model", count=False)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert all(line.rstrip().endswith(("0.3", "15")) for line in lines[2:])  # the numbers are whole
    if width == 200:  # room for everything: nothing is cut
        assert "…" not in text and "vertex_ai/mistral-small-2503@001-long-name" in text


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (1_320_220.5, "USD/day", "1.32 M USD/day"),
        (2.5e7, "tokens/s", "25 M tokens/s"),
        (999_999.0, "W", "1 M W"),
        (8, "chips", "8 chips"),
        (131_072, "tokens", "131,072 tokens"),
        (12_000_000, "chips", "12 M chips"),
        (0.623, "frac", "62.3 %"),
        (0.0123, "ms", "0.0123 ms"),
        (1234.5, "", "1.23 k"),
        (None, "USD/day", ""),
        ("B200", "", "B200"),
    ],
)
def test_human(value, unit, expected):
    from econ.output import human

    assert human(value, unit) == expected
