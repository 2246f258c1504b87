"""The serving roofline against published worked examples (scaling book, the lecture, Llama-2-7B on an H100).

Every chip and model here is built by hand from the cited source's own numbers, so these
tests do not depend on data/.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics import Chip, Model, balance, decode_step, kv_cache, memory, prefill_step
from econ.physics import roofline as rf

# scaling book inference.md / applied-inference.md: "each with 8.1e11 bytes/s of bandwidth and 1.97e14 bf16 FLOPs/s";
# roofline.md uses 8.2e11 for its "1.97e14 / 8.2e11 = 240"; int8 x int8 is 3.94e14 ("400 TOPs/s").
V5E_BOOK = Chip(
    "TPU v5e (book)",
    hbm_capacity_bytes=16e9,
    hbm_bandwidth_bytes_per_s=8.1e11,
    peak_bf16_flop_per_s=1.97e14,
    peak_int8_op_per_s=3.94e14,
)
V5E_ROOFLINE = Chip(
    "TPU v5e (roofline.md)",
    hbm_capacity_bytes=16e9,
    hbm_bandwidth_bytes_per_s=8.2e11,
    peak_bf16_flop_per_s=1.97e14,
    peak_int8_op_per_s=3.94e14,
)
# LLaMA-3-70B: 8 KV heads x 128 head dim x 80 layers x (K and V) = 163,840 values per token (scaling book).
LLAMA3_70B = Model("LLaMA-3-70B", params_total=70e9, params_active=70e9, kv_bytes_per_token=2 * 8 * 128 * 80 * 2.0)
H100 = Chip("H100", hbm_capacity_bytes=80e9, hbm_bandwidth_bytes_per_s=3.35e12, peak_bf16_flop_per_s=989e12)
# Llama-2-7B: 32 layers x 32 KV heads x 128 head dim x (K and V) x 2 bytes = 524,288 B/token; 6.74e9 parameters.
LLAMA2_7B = Model("Llama-2-7B", params_total=6.74e9, params_active=6.74e9, kv_bytes_per_token=2 * 32 * 32 * 128 * 2.0)


# ---------------------------------------------------------------------------- scaling book


def test_llama3_70b_kv_bytes_per_token_is_320_kb():
    """Scaling book: 2 x 8 x 128 x 80 values = 160 kB at int8, 320 kB at bf16 (from the config's layer and head
    counts)."""
    nan = float("nan")
    config = dict(
        attention=np.array(["gqa"], dtype=object),
        num_layers=[80.0],
        num_kv_heads=[8.0],
        head_dim=[128.0],
        v_head_dim=[nan],
        kv_lora_rank=[nan],
        qk_rope_head_dim=[nan],
        num_full_attention_layers=[nan],
        num_sliding_window_layers=[nan],
        num_linear_attention_layers=[nan],
    )
    kv = float(kv_cache.kv_bytes_per_token(config)[0])
    assert kv == pytest.approx(320e3, rel=0.03) and kv == LLAMA3_70B.kv_bytes_per_token
    assert LLAMA3_70B.kv_bytes_per_token_at("fp8") == pytest.approx(160e3, rel=0.03)


@pytest.mark.parametrize(
    ("number_format", "weight_format", "expected"),
    [
        ("bf16", None, 240),  # bf16 params + bf16 FLOPs: C / W = 240
        ("bf16", "int8", 120),  # int8 params + bf16 FLOPs: half the bytes per param
        ("int8", None, 240),  # int8 x int8: FLOP/s doubles, cancels out
    ],
)
def test_v5e_critical_batch(number_format, weight_format, expected):
    """Scaling book roofline.md / inference.md: B_crit 240 (bf16), 120 (int8 weights, bf16 math), 240 (int8 x int8)."""
    r = balance(LLAMA3_70B, V5E_ROOFLINE, number_format=number_format, weight_format=weight_format).critical_batch_ratio
    assert r == pytest.approx(expected, rel=0.005)


def test_llama3_70b_int8_on_v5e_4x2_is_17_ms_and_memory_bound():
    """Scaling book applied-inference.md: (70e9 + 41.9e9) / (8 x 8.1e11) = 17 ms at B=32, 8,192 context, int8."""
    step = decode_step(
        LLAMA3_70B,
        V5E_BOOK,
        batch=32,
        context_tokens=8192,
        number_format="bf16",
        weight_format="int8",
        kv_format="int8",
        chips=8,
    )
    assert step.step_time_s == pytest.approx(17e-3, rel=0.05)
    assert step.bound == "memory"


@pytest.mark.parametrize(("batch", "book_ms"), [(4, 2.5), (256, 21.0)])
def test_30b_int8_on_v5e_4x4_book_form_lies_between_bounds(batch, book_ms):
    """Scaling book pop quiz: 30B dense, int8 weights, bf16 FLOPs, 100 kB/token KV, 8,192 context, 16 chips.

    The book's KV/W + max(compute, weights/W) is 2.5 ms at B=4 and 21 ms at B=256; it must lie between
    our lower (max) and upper (sum) bounds, and our book-form function must reproduce it.
    """
    model = Model("30B", params_total=30e9, params_active=30e9, kv_bytes_per_token=100e3)
    step = decode_step(
        model,
        V5E_BOOK,
        batch=batch,
        context_tokens=8192,
        number_format="bf16",
        weight_format="int8",
        kv_format="bf16",
        chips=16,
    )
    weights_s = 30e9 / (16 * 8.1e11)
    kv_s = step.memory_time_s - weights_s
    book = rf.book_step_time_s(step.compute_time_s, weights_s, kv_s)
    assert book == pytest.approx(book_ms * 1e-3, rel=0.05)
    assert step.lower_bound_s <= book <= step.upper_bound_s


# ---------------------------------------------------------------------------- the lecture


def test_balance_batch_300_times_sparsity_8():
    """Lecture b.2: "300 x sparsity" with DeepSeek's (said) 8 gives 2,400."""
    assert rf.balance_batch(300.0, 8.0, 1.0) == pytest.approx(2400)


