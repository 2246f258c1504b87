"""Collective times against the scaling book's and DeepSeek's worked examples (each cited)."""

from __future__ import annotations

import pytest

from econ.physics import collectives


def test_all_gather_on_8_h100_is_the_scaling_books_65_us():
    """Scaling book, gpus.md Pop Quiz 1: bf16[1024, 16384] gathered over 8 H100s at 450 GB/s egress:
    '(2·B·F·(8 − 1)) / (8·450e9) … more precisely, 65us'."""
    assert collectives.all_gather_time_s(2 * 1024 * 16384, 8, 450e9) == pytest.approx(65e-6, rel=0.01)


def test_all_gather_of_512_mb_is_1_ms():
    """Scaling book, gpus.md Quiz 2 Q3: 536e6 B · (8 − 1) / 3.6e12 = 1.04 ms (the (N−1)/N form with 450 GB/s)."""
    assert collectives.all_gather_time_s(536e6, 8, 450e9) == pytest.approx(1.04e-3, rel=0.01)


def test_all_reduce_is_twice_the_all_gather_and_one_rank_costs_nothing():
    """Scaling book, sharding.md: 'An AllReduce is composed of a ReduceScatter followed by an AllGather'."""
    assert collectives.all_reduce_time_s(58e6, 8, 450e9) == pytest.approx(
        2 * collectives.all_gather_time_s(58e6, 8, 450e9)
    )
    assert collectives.all_reduce_time_s(58e6, 1, 450e9) == 0


def test_small_messages_are_latency_bound():
    """Scaling book, sharding.md Pop Quiz 2(2): 32 kB shards over a 4-chip axis: 3 hops x ~1 us ≈ 3 us."""
    assert collectives.all_gather_time_s(4 * 32e3, 4, 4.5e10, latency_s=1e-6) == pytest.approx(3e-6)


def test_deepseek_dispatch_and_combine_on_infiniband_is_121_us():
    """DeepSeek ISCA '25 §2.3.2: '(1 Byte + 2 Bytes) × 32 × 9 × 7K / 50GB/s = 120.96 µs' (32 tokens per device,
    8 routed + 1 shared expert, hidden ≈ 7K, FP8 dispatch, BF16 combine); on NVL72's 900 GB/s, 6.72 µs."""
    ib = collectives.dispatch_combine_time_s(32, 9, 7000, 50e9, dispatch_bytes_per_value=1, combine_bytes_per_value=2)
    assert ib == pytest.approx(120.96e-6)
    nvl = collectives.dispatch_combine_time_s(32, 9, 7000, 900e9, dispatch_bytes_per_value=1, combine_bytes_per_value=2)
    assert nvl == pytest.approx(6.72e-6)
    # "Total Time Per Layer = 2 × 120.96 µs … 61 layers … 14.76 ms TPOT" (two micro-batches per layer)
    assert 61 * 2 * ib == pytest.approx(14.76e-3, rel=0.001)


def test_remote_chips_per_token_spread_top_k_over_the_expert_parallel_group():
    """k = 8 experts on 64 chips: 64·(1 − (63/64)^8) = 7.59 distinct chips, 63/64 of them not the token's own."""
    assert collectives.remote_chips_per_token(64, 8) == pytest.approx(64 * (1 - (63 / 64) ** 8) * 63 / 64)
    assert collectives.remote_chips_per_token(1, 8) == 0


def test_a_pipeline_hand_off_sends_one_activation_vector_per_token():
    assert collectives.pipeline_handoff_time_s(1000, 8192, 50e9) == pytest.approx(1000 * 8192 * 2 / 50e9)
