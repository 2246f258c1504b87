"""Fleet formulas against independent numbers: the lecture's rack figures, the scaling book's prefill:decode
example, hand arithmetic for the frontier's ends, and synthetic round trips (linearity, batch for a speed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics import fleet

# LLaMA 3-70B on a TPU v5e 4x4, as in the scaling book's applied-inference chapter (bf16 weights and KV).
LLAMA70 = dict(
    params_total=70e9, params_active=70e9, weight_bytes_per_param=2.0, kv_bytes_per_token=2 * 8 * 128 * 80 * 2.0
)
V5E16 = dict(chips=16.0, peak_flop_per_s=1.97e14, hbm_bandwidth_bytes_per_s=8.2e11)

# A rack the lecture's way (a.7): 64 chips stepping a 2,000-sequence batch every 1/64 s. Compute-bound by
# construction: t = 2·B·N_act/(G·F) = 2·2000·1e11/(64·4e14) = 1/64 s; the weights read in 0.1 ms.
RACK = dict(
    params_total=1e11,
    params_active=1e11,
    weight_bytes_per_param=0.5,
    kv_bytes_per_token=0.0,
    chips=64.0,
    peak_flop_per_s=4e14,
    hbm_bandwidth_bytes_per_s=8e12,
)


# ---------------------------------------------------------------------------- the lecture's rack figures (a.7)


def test_a_rack_serves_128k_tokens_per_s():
    """Lecture a.7: tokens/s = B/t_step = 2,000 x 64 = 128,000 per rack."""
    pool = fleet.decode_pool(output_tokens_per_s=1.0, batch=2000, context_tokens=0.0, **RACK)
    assert pool["step_time_s"] == pytest.approx(1 / 64, rel=1e-12)
    assert pool["tokens_per_s_per_replica"] == pytest.approx(128_000, rel=1e-12)
    assert pool["tokens_per_s_per_user"] == pytest.approx(64, rel=1e-12)


@pytest.mark.parametrize(
    ("tokens_per_s", "racks"),
    [
        (1.28e8, 1_000),  # "one rack is one-thousandth" of Gemini's hundreds of millions of tokens/s
        (1e8, 782),  # 1e8 / 128,000 = 781.25 -> 782 whole racks
        (1e9, 7_813),  # 7,812.5 -> 7,813
    ],
)
def test_worldwide_traffic_needs_about_a_thousand_racks(tokens_per_s, racks):
    pool = fleet.decode_pool(output_tokens_per_s=tokens_per_s, batch=2000, context_tokens=0.0, **RACK)
    hw = fleet.pool_hardware(pool["replicas_needed"], 64, chips_per_node=4, chips_per_rack=64)
    assert (hw["replicas"], hw["racks"], hw["chips"]) == (racks, racks, racks * 64)


# ---------------------------------------------------------------------------- the scaling book's 3:1
# (applied-inference)


def test_scaling_book_prefill_decode_ratio_from_its_own_latencies():
    """'We had calculated 910ms per prefill step and 19ms per decode step at batch size 43 (let's call that 32).
    Therefore we need P / 0.91 = 32 * G / (0.019 * 512) or P = 3G' (scaling book, applied-inference)."""
    assert fleet.prefill_decode_server_ratio(0.91, 0.019, 32, 512) == pytest.approx(3.0, rel=0.01)


def test_scaling_book_prefill_decode_ratio_from_the_roofline():
    """The same example with both latencies from our roofline: 8,192-token prompts, 512-token outputs, batch 32,
    LLaMA 3-70B bf16 on 16 TPU v5e, prefill at 40% MFU. The book: 0.91 s per prefill, P ≈ 3G."""
    requests = 1.0
    pre = fleet.prefill_pool(
        requests_per_s=requests,
        share_frac_by_context=[1.0],
        prompt_tokens_by_context=[8192.0],
        cache_hit_frac=0.0,
        tokens_per_pass_target=1.0,
        max_prompts_by_context=[1.0],
        mfu=0.4,
        **LLAMA70,
        **V5E16,
    )
    assert pre["prompts_per_pass"][0] == 1 and bool(pre["compute_bound"][0])
    assert pre["pass_time_s"][0] == pytest.approx(0.91, rel=0.01)  # 2*70e9*8192/(16*1.97e14*0.4) = 0.910 s
    dec = fleet.decode_pool(output_tokens_per_s=requests * 512, batch=32, context_tokens=8192 + 256, **LLAMA70, **V5E16)
    # the decode step: (140 GB + 32 x 8,448 x 327,680 B) / (16 x 8.2e11 B/s) = 17.4 ms; the book rounds HBM-full to 19
    # ms
    assert dec["step_time_s"] == pytest.approx(0.0174, rel=0.01)
    ratio = pre["replicas_needed"] / dec["replicas_needed"]
    assert ratio == pytest.approx(3.0, rel=0.15)
    assert ratio == pytest.approx(
        fleet.prefill_decode_server_ratio(pre["pass_time_s"][0], dec["step_time_s"], 32, 512), rel=1e-12
    )