def test_rack_throughput_2000_times_64():
    """Lecture a.7: B = 2,000 at ~64 steps/s is 128,000 tokens/s per rack."""
    assert rf.tokens_per_s(2000, 1 / 64) == pytest.approx(128_000)


def test_critical_context_200k_means_1667_bytes_per_token():
    """Lecture f.1: L* = 200k with N_act = 1e11 and 1-byte weights at R = 300 <=> b_kv = (1/300)*1e11/2e5 = 1,667 B."""
    w = 3.35e12
    chip = Chip("R300", hbm_capacity_bytes=1e11, hbm_bandwidth_bytes_per_s=w, peak_fp8_flop_per_s=600 * w)
    model = Model(
        "frontier", params_total=1e12, params_active=1e11, kv_bytes_per_token=2 * 1_667.0
    )  # fp8 cache: 1,667 B
    b = balance(model, chip, number_format="fp8", kv_format="fp8")
    assert b.critical_batch_ratio == pytest.approx(300)
    assert b.critical_context_tokens == pytest.approx(200_000, rel=0.001)


def test_critical_context_is_where_compute_meets_memory_at_every_batch():
    """Lecture b.3: at L = L* the slopes match, so B*(L) diverges; below it B*(L) balances the two times exactly."""
    b = balance(LLAMA2_7B, H100)
    for ctx in (0.25, 0.5, 0.9):
        context = ctx * b.critical_context_tokens
        batch = rf.balance_batch_at_context(b.balance_batch_params, context, b.critical_context_tokens)
        step = decode_step(LLAMA2_7B, H100, batch=batch, context_tokens=context, chips=1)
        assert step.compute_time_s == pytest.approx(step.memory_time_s, rel=1e-9)
    assert rf.balance_batch_at_context(100.0, 2e5, 2e5) == np.inf


