"""Prices page: checked against the input files read independently (csv module, raw JSON), not the page's own SQL."""

from __future__ import annotations

import csv
import json
import math
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from ..conftest import AS_OF, XSS_MODEL
from ..html_tables import read_tables
from ..price_maps import LITELLM_NEW, LITELLM_OLD


def current_hand_rows(data_dir: Path) -> list[dict]:
    with (data_dir / "prices.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return [
        r
        for r in rows
        if date.fromisoformat(r["from_date"]) <= AS_OF
        and (not r["to_date"] or date.fromisoformat(r["to_date"]) > AS_OF)
    ]


def test_first_party_table_has_every_current_hand_row(built_report, report_data):
    table = read_tables(built_report / "prices.html")["first-party-prices"]
    expected = sorted(
        (r["provider"], r["model"], r["variant"], r["tier_min_prompt_tokens"]) for r in current_hand_rows(report_data)
    )
    shown = sorted(
        (r["Provider"], r["Model"], r["Variant"], r["Prompt above (tokens)"].replace(",", "")) for r in table
    )
    assert shown == expected
    assert len(shown) == 6  # 4 fixture rows + 2 hostile ones; the synthetic earlier period has ended
    opus = next(r for r in table if r["Model"] == "claude-opus-4-6" and r["Variant"] == "standard")
    assert (opus["Input (USD/MTok)"], opus["Output (USD/MTok)"], opus["Cache write 5 min (USD/MTok)"]) == (
        "5",
        "25",
        "6.25",
    )
    assert any(r["Model"] == XSS_MODEL for r in table)  # shown as text


def test_ratio_bins_match_a_hand_count_of_the_first_party_ratios(built_report):
    """Hand rows: opus 25/5 = 5 and 150/30 = 5, gemini 12/2 = 6 and 18/4 = 4.5, hostile rows 3/1 = 3 and 8/2 = 4."""
    bins = pl.read_csv(built_report / "prices" / "io-ratio.csv.gz").filter(pl.col("source") == "hand")
    got = {(round(r["ratio_low"], 3), round(r["ratio_high"], 3)): r["price_rows"] for r in bins.iter_rows(named=True)}
    s2 = math.sqrt(2)
    assert got == {(round(2 * s2, 3), 4.0): 1, (4.0, round(4 * s2, 3)): 4, (round(4 * s2, 3), 8.0): 1}


def test_scatter_plots_every_current_first_party_price(built_report, report_data):
    data = pl.read_csv(built_report / "prices" / "io-scatter.csv.gz")
    assert data.height == len(current_hand_rows(report_data))
    assert (
        data["output_over_input_ratio"] - data["output_usd_per_mtok"] / data["input_usd_per_mtok"]
    ).abs().max() < 1e-12


def snapshot_prices(path: Path) -> dict[tuple, tuple[float, float]]:
    with path.open(encoding="utf-8", newline="") as f:
        return {
            (r["provider"], r["model"], r["variant"], r["tier_min_prompt_tokens"]): (
                float(r["input_usd_per_mtok"]),
                float(r["output_usd_per_mtok"]),
            )
            for r in csv.DictReader(f)
        }


def test_change_counts_match_a_direct_comparison_of_the_two_litellm_snapshots(built_report, report_data):
    old = snapshot_prices(report_data / "snapshots" / f"litellm_{LITELLM_OLD[1].isoformat()}.csv")
    new = snapshot_prices(report_data / "snapshots" / f"litellm_{LITELLM_NEW[1].isoformat()}.csv")
    expected = {}
    for key in old.keys() & new.keys():
        for i, component in enumerate(("input", "output")):
            if new[key][i] != old[key][i]:
                direction = "cut" if new[key][i] < old[key][i] else "raised"
                expected[(component, direction)] = expected.get((component, direction), 0) + 1
    changes = pl.read_csv(built_report / "prices" / "changes.csv.gz")
    litellm_day = changes.filter(pl.col("change_date") == LITELLM_NEW[1].isoformat())
    got = {(r["component"], r["direction"]): r["price_rows"] for r in litellm_day.iter_rows(named=True)}
    assert got == expected and sum(expected.values()) > 100


def test_a_known_price_cut_is_in_the_history_download(built_report):
    """LiteLLM's azure/gpt-4o-mini input went from 1.65e-7 to 1.5e-7 USD per token between the two maps."""
    old = json.loads(LITELLM_OLD[0].read_text())["azure/gpt-4o-mini"]["input_cost_per_token"]
    new = json.loads(LITELLM_NEW[0].read_text())["azure/gpt-4o-mini"]["input_cost_per_token"]
    history = pl.read_csv(built_report / "prices" / "price-history.csv.gz", infer_schema_length=None)
    row = history.filter((pl.col("model") == "azure/gpt-4o-mini") & pl.col("prev_from_date").is_not_null()).row(
        0, named=True
    )
    assert row["prev_input_usd_per_mtok"] == pytest.approx(old * 1e6, rel=5e-6)  # the CSV keeps 6 significant digits
    assert row["input_usd_per_mtok"] == pytest.approx(new * 1e6, rel=5e-6)
    assert row["input_change_frac"] == pytest.approx(new / old - 1, rel=5e-6)


def test_recent_changes_are_newest_first(built_report):
    table = read_tables(built_report / "prices.html")["recent-changes"]
    assert 0 < len(table) <= 40
    dates = [r["New from"] for r in table]
    assert dates == sorted(dates, reverse=True)
    assert all(r["Input change (%)"] or r["Output change (%)"] for r in table)


def test_full_tables_are_downloads_not_page_rows(built_report):
    current = pl.read_csv(built_report / "prices" / "current-prices.csv.gz", infer_schema_length=None)
    assert current.height > 3000  # thousands of imported rows live in the CSV …
    html = (built_report / "prices.html").read_text(encoding="utf-8")
    assert html.count("<tr>") < 400  # … not in the page
