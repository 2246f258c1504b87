"""Sources page: every hand-kept source URL is there (read from the CSVs independently), scenarios and formulas too."""

from __future__ import annotations

import csv
import gzip
from html import escape

import pytest

from econ.catalog import all_formulas

from ..html_tables import read_tables

HAND_TABLES = ["hardware", "rental_prices", "models", "memory_tiers", "scenarios", "scaling_law_points", "deployments"]


def csv_rows(path):
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("name", HAND_TABLES)
def test_every_source_url_of_a_hand_kept_table_is_linked_with_its_row_count(built_report, report_data, name):
    rows = csv_rows(report_data / f"{name}.csv")
    html = (built_report / "sources.html").read_text(encoding="utf-8")
    for url in {r["source_url"] for r in rows}:
        assert f'href="{escape(url)}"' in html, url
    summary = {(r["Table"], r["Origin"]): r for r in read_tables(built_report / "sources.html")["source-summary"]}
    assert summary[(name, "hand")]["Rows"] == f"{len(rows):,}"
    assert summary[(name, "hand")]["Distinct sources"] == str(len({r["source_url"] for r in rows}))


def test_price_sources_are_split_by_origin_with_snapshot_dates(built_report):
    summary = {(r["Table"], r["Origin"]): r for r in read_tables(built_report / "sources.html")["source-summary"]}
    assert summary[("prices", "openrouter")]["Earliest"] == summary[("prices", "openrouter")]["Latest"] == "2026-08-19"
    assert (summary[("prices", "litellm")]["Earliest"], summary[("prices", "litellm")]["Latest"]) == (
        "2025-09-01",
        "2026-11-20",
    )
    per_table = read_tables(built_report / "sources.html")["sources"]
    assert (
        sum(1 for r in per_table if (r["Table"], r["Origin"]) == ("prices", "litellm")) == 12
    )  # the rest is in the CSV
    assert gzip.decompress((built_report / "sources" / "data-sources.csv.gz").read_bytes()).count(b"\n") > 100


def test_hostile_source_url_is_text_not_a_link(built_report):
    rows = read_tables(built_report / "sources.html")["sources"]
    assert any(r["Source"] == "javascript:alert(3)" for r in rows)
    assert 'href="javascript:' not in (built_report / "sources.html").read_text(encoding="utf-8")


def test_every_formula_is_listed_with_its_source_and_function(built_report):
    """The page lists every @formula of the code (read here from the functions, not from the database)."""
    rows = read_tables(built_report / "sources.html")["formulas"]
    assert [(r["Function"], r["Formula"], r["Source"]) for r in rows] == [
        (f.function, f.text, f.source) for f in all_formulas()
    ]
    kv = next(r for r in rows if r["Function"] == "econ.fits.context_readings.kv_bytes_at_crossover")
    assert kv["Formula"] == "b_kv = b_w·N_act / (R·L*)" and kv["Source"] == "lecture f.1"
    assert "fit_context_tiers.kv_crossover_bytes_per_token" in kv["Result columns"]


def test_scenarios_show_value_range_rationale_and_source(built_report, report_data):
    expected = {(r["scenario"], r["name"]): r for r in csv_rows(report_data / "scenarios.csv")}
    shown = read_tables(built_report / "sources.html")["scenarios"]
    assert len(shown) == len(expected)
    gpu = next(r for r in shown if r["Assumption"] == "usd_per_chip_hour")
    assert gpu["Value (low–high), unit"] == "2 (1.5–4) USD/GPU-hour"  # the fixture writes the unit so
    assert gpu["Rationale"] == expected[("base", "usd_per_chip_hour")]["rationale"]
    chip = next(r for r in shown if r["Assumption"] == "serving_chip")
    assert chip["Value (low–high), unit"] == "B200; or H100, B200 chip"


def test_tables_and_views_are_listed_with_descriptions(built_report):
    rows = {r["Name"]: r for r in read_tables(built_report / "sources.html")["tables"]}
    assert rows["data_sources"]["Kind"] == "view" and rows["prices"]["Kind"] == "table"
    assert "Grain: one row per accelerator" in rows["hardware"]["Description and grain"]


def test_every_input_table_is_listed(built_report):
    """Issue 6: every data table's sources; a table added to the loader must join the data_sources view."""
    from econ.load.tables import INPUT_TABLES

    listed = {r["Table"] for r in read_tables(built_report / "sources.html")["source-summary"]}
    assert set(INPUT_TABLES) <= listed
