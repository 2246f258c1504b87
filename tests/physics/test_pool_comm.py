"""A pool's communication per step against independent numbers: the textbook ring all-reduce (Thakur, Rabenseifner &
Gropp 2005: ``2(p−1)·α + 2(p−1)/p·n·β``; NCCL tests' PERFORMANCE.md: an all-reduce's bus bandwidth is
``algBw·2(n−1)/n``, so at a link of W bytes/s an all-reduce of S bytes takes ``S·2(n−1)/(n·W)``), Megatron-LM's two
all-reduces per tensor-parallel transformer layer (Shoeybi et al. 2019, §3), and a simulation of top-k routing for
expert dispatch and combine (bytes per DeepSeek ISCA '25 §2.3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from econ.physics import pool_comm

H100 = {"scale_up_domain_chips": 8.0, "scale_up_bandwidth_bytes_per_s": 450e9, "scale_out_bandwidth_bytes_per_s": 50e9}
IDEAL = {
    "link_frac": 1.0,
    "scale_up_latency_s": 0.0,
    "scale_out_latency_s": 0.0,
    "activation_bytes": 2.0,
    "dispatch_bytes": 1.0,
}
LLAMA_70B = {  # config.json: 80 layers, hidden 8192, dense
    "hidden_size": 8192.0,
    "num_layers": 80.0,
    "num_dense_layers": 0.0,
    "moe_layers": 0.0,
    "num_shared_experts": 0.0,
    "experts_per_token": np.nan,
}
DEEPSEEK_V3 = {  # config.json: 61 layers (3 dense, 58 MoE), hidden 7168, 256 routed + 1 shared, 8 per token
    "hidden_size": 7168.0,
    "num_layers": 61.0,
    "num_dense_layers": 3.0,
    "moe_layers": 58.0,
    "num_shared_experts": 1.0,
    "experts_per_token": 8.0,
}


def _layout(tp, dp=1, pp=1, etp=1):
    return {
        "tensor_parallel": float(tp),
        "attention_data_parallel": float(dp),
        "pipeline_parallel": float(pp),
        "expert_tensor_parallel": float(etp),
    }


def test_tensor_parallel_llama_70b_on_8_h100_is_160_ring_all_reduces():
    """64 tokens of Llama-3.1-70B at TP8: 2 all-reduces per layer (Megatron-LM §3) of 64·8192·2 B = 1 MiB, each
    2·7/8·1 MiB / 450 GB/s = 4.078 µs at the full link (NCCL's busBw definition): 652.5 µs a step, by hand."""
    out = pool_comm.communication_times_s(LLAMA_70B, H100, _layout(8), 64.0, IDEAL)
    assert float(out["tp_comm_time_s"]) == pytest.approx(652.5e-6, rel=1e-3)
    assert float(out["comm_peak_time_s"]) == pytest.approx(652.5e-6, rel=1e-3)
    assert float(out["ep_comm_time_s"]) == 0 and float(out["pp_comm_time_s"]) == 0
    # at NCCL's measured bus bandwidth instead of the peak the time scales by peak / busBw
    slower = pool_comm.communication_times_s(LLAMA_70B, H100, _layout(8), 64.0, {**IDEAL, "link_frac": 0.8})
    assert float(slower["tp_comm_time_s"]) == pytest.approx(652.5e-6 / 0.8, rel=1e-3)


def test_a_small_message_pays_2_p_minus_1_latencies_per_all_reduce():
    """One token at TP8 with α = 5 µs per hop: each of the 160 all-reduces is latency-bound at 2·(8 − 1)·α = 70 µs
    (Thakur et al.'s ring term), 11.2 ms a step; 2,240 hops, all inside the NVLink domain."""
    out = pool_comm.communication_times_s(LLAMA_70B, H100, _layout(8), 1.0, {**IDEAL, "scale_up_latency_s": 5e-6})
    assert float(out["tp_comm_time_s"]) == pytest.approx(160 * 14 * 5e-6, rel=1e-9)
    assert float(out["collective_hops"]) == 2240 and float(out["collective_hops_scale_out"]) == 0


def test_deepseek_v3_at_tp8_all_reduces_after_attention_and_after_every_ffn():
    """61 layers' attention + 3 dense FFNs + 58 MoE layers whose shared expert is TP-split: 122 all-reduces of 7168·2 B
    per token. At TP4 × PP2 the hops are 2·(4 − 1) per all-reduce, dispatch + combine per MoE layer (the experts
    spread EP4 over the stage's ranks) and one hand-off between the 2 stages."""
    out = pool_comm.communication_times_s(DEEPSEEK_V3, H100, _layout(8), 64.0, IDEAL)
    per = 64 * 7168 * 2 * 2 * 7 / 8 / 450e9
    assert float(out["tp_comm_time_s"]) == pytest.approx(122 * per, rel=1e-9)
    piped = pool_comm.communication_times_s(DEEPSEEK_V3, H100, _layout(4, 1, 2), 64.0, IDEAL)
    assert float(piped["collective_hops"]) == 122 * 2 * 3 + 2 * 58 + 1


def test_expert_dispatch_and_combine_match_a_simulation_of_top_8_routing():
    """DeepSeek-V3 at EP32 over 4 nodes of 8 H100s (NVLink 450 GB/s, InfiniBand 50 GB/s): a simulation deals each
    token 8 distinct experts of 256 (8 per rank) and counts the distinct other ranks they live on inside and
    outside the token's node; each such rank gets d·(1 B FP8 dispatch + 2 B BF16 combine) (ISCA '25 §2.3.2). The
    layer's time is the slower of the NVLink and InfiniBand parts; within 2% of the simulation."""
    rng = np.random.default_rng(0)
    tokens, ranks, node = 20_000, 32, 8
    experts = np.argsort(rng.random((tokens, 256)), axis=1)[:, :8]
    own = rng.integers(0, ranks, tokens)
    hit = np.zeros((tokens, ranks), dtype=bool)
    np.put_along_axis(hit, experts // 8, True, axis=1)
    hit[np.arange(tokens), own] = False
    same_node = (np.arange(ranks)[None, :] // node) == (own[:, None] // node)
    inside, outside = (hit & same_node).sum(1).mean(), (hit & ~same_node).sum(1).mean()
    per_rank_bytes = 64 * 7168 * 3
    expected = 58 * max(inside * per_rank_bytes / 450e9, outside * per_rank_bytes / 50e9)
    out = pool_comm.communication_times_s(DEEPSEEK_V3, H100, _layout(1, 32), 64.0, IDEAL)
    assert float(out["ep_comm_time_s"]) == pytest.approx(expected, rel=0.02)
    assert float(out["tp_comm_time_s"]) == 0  # TP 1, ETP 1: no all-reduce
    assert float(out["collective_hops_scale_out"]) == 2 * 58  # dispatch + combine per MoE layer, beyond the node


def test_experts_split_etp_ways_all_reduce_their_slices():
    """ETP 4 × EP 2 over a TP1 × DP8 stage: per MoE layer an all-reduce over 4 slices of the EP group's tokens
    (8 ranks' 64 tokens over 2 EP ranks = 256 tokens): 58 · 2·3/4 · 256·7168·2 B / 450 GB/s."""
    out = pool_comm.communication_times_s(DEEPSEEK_V3, H100, _layout(1, 8, 1, 4), 64.0, IDEAL)
    assert float(out["tp_comm_time_s"]) == pytest.approx(58 * 1.5 * 256 * 7168 * 2 / 450e9, rel=1e-9)
