"""KV-cache tiers (lecture a.6, g.2-g.4): drain times, the drain-time rule, the cheapest tier."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics import Chip, drain_time_s
from econ.physics import memory_tiers as mt


@pytest.mark.parametrize(
    ("capacity_gb", "bandwidth_tb_s", "expected_ms"),
    [
        (80, 3.35, 24),  # H100
        (141, 4.8, 29),  # H200
        (192, 8.0, 24),  # B200 with the lecture's 192 GB / 8 TB/s
        (80, 2.0, 40),  # A100
        (288, 20, 14.4),  # Rubin, Pope's numbers ("288/20 = 14.4 ms")
    ],
)
def test_hbm_drain_times(capacity_gb, bandwidth_tb_s, expected_ms):
    """Lecture a.6 drain-time table (scaling-book specs)."""
    chip = Chip("x", hbm_capacity_bytes=capacity_gb * 1e9, hbm_bandwidth_bytes_per_s=bandwidth_tb_s * 1e12)
    assert chip.drain_time_s == pytest.approx(expected_ms * 1e-3, abs=0.6e-3)
    assert drain_time_s(capacity_gb * 1e9, bandwidth_tb_s * 1e12) == chip.drain_time_s


@settings(max_examples=200, deadline=None)
@given(b_kv=st.floats(1, 1e6), cap=st.floats(1e9, 1e14), bw=st.floats(1e8, 1e13), usd=st.floats(0.01, 100))
def test_hold_equals_retrieve_at_the_drain_time(b_kv, cap, bw, usd):
    """Lecture g.4: hold and retrieve cost the same when the hold time is the tier's drain time C/W."""
    hold = mt.hold_usd_per_token_s(b_kv, cap, usd)
    retrieve = mt.retrieve_usd_per_token(b_kv, bw, usd)
    assert hold * drain_time_s(cap, bw) == pytest.approx(retrieve, rel=1e-12)


def test_recompute_vs_hbm_break_even_closed_form():
    """Remat costs 2*N_act/F*p once, HBM costs b_kv/C*p per second: they cross at T = 2*N_act*C/(F*b_kv)."""
    n_act, f, cap, b_kv, p = 6.74e9, 989e12, 80e9, 524_288.0, 2.0
    t = mt.break_even_hold_time_s(
        0.0, mt.hold_usd_per_token_s(b_kv, cap, p), mt.recompute_usd_per_token(n_act, f, p), 0.0
    )
    assert t == pytest.approx(2 * n_act * cap / (f * b_kv))
    assert 1.0 < t < 3.0  # Llama-2-7B on an H100: keeping its (large, MHA) KV in HBM pays for ~2 s


def test_recompute_cost_is_a_forward_pass_at_the_gpu_price():
    """Lecture g.2: "run a forward pass on the whole model... multiply it by my GPU dollars per second"."""
    assert mt.recompute_usd_per_token(37e9, 2.25e15, 2.0) == pytest.approx(2 * 37e9 / 2.25e15 * 2.0 / 3600)


def test_cheapest_tier_moves_down_the_hierarchy_as_hold_time_grows():
    """Lecture g.2: retrieve cost rises and hold cost falls from HBM to DDR to flash to disk to recompute."""
    b_kv, usd = 70_272.0, 2.0  # DeepSeek-V3 MLA at bf16
    # mechanism order: HBM (H100), DDR host memory, NVMe flash, HDD, recompute (37B active on an H100)
    cap = np.array([80e9, 2e12, 30e12, 20e12])
    bw = np.array([3.35e12, 200e9, 14e9, 0.25e9])
    usd_h = np.array([2.0, 0.5, 0.3, 0.02])
    retrieve = np.concatenate(
        [[0.0], mt.retrieve_usd_per_token(b_kv, bw[1:], usd_h[1:]), [mt.recompute_usd_per_token(37e9, 989e12, usd)]]
    )
    hold = np.concatenate([mt.hold_usd_per_token_s(b_kv, cap, usd_h), [0.0]])
    hold_times = np.array([1e-3, 1.0, 60.0, 3600.0, 86400.0 * 30, 1e9])
    index, cost = mt.cheapest_tier(retrieve[None, :], hold[None, :], hold_times[:, None])
    assert index[0] == 0 and index[-1] == 4  # HBM for an instant, recompute for ever
    assert np.all(np.diff(index) >= 0)  # never back up the hierarchy
    np.testing.assert_allclose(cost, mt.tier_cost_usd_per_token(retrieve, hold, hold_times[:, None]).min(axis=1))


def test_hbm_retrieve_is_free_other_tiers_pay_the_read():
    """Lecture g.2: HBM is where inference happens (retrieve ~0); a DDR read of 70,272 B at 64 GB/s on a
    $0.5/h device costs 70,272/64e9 s x 0.5/3600 $/s = 1.525e-10 $."""
    from econ.physics.memory_tiers import tier_retrieve_usd_per_token

    out = tier_retrieve_usd_per_token(
        np.array(["hbm", "ddr"]), 70_272.0, np.array([3.35e12, 64e9]), np.array([2.0, 0.5])
    )
    assert out[0] == 0.0
    assert out[1] == pytest.approx(70_272 / 64e9 * 0.5 / 3600, rel=1e-12)
