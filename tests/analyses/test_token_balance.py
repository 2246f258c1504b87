"""token_balance and its sensitivity on the fixture scenario: the lecture's chain, dollars, directions."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

from econ.build import build
from econ.errors import EconError
from tests.analyses.helpers import AS_OF, FIXTURE_DATA, q


def balance(db, scenario="base") -> dict[str, tuple[float, float, float]]:
    rows = q(
        db,
        "select quantity, central_value, low_value, high_value from token_balance where scenario = ?",
        [scenario],
    )
    return {r[0]: r[1:] for r in rows.iter_rows()}


@pytest.mark.parametrize(
    "quantity, expected, rel",
    [
        ("lab_inference_tokens", 2.592e15, 1e-9),  # 5e8 tok/s × 2 months (Dwarkesh: 2.59e15)
        ("inference_tokens", 2.592e14, 1e-9),  # ÷ 10 models
        ("chinchilla_tokens", 2e12, 1e-12),  # 20 × 1e11
        ("alpha_ratio", 1.48, 0.01),  # (4/6)/0.45
        ("beta_ratio", 1.01, 0.01),  # (2/6)/0.33
        ("overtraining_ratio", 131, 0.01),  # ≈130 with D_pre ≈ D_inf ("≈100")
        ("pretrain_cost_frac", 1 / 3, 1e-9),
    ],
)
def test_the_lectures_chain_from_the_table(fixture_db, quantity, expected, rel):
    central, low, high = balance(fixture_db)[quantity]
    assert central == pytest.approx(expected, rel=rel)
    assert low <= central <= high


def test_dollar_figures_use_the_chip_mfu_and_price(fixture_db):
    """6·1e11·2.62e14 FLOP on B200 BF16 peak at 40 % MFU and $2/h (fixture hardware: 2.25e15 FLOP/s)."""
    peak = q(fixture_db, "select peak_bf16_flop_per_s from hardware where chip = 'B200'").item()
    flop = balance(fixture_db)["pretrain_cost_flop"][0]
    assert balance(fixture_db)["pretrain_cost_usd"][0] == pytest.approx(flop / (peak * 0.4) * 2 / 3600, rel=1e-12)


SENSITIVITY = [  # assumption raised → direction of the quantity (lecture §e; test_token_balance for the physics)
    ("tokens_served_per_s", "overtraining_ratio", "increases"),
    ("deployment_months", "overtraining_ratio", "increases"),
    ("models_per_family", "overtraining_ratio", "decreases"),
    ("model_discard_frac", "pretrain_tokens", "decreases"),
    ("cost_share_pretrain_frac", "pretrain_tokens", "increases"),
    ("cost_share_inference_frac", "pretrain_tokens", "decreases"),
    ("rl_flop_per_param_token", "alpha_ratio", "increases"),
    ("rl_efficiency_ratio", "rl_tokens", "increases"),
    ("decode_efficiency_ratio", "beta_ratio", "decreases"),
    ("chinchilla_tokens_per_param", "overtraining_ratio", "decreases"),
    ("frontier_active_params", "overtraining_ratio", "decreases"),
    ("frontier_active_params", "pretrain_tokens", "none"),
    ("equal_cost_exponent_ratio", "pretrain_tokens", "decreases"),
    ("usd_per_chip_hour", "lifetime_cost_usd", "increases"),
    ("pretrain_mfu_frac", "lifetime_cost_usd", "decreases"),
    ("pretrain_mfu_frac", "overtraining_ratio", "none"),
]


@pytest.mark.parametrize("assumption, quantity, direction", SENSITIVITY)
def test_sensitivity_directions(fixture_db, assumption, quantity, direction):
    row = q(
        fixture_db,
        "select * from token_balance_sensitivity where scenario = 'base' and assumption = ? and quantity = ?",
        [assumption, quantity],
    ).row(0, named=True)
    assert row["direction"] == direction
    assert row["swing_decades"] == pytest.approx(abs(np.log10(row["value_at_high"] / row["value_at_low"])))


def test_sensitivity_brackets_the_central_value_and_stays_inside_the_interval(fixture_db):
    sens = q(
        fixture_db,
        "select s.*, b.low_value, b.high_value from token_balance_sensitivity s join token_balance b "
        "using (scenario, quantity)",
    )
    lo = pl.min_horizontal("value_at_low", "value_at_high")
    hi = pl.max_horizontal("value_at_low", "value_at_high")
    bad = sens.filter(
        (lo > pl.col("central_value") * (1 + 1e-12))
        | (hi < pl.col("central_value") * (1 - 1e-12))
        | (lo < pl.col("low_value") * (1 - 1e-12))
        | (hi > pl.col("high_value") * (1 + 1e-12))
    )
    assert bad.height == 0, bad


def test_a_missing_assumption_is_an_error_for_people(tmp_path):
    data = tmp_path / "d"
    shutil.copytree(FIXTURE_DATA, data)
    sc = data / "scenarios.csv"
    kept = [line for line in sc.read_text().splitlines(keepends=True) if ",chinchilla_tokens_per_param," not in line]
    sc.write_text("".join(kept))
    with pytest.raises(EconError) as err:
        build(data_dir=data, db_path=tmp_path / "x.duckdb", cache_dir=None, reports_dir=None, as_of=AS_OF)
    assert str(err.value) == (
        "scenario 'base' has no assumption 'chinchilla_tokens_per_param' — "
        "add a row 'base,chinchilla_tokens_per_param,…' to data/scenarios.csv"
    )


def test_monte_carlo_percentiles_lie_inside_the_all_worst_ends_bound_and_are_far_narrower(fixture_db):
    """Issue 24: the over-training factor's likely range (5-95% over independent draws) sits inside the corners'
    bound, is decades narrower (every assumption at its worst end at once is not a likely range), and brackets the
    median."""
    rows = q(
        fixture_db,
        "select quantity, p5_value, p50_value, p95_value, low_value, high_value, draws from token_balance "
        "where scenario = 'base'",
    )
    for r in rows.iter_rows(named=True):
        assert r["low_value"] * (1 - 1e-9) <= r["p5_value"] <= r["p50_value"] <= r["p95_value"]
        assert r["p95_value"] <= r["high_value"] * (1 + 1e-9), r["quantity"]
    ot = rows.filter(pl.col("quantity") == "overtraining_ratio").row(0, named=True)
    assert np.log10(ot["p95_value"] / ot["p5_value"]) < np.log10(ot["high_value"] / ot["low_value"]) - 1.5
    assert ot["draws"] >= 1_000
