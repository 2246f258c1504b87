"""The notebook API: Chip/Model from rows, formats, replica default, prefill, errors people read."""

from __future__ import annotations

import math

import numpy as np
import pytest

from econ.errors import EconError
from econ.physics import Chip, Model, balance, decode_step, prefill_step, replica

HARDWARE_ROW = {  # a hardware row as the database returns it (None = blank), with extra columns
    "chip": "B200",
    "chip_name": "NVIDIA B200",
    "peak_bf16_flop_per_s": 2.25e15,
    "peak_fp8_flop_per_s": 4.5e15,
    "peak_fp4_flop_per_s": 9e15,
    "peak_int8_op_per_s": None,
    "hbm_capacity_bytes": 180e9,
    "hbm_bandwidth_bytes_per_s": 7.7e12,
    "scale_up_domain_chips": 8,
    "scale_up_bandwidth_bytes_per_s": 9e11,
    "scale_out_bandwidth_bytes_per_s": 5e10,
    "tdp_w": 1000.0,
    "source_url": "https://epoch.ai",
}
MODEL_ROW = {  # DeepSeek-V3 as in models (kv_bytes_per_token computed at bf16: 61 x 576 x 2)
    "model": "DeepSeek-V3",
    "params_total": 671e9,
    "params_active": 37e9,
    "kv_bytes_per_token": 61 * 576 * 2.0,
    "kv_window_bytes_per_sequence": float("nan"),
    "attention": "mla",
    "num_routed_experts": 256,
    "experts_per_token": 8,
    "sliding_window_tokens": None,
    "lab": "DeepSeek",
}


def test_from_rows():
    chip, model = Chip.from_row(HARDWARE_ROW), Model.from_row(MODEL_ROW)
    assert chip.formats() == ("bf16", "fp8", "fp4")
    assert chip.peak_flop_per_s("fp4") == 9e15
    assert model.kv_window_bytes_per_sequence == 0.0
    assert model.sparsity_param_ratio == pytest.approx(18.135, rel=1e-4)  # lecture b.2: 671/37
    assert model.sparsity_expert_ratio == 32.0


def test_missing_columns_are_named():
    with pytest.raises(
        EconError, match=r"hardware row 'X' lacks hbm_bandwidth_bytes_per_s — fill the column in data/hardware.csv"
    ):
        Chip.from_row({"chip": "X", "hbm_capacity_bytes": 1e9, "hbm_bandwidth_bytes_per_s": float("nan")})
    with pytest.raises(EconError, match=r"model row 'Y' lacks kv_bytes_per_token"):
        Model.from_row({"model": "Y", "params_total": 1e9, "params_active": 1e9})


def test_unsupported_format_says_which_are_supported():
    chip = Chip.from_row(HARDWARE_ROW)
    with pytest.raises(EconError, match=r"^B200 has no int8 peak — formats with a peak: bf16, fp8, fp4$"):
        decode_step(Model.from_row(MODEL_ROW), chip, batch=1, context_tokens=1, number_format="int8")
    with pytest.raises(EconError, match=r"unknown number format 'fp6'"):
        decode_step(Model.from_row(MODEL_ROW), chip, batch=1, context_tokens=1, number_format="fp6")


def test_default_layout_of_a_dense_model_is_the_least_tensor_parallelism_that_holds_it():
    """A dense 70B in bf16 (140 GB) and one 8k sequence (2.7 GB) on 80 GB chips: TP2 holds 71.3 GB per chip."""
    dense = Model("dense-70b", params_total=70e9, params_active=70e9, kv_bytes_per_token=327_680, num_kv_heads=8)
    h100 = Chip("H100", 80e9, 3.35e12, peak_bf16_flop_per_s=989e12, scale_up_domain_chips=8)
    layout = replica(dense, h100, context_tokens=8192)
    assert (layout["tensor_parallel"], layout["attention_data_parallel"], layout["pipeline_parallel"]) == (2, 1, 1)
    step = decode_step(dense, h100, batch=1, context_tokens=0)
    assert step.chips == 2 and step.step_time_s == pytest.approx(70e9 * 2 / (2 * 3.35e12))


