"""A replica's chips, weights held and largest batch, each against a hand calculation from a model card."""

from __future__ import annotations

import numpy as np
import pytest

from econ.physics import sharding
from econ.physics.model import Model

# Llama-3-70B: 70e9 parameters; 8 KV heads x 128 dims x 80 layers, K and V in BF16 = 327,680 bytes per token
LLAMA_70B = Model("llama-3-70b", params_total=70e9, params_active=70e9, kv_bytes_per_token=327_680.0, num_kv_heads=8)
H100_HBM = {"hbm_capacity_bytes": 80e9}


def _layout(tp=1, dp=1, pp=1, replicate=True):
    return {
        "tensor_parallel": tp,
        "attention_data_parallel": dp,
        "pipeline_parallel": pp,
        "replicate_attention": replicate,
        "replicate_shared_experts": replicate,
        "replicate_dense": replicate,
        "replicate_embeddings": replicate,
        "redundant_expert_slots": 0.0,
    }


def test_a_replica_is_tp_times_dp_times_pp_chips():
    assert float(sharding.replica_chips(8, 2, 4)) == 64.0
    assert float(sharding.rank_sequences(64, 2, 4)) == 8.0  # 64 sequences over 4 micro-batches and 2 ranks
    assert float(sharding.rank_sequences(1, 8, 1)) == 1.0  # the busiest rank still runs the one sequence


@pytest.mark.parametrize(("tp", "pp"), [(8, 1), (4, 2), (1, 8)])
def test_a_dense_model_holds_its_weights_split_over_every_chip(tp, pp):
    """70e9 BF16 parameters over 8 chips however they are split: 140 GB / 8 = 17.5 GB each."""
    held = sharding.weight_bytes_per_chip(LLAMA_70B.deployment_arrays(), _layout(tp, 1, pp), 2.0)
    assert float(held) == pytest.approx(17.5e9, rel=1e-12)


def test_the_largest_batch_is_what_the_free_hbm_holds_at_the_context():
    """TP8 on H100s at 8,192 tokens: (80 − 17.5) GB free per chip; a sequence's KV is 327,680 · 8,192 B = 2.68 GB over
    8 KV heads, one per chip, so each chip holds 1/8 of every sequence: ⌊62.5e9 · 8 / 2.68e9⌋ = 186 sequences."""
    model = LLAMA_70B.deployment_arrays()
    batch = sharding.max_batch_per_replica(model, _layout(8), H100_HBM, 8192.0, weight_bytes_per_param=2.0)
    assert float(batch) == np.floor(62.5e9 * 8 / (327_680.0 * 8192))
    memory = sharding.memory_per_chip_bytes(model, _layout(8), float(batch), 8192.0, weight_bytes_per_param=2.0)
    assert float(memory) <= 80e9 < float(memory) + 327_680.0 * 8192 / 8  # one more sequence would not fit


def test_weights_that_do_not_fit_allow_no_batch():
    batch = sharding.max_batch_per_replica(
        LLAMA_70B.deployment_arrays(), _layout(1), H100_HBM, 1024.0, weight_bytes_per_param=2.0
    )
    assert float(batch) == 0.0  # 140 GB of weights on one 80 GB chip