def test_prefill_batches_short_prompts_until_compute_bound_and_skips_cached_tokens():
    """A 1,000-token prompt, half of it cached: 500 new tokens per prompt, so a 4,000-token target batches 8 prompts;
    the memory cap (5 fit) wins when it is lower."""
    common = dict(
        requests_per_s=10.0,
        share_frac_by_context=[1.0],
        prompt_tokens_by_context=[1000.0],
        cache_hit_frac=0.5,
        tokens_per_pass_target=4000.0,
        **LLAMA70,
        **V5E16,
    )
    free = fleet.prefill_pool(max_prompts_by_context=[100.0], **common)
    capped = fleet.prefill_pool(max_prompts_by_context=[5.0], **common)
    assert (free["prompts_per_pass"][0], capped["prompts_per_pass"][0]) == (8.0, 5.0)
    compute = 2 * 8 * 500 * 70e9 / (16 * 1.97e14)  # 0.0888 s, more than the 140 GB weight read (10.7 ms) + KV
    assert free["pass_time_s"][0] == pytest.approx(compute, rel=1e-9)
    assert free["replicas_needed"] == pytest.approx(10.0 * compute / 8, rel=1e-9)
    assert free["tokens_per_s_per_replica"] == pytest.approx(8 * 500 / compute, rel=1e-9)


# ---------------------------------------------------------------------------- the frontier's ends


def frontier(batch, context=1024.0, **kw):
    h100x8 = dict(chips=8.0, peak_flop_per_s=989.4e12, hbm_bandwidth_bytes_per_s=3.35e12, hbm_capacity_bytes=80e9)
    dense = dict(params_total=70.6e9, params_active=70.6e9, weight_bytes_per_param=2.0, kv_bytes_per_token=327_680.0)
    return fleet.frontier(
        batch=np.asarray(batch, float),
        context_tokens=np.array([context]),
        usd_per_chip_hour=2.0,
        **(dense | h100x8 | kw),
    )


def test_batch_one_runs_at_the_latency_floor():
    """Lecture a.3: at batch 1 a step reads the weights (and one sequence's KV): 141.2 GB / (8 x 3.35 TB/s)."""
    out = frontier([1.0])
    floor_s = (70.6e9 * 2 + 1024 * 327_680) / (8 * 3.35e12)
    assert out["tokens_per_s_per_user"][0, 0] == pytest.approx(1 / floor_s, rel=1e-12)  # ≈ 189.4 tokens/s
    assert out["tokens_per_s_per_user"][0, 0] == pytest.approx(189.4, rel=1e-3)
    assert not out["compute_bound"][0, 0]


@pytest.mark.parametrize(
    ("context", "kv_bound"),
    [
        (8192.0, True),  # L*b_kv/W = 8,192 x 327,680 / 3.35e12 = 801 us per token per chip > 2*N_act/F = 143 us
        (128.0, False),  # 12.5 us of KV: compute-bound, the floor is the forward pass
    ],
)
def test_large_batch_approaches_the_cost_floor(context, kv_bound):
    """Lecture a.4: as B grows, cost per token -> p * max(2*N_act/F, L*b_kv/W) per chip (the weight read amortised)."""
    per_chip_s = max(2 * 70.6e9 / 989.4e12, context * 327_680 / 3.35e12)
    floor_usd_per_mtok = per_chip_s * 2.0 / 3600 * 1e6
    cost = frontier([65_536.0], context=context)["usd_per_mtok"][0, 0]
    assert cost == pytest.approx(floor_usd_per_mtok, rel=0.01)
    # memory-bound, the weights' share (141 GB / 65,536 sequences) still shows; compute-bound, the floor is exact
    assert (cost > floor_usd_per_mtok) if kv_bound else cost == pytest.approx(floor_usd_per_mtok, rel=1e-12)