@pytest.mark.parametrize(
    ("chip", "number_format", "expected", "rel"),
    [
        (Chip("A100", 80e9, 2.0e12, peak_bf16_flop_per_s=3.1e14), "bf16", 155, 0.01),
        (Chip("H100", 80e9, 3.35e12, peak_bf16_flop_per_s=9.9e14, peak_fp8_flop_per_s=2.0e15), "bf16", 295, 0.01),
        (Chip("H200", 141e9, 4.8e12, peak_bf16_flop_per_s=9.9e14), "bf16", 206, 0.01),
        (Chip("B200", 192e9, 8.0e12, peak_bf16_flop_per_s=2.25e15, peak_fp4_flop_per_s=9.0e15), "bf16", 281, 0.01),
        (Chip("B200", 192e9, 8.0e12, peak_bf16_flop_per_s=2.25e15, peak_fp4_flop_per_s=9.0e15), "fp4", 281, 0.01),
    ],
)
def test_r_per_chip_from_scaling_book_table(chip, number_format, expected, rel):
    """Lecture b.1 table (scaling book gpus.md): R is ~155 (A100) to ~295 (H100), not a universal 300."""
    assert balance(LLAMA2_7B, chip, number_format=number_format).critical_batch_ratio == pytest.approx(
        expected, rel=rel
    )


def test_latency_floor_and_cost_floor():
    """Lecture a.3/a.4: no batch beats the weight-read time; cost/token falls to p*max(2N/F, L*b_kv/W) as B grows."""
    floor = rf.weight_read_time_s(6.74e9, 2.0, 1, 3.35e12)
    assert floor == pytest.approx(13.48e9 / 3.35e12)
    huge = decode_step(LLAMA2_7B, H100, batch=1e9, context_tokens=2048, chips=1, usd_per_chip_hour=2.0)
    cost_floor = rf.decode_cost_floor_usd_per_token(2048, LLAMA2_7B.kv_bytes_per_token, 6.74e9, 989e12, 3.35e12, 2.0)
    assert huge.usd_per_token == pytest.approx(cost_floor, rel=1e-6)
    assert cost_floor == pytest.approx(2048 * 524_288 / 3.35e12 * 2.0 / 3600)  # KV-bound at 2k for MHA Llama-2


# ---------------------------------------------------------------------------- Llama-2-7B on an H100


def test_llama2_7b_on_h100():
    """Llama-2-7B bf16 on one H100 at B=32, 2,048 context: weights 13.5 GB, KV 34.4 GB, step 14.2 ms,
    $2.5e-4/1k tokens."""
    step = decode_step(LLAMA2_7B, H100, batch=32, context_tokens=2048, chips=1, usd_per_chip_hour=2.0)
    assert memory.weight_bytes(LLAMA2_7B.params_total, 2.0) == pytest.approx(13.5e9, rel=0.01)
    assert memory.kv_bytes(32, 2048, LLAMA2_7B.kv_bytes_per_token) == pytest.approx(34.4e9, rel=0.01)
    assert step.step_time_s == pytest.approx(14.2e-3, rel=0.01)
    assert step.bound == "memory"
    assert step.usd_per_token * 1e3 == pytest.approx(2.5e-4, rel=0.02)


# ---------------------------------------------------------------------------- properties

batches = st.floats(1, 1e6)
contexts = st.floats(0, 2e6)
params = st.floats(1e8, 2e12)


@settings(max_examples=200, deadline=None)
@given(b1=batches, b2=batches, ctx=contexts, n_tot=params, frac=st.floats(0.01, 1.0), b_kv=st.floats(0, 1e6))
def test_step_time_non_decreasing_in_batch(b1, b2, ctx, n_tot, frac, b_kv):
    lo, hi = sorted((b1, b2))
    model = Model("m", params_total=n_tot, params_active=n_tot * frac, kv_bytes_per_token=b_kv)
    t = decode_step(model, H100, batch=np.array([lo, hi]), context_tokens=ctx, chips=8)
    assert t.step_time_s[0] <= t.step_time_s[1]
    assert t.upper_bound_s[0] <= t.upper_bound_s[1]


