"""Scenarios: one typed object per scenario; a scenario inherits base's rows; missing or misspelt ones are errors."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from econ.analyses.scenario import CATEGORICAL, NUMERIC, load_scenario, scenarios_from_frame
from econ.errors import EconError
from tests.analyses.helpers import FIXTURE_DATA

COLUMNS = ["scenario", "name", "value", "text", "unit", "low", "high", "alternatives", "rationale", "source_url"]
REQUIRED = [n for n, d in NUMERIC.items() if d is None]


def rows(**override) -> list[tuple]:
    """One base row per required numeric field (value 1), the serving chip, and ``override`` as (scenario, name)."""
    out = {("base", n): ("base", n, 1.0, None, "x", None, None, None, "test", "https://x") for n in REQUIRED}
    out[("base", "usd_per_chip_hour")] = (
        "base",
        "usd_per_chip_hour",
        2.0,
        None,
        "USD/chip-hour",
        1.5,
        4.0,
        None,
        "lecture a.4",
        "https://x",
    )
    out[("base", "serving_chip")] = (
        "base",
        "serving_chip",
        None,
        "GB200",
        "chip",
        None,
        None,
        "H100| B200 |",
        "lecture a.2",
        "https://x",
    )
    out[("base", "cost_share_inference_frac")] = (
        "base",
        "cost_share_inference_frac",
        1 / 3,
        None,
        "fraction",
        None,
        0.5,
        None,
        "lecture e.2",
        "https://x",
    )
    out[("dwarkesh_50_50", "cost_share_inference_frac")] = (
        "dwarkesh_50_50",
        "cost_share_inference_frac",
        0.5,
        None,
        "fraction",
        0.25,
        0.5,
        None,
        "Dwarkesh's split",
        "https://y",
    )
    for key, row in override.items():
        scenario, name = key.split("__")
        if row is None:
            out.pop((scenario, name), None)
        else:
            out[(scenario, name)] = (scenario, name, *row)
    return list(out.values())


def frame(**override) -> pl.DataFrame:
    return pl.DataFrame(rows(**override), schema=COLUMNS, orient="row")


def test_fields_are_typed_and_named_as_in_the_data():
    base, other = (scenarios_from_frame(frame())[n] for n in ("base", "dwarkesh_50_50"))
    assert (base.cost_share_inference_frac, other.cost_share_inference_frac) == (pytest.approx(1 / 3), 0.5)
    assert other.usd_per_chip_hour == 2.0 and other.serving_chip == "GB200"
    assert other.assumption("cost_share_inference_frac").source_url == "https://y"


def test_decode_and_prefill_efficiencies_are_separate_fields_with_the_pure_roofline_as_default():
    s = scenarios_from_frame(frame(base__decode_mfu_frac=(0.5, None, "fraction", None, None, None, "t", "u")))["base"]
    assert (s.decode_mfu_frac, s.prefill_mfu_frac, s.decode_mbu_frac, s.prefill_mbu_frac) == (0.5, 1.0, 1.0, 1.0)
    assert {"prefill_mfu_frac", "decode_mbu_frac", "prefill_mbu_frac"} <= set(s.defaulted)
    assert "decode_mfu_frac" not in s.defaulted


def test_range_falls_back_to_the_value_where_a_bound_is_blank():
    base = scenarios_from_frame(frame())["base"]
    assert base.range("usd_per_chip_hour") == (1.5, 4.0)
    assert base.range("cost_share_inference_frac") == (pytest.approx(1 / 3), 0.5)
    assert base.range("gross_margin_frac") == (0.0, 0.0)  # defaulted: no range


def test_alternatives_are_split_trimmed_and_follow_the_value():
    assert scenarios_from_frame(frame())["base"].alternatives("serving_chip") == ("GB200", "H100", "B200")


def test_the_declared_fields_are_the_dataclass_fields():
    s = scenarios_from_frame(frame())["base"]
    assert all(hasattr(s, n) for n in (*NUMERIC, *CATEGORICAL))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"base__usd_per_chip_hour": None},
            "scenario 'base' has no assumption 'usd_per_chip_hour' — add a row 'base,usd_per_chip_hour,…' to "
            "data/scenarios.csv",
        ),
        (
            {"base__serving_chip": None},
            "scenario 'base' has no assumption 'serving_chip' — add a row 'base,serving_chip,,<value>,…' to "
            "data/scenarios.csv (text column)",
        ),
        (
            {"base__weight_format": (None, "fp6", "format", None, None, None, "t", "u")},
            "scenario 'base' sets weight_format to 'fp6', not a number format econ can use here — use one of bf16, "
            "fp8, "
            "int8, fp4 in data/scenarios.csv",
        ),
        (
            {"base__context_share_1024_tokens_frac": (0.5, None, "fraction", None, None, None, "t", "u")},
            "the context_share_*_tokens_frac assumptions of scenario 'base' add up to 0.5 — make the shares of the "
            "prompt-length mix add up to 1 in data/scenarios.csv",
        ),
    ],
)
def test_errors_for_people(override, message):
    with pytest.raises(EconError) as e:
        scenarios_from_frame(frame(**override))
    assert str(e.value) == message


def test_the_prompt_mix_defaults_to_one_context():
    s = scenarios_from_frame(frame())["base"]
    assert s.context_shares == ((32_000.0, 1.0),) and "context_share_*_tokens_frac" in s.defaulted


def test_load_scenario_reads_the_database_and_names_the_known_ones():
    con = duckdb.connect()
    con.register("rows", frame().to_arrow())
    con.execute("create table scenarios as select * from rows")
    assert load_scenario(con, "dwarkesh_50_50").cost_share_inference_frac == 0.5
    with pytest.raises(EconError, match=r"^no scenario 'bear' — known scenarios: base, dwarkesh_50_50$"):
        load_scenario(con, "bear")


def test_the_fixture_and_shipped_scenarios_read(fixture_db):
    from econ.load.loader import load_all

    for data in (FIXTURE_DATA, FIXTURE_DATA.parents[2] / "data"):
        scenarios = scenarios_from_frame(load_all(data)["scenarios"])
        assert scenarios["base"].usd_per_chip_hour == 2.0


@pytest.mark.parametrize(
    ("name", "value", "basis"),
    [
        ("decode_mbu_frac", 1.0, "bound"),
        ("decode_mbu_frac", 0.8, "assumed"),
        ("expert_mbu_frac", 1.0, "bound"),
        ("expert_mbu_frac", 0.7, "assumed"),  # the routed experts' weight reads alone below peak
        ("attention_mfu_frac", 0.6, "assumed"),
        ("layer_overhead_s", 3e-5, "assumed"),
        ("sequence_overhead_s", 3e-5, "assumed"),
    ],
)
def test_a_scenario_is_the_bound_only_while_it_states_no_efficiency_below_peak_and_no_fixed_cost(name, value, basis):
    """A base that times one kernel class below peak, or adds a cost per layer or per sequence, is no roofline:
    its numbers are labelled assumed (a class's own efficiency left unset, NaN, takes the pool's 1 and stays bound)."""
    unit = "s" if name.endswith("_s") else "fraction"
    s = scenarios_from_frame(frame(**{f"base__{name}": (value, None, unit, None, None, None, "t", "u")}))["base"]
    assert s.efficiency_basis == basis
    assert scenarios_from_frame(frame())["base"].efficiency_basis == "bound"
