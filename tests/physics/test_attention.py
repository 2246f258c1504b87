"""Attention vs weight FLOPs (lecture h.1-h.2) against the reference's worked example and a per-layer count."""

from __future__ import annotations

import numpy as np
import pytest

from econ.errors import EconError
from econ.physics import attention


def columns(**kw):
    base = dict(
        attention="gqa",
        num_layers=np.nan,
        num_attention_heads=np.nan,
        head_dim=np.nan,
        v_head_dim=np.nan,
        kv_lora_rank=np.nan,
        qk_rope_head_dim=np.nan,
        num_full_attention_layers=np.nan,
        num_sliding_window_layers=np.nan,
        num_linear_attention_layers=np.nan,
        sliding_head_dim=np.nan,
    )
    base.update(kw)
    return {k: np.array([v], dtype=object if k == "attention" else float) for k, v in base.items()}


def test_lecture_crossover_example_50k():
    """Reference h.1: N_act = 1e11, 61 full layers, 128 x 128 query dims cross at ~50k tokens."""
    full, window = attention.attention_slopes(columns(num_layers=61, num_attention_heads=128, head_dim=128))
    assert full[0] == pytest.approx(4 * 128 * 128 * 61)
    assert attention.attention_crossover_tokens(1e11, full, window)[0] == pytest.approx(50_000, rel=0.01)


def per_layer_count(context, heads, layers):
    """Second method: walk the layers, each (key dim, value dim, window) attending min(L, window) tokens."""
    total = 0.0
    for key_dim, value_dim, window in layers:
        attended = min(context, window)
        total += 2 * heads * key_dim * attended + 2 * heads * value_dim * attended  # QK^T and AV
    return total


def test_hybrid_sliding_window_against_per_layer_count():
    """gpt-oss-120b layout (config.json): 36 layers alternating full and 128-token sliding, 64 heads of 64."""
    cols = columns(attention="hybrid", num_layers=36, num_attention_heads=64, head_dim=64, num_sliding_window_layers=18)
    full, window = attention.attention_slopes(cols)
    layers = [(64, 64, np.inf) if i % 2 else (64, 64, 128) for i in range(36)]
    for ctx in (1, 100, 128, 129, 8192, 131_072):
        ours = attention.attention_flop_per_token(ctx, full, window, 128.0)[0]
        assert ours == pytest.approx(per_layer_count(ctx, 64, layers), rel=1e-12)


def test_crossover_round_trip_inside_and_beyond_the_window():
    """At the crossover context attention FLOPs equal 2*N_act, whichever side of the window it falls."""
    for n_act, window in ((1e6, 4096.0), (1e10, 4096.0), (1e10, np.nan)):
        full, slide = 1000.0, 500.0
        ctx = attention.attention_crossover_tokens(n_act, full, slide, window)
        assert attention.attention_flop_per_token(ctx, full, slide, window) == pytest.approx(2 * n_act)


def test_window_only_model_never_crosses():
    assert attention.attention_crossover_tokens(1e10, 0.0, 1e6, 128.0) == np.inf


def test_deepseek_mla_expanded_and_absorbed():
    """DeepSeek-V3 config (reference X.5): 128 heads, qk 192 = 128 nope + 64 rope, v 128, latent 512 + rope 64, 61
    layers."""
    cols = columns(
        attention="mla",
        num_layers=61,
        num_attention_heads=128,
        head_dim=192,
        v_head_dim=128,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
    )
    expanded, _ = attention.attention_slopes(cols)
    absorbed, _ = attention.attention_slopes(cols, mla_form="absorbed")
    assert expanded[0] == pytest.approx(2 * 128 * (192 + 128) * 61)
    assert absorbed[0] == pytest.approx(2 * 128 * (576 + 512) * 61)
    with pytest.raises(
        EconError,
        match="^mla_form must be 'expanded' or 'absorbed', not 'latent' — expanded for prefill "
        "and training, absorbed for decode kernels$",
    ):
        attention.attention_slopes(cols, mla_form="latent")


def test_kv_read_vs_attention_compute_is_r_over_gqa_group():
    """Reference h.2: per context token, KV time / attention time = R_bf16 * n_kv/n_q (~300/8 ~ 40 for GQA-8).

    Llama-3-70B (64 query heads, 8 KV heads, 128 dims, 80 layers) on an H100 (R = 989e12/3.35e12 = 295).
    """
    kv = 2 * 8 * 128 * 80 * 2.0
    full = 4 * 64 * 128 * 80
    ratio = attention.kv_over_attention_time_ratio(kv, full, 989e12, 3.35e12)
    assert ratio == pytest.approx(989e12 / 3.35e12 / 8)
    assert 30 < ratio < 45


def test_unmodelled_attention_is_unknown():
    """attention 'other' (e.g. compressed/sparse KV of DeepSeek-V4): no slope rather than a GQA guess."""
    full, window = attention.attention_slopes(
        columns(attention="other", num_layers=61, num_attention_heads=128, head_dim=512)
    )
    assert np.isnan(full[0]) and np.isnan(window[0])
