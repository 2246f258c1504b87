"""model_derived on the fixture models: the lecture's sparsity figures and weight bytes per format."""

from __future__ import annotations

import pytest

from tests.analyses.helpers import q


def test_sparsity_and_weights(fixture_db):
    """Lecture b.2: DeepSeek-V3 is 671/37 = 18.1 by parameters and 256/8 = 32 by experts; dense models have no E/k."""
    rows = {r["model"]: r for r in q(fixture_db, "select * from model_derived").iter_rows(named=True)}
    ds = rows["DeepSeek-V3"]
    assert ds["sparsity_param_ratio"] == pytest.approx(18.1, abs=0.05) and ds["sparsity_expert_ratio"] == 32
    assert rows["Llama-3.1-70B"]["sparsity_expert_ratio"] is None
    assert (
        ds["weight_fp8_bytes"] == 671e9 and ds["weight_bf16_bytes"] == 2 * 671e9 and ds["weight_fp4_bytes"] == 335.5e9
    )
    assert ds["kv_bytes_per_token"] == 61 * 576 * 2 and ds["kv_fp8_bytes_per_token"] == 61 * 576


def test_gqa_group_of_llama(fixture_db):
    assert q(fixture_db, "select gqa_group_ratio from model_derived where model = 'Llama-3.1-70B'").item() == 8


def test_a_model_and_its_re_releases_share_one_architecture_group(real_db):
    """DeepSeek-R1 is DeepSeek-V3's architecture retrained (its config.json has the same shape: 61 layers, 7168 wide,
    256 routed experts, MLA 512/64), so leave-one-model-out must leave both out; Llama-3.1-8B and -70B differ."""
    group = dict(q(real_db, "select model, architecture_group from model_derived").iter_rows())
    assert group["DeepSeek-R1"] == group["DeepSeek-V3"] == "DeepSeek-V3"  # named by the earlier release
    assert group["Llama-3.1-8B"] != group["Llama-3.1-70B"]
    assert group["DeepSeek-V3.2"] != group["DeepSeek-V3"]  # its sparse-attention indexer is a different shape
    assert group["Qwen3-32B"] == "Qwen3-32B"  # a model alone is its own group


def test_layers_are_weighted_by_the_kernels_they_launch(real_db):
    """The kernels counted in the engines' model code (econ.physics.step_time): a GQA layer with a gated FFN launches 9,
    DeepSeek's absorbed MLA layer 14, GLM-5's MLA layer with a sparse-attention indexer on every layer 19, a Gated
    DeltaNet layer 12 (Qwen3.5-397B: 45 of its 60 layers), DeepSeek-V4's compressed layers 4 more for their
    hyper-connections and 1 for their compressor; a routed-expert FFN counts as a dense one."""
    rows = dict(q(real_db, "select model, kernel_layers from model_derived").iter_rows())
    assert rows["Llama-3.1-70B"] == 80 and rows["Qwen3-235B-A22B"] == 94 and rows["gpt-oss-120b"] == 36
    assert rows["DeepSeek-V3"] == pytest.approx(61 * 14 / 9)
    assert rows["GLM-5"] == pytest.approx(78 * 19 / 9)
    assert rows["GLM-5.2"] == pytest.approx((78 * 14 + 21 * 5) / 9)  # its indexer on 21 of 78 layers
    assert rows["Qwen3.5-397B-A17B"] == pytest.approx((15 * 9 + 45 * 12) / 9)
    # DeepSeek-V4-Pro (deepseek_v4.py): MLA's 14 on each of 61 layers, its hyper-connections' 4 mixing kernels on each,
    # a compressor on each compressed layer (all 61), an indexer on its 30 compressed sparse ones
    assert rows["DeepSeek-V4-Pro"] == pytest.approx((61 * 14 + 61 * 4 + 61 + 30 * 5) / 9)
