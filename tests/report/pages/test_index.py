"""Index page: headline figures against the lecture's numbers, each linked to its page, and the scenario."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from econ import catalog
from econ.report.page import SiteContext
from econ.report.pages import index

from ..html_tables import read_tables


@pytest.mark.parametrize(
    ("chip", "expected", "source"),
    [
        ("H100", 295, "lecture b.1 table: H100 R = 295"),
        ("TPU-v5e", 240, "scaling book roofline.md: TPU v5e critical intensity 240"),
    ],
)
def test_dense_balance_batch_matches_the_published_critical_batch(built_report, chip, expected, source):
    rows = {r["For"]: r for r in read_tables(built_report / "index.html")["headline-balance_batch-rows"]}
    assert float(rows[chip]["Value (sequences per step)"]) == pytest.approx(expected, rel=0.01), source


def test_every_headline_comes_from_its_page_and_links_to_it(built_report):
    html = (built_report / "index.html").read_text(encoding="utf-8")
    tables = read_tables(built_report / "index.html")
    for key, page in (
        ("balance_batch", "serving"),
        ("kv_bytes_per_token", "context-pricing"),
        ("cache_tier", "io-cache"),
        ("over_training", "training"),
        ("data_age", "prices"),
    ):
        assert tables[f"headline-{key}-rows"], key
        assert f'<section class="card" id="headline-{key}">' in html and f'href="{page}.html">details</a>' in html


def test_scenario_used_is_shown_with_ranges(built_report):
    rows = {r["Assumption"]: r for r in read_tables(built_report / "index.html")["scenario"]}
    assert (
        rows["usd_per_chip_hour"]["Value"],
        rows["usd_per_chip_hour"]["Low"],
        rows["usd_per_chip_hour"]["High"],
    ) == (
        "2",
        "1.5",
        "4",
    )
    assert rows["serving_chip"]["Value"] == "B200"


def small_db(weight_format: str | None) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.sql("""create table hardware_derived as select * from (values
        ('H100', 'bf16', 2.0, 295.3), ('H100', 'fp8', 1.0, 295.4),
        ('A100', 'bf16', 2.0, 155.0), ('A100', 'int8', 1.0, 155.0),
        ('B300', 'bf16', 2.0, 292.2), ('B300', 'fp8', 1.0, 292.2), ('B300', 'fp4', 0.5, 454.6)
        ) as t (chip, number_format, weight_bytes_per_param, critical_batch_ratio)""")
    con.sql(
        "create table scenarios (scenario varchar, name varchar, value double, text varchar, unit varchar, low double, "
        "high double, alternatives varchar, rationale varchar, source_url varchar)"
    )
    if weight_format:
        con.sql(
            f"insert into scenarios values ('base', 'weight_format', null, '{weight_format}', 'format', null, null, "
            "'bf16|fp8|fp4', 'r', 'https://example.org')"
        )
    con.register("formulas_frame", catalog.frames()["formulas"].to_arrow())
    con.sql("create table formulas as select * from formulas_frame")
    return con


@pytest.mark.parametrize(
    ("weight_format", "expected"),
    [
        (None, {"A100": ("155", "", "bf16"), "B300": ("292", "", "bf16"), "H100": ("295", "", "bf16")}),
        (
            "fp8",
            {
                "A100": ("155", "", "bf16: no fp8, value at bf16"),
                "B300": ("292", "292–455", "bf16, fp8, fp4"),
                "H100": ("295", "", "bf16, fp8"),
            },
        ),
    ],
)
def test_balance_batch_uses_the_scenarios_weight_format_and_its_alternatives(weight_format, expected):
    ctx = SiteContext(con=small_db(weight_format), as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30))
    headline = index._dense_balance_batch(ctx)
    assert {r.subject: (r.value, r.interval, r.note) for r in headline.rows} == expected
    assert headline.title.endswith(f"{weight_format or 'bf16'} weights)")
