"""Training charts: contract and schema, log axes, and each mark where the data puts it."""

from __future__ import annotations

import polars as pl
import pytest

from econ.report.charts import training as charts
from econ.report.figures import _unit_specs, chart_problems

# Hoffmann et al. 2022 (Table A3 / eq. 10): E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28.
E, A, B, ALPHA, BETA = 1.69, 406.4, 410.7, 0.34, 0.28


def law(n, c):
    return E + A / n**ALPHA + B / (c / (6 * n)) ** BETA


POINTS = pl.DataFrame(
    {
        "params": [1e8, 4e8, 1e9],
        "training_flop": [1e19, 1e19, 1e20],
        "loss_nats_per_token": [3.1, 2.9, 2.7],
        "used_in_fit": ["fitted", "fitted", "dropped"],
        "budget_label": ["1.0e+19", "1.0e+19", "1.0e+20"],
    }
)
CURVES = pl.DataFrame(
    [
        {"budget_label": f"{c:.1e}", "params": n, "loss_nats_per_token": law(n, c)}
        for c in (1e19, 1e20)
        for n in (1e8, 3e8, 1e9, 3e9)
    ]
)
OPTIMUM = pl.DataFrame({"compute_flop": [1e19, 1e20], "params": [4.2e8, 1.2e9], "loss_nats_per_token": [2.95, 2.7]})
LINES = pl.DataFrame(
    {
        "law": ["refit"] * 2 + ["hoffmann_2022"] * 2,
        "compute_flop": [1e20, 1e24] * 2,
        "params": [1.1e9, 7e10, 1.0e9, 6e10],
        "tokens_per_param_ratio": [20.0, 21.0, 19.0, 20.0],
        "params_low": [1e9, 6e10, None, None],
        "params_high": [1.2e9, 8e10, None, None],
    }
)
MODELS = pl.DataFrame(
    {
        "model": ["Llama-3.1-70B", "DeepSeek-V3"],
        "params_active": [70.6e9, 37e9],
        "pretrain_tokens": [15e12, 14.8e12],
        "training_flop": [6 * 70.6e9 * 15e12, 6 * 37e9 * 14.8e12],
        "overtraining_active_ratio": [15e12 / (20 * 70.6e9), 14.8e12 / (20 * 37e9)],
        "overtraining_active_low_ratio": [15e12 / (25 * 70.6e9), 14.8e12 / (25 * 37e9)],
        "overtraining_active_high_ratio": [15e12 / (15 * 70.6e9), 14.8e12 / (15 * 37e9)],
        "overtraining_total_ratio": [15e12 / (20 * 70.6e9), 14.8e12 / (20 * 671e9)],
        "architecture": ["dense", "MoE"],
    }
)
GUIDES = pl.DataFrame({"label": ["compute-optimal (1×)", "lecture: ~100×"], "ratio": [1.0, 100.0]})
SARDANA = pl.DataFrame(
    [
        {
            "reference_label": ref,
            "form": form,
            "method": method,
            "inference_tokens": d,
            "params": 1e10,
            "tokens_per_param_ratio": 20.0 * (1 + d / 1e13),
            "excess_over_optimum_frac": 0.0,
        }
        for ref in ("13B", "70B")
        for form in ("compute", "cost")
        for method in ("optimum", "equal_cost")
        for d in (1e11, 1e13, 1e15)
    ]
)
AT_SCENARIO = SARDANA.filter(pl.col("inference_tokens") == 1e13)
TORNADO = pl.DataFrame(
    {
        "assumption": ["tokens_served_per_s", "tokens_served_per_s", "models_per_family", "models_per_family"],
        "end": ["low", "high", "low", "high"],
        "value": [26.2, 261.8, 261.8, 65.5],
        "central_value": [130.9] * 4,
        "swing_decades": [1.0, 1.0, 0.602, 0.602],
        "quantity_unit": ["ratio"] * 4,
        "assumption_range": ["1e+08–1e+09 tokens/s"] * 2 + ["5–20 models"] * 2,
    }
)

