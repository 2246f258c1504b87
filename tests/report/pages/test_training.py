"""Training page: published constants, over-training from the fixture's configs, and the fitted law's isoFLOP
minima against the analysis's closed-form optimum (two methods)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from ..html_tables import read_tables
from ..specs import by, chart_spec, figure_text, number, rows, scenario_value

MODELS = by(rows("models"), "model")


def overtraining(model: str) -> float:
    """D / (k·N_act) from the fixture's reported tokens and k from the scenario (lecture e.4)."""
    m = MODELS[model]
    return (
        float(m["pretrain_tokens_t"])
        * 1e12
        / (scenario_value("chinchilla_tokens_per_param") * float(m["params_active_b"]) * 1e9)
    )


@pytest.mark.parametrize(
    ("law", "expected"),
    [
        ("hoffmann_2022", ("1.69", "406.4", "410.7", "0.34", "0.28")),  # Hoffmann et al. 2022, eq. 10
        ("besiroglu_2024", ("1.817", "482", "2085", "0.3478", "0.3658")),  # Epoch's replication, Table 1
    ],
)
def test_published_constants_are_shown_as_published(built_report, law, expected):
    row = by(read_tables(built_report / "training.html")["scaling-laws"], "Law")[law]
    shown = tuple(row[c].split(" (")[0] for c in ("E (nats/token)", "A", "B", "α", "β"))
    assert tuple(float(v) for v in shown) == pytest.approx(tuple(float(v) for v in expected), rel=1e-3)


def test_overtraining_factors_are_reported_tokens_over_k_times_active_params(built_report):
    table = by(read_tables(built_report / "training.html")["overtraining"], "Model")
    assert set(table) == {"DeepSeek-V3", "Llama-3.1-70B"}  # the fixture models with a reported token count
    for model, row in table.items():
        assert number(row["Over-training, active (×)"]) == pytest.approx(
            overtraining(model), rel=5e-3
        )  # 3 digits shown
    assert overtraining("Llama-3.1-70B") == pytest.approx(10.62, abs=0.01)  # 15T / (20 × 70.6B)


def test_each_isoflop_slice_bottoms_out_at_the_closed_form_optimum(built_report):
    """Second method: the minimum of the law drawn on a grid of N (SQL) vs compute_optimal's closed form (analysis)."""
    spec = chart_spec(built_report / "training.html", "isoflop")
    curves = pl.DataFrame(spec["datasets"]["curves"])
    optimum = pl.DataFrame(spec["datasets"]["optimum"])
    checked = 0
    for label, slice_ in curves.group_by("budget_label"):
        best = slice_.sort("loss_nats_per_token").row(0, named=True)
        if best["params"] in (slice_["params"].min(), slice_["params"].max()):
            continue  # the minimum lies outside the drawn range
        budget = float(label[0])
        opt = optimum.filter((pl.col("compute_flop") / budget - 1).abs() < 0.02)  # labels carry 2 digits
        assert opt.height == 1, label
        step = 10 ** (1 / 12)  # the grid's spacing in N
        assert abs(math.log(best["params"] / opt["params"][0])) <= math.log(step), label
        checked += 1
    assert checked >= 3


def test_isoflop_points_are_the_fixtures_chinchilla_runs(built_report):
    data = pl.read_csv(built_report / "training" / "isoflop.csv.gz")
    assert data.height == len(rows("scaling_law_points"))
    assert data["used_in_fit"].value_counts().sort("used_in_fit").rows() == [
        ("dropped", 5),
        ("fitted", 60),
    ]  # Epoch drops 5


def test_tornado_orders_assumptions_by_swing_and_names_the_ones_that_do_not_move_it(built_report):
    data = pl.read_csv(built_report / "training" / "tornado.csv.gz")
    swings = data.group_by("assumption", maintain_order=True).agg(pl.col("swing_decades").first())["swing_decades"]
    assert swings.to_list() == sorted(swings.to_list(), reverse=True) and (swings > 0).all()
    served = data.filter(pl.col("assumption") == "tokens_served_per_s").sort("end")
    assert served["value"].to_list()[0] / served["value"].to_list()[1] == pytest.approx(
        10.0
    )  # 1e9 / 1e8: linear in rate
    assert "rl_flop_per_param_token" in figure_text(
        built_report / "training.html", "tornado"
    )  # listed as not moving it


def test_every_chart_names_its_formula_section_and_source(built_report):
    for slug in ("isoflop", "compute-optimal", "overtraining", "sardana", "tornado"):
        text = figure_text(built_report / "training.html", slug)
        assert "Formula:" in text and "lecture §e" in text and "Data:" in text, slug
