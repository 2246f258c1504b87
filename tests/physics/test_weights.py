"""Weight classes and the bytes a step touches, against a Monte Carlo of routing and hand counts from configs."""

from __future__ import annotations

import numpy as np
import pytest

from econ.physics import weights

# DeepSeek-V3 config.json (ai-dynamo/aiconfigurator copy, commit 095f58a): hidden 7168, 61 layers of which the first
# 3 are dense (intermediate 18432), 256 routed + 1 shared expert of 2048, top-8, vocab 129280, untied embeddings.
D, E, K, MOE_I, DENSE_I, VOCAB, LAYERS, DENSE_LAYERS = 7168, 256, 8, 2048, 18432, 129_280, 61, 3


def test_distinct_experts_matches_a_monte_carlo_of_top_k_routing():
    """Route t tokens to k of E experts uniformly at random (no repeats within a token): the mean number of experts
    touched equals E·(1 − (1 − k/E)^t) within 1% (4,000 draws)."""
    rng = np.random.default_rng(7)
    for e, k, t in ((256, 8, 1), (256, 8, 16), (256, 8, 64), (128, 4, 3), (8, 2, 5)):
        draws = 4_000
        keys = rng.random((draws, t, e))
        chosen = np.argsort(keys, axis=2)[:, :, :k]  # k distinct experts per token
        touched = np.zeros((draws, e), dtype=bool)
        np.put_along_axis(touched, chosen.reshape(draws, t * k), True, axis=1)
        assert weights.distinct_experts(t, e, k) == pytest.approx(touched.sum(axis=1).mean(), rel=0.01), (e, k, t)
    assert weights.distinct_experts(0, 256, 8) == 0 and weights.distinct_experts(1, 256, 8) == 8
    assert weights.distinct_experts(1e6, 256, 8) == pytest.approx(256)
    assert weights.distinct_experts(100, np.nan, np.nan) == 0  # a dense model has no experts


def test_deepseek_v3_batch_one_reads_37_gb_by_a_hand_count_from_its_config():
    """One token: the attention and everything else once, the shared expert, 8 of 256 routed experts in each of the
    58 MoE layers, the 3 dense FFN layers and the output head — ≈ 37 GB in FP8 of 671 GB; 16 tokens ≈ 277 GB."""
    expert = 3 * D * MOE_I  # gate, up, down
    moe_layers = LAYERS - DENSE_LAYERS
    routed = moe_layers * E * expert
    shared = moe_layers * expert
    dense = DENSE_LAYERS * 3 * D * DENSE_I
    embedding = 2 * VOCAB * D
    rest = 671e9 - routed - shared - dense - embedding  # attention, norms, routers: ~11.5B
    assert rest == pytest.approx(11.5e9, rel=0.02)
    batch_one = rest + shared + dense + VOCAB * D + moe_layers * K * expert
    kw = dict(
        rest=rest,
        shared=shared,
        dense=dense,
        head=VOCAB * D,
        moe_layers=moe_layers,
        num_routed_experts=E,
        experts_per_token=K,
        params_per_expert=expert,
        weight_bytes_per_param=1.0,
    )
    assert weights.weight_bytes_touched(1, **kw) == pytest.approx(batch_one) == pytest.approx(36.6e9, rel=0.01)
    sixteen = rest + shared + dense + VOCAB * D + moe_layers * E * (1 - (1 - K / E) ** 16) * expert
    assert weights.weight_bytes_touched(16, **kw) == pytest.approx(sixteen) == pytest.approx(277e9, rel=0.01)


def test_the_class_split_recomputes_the_reported_active_count():
    """The classes come from config widths and the reported total; the active count they imply is independent of
    the reported one, so agreement checks the columns (DeepSeek-V3: 37.5B against 37B reported)."""
    columns = {
        "params_total": np.array([671e9]),
        "params_active": np.array([37e9]),
        "hidden_size": np.array([D]),
        "num_layers": np.array([LAYERS]),
        "num_routed_experts": np.array([E]),
        "num_shared_experts": np.array([1]),
        "experts_per_token": np.array([K]),
        "num_dense_layers": np.array([DENSE_LAYERS]),
        "num_moe_layers": np.array([np.nan]),
        "vocab_size": np.array([VOCAB]),
        "tie_word_embeddings": np.array([0]),
        "intermediate_size": np.array([DENSE_I]),
        "moe_intermediate_size": np.array([MOE_I]),
        "shared_expert_intermediate_size": np.array([np.nan]),
        "expert_hidden_size": np.array([np.nan]),
        "expert_ffn_matrices": np.array([np.nan]),
    }
    split = weights.parameter_classes(columns)
    assert split["moe_layers"][0] == 58
    assert split["active_params_from_split"][0] == pytest.approx(37e9, rel=0.02)
    total = sum(split[k][0] for k in ("rest_params", "routed_expert_params", "shared_expert_params"))
    total += split["dense_ffn_params"][0] + split["embedding_params"][0]
    assert total == pytest.approx(671e9)


@pytest.mark.parametrize(
    ("model", "rel"),
    [
        ("DeepSeek-V3", 0.02),
        ("Kimi-K2.5", 0.02),
        ("Qwen3-235B-A22B", 0.02),
        ("GLM-5", 0.02),
        ("MiniMax-M2.5", 0.02),
        ("Mixtral-8x22B-v0.1", 0.02),
        ("Llama-3.1-70B", 0.02),
        ("Llama-4-Maverick-17B-128E", 0.05),
        ("MiMo-V2-Flash", 0.05),
        ("NVIDIA-Nemotron-3-Ultra-550B-A55B", 0.05),
    ],
)
def test_shipped_models_active_counts_agree_with_their_cards(real_db, model, rel):
    """Across the shipped models the split recomputes the reported active count (models whose cards round their
    totals, or count active parameters without the embeddings, gpt-oss and Qwen3.5-35B, are left out)."""
    import duckdb

    with duckdb.connect(str(real_db), read_only=True) as con:
        computed, reported = con.execute(
            "select active_params_from_split, params_active from model_derived where model = ?", [model]
        ).fetchall()[0]
    assert computed == pytest.approx(reported, rel=rel)
