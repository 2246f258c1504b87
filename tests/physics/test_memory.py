"""Memory capacity (lecture c.4, d.4, d.6; scaling book applied-inference.md) against published figures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics import memory


@pytest.mark.parametrize(
    ("weight_bytes_per_param", "expected_chips"),
    [
        (2.0, 16),  # bf16: 140 GB -> 4x4
        (1.0, 8),  # int8: 70 GB -> 4x2
        (0.5, 4),  # int4: 35 GB -> 2x2
    ],
)
def test_minimum_topology_for_llama3_70b_on_v5e(weight_bytes_per_param, expected_chips):
    """Scaling book applied-inference.md, "minimum topology by precision" (16 GB v5e chips, 256-chip pod)."""
    chips, stages = memory.replica_chips(70e9, weight_bytes_per_param, 16e9, 256)
    assert (chips, stages) == (expected_chips, 1)


@pytest.mark.parametrize(
    ("params", "b_w", "hbm", "domain", "expected"),
    [
        (6.74e9, 2.0, 80e9, 8, (1, 1)),  # Llama-2-7B fits one H100
        (70.6e9, 2.0, 80e9, 8, (2, 1)),  # 141 GB -> 2 x 80 GB
        (671e9, 2.0, 80e9, 8, (32, 4)),  # DeepSeek-V3 bf16: 1.34 TB > 640 GB HGX -> 4 domains of 8, pipelined
        (671e9, 1.0, 80e9, 8, (16, 2)),  # fp8: 671 GB > 640 GB -> 2 domains
        (12.6e12, 1.0, 186e9, 72, (72, 1)),  # needs 68 chips: no power of two <= 72 holds it, so the whole NVL72 domain
        (5e12, 1.0, 186e9, 72, (32, 1)),  # "a 5T model" fits one Blackwell scale-up (lecture c.4)
    ],
)
def test_replica_rule(params, b_w, hbm, domain, expected):
    chips, stages = memory.replica_chips(params, b_w, hbm, domain)
    assert (float(chips), float(stages)) == expected
    assert chips * hbm >= params * b_w  # the replica holds the weights


def test_replica_rule_is_vectorised():
    chips, stages = memory.replica_chips(np.array([6.74e9, 671e9]), 2.0, 80e9, 8)
    np.testing.assert_array_equal(chips, [1, 32])
    np.testing.assert_array_equal(stages, [1, 4])


def test_scale_up_capacity_and_effective_bandwidth():
    """Lecture c.4: eight Hoppers hold 640 GB; d.6: W_eff = S x W grows 8-9x from Hopper (8) to NVL72 (72)."""
    assert 8 * 80e9 == pytest.approx(640e9)
    hopper = memory.effective_bandwidth_bytes_per_s(8, 3.35e12)
    nvl72 = memory.effective_bandwidth_bytes_per_s(72, 8.0e12)
    assert hopper == pytest.approx(26.8e12)
    assert nvl72 / hopper == pytest.approx(72 * 8.0 / (8 * 3.35))


def test_one_trillion_params_need_one_terabyte():
    """Lecture d.1: "A trillion parameter model only needs one terabyte" (about 1 byte per parameter)."""
    assert memory.weight_bytes(1e12, 1.0) == pytest.approx(1e12)


@settings(max_examples=200, deadline=None)
@given(p=st.sampled_from([1, 2, 4, 8]), micro=st.floats(1, 4096), ctx=st.floats(1, 1e6), b_kv=st.floats(1, 1e6))
def test_the_ps_cancel(p, micro, ctx, b_kv):
    """Lecture d.4: with B = P*b in flight, c_mem = N*b_w/(E*P) + b*L*b_kv/E; more stages shrink only the weights."""
    e = 64
    global_form = memory.memory_per_chip_bytes(1e12, 1.0, p * micro, ctx, b_kv, e, p)
    micro_form = memory.memory_per_chip_micro_batch_bytes(1e12, 1.0, micro, ctx, b_kv, e, p)
    assert global_form == pytest.approx(micro_form, rel=1e-12)
    kv_one = memory.memory_per_chip_micro_batch_bytes(0.0, 1.0, micro, ctx, b_kv, e, 1)
    kv_p = memory.memory_per_chip_micro_batch_bytes(0.0, 1.0, micro, ctx, b_kv, e, p)
    assert kv_p == pytest.approx(kv_one)  # KV per chip is the same at any number of stages
    assert memory.memory_per_chip_micro_batch_bytes(1e12, 1.0, 0, ctx, b_kv, e, p) == pytest.approx(1e12 / (e * p))


@settings(max_examples=200, deadline=None)
@given(
    chips=st.sampled_from([1, 2, 8, 72]),
    ctx=st.floats(1, 1e6),
    b_kv=st.floats(1, 1e6),
    extra=st.floats(0, 1e9),
    params=st.floats(1e9, 5e11),
)
def test_max_batch_round_trip(chips, ctx, b_kv, extra, params):
    """Synthetic round trip: the max batch fits, one more sequence does not."""
    hbm = 80e9
    b = memory.max_batch(chips, hbm, params, 1.0, ctx, b_kv, extra)
    need = lambda batch: params + memory.kv_bytes(batch, ctx, b_kv, extra)  # noqa: E731
    if params > chips * hbm:
        assert b == 0
    else:
        assert need(b) <= chips * hbm * (1 + 1e-12)
        assert need(b + 1) > chips * hbm


@settings(max_examples=200, deadline=None)
@given(batch=st.floats(1, 1e4), b_kv=st.floats(1, 1e6), params=st.floats(1e9, 5e11))
def test_max_context_round_trip(batch, b_kv, params):
    chips, hbm = 8, 80e9
    ctx = memory.max_context_tokens(chips, hbm, params, 1.0, batch, b_kv)
    if params >= chips * hbm:
        assert ctx == 0
    else:
        assert params + memory.kv_bytes(batch, ctx, b_kv) <= chips * hbm * (1 + 1e-12)
        assert params + memory.kv_bytes(batch, ctx + 1, b_kv) > chips * hbm


def test_no_growing_kv_means_unbounded_batch():
    assert memory.max_batch(1, 80e9, 1e9, 2.0, 8192, 0.0) == np.inf


def test_unknown_kv_gives_unknown_not_infinite_capacity():
    """A model whose KV layout is not derived (b_kv blank) must not read as 'any batch fits'."""
    assert np.isnan(memory.max_batch(8, 80e9, 1e11, 1.0, 8192, np.nan))
    assert np.isnan(memory.max_context_tokens(8, 80e9, 1e11, 1.0, 32, np.nan))