CHARTS = [
    pytest.param(lambda: charts.isoflop(POINTS, CURVES, OPTIMUM, law="hoffmann_2022"), id="isoflop"),
    pytest.param(lambda: charts.compute_optimal(LINES, MODELS), id="compute-optimal"),
    pytest.param(lambda: charts.overtraining(MODELS, GUIDES), id="overtraining"),
    pytest.param(lambda: charts.sardana(SARDANA, AT_SCENARIO, references=["13B", "70B"]), id="sardana"),
    pytest.param(
        lambda: charts.tornado(TORNADO, quantity="overtraining_ratio", unit="ratio", central=130.9), id="tornado"
    ),
]


@pytest.mark.parametrize("make", CHARTS)
def test_every_training_chart_meets_the_contract_and_the_schema(make):
    assert chart_problems(make().to_dict(validate=True)) == []


def marks(spec):
    return [u for u in _unit_specs(spec) if "mark" in u]


def test_isoflop_draws_data_slices_and_the_optimum_on_log_axes():
    spec = charts.isoflop(POINTS, CURVES, OPTIMUM, law="hoffmann_2022").to_dict()
    lines, runs, best = marks(spec)
    assert lines["encoding"]["x"]["scale"]["type"] == "log" and runs["encoding"]["shape"]["field"] == "used_in_fit"
    assert {d: len(v) for d, v in spec["datasets"].items()} == {"points": 3, "curves": 8, "optimum": 2}
    assert "hoffmann_2022" in spec["title"]


def test_compute_optimal_band_is_drawn_only_where_the_refit_has_one():
    spec = charts.compute_optimal(LINES, MODELS).to_dict()
    band, line, dots, labels = marks(spec)
    assert band["transform"] == [{"filter": "isValid(datum.params_low)"}]
    assert line["encoding"]["color"]["scale"]["domain"] == ["refit", "hoffmann_2022"]  # the refit first
    assert dots["encoding"]["x"]["field"] == "training_flop" and dots["encoding"]["y"]["field"] == "params_active"


def test_overtraining_orders_models_by_factor_and_draws_the_k_range():
    spec = charts.overtraining(MODELS, GUIDES).to_dict()
    rng, total, dots, rules, text = marks(spec)
    assert dots["encoding"]["y"]["sort"] == ["DeepSeek-V3", "Llama-3.1-70B"]  # 20.0x then 10.6x
    assert (
        rng["encoding"]["x"]["field"] == "overtraining_active_low_ratio"
        and rng["encoding"]["x2"]["field"] == "overtraining_active_high_ratio"
    )
    llama = next(r for r in spec["datasets"]["models"] if r["model"] == "Llama-3.1-70B")
    assert llama["overtraining_active_ratio"] == pytest.approx(10.62, abs=0.01)  # 15T / (20 x 70.6B)


def test_sardana_has_one_panel_per_reference_and_marks_the_scenario_demand():
    spec = charts.sardana(SARDANA, AT_SCENARIO, references=["13B", "70B"]).to_dict()
    assert [p["title"] for p in spec["hconcat"]] == ["Target: loss of a 13B model", "Target: loss of a 70B model"]
    line, mark = spec["hconcat"][0]["layer"]
    assert line["encoding"]["x"]["scale"]["type"] == "log" and line["encoding"]["strokeDash"]["field"] == "form"
    assert len(spec["datasets"]["scenario"]) == 8


def test_tornado_sorts_by_swing_and_starts_bars_at_the_central_value():
    spec = charts.tornado(TORNADO, quantity="overtraining_ratio", unit="ratio", central=130.9).to_dict()
    bars, center = spec["layer"]
    assert bars["encoding"]["y"]["sort"] == ["tokens_served_per_s", "models_per_family"]
    assert bars["encoding"]["x"]["field"] == "central_value" and bars["encoding"]["x2"]["field"] == "value"
    assert bars["encoding"]["x"]["scale"]["type"] == "log"
    assert spec["datasets"]["central"] == [{"central_value": 130.9, "label": "every assumption central"}]
