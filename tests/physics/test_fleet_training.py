"""Training on a fleet against published runs, and the serving/training split against hand arithmetic."""

from __future__ import annotations

import pytest

from econ.physics import fleet_training as ft


def test_llama_405b_compute_matches_the_published_figure():
    """Epoch AI / Llama 3 paper: 405B parameters on 15.6T tokens, 3.8e25 FLOP."""
    assert ft.training_flop(405e9, 15.6e12) == pytest.approx(3.8e25, rel=0.01)


def test_llama_405b_chip_hours_against_the_model_card():
    """Llama 3.1 model card: 30.84M H100-80GB GPU-hours for the 405B model. At the scenario's 40% MFU of the bf16
    peak (989.4 TFLOP/s) the bare 6ND arithmetic gives 26.6M; the card's figure includes restarts, failures and the
    long-context phases, so we expect to be low by about 15% (tolerance 20%)."""
    hours = ft.chip_hours(ft.training_flop(405e9, 15.6e12), 989.4e12, 0.4)
    assert hours == pytest.approx(30.84e6, rel=0.20)
    assert hours < 30.84e6
    # on the 16,384 GPUs of the paper's largest runs: about 68 days of pure compute
    assert ft.days_on_chips(hours, 16_384) == pytest.approx(hours / 16_384 / 24)
    assert 60 < ft.days_on_chips(hours, 16_384) < 75


def test_rl_costs_more_chip_hours_per_flop_at_lower_efficiency():
    """Lecture e.2: RL at c_RL = 4 and 45% of pre-training's efficiency costs (4/6)/0.45 = 1.48x a pre-training
    token."""
    pre = ft.chip_hours(ft.training_flop(1e11, 1e12), 2.5e15, 0.4)
    rl = ft.chip_hours(ft.training_flop(1e11, 1e12, 4.0), 2.5e15, 0.4, 0.45)
    assert rl / pre == pytest.approx(4 / 6 / 0.45)


def test_energy_of_a_run():
    """1M chip-hours at 700 W x 1.82 (DGX H100 10.2 kW / 5.6 kW) x PUE 1.2 = 1,529 MWh."""
    assert ft.energy_mwh(1e6, 700, 1.82, 1.2) == pytest.approx(1e6 * 700 * 1.82 * 1.2 / 1e6)


@pytest.mark.parametrize(
    ("training_chip_hours", "shared", "on_idle"),
    [
        (10_000.0, 200.0, 0.5),  # half the training fits in the 5,000 idle serving chip-hours
        (4_000.0, 150.0, 1.0),  # all of it does: no dedicated training chips
        (0.0, 150.0, 0.0),
    ],
)
def test_time_sharing_serving_by_day_training_by_night(training_chip_hours, shared, on_idle):
    """100 chips of mean serving load, peak/mean 1.5, a 100-hour period: 150 peak chips idle 50 x 100 = 5,000
    chip-hours; separate fleets need 150 + H/100 chips."""
    out = ft.time_shared_fleet(100.0, 1.5, training_chip_hours, 100.0)
    assert out["serving_peak_chips"] == 150.0
    assert out["fleet_chips_separate"] == pytest.approx(150.0 + training_chip_hours / 100)
    assert out["fleet_chips_time_shared"] == pytest.approx(shared)
    assert out["training_on_idle_serving_frac"] == pytest.approx(on_idle)
    assert out["serving_share_separate_frac"] + out["training_share_separate_frac"] <= 1.0
    # serving's share of the fleet is its mean load; sharing shrinks the fleet, so serving's share grows
    assert out["serving_share_time_shared_frac"] == pytest.approx(100.0 / shared)