@settings(max_examples=200, deadline=None)
@given(b1=batches, b2=batches, ctx=contexts, n_tot=params, frac=st.floats(0.01, 1.0), b_kv=st.floats(0, 1e6))
def test_cost_per_token_non_increasing_in_batch_while_weight_bound(b1, b2, ctx, n_tot, frac, b_kv):
    """While the weight fetch dominates (memory-bound), a bigger batch amortises it: cost/token never rises."""
    lo, hi = sorted((b1, b2))
    model = Model("m", params_total=n_tot, params_active=n_tot * frac, kv_bytes_per_token=b_kv)
    t = decode_step(model, H100, batch=np.array([lo, hi]), context_tokens=ctx, chips=8, usd_per_chip_hour=2.0)
    if t.bound[1] == "memory":  # memory-bound at the larger batch, so at the smaller one too
        assert t.usd_per_token[1] <= t.usd_per_token[0] * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(c1=contexts, c2=contexts, c3=contexts, batch=batches, b_kv=st.floats(0, 1e6))
def test_memory_time_affine_in_context(c1, c2, c3, batch, b_kv):
    """t_mem(L) = a + k*L: equal context steps give equal time steps, and t_mem(0) is the weight time."""
    model = Model("m", params_total=7e10, params_active=7e9, kv_bytes_per_token=b_kv)
    t = decode_step(model, H100, batch=batch, context_tokens=np.array([0.0, c1, c2, c3]), chips=4).memory_time_s
    slope = batch * b_kv / (4 * 3.35e12)
    assert t[0] == pytest.approx(7e10 * 2 / (4 * 3.35e12))
    np.testing.assert_allclose(t[1:] - t[0], slope * np.array([c1, c2, c3]), rtol=1e-9, atol=1e-15)


@settings(max_examples=100, deadline=None)
@given(batch=st.lists(batches, min_size=1, max_size=5), ctx=st.lists(contexts, min_size=1, max_size=5))
def test_scalar_and_array_inputs_agree(batch, ctx):
    grid = decode_step(
        LLAMA2_7B,
        H100,
        batch=np.array(batch)[:, None],
        context_tokens=np.array(ctx)[None, :],
        chips=1,
        usd_per_chip_hour=2.0,
    )
    for i, b in enumerate(batch):
        for j, c in enumerate(ctx):
            one = decode_step(LLAMA2_7B, H100, batch=b, context_tokens=c, chips=1, usd_per_chip_hour=2.0)
            assert isinstance(one.step_time_s, float) and isinstance(one.bound, str)
            assert (one.compute_time_s, one.memory_time_s, one.step_time_s, one.upper_bound_s, one.usd_per_token) == (
                grid.compute_time_s[i, j],
                grid.memory_time_s[i, j],
                grid.step_time_s[i, j],
                grid.upper_bound_s[i, j],
                grid.usd_per_token[i, j],
            )
            assert one.bound == grid.bound[i, j]


def test_prefill_cost_floor_is_the_forward_pass():
    """Lecture f.3: prefill is compute-bound; per token it costs a forward pass 2*N_act/F at p (KV write is far
    cheaper).

    Second method: a prefill step of 64 prompts of 100k tokens, whose weight read is amortised to nothing."""
    floor = rf.prefill_cost_floor_usd_per_token(LLAMA2_7B.kv_bytes_per_token, 6.74e9, 989e12, 3.35e12, 2.0)
    assert floor == pytest.approx(2 * 6.74e9 / 989e12 * 2.0 / 3600)
    long = prefill_step(LLAMA2_7B, H100, batch=64, prompt_tokens=100_000, chips=8, usd_per_chip_hour=2.0)
    assert long.bound == "compute" and long.usd_per_token == pytest.approx(floor, rel=1e-12)
