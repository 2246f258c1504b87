"""Fleet page: its tables and charts checked against the input files (read with the csv module) and hand arithmetic."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl
import pytest

from econ.cli import main
from econ.report.html import fmt_num

from ..html_tables import number, read_tables
from ..test_site import PAGE_LIMIT_BYTES, Balance


@pytest.fixture(scope="module")
def fleet_build(built_db, built_report) -> tuple[Path, Path]:
    """(database, report) of the fixture data + real price maps (the report tests' build)."""
    return built_db, built_report


@pytest.fixture(scope="module")
def fleet_report(fleet_build) -> Path:
    return fleet_build[1]


def rows_of(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_page_is_well_formed_small_and_listed(fleet_report):
    html = (fleet_report / "fleet.html").read_text(encoding="utf-8")
    checker = Balance()
    checker.feed(html)
    assert checker.errors == [] and checker.stack == []
    assert (fleet_report / "fleet.html").stat().st_size < PAGE_LIMIT_BYTES
    assert '<a href="fleet.html">Fleet</a>' in (fleet_report / "index.html").read_text(encoding="utf-8")
    for slug in ("cost-breakdown", "margins", "frontier", "frontier-cost", "fleet-split"):
        assert f'id="fig-fleet-{slug}"' in html
        assert (fleet_report / "fleet" / f"{slug}.csv.gz").exists()


def test_plan_table_lists_every_deployment_with_its_traffic(fleet_report, report_data):
    """Deployments and the traffic share x tokens_served_per_s, read from the CSV files, not from the database."""
    deployments = rows_of(report_data / "deployments.csv")
    served = next(
        float(r["value"])
        for r in rows_of(report_data / "scenarios.csv")
        if r["scenario"] == "base" and r["name"] == "tokens_served_per_s"
    )
    table = read_tables(fleet_report / "fleet.html")["fleet-plan"]
    shown = {r["Deployment"]: number(r["Traffic (tokens/s)"]) for r in table}
    assert shown == {d["deployment"]: pytest.approx(float(d["traffic_share_frac"]) * served) for d in deployments}


def test_cost_breakdown_is_chips_times_price(fleet_report, report_data):
    """Each pool's $/day is its chips x the scenario's $2/chip-hour x 24 (scenarios.csv: usd_per_chip_hour)."""
    price = next(
        float(r["value"])
        for r in rows_of(report_data / "scenarios.csv")
        if r["scenario"] == "base" and r["name"] == "usd_per_chip_hour"
    )
    data = pl.read_csv(fleet_report / "fleet" / "cost-breakdown.csv.gz")
    assert set(data["pool"]) == {"prefill", "decode"}
    assert (data["usd_per_day"] - data["chips"] * price * 24).abs().max() < 1e-6


def test_frontier_points_trade_speed_per_user_for_throughput_per_chip(fleet_report):
    """Along each drawn curve (serving_frontier rows), faster per user means less throughput per chip."""
    data = pl.read_csv(fleet_report / "fleet" / "frontier.csv.gz").sort(
        "model", "chip", "number_format", "tokens_per_s_per_user"
    )
    for _, curve in data.group_by("model", "chip", "number_format"):
        assert curve.height >= 3
        assert (curve["tokens_per_s_per_chip"].diff().drop_nulls() <= 1e-9).all()


def test_econ_fleet_at_the_build_date_prints_what_the_page_shows(fleet_build, capsys):
    """The command plans with the build's own function at the date the database was built for (not today)."""
    db, reports = fleet_build
    shown = {r["Deployment"]: r for r in read_tables(reports / "fleet.html")["fleet-plan"]}["llama-70b-h100"]
    code = main(
        [
            "fleet",
            "--db",
            str(db),
            "--model",
            "Llama-3.1-70B",
            "--chip",
            "H100",
            "--tokens-per-s",
            repr(number(shown["Traffic (tokens/s)"])),
            "--decode-chips",
            shown["Decode chips per replica"],
            "--prefill-chips",
            shown["Prefill chips per replica"],
            "--number-format",
            shown["Format"],
            "--format",
            "json",
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    plan = json.loads(printed.out)
    assert plan["prices_as_of"] == "2026-11-30"  # the build's as_of (tests/report/conftest.py)
    scenario = plan["by_price_kind"]["scenario"]
    for value, column in (
        (plan["chips"], "Chips"),
        (plan["decode_batch_seqs"], "Decode batch (sequences)"),
        (scenario["usd_per_day"], "Cost (USD/day)"),
        (scenario["input_usd_per_mtok"], "Input cost (USD/MTok)"),
        (scenario["output_usd_per_mtok"], "Output cost (USD/MTok)"),
    ):
        assert fmt_num(value) == shown[column], column
    assert plan["batch_status"] == shown["Batch"] == "balance multiple, capped by memory"