def test_frontier_is_monotone_and_flags_what_fits():
    batch = np.arange(1.0, 2049.0)
    out = frontier(batch)
    speed, throughput, cost = out["tokens_per_s_per_user"][0], out["tokens_per_s_per_chip"][0], out["usd_per_mtok"][0]
    assert np.all(np.diff(speed) < 0) and np.all(np.diff(throughput) >= -1e-9 * throughput[1:])
    assert np.all(np.diff(cost) <= 1e-9 * cost[1:])
    assert throughput[-1] == pytest.approx(989.4e12 / (2 * 70.6e9))  # compute-bound: F/(2*N_act) tokens/s per chip
    # 8 x 80 GB - 141.2 GB = 498.8 GB of KV room; 1,024 x 327,680 B per sequence -> 1,486 sequences fit
    assert out["fits_in_memory"][0].sum() == 1486
    assert np.allclose(throughput * 8 / speed, batch)  # B = (tokens/s/chip x G) / (tokens/s/user)


def test_pareto_optimal_keeps_the_upper_envelope():
    group = np.array([1, 1, 1, 1, 2, 2])
    speed = np.array([100.0, 50.0, 90.0, 40.0, 10.0, 5.0])
    throughput = np.array([10.0, 20.0, 5.0, 30.0, 1.0, 2.0])
    assert fleet.pareto_optimal(group, speed, throughput).tolist() == [True, True, False, True, True, True]


# ---------------------------------------------------------------------------- batch policies and replica size


def decode_step_s(batch, chips=8.0, context=8192.0):
    compute = 2 * batch * 70.6e9 / (chips * 989.4e12)
    memory = (70.6e9 * 2 + batch * context * 327_680) / (chips * 3.35e12)
    return max(compute, memory)


@pytest.mark.parametrize("speed", [20.0, 50.0, 100.0, 150.0])
def test_max_batch_for_speed_is_the_largest_meeting_the_target(speed):
    b = fleet.max_batch_for_speed(speed, 8.0, 989.4e12, 3.35e12, 70.6e9, 70.6e9, 2.0, 8192.0, 327_680.0)
    assert b >= 1
    assert 1 / decode_step_s(b) >= speed * (1 - 1e-12)
    assert 1 / decode_step_s(b + 1) < speed


def test_max_batch_for_speed_is_zero_below_the_latency_floor():
    """8 x H100 read 141 GB of weights in 5.3 ms: no batch reaches 200 tokens/s per user."""
    assert fleet.max_batch_for_speed(200.0, 8.0, 989.4e12, 3.35e12, 70.6e9, 70.6e9, 2.0, 8192.0, 327_680.0) == 0


@pytest.mark.parametrize(
    ("batch", "chips"),
    [
        (1, 4.0),  # DeepSeek-V3 fp8: 671 GB + 0.7 GB of KV = 3.6 x 186 GB -> 4 chips
        (2000, 16.0),  # + 2,000 x 10,000 x 70,272 B = 1.4 TB of KV: 2.08 TB = 11.2 chips -> 16
        (20_000, 72.0),  # 14.7 TB = 79 chips -> 128, capped at the 72-chip NVL72 domain
    ],
)
def test_replica_holds_weights_and_kv_within_the_domain(batch, chips):
    assert fleet.replica_for_batch(671e9, 1.0, batch, 10_000, 70_272, 186e9, 72) == (chips, 1.0)


def test_replica_pipelines_when_the_weights_need_more_than_a_domain():
    """DeepSeek-V3 bf16 (1.34 TB) on 8 x 80 GB H100 domains: 4 domains of 8 chips (lecture d.1)."""
    assert fleet.replica_for_batch(671e9, 2.0, 100, 10_000, 70_272, 80e9, 8) == (32.0, 4.0)