def test_default_layout_of_deepseek_spreads_experts_over_the_domain(fixture_db):
    """DeepSeek-V3 in FP8 on an 8-GPU HGX B200: data-parallel attention and expert parallelism over the whole
    domain; at batch 1 each chip reads the replicated weights and its share of the 8 experts each layer routes to."""
    from econ.notebook import load_chip, load_model

    model, b200 = load_model("DeepSeek-V3", fixture_db), load_chip("B200", fixture_db)
    layout = replica(model, b200, number_format="fp8")
    assert (layout["tensor_parallel"], layout["attention_data_parallel"]) == (1, 8)  # HGX B200: an 8-chip domain
    step = decode_step(model, b200, batch=1, context_tokens=0, number_format="fp8")
    touched = model.rest_params + model.shared_expert_params + model.dense_ffn_params + model.head_params
    touched += model.moe_layers * 8 * model.params_per_expert / 8  # 8 experts touched, spread over 8 chips
    assert step.terms["weight_bytes_read_per_chip"] == pytest.approx(touched)


def test_fp8_kv_halves_the_kv_term():
    model, chip = Model.from_row(MODEL_ROW), Chip.from_row(HARDWARE_ROW)
    bf16 = decode_step(model, chip, batch=64, context_tokens=1e5, chips=8)
    fp8 = decode_step(model, chip, batch=64, context_tokens=1e5, chips=8, kv_format="fp8")
    weights = 671e9 * 2 / (8 * 7.7e12)
    assert fp8.memory_time_s - weights == pytest.approx((bf16.memory_time_s - weights) / 2)


def test_prefill_is_compute_bound_and_costs_the_forward_pass():
    """Lecture f.3: prefill cost per token -> 2*N_act/F*p as the prompt grows (memory/ℓ falls as 1/ℓ)."""
    model, chip = Model.from_row(MODEL_ROW), Chip.from_row(HARDWARE_ROW)
    step = prefill_step(
        model, chip, batch=1, prompt_tokens=np.array([1, 64, 8192, 131072]), chips=8, usd_per_chip_hour=2.0
    )
    assert list(step.bound) == ["memory", "memory", "compute", "compute"]
    forward_pass = 2 * 37e9 / 2.25e15 * 2.0 / 3600  # per token per chip-second, independent of G
    assert step.usd_per_token[-1] == pytest.approx(forward_pass, rel=1e-9)
    assert np.all(np.diff(step.usd_per_token) <= 0)
    assert step.tokens_per_step.tolist() == [1, 64, 8192, 131072]


def test_prefill_with_cached_prefix_reads_the_cache():
    model, chip = Model.from_row(MODEL_ROW), Chip.from_row(HARDWARE_ROW)
    fresh = prefill_step(model, chip, batch=1, prompt_tokens=100, chips=8)
    cached = prefill_step(model, chip, batch=1, prompt_tokens=100, cached_tokens=1e6, chips=8)
    assert cached.memory_time_s - fresh.memory_time_s == pytest.approx(1e6 * model.kv_bytes_per_token / (8 * 7.7e12))
    assert cached.compute_time_s == fresh.compute_time_s


def test_mfu_mbu_knobs_scale_the_two_terms():
    model, chip = Model.from_row(MODEL_ROW), Chip.from_row(HARDWARE_ROW)
    pure = decode_step(model, chip, batch=4096, context_tokens=1024, chips=8)
    real = decode_step(model, chip, batch=4096, context_tokens=1024, chips=8, mfu=0.5, mbu=0.8)
    assert real.compute_time_s == pytest.approx(pure.compute_time_s / 0.5)
    assert real.memory_time_s == pytest.approx(pure.memory_time_s / 0.8)


def test_sliding_window_kv_stops_growing_at_the_window():
    chip = Chip.from_row(HARDWARE_ROW)
    model = Model(
        "hybrid",
        params_total=1e11,
        params_active=5e9,
        kv_bytes_per_token=1000.0,
        kv_window_bytes_per_sequence=128 * 500.0,
        sliding_window_tokens=128,
    )
    t = decode_step(model, chip, batch=1, context_tokens=np.array([64, 128, 1024]), chips=1).memory_time_s
    weights = 1e11 * 2 / 7.7e12
    np.testing.assert_allclose((t - weights) * 7.7e12, [64 * 1500.0, 128 * 1500.0, 1024 * 1000.0 + 128 * 500.0])


def test_balance_without_experts_is_nan_and_no_price_means_no_cost():
    dense = Model("dense", params_total=7e10, params_active=7e10, kv_bytes_per_token=327_680.0)
    chip = Chip.from_row(HARDWARE_ROW)
    assert math.isnan(balance(dense, chip).balance_batch_experts)
    assert decode_step(dense, chip, batch=1, context_tokens=1).usd_per_token is None
