"""Scale-up vs scale-out traffic (lecture c.1, c.2, c.5) against the lecture's numbers and an exact count."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from econ.physics import network


def exact_distinct_chips(experts: int, chips: int, k: int) -> float:
    """Expected distinct chips when k *different* experts (no replacement) are drawn from E spread evenly over E_p
    chips."""
    per_chip = experts // chips
    return chips * (1 - comb(experts - per_chip, k) / comb(experts, k))


@pytest.mark.parametrize(("experts", "chips", "k"), [(256, 64, 8), (128, 8, 4), (256, 8, 8), (64, 64, 2)])
def test_distinct_chips_close_to_exact_hypergeometric_count(experts, chips, k):
    """k_GPU = E_p(1-(1-1/E_p)^k) assumes independent picks; the exact count without replacement is within 5%."""
    approx = network.distinct_chips_per_token(chips, k)
    assert approx == pytest.approx(exact_distinct_chips(experts, chips, k), rel=0.05)
    assert approx <= min(k, chips)


def test_distinct_chips_monte_carlo():
    """Second method: simulate DeepSeek-V3 routing (8 of 256 experts, 4 per chip on 64 chips)."""
    rng = np.random.default_rng(0)
    picks = np.argsort(rng.random((20_000, 256)), axis=1)[:, :8] // 4
    simulated = np.mean([len(set(row)) for row in picks])
    assert simulated == pytest.approx(exact_distinct_chips(256, 64, 8), rel=0.005)
    # the formula treats the k picks as independent (a pick may repeat an expert), so it slightly undercounts
    assert network.distinct_chips_per_token(64, 8) == pytest.approx(simulated, rel=0.02)


def test_lecture_factor_of_eight():
    """Lecture c.5: with W_up/W_out = 8, need 2*k*L_stage >= 8; k=8 activated chips clears it with one layer."""
    assert network.scale_up_over_scale_out_time_ratio(8, 1, 8.0, 1.0) == pytest.approx(2.0)
    assert network.scale_up_over_scale_out_time_ratio(1, 4, 8.0, 1.0) == pytest.approx(1.0)
    assert network.min_layers_per_stage(8, 8.0, 1.0) == 1
    assert network.min_layers_per_stage(1, 8.0, 1.0) == 4
    assert network.min_layers_per_stage(np.array([1.0, 2.0, 8.0]), 8.0, 1.0).tolist() == [4, 2, 1]


def test_h100_bandwidth_ratio_is_nine_not_eight():
    """Lecture c.2 reference table: H100 NVLink 450 GB/s per direction over a 400 Gb/s NIC (50 GB/s) is 9."""
    assert 450e9 / (400e9 / 8) == pytest.approx(9.0)
    assert network.scale_up_over_scale_out_time_ratio(1, 1, 450e9, 50e9) == pytest.approx(2 / 9)


def test_expert_parallel_chips_on_nvl72():
    """Lecture c.1: 256 DeepSeek experts on a 72-GPU rack use 64 GPUs ("four experts per GPU")."""
    assert network.expert_parallel_chips(256, 72) == 64
    assert network.expert_parallel_chips(32, 72) == 32
    assert network.expert_parallel_chips(256, 8) == 8