# ---------------------------------------------------------------------------- traffic, power, money


def test_traffic_split_and_contexts():
    inp, out = fleet.split_traffic(1.6e7, 15.0)
    assert (inp, out) == (pytest.approx(1.5e7), pytest.approx(1e6))
    mean = fleet.mean_prompt_tokens([1024, 4096, 16384], [0.5, 0.25, 0.25])
    assert mean == pytest.approx(512 + 1024 + 4096)
    assert fleet.decode_context_tokens(mean, 600) == pytest.approx(5632 + 300)


def test_power_energy_and_tokens_per_mwh():
    """72 GB200 at 1,200 W, x1.39 (NVL72 ~120 kW) x PUE 1.2 = 144 kW; 1e6 tokens/s on 1 MW = 3.6e9 tokens per MWh."""
    assert fleet.facility_power_w(72, 1200, 1.39, 1.2) == pytest.approx(72 * 1200 * 1.39 * 1.2)
    assert fleet.energy_mwh(1e6, 24) == pytest.approx(24.0)
    assert fleet.tokens_per_mwh(1e6, 1e6) == pytest.approx(3.6e9)


def test_cost_per_mtok_and_margin():
    """100 chips at $2/h = $200/h; 1e5 tokens/s = 3.6e8 tokens/h -> $0.556 per MTok; at $1/MTok a margin of 44%."""
    cost = fleet.usd_per_mtok(fleet.usd_per_hour(100, 2.0), 1e5)
    assert cost == pytest.approx(200 / 360)
    assert fleet.gross_margin_frac(1.0, cost) == pytest.approx(1 - 200 / 360)
    assert fleet.usd_per_day(72, 2.0) == 3456.0  # an NVL72 rack at the lecture's $2/chip-hour for a day


def test_revenue_bills_tiers_per_bucket_and_cached_tokens_at_the_read_price():
    """Gemini 3.1 Pro: $2/$12 (cache $0.20) up to 200k, $4/$18 (cache $0.40) above; half the prompt cached.
    1 request/s: 75% at 4k, 25% at 256k prompts, 500 output tokens each."""
    rev = fleet.revenue_usd_per_s(
        1.0, [[0.75, 0.25]], [[4096.0, 262_144.0]], 0.5, 500.0, [[2.0, 4.0]], [[0.2, 0.4]], [[12.0, 18.0]]
    )
    short = (2048 * 2.0 + 2048 * 0.2 + 500 * 12.0) / 1e6
    long = (131_072 * 4.0 + 131_072 * 0.4 + 500 * 18.0) / 1e6
    assert rev[0] == pytest.approx(0.75 * short + 0.25 * long)
    no_cache_price = fleet.revenue_usd_per_s(1.0, [1.0], [4096.0], 0.5, 500.0, [2.0], [np.nan], [12.0])
    assert no_cache_price == pytest.approx((4096 * 2.0 + 500 * 12.0) / 1e6)


# ---------------------------------------------------------------------------- linearity in traffic


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1e3, max_value=1e9), st.floats(min_value=1.5, max_value=1000.0))
def test_chips_power_and_cost_scale_linearly_with_traffic(tokens_per_s, k):
    """Fractional replicas scale exactly; whole chips within one replica of k x; power and cost follow the chips."""

    def plan(t):
        dec = fleet.decode_pool(output_tokens_per_s=t, batch=2000, context_tokens=0.0, **RACK)
        hw = fleet.pool_hardware(dec["replicas_needed"], 64, 4, 64)
        power = fleet.facility_power_w(hw["chips"], 1200, 1.82, 1.2)
        return dec["replicas_needed"], hw["chips"], power, fleet.usd_per_hour(hw["chips"], 2.0)

    need1, chips1, power1, usd1 = plan(tokens_per_s)
    need_k, chips_k, power_k, usd_k = plan(k * tokens_per_s)
    assert need_k == pytest.approx(k * need1, rel=1e-9)
    assert k * chips1 - k * 64 - 1e-6 <= chips_k <= k * chips1 + 64 + 1e-6
    assert power_k / power1 == pytest.approx(chips_k / chips1, rel=1e-12)
    assert usd_k / usd1 == pytest.approx(chips_k / chips1, rel=1e-12)
