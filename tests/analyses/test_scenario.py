"""Scenarios: a scenario inherits base's assumptions and overrides some; lookups fail with messages people can act
on."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from econ.analyses.scenario import load_scenario, scenarios_from_frame
from econ.errors import EconError

COLUMNS = ["scenario", "name", "value", "text", "unit", "low", "high", "alternatives", "rationale", "source_url"]
ROWS = [
    ("base", "gpu_usd_per_hour", 2.0, None, "USD/chip-hour", 1.5, 4.0, None, "lecture a.4", "https://x"),
    ("base", "cost_share_inference", 1 / 3, None, "fraction", None, 0.5, None, "lecture e.2", "https://x"),
    ("base", "serving_chip", None, "GB200", "chip", None, None, "H100| B200 |", "lecture a.2", "https://x"),
    ("dwarkesh_50_50", "cost_share_inference", 0.5, None, "fraction", 0.25, 0.5, None, "Dwarkesh's split", "https://y"),
]


@pytest.fixture
def scenarios():
    return scenarios_from_frame(pl.DataFrame(ROWS, schema=COLUMNS, orient="row"))


def test_a_scenario_overrides_base_and_inherits_the_rest(scenarios):
    base, other = scenarios["base"], scenarios["dwarkesh_50_50"]
    assert (base["cost_share_inference"], other["cost_share_inference"]) == (pytest.approx(1 / 3), 0.5)
    assert other["gpu_usd_per_hour"] == 2.0 and other.text("serving_chip") == "GB200"
    assert other.assumption("cost_share_inference").source_url == "https://y"


def test_range_falls_back_to_the_value_where_a_bound_is_blank(scenarios):
    assert scenarios["base"].range("gpu_usd_per_hour") == (1.5, 4.0)
    assert scenarios["base"].range("cost_share_inference") == (pytest.approx(1 / 3), 0.5)


def test_alternatives_are_split_and_trimmed(scenarios):
    assert scenarios["base"].assumption("serving_chip").alternatives == ("H100", "B200")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s["no_such"],
            "scenario 'dwarkesh_50_50' has no assumption 'no_such' — add a row 'base,no_such,…' to data/scenarios.csv",
        ),
        (
            lambda s: s["serving_chip"],
            "assumption 'serving_chip' of scenario 'dwarkesh_50_50' is categorical (GB200) — use Scenario.text()",
        ),
        (
            lambda s: s.text("gpu_usd_per_hour"),
            "assumption 'gpu_usd_per_hour' of scenario 'dwarkesh_50_50' is numeric — use scenario[name]",
        ),
    ],
)
def test_lookup_errors(scenarios, call, message):
    with pytest.raises(EconError) as e:
        call(scenarios["dwarkesh_50_50"])
    assert str(e.value) == message


def test_get_returns_the_default_for_missing_or_categorical(scenarios):
    assert scenarios["base"].get("nope", 7.0) == 7.0 and scenarios["base"].get("serving_chip") is None


def test_load_scenario_reads_the_database_and_names_the_known_ones():
    con = duckdb.connect()
    con.register("rows", pl.DataFrame(ROWS, schema=COLUMNS, orient="row").to_arrow())
    con.execute("create table scenarios as select * from rows")
    assert load_scenario(con, "dwarkesh_50_50")["cost_share_inference"] == 0.5
    with pytest.raises(EconError, match=r"^no scenario 'bear' — known scenarios: base, dwarkesh_50_50$"):
        load_scenario(con, "bear")
