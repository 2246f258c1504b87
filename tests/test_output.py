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
        (1, "chips", "1 chip"),
        (1.0, "ranks", "1 rank"),
        (1.0, "tokens/s", "1 tokens/s"),
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


@pytest.mark.parametrize("width", [50, 60, 100])
def test_render_fit_cuts_text_before_keys_and_never_cuts_a_key(width):
    """Issue 26: the price key was the column cut to fit. Now other text goes first; a key too wide still continues on
    the lines below, whole (each key is read back by joining its pieces)."""
    from econ.output import render_fit

    columns = ["provider", "model", "variants", "old_value"]
    keys = [("bedrock", "bedrock/ap-northeast-1/deepseek.v3.2", "batch, flex, priority, standard", 0.74),
            ("fireworks_ai", "fireworks_ai/accounts/fireworks/models/deepseek-v3p2", "standard", 0.56)]  # fmt: skip
    text = render_fit(columns, keys, width=width, keys=("provider", "model"), count=False)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    start = lines[0].index("model")
    at_end = lines[0].index("variants") - 2
    pieces = [line[start:at_end].strip() for line in lines[2:]]
    assert "".join(pieces) == "".join(k[1] for k in keys)  # every key whole, in order
    if width == 100:
        assert "…" in text or "batch, flex, priority, standard" in text


@pytest.mark.parametrize(
    ("value", "shown"),
    [(4e13, "40 T"), (1.7e10, "17 G"), (1048576.0, "1.049 M"), (12345.6, "12.35 k"), (7142.86, "7.143 k"),
     (999.5, "999.5"), (0.50001, "0.50001"), (-2.5e6, "-2.5 M"), (131072, "131072"), (float("inf"), "inf")],
)  # fmt: skip
def test_tables_for_people_read_large_floats_with_si_prefixes(value, shown):
    """Issue 26: 4e13 and 1.7e10 read as 40 T and 17 G in every table for people (csv and json keep the digits)."""
    assert render(["x"], [(value,)]).splitlines()[2].strip() == shown
    if value != float("inf"):
        assert render(["x"], [(value,)], fmt="csv").splitlines()[1] == str(value)
