"""Serving charts: the contract holds, axes are log, B*₀ and the latency floor are drawn where the data puts them."""

from __future__ import annotations

import polars as pl
import pytest

from econ.report.charts import serving as charts
from econ.report.figures import _unit_specs, chart_problems

MODELS = ["DeepSeek-V3", "Llama-3.1-70B"]
CHIPS = ["H100", "B200"]
CURVES = pl.DataFrame(
    [
        {
            "model": m,
            "chip": c,
            "context_tokens": 32768,
            "replica_chips": 8,
            "batch_seqs": b,
            "decode_step_time_s": 0.02 * b**0.5,
            "output_usd_per_mtok": 10.0 / b**0.5,
            "decode_bound": "memory" if b < 512 else "compute",
            "fit": "fits" if b < 4096 else "does not fit",
        }
        for m in MODELS
        for c in CHIPS
        for b in (1, 64, 4096)
    ]
)
# Lecture b.2: DeepSeek-V3's B*0 = R x 671/37; a dense model's B*0 = R (about 300).
MARKS = pl.DataFrame(
    {
        "model": MODELS * 2,
        "chip": ["H100", "H100", "B200", "B200"],
        "balance_batch_seqs": [5357.0, 295.0, 5299.0, 292.0],
        "latency_floor_s": [0.031, 0.026, 0.027, 0.011],
    }
)
BALANCE = MARKS.select(
    "chip",
    "model",
    pl.lit("fp8").alias("number_format"),
    "balance_batch_seqs",
    (pl.col("balance_batch_seqs") / pl.when(pl.col("model") == "DeepSeek-V3").then(671 / 37).otherwise(1.0)).alias(
        "critical_batch_ratio"
    ),
)
DRAIN = pl.DataFrame(
    {
        "chip": CHIPS,
        "hbm_drain_time_s": [80e9 / 3.35e12, 180e9 / 7.7e12],
        "hbm_capacity_bytes": [80e9, 180e9],
        "hbm_bandwidth_bytes_per_s": [3.35e12, 7.7e12],
    }
)
FIT = pl.DataFrame(
    {
        "model": ["Llama-3.1-70B"] * 3,
        "chip": ["B200"] * 3,
        "replica_chips": [1] * 3,
        "context_tokens": [1024, 8192, 131072],
        "max_batch_seqs": [64, 8, None],
    }
)
ATTENTION = pl.DataFrame(
    {
        "model": ["DeepSeek-V3", "Llama-3.1-70B"],
        "attention": ["mla", "gqa"],
        "crossover_context_tokens": [14808.5, 53405.8],
        "crossover_context_absorbed_mla_tokens": [4355.4, 53405.8],
        "attention_over_weight_flop_at_128k_ratio": [8.85, 2.45],
    }
)


def roofline(metric):
    return charts.roofline_panels(CURVES, MARKS, metric=metric, models=MODELS, chips=CHIPS)


CHARTS = [
    pytest.param(lambda: roofline("latency"), id="latency"),
    pytest.param(lambda: roofline("cost"), id="cost"),
    pytest.param(lambda: charts.balance_and_drain(BALANCE, DRAIN, models=MODELS), id="balance-drain"),
    pytest.param(lambda: charts.memory_fit(FIT, models=MODELS, context_tokens=32000.0), id="memory-fit"),
    pytest.param(lambda: charts.attention_crossover(ATTENTION, context_tokens=32000.0), id="attention"),
]


@pytest.mark.parametrize("make", CHARTS)
def test_every_serving_chart_meets_the_contract_and_the_schema(make):
    spec = make().to_dict(validate=True)
    assert chart_problems(spec) == []


def layers(spec):
    return [u for u in _unit_specs(spec) if "mark" in u]


def test_roofline_is_log_log_faceted_by_chip_with_the_regime_as_shape():
    spec = roofline("latency").to_dict()
    assert spec["facet"]["column"]["field"] == "chip" and spec["facet"]["column"]["sort"] == CHIPS
    line, points, balance, floor = layers(spec)
    for axis in ("x", "y"):
        assert points["encoding"][axis]["scale"]["type"] == "log"
    assert points["encoding"]["shape"]["field"] == "decode_bound"
    assert points["encoding"]["shape"]["scale"]["domain"] == ["memory", "compute", "communication"]
    assert points["encoding"]["opacity"]["field"] == "fit"
    assert (
        balance["encoding"]["x"]["field"] == "balance_batch_seqs"
        and floor["encoding"]["y"]["field"] == "latency_floor_s"
    )
    assert roofline("cost").to_dict()["spec"]["layer"][-1]["encoding"]["x"]["field"] == "balance_batch_seqs"  # no floor


def test_roofline_rules_sit_at_each_model_and_chips_b0_and_floor_once():
    rows = pl.DataFrame(roofline("latency").to_dict()["datasets"]["curves"])
    assert rows.height == CURVES.height  # every curve point once, marks joined onto it
    firsts = rows.filter(pl.col("first")).sort("chip", "model")
    expected = MARKS.sort("chip", "model")
    assert (
        firsts.select("chip", "model").rows() == expected.select("chip", "model").rows()
    )  # one rule per panel and model
    assert firsts["balance_batch_seqs"].to_list() == expected["balance_batch_seqs"].to_list()
    assert firsts["latency_floor_s"].to_list() == pytest.approx(expected["latency_floor_s"].to_list())
    deepseek = firsts.filter(pl.col("model") == "DeepSeek-V3")["balance_batch_seqs"] / 300
    assert (deepseek.round(1) >= 17.5).all()  # about 300 x 18 (lecture b.2), not 300 x 8


def test_binary_axis_labels_read_k_as_1024():
    assert "1048576" in charts.BINARY_LABELS and "1024" in charts.BINARY_LABELS
    axis = charts.binary_axis([1024, 32768]).to_dict()
    assert axis["values"] == [1024, 32768] and axis["labelExpr"] == charts.BINARY_LABELS


def test_drain_panel_is_capacity_over_bandwidth_and_the_balance_panel_is_log():
    spec = charts.balance_and_drain(BALANCE, DRAIN, models=MODELS).to_dict()
    left, right = spec["hconcat"]
    assert left["encoding"]["x"]["scale"]["type"] == "log"
    drain = pl.DataFrame(spec["datasets"]["drain"])
    assert drain["hbm_drain_time_s"].to_list() == pytest.approx([0.02388, 0.02338], rel=1e-3)  # "about 20 ms" (a.6)


def test_memory_fit_is_log_on_both_axes_and_marks_the_scenario_context():
    spec = charts.memory_fit(FIT, models=MODELS, context_tokens=32000.0).to_dict()
    lines, rule = spec["layer"]
    assert lines["encoding"]["x"]["scale"] == {"type": "log", "base": 2}
    assert lines["encoding"]["y"]["scale"] == {"type": "log", "base": 2}
    assert rule["data"] == {"name": "guide"}
    assert spec["datasets"]["guide"] == [{"context_tokens": 32000.0, "label": "scenario context"}]
    assert (
        len(charts.memory_fit(FIT, models=MODELS, context_tokens=None).to_dict()["layer"]) == 1
    )  # no scenario: no rule


def test_attention_chart_sorts_models_by_crossover_and_ticks_only_mla():
    spec = charts.attention_crossover(ATTENTION, context_tokens=None).to_dict()
    points, ticks = spec["layer"]
    assert points["encoding"]["y"]["sort"] == ["DeepSeek-V3", "Llama-3.1-70B"]
    assert ticks["transform"] == [{"filter": {"field": "attention", "equal": "mla"}}]
