"""HTML building blocks: data is escaped once, inline JSON cannot leave its script, numbers print stably."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from econ.report.html import (
    Col,
    Markup,
    drop_order,
    esc,
    fmt_interval,
    fmt_num,
    json_for_script,
    source_link,
    table,
    tag,
)

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(1)</script>",
    "<!-- <script>",
    "a \"quoted\" & 'single' value",
    "line\u2028separator\u2029paragraph",
]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("say \"hi\" & 'bye'", "say &quot;hi&quot; &amp; &#x27;bye&#x27;"),
        (None, ""),
        (3, "3"),
        (Markup("<b>kept</b>"), "<b>kept</b>"),
    ],
)
def test_esc(value, expected):
    assert esc(value) == expected


def test_tag_escapes_content_and_attributes():
    result = tag("td", "<b>", title='x" onmouseover="alert(1)', data_v="1", hidden=True, skipped=None)
    assert result == '<td title="x&quot; onmouseover=&quot;alert(1)" data-v="1" hidden>&lt;b&gt;</td>'


@pytest.mark.parametrize("value", HOSTILE)
def test_json_for_script_cannot_close_the_script_and_round_trips(value):
    obj = {"name": value, "nested": [value, {"k": value}]}
    text = json_for_script(obj)
    for forbidden in ("<", ">", "&", "\u2028", "\u2029"):
        assert forbidden not in text
    assert json.loads(text) == obj  # what the browser's JSON.parse gets back


def test_json_for_script_is_deterministic_and_refuses_nan():
    assert json_for_script({"b": 1, "a": [2, 3]}) == '{"a":[2,3],"b":1}'
    with pytest.raises(ValueError):
        json_for_script({"x": math.nan})


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://example.org/a?b=1&c=2",
            '<a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer" class="src">'
            "https://example.org/a?b=1&amp;c=2</a>",
        ),
        ("javascript:alert(3)", "javascript:alert(3)"),
        ("data:text/html,<script>alert(1)</script>", "data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;"),
        (
            "HTTPS://EXAMPLE.ORG",
            '<a href="HTTPS://EXAMPLE.ORG" rel="noopener noreferrer" class="src">HTTPS://EXAMPLE.ORG</a>',
        ),
        ("https://example.org/ x", "https://example.org/ x"),
    ],
)
def test_only_web_urls_become_links(url, expected):
    assert source_link(url) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.075, "0.075"),
        (15.0, "15"),
        (0.1 + 0.2, "0.3"),
        (1234567, "1,234,567"),
        (1234.5678, "1,235"),
        (2.5e-7, "2.5e-7"),
        (1e9, "1 G"),  # issue 26: SI prefixes from a million up
        (1.2345e15, "1.234 P"),
        (4e13, "40 T"),
        (1.7e10, "17 G"),
        (999_999.0, "999,999"),  # below a million: every whole digit
        (1_999_999.0, "2 M"),
        (2.5e24, "2.5e24"),  # FLOP counts keep their exponent
        (-0.5, "-0.5"),
        (0.0, "0"),
        (None, ""),
        (math.nan, ""),
        (math.inf, "∞"),
    ],
)
def test_fmt_num(value, expected):
    assert fmt_num(value) == expected


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(1.5, 4.0, "1.5–4"), (292.1, 292.2, ""), (None, 3.0, ""), (100.0, 1e9, "100–1 G")],
)
def test_fmt_interval(low, high, expected):
    assert fmt_interval(low, high) == expected


def test_table_escapes_cells_and_marks_numbers():
    frame = pl.DataFrame(
        {"model": HOSTILE[:2], "price": [1.5, None], "url": ["javascript:alert(1)", "https://x.org/p"]}
    )
    html = table(
        frame,
        [Col("model", "Model <name>"), Col("price", "Price (USD/MTok)", kind="num"), Col("url", "Source", kind="link")],
    )
    assert "<img" not in html and "</script><script>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert '<th class="key" scope="col">Model &lt;name&gt;</th>' in html  # the first text column: the row's key
    assert '<td class="n">1.5</td>' in html and '<td class="n"></td>' in html
    assert "<td>javascript:alert(1)</td>" in html and 'href="https://x.org/p"' in html
    assert html.count("<tr>") == 3 and 'class="data sortable"' in html


def test_custom_number_format_keeps_the_sort_value():
    frame = pl.DataFrame({"change": [0.25]})
    html = table(frame, [Col("change", "Change (%)", kind="num", fmt=lambda v: f"{v * 100:+.0f}%")])
    assert '<td class="n" data-v="0.25">+25%</td>' in html


def test_markup_plus_text_escapes_the_text_and_details_closes():
    from econ.report.html import details

    assert Markup("<p>") + "<b>" == "<p>&lt;b&gt;"
    assert Markup("<p>") + Markup("</p>") == "<p></p>"
    assert (
        details("More", Markup("<table></table>"))
        == '<details class="more"><summary>More</summary><table></table></details>'
    )


def test_the_narrow_view_hides_prose_links_constants_then_the_rest_and_a_kept_column_last():
    """A kept column holding one value in every row (a reading's status) is still hidden last: the closed models'
    'uninformative' beside their implied parameters used to go first, as a constant column."""
    cols = [
        Col("model", "Model"),
        Col("params", "Params", kind="num"),
        Col("status", "Status", keep=True),
        Col("why", "Why", wrap=True),
        Col("url", "Source", kind="link"),
        Col("unit", "Unit"),
        Col("other", "Other", kind="num"),
    ]
    constant = [False, False, True, False, False, True, False]
    # prose, link, the constant unit, then the others from the right; the kept status is the one column that stays
    assert drop_order(cols, keys=1, constant=constant) == [None, 5, None, 1, 2, 3, 4]


def test_a_changes_narrow_view_hides_the_old_value_then_the_new_one_then_the_change():
    """The What-changed tables at 1,400 px showed a change's old value with its new one hidden (long model ids leave
    room for five columns): kept columns go by level, the old value first, so what stays still reads."""
    from econ.report.pages.changes import CHANGE_COLS

    order = drop_order(CHANGE_COLS, keys=2)
    rank = {c.key: order[i] or len(order) for i, c in enumerate(CHANGE_COLS)}  # None: never hidden
    assert rank["old_value"] < rank["new_value"] < rank["change_frac"] < min(rank["change_class"], rank["component"])
    assert max(rank[c] for c in ("source", "variant", "tier_min_prompt_tokens", "window")) < rank["old_value"]
