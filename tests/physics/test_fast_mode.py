"""Fast mode (lecture a.5): the identity m*s = batch ratio, and the roofline solver recovering known batches."""

from __future__ import annotations

import numpy as np
import pytest

from econ.physics import Chip, Model, decode_step, fast_mode


def test_claude_fast_mode_identity():
    """Lecture a.5: 6x price and 2.5x speed on the same replica need a 15x smaller batch."""
    assert fast_mode.batch_ratio(6.0, 2.5) == pytest.approx(15.0)
    assert fast_mode.batch_ratio(6.0, 2.5, chips_ratio=2.0) == pytest.approx(
        7.5
    )  # twice the chips for the fast replica


def test_worked_example_three_times_balance_batch():
    """Reference a.5 worked example (KV neglected): B0 = 3*B*0 compute-bound, B1 = 0.2*B*0 weight-bound => s = 3, m
    = 5."""
    a, c = 1e-6, 1e-2  # s per sequence, s of weight reading: B*0 = c/a = 10,000
    sol = fast_mode.implied_batches_from_coefficients(5.0, 3.0, a, c, 0.0)
    assert sol.solved
    assert sol.baseline_batch == pytest.approx(30_000, rel=1e-6)
    assert sol.fast_batch == pytest.approx(2_000, rel=1e-6)
    assert sol.baseline_step_time_s / sol.fast_step_time_s == pytest.approx(3.0)


H100 = Chip("H100", hbm_capacity_bytes=80e9, hbm_bandwidth_bytes_per_s=3.35e12, peak_bf16_flop_per_s=989e12)


def test_round_trip_from_known_batches():
    """Synthetic round trip: pick B0 and B1, read m and s off the roofline, solve, recover B0 and B1 (vectorised)."""
    rng = np.random.default_rng(1)
    n = 200
    n_tot = 10 ** rng.uniform(9, 12, n)
    n_act = n_tot * 10 ** rng.uniform(-1.5, 0, n)
    b_kv = 10 ** rng.uniform(3, 6, n)
    ctx = 10 ** rng.uniform(2, 5, n)
    b0 = 10 ** rng.uniform(1, 4.5, n)
    b1 = b0 / 10 ** rng.uniform(0.3, 2, n)
    m_s = []
    for i in range(n):  # each model is its own Model object: a loop over cases in the test is fine
        model = Model("m", params_total=n_tot[i], params_active=n_act[i], kv_bytes_per_token=b_kv[i])
        t = decode_step(
            model, H100, batch=np.array([b0[i], b1[i]]), context_tokens=ctx[i], chips=8, usd_per_chip_hour=1.0
        )
        m_s.append((t.usd_per_token[1] / t.usd_per_token[0], t.step_time_s[0] / t.step_time_s[1]))
    m, s = np.array(m_s).T
    np.testing.assert_allclose(m * s, b0 / b1, rtol=1e-9)  # the identity holds at every point
    # s = 1 (both weight-bound) or m = 1 (both compute- or KV-bound): many batches fit, so no unique answer to recover
    keep = (s > 1 + 1e-6) & (m > 1 + 1e-6)
    sol = fast_mode.implied_batches(
        m[keep],
        s[keep],
        params_total=n_tot[keep],
        params_active=n_act[keep],
        weight_bytes_per_param=2.0,
        kv_bytes_per_token=b_kv[keep],
        context_tokens=ctx[keep],
        chips=8,
        peak_flop_per_s=989e12,
        hbm_bandwidth_bytes_per_s=3.35e12,
    )
    assert sol.solved.all()
    assert keep.sum() > n / 2
    np.testing.assert_allclose(sol.baseline_batch, b0[keep], rtol=1e-6)
    np.testing.assert_allclose(sol.fast_batch, b1[keep], rtol=1e-6)


@pytest.mark.parametrize(("price_ratio", "speed_ratio"), [(6.0, 1.0), (6.0, 0.5), (1.0, 2.5), (0.5, 2.0)])
def test_no_solution_is_said_not_guessed(price_ratio, speed_ratio):
    sol = fast_mode.implied_batches_from_coefficients(price_ratio, speed_ratio, 1e-6, 1e-2, 1e-7)
    assert not sol.solved
    assert np.isnan(sol.baseline_batch) and np.isnan(sol.fast_batch)


def test_scalar_and_array_agree():
    arr = fast_mode.implied_batches_from_coefficients(np.array([6.0, 5.0]), np.array([2.5, 3.0]), 1e-6, 1e-2, 1e-8)
    for i, (m, s) in enumerate([(6.0, 2.5), (5.0, 3.0)]):
        one = fast_mode.implied_batches_from_coefficients(m, s, 1e-6, 1e-2, 1e-8)
        assert one.baseline_batch == pytest.approx(arr.baseline_batch[i], rel=1e-12)


def test_pipelined_replica_reads_weights_once_per_stage():
    """With P stages the weight term is P*N*b_w/(G*W): the same answer as one stage's G/P chips (lecture d.6)."""
    kw = dict(
        params_total=671e9,
        params_active=37e9,
        weight_bytes_per_param=1.0,
        kv_bytes_per_token=70_272.0,
        context_tokens=8192,
        peak_flop_per_s=1979e12,
        hbm_bandwidth_bytes_per_s=3.35e12,
    )
    piped = fast_mode.implied_batches(6.0, 2.5, chips=16, pipeline_stages=2, **kw)
    one_stage = fast_mode.implied_batches(6.0, 2.5, chips=8, **kw)
    assert piped.solved and piped.baseline_batch == pytest.approx(2 * one_stage.baseline_batch, rel=1e-9)
