"""Fleet formulas against independent numbers: the lecture's rack figures, the scaling book's prefill:decode
example, hand arithmetic for the frontier's ends, and a synthetic round trip (linearity in traffic)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics import Chip, Model, decode_step, fleet, prefill_step

# LLaMA 3-70B on a TPU v5e 4x4, as in the scaling book's applied-inference chapter (bf16 weights and KV).
LLAMA70 = Model("llama-3-70b", params_total=70e9, params_active=70e9, kv_bytes_per_token=2 * 8 * 128 * 80 * 2.0)
V5E = Chip("TPU-v5e", hbm_capacity_bytes=16e9, hbm_bandwidth_bytes_per_s=8.2e11, peak_bf16_flop_per_s=1.97e14)

# A rack the lecture's way (a.7): 64 chips stepping a 2,000-sequence batch every 1/64 s. Compute-bound by
# construction: t = 2·B·N_act/(G·F) = 2·2000·1e11/(64·4e14) = 1/64 s; the weights read in 0.1 ms.
RACK_MODEL = Model("rack-model", params_total=1e11, params_active=1e11, kv_bytes_per_token=0.0)
RACK_CHIP = Chip("rack-chip", hbm_capacity_bytes=1e12, hbm_bandwidth_bytes_per_s=8e12, peak_fp4_flop_per_s=4e14)


def rack_step(batch=2000):
    return decode_step(RACK_MODEL, RACK_CHIP, batch=batch, context_tokens=0.0, chips=64, number_format="fp4")


# ---------------------------------------------------------------------------- the lecture's rack figures (a.7)


def test_a_rack_serves_128k_tokens_per_s():
    """Lecture a.7: tokens/s = B/t_step = 2,000 x 64 = 128,000 per rack."""
    step = rack_step()
    assert step.step_time_s == pytest.approx(1 / 64, rel=1e-12)
    assert step.tokens_per_s == pytest.approx(128_000, rel=1e-12)
    assert step.terms["tokens_per_s_per_user"] == pytest.approx(64, rel=1e-12)


@pytest.mark.parametrize(
    ("tokens_per_s", "racks"),
    [
        (1.28e8, 1_000),  # "one rack is one-thousandth" of Gemini's hundreds of millions of tokens/s
        (1e8, 782),  # 1e8 / 128,000 = 781.25 -> 782 whole racks
        (1e9, 7_813),  # 7,812.5 -> 7,813
    ],
)
def test_worldwide_traffic_needs_about_a_thousand_racks(tokens_per_s, racks):
    needed = fleet.decode_replicas_needed(tokens_per_s, rack_step().tokens_per_s)
    hw = fleet.pool_hardware(needed, 64, chips_per_node=4, chips_per_rack=64)
    assert (hw["replicas"], hw["racks"], hw["chips"]) == (racks, racks, racks * 64)


# ---------------------------------------------------------------------------- the scaling book's 3:1
# (applied-inference)


def test_scaling_book_prefill_decode_ratio_from_its_own_latencies():
    """'We had calculated 910ms per prefill step and 19ms per decode step at batch size 43 (let's call that 32).
    Therefore we need P / 0.91 = 32 * G / (0.019 * 512) or P = 3G' (scaling book, applied-inference)."""
    assert fleet.prefill_decode_server_ratio(0.91, 0.019, 32, 512) == pytest.approx(3.0, rel=0.01)


def test_scaling_book_prefill_decode_ratio_from_the_deployment_model():
    """The same example with both latencies from our step functions: 8,192-token prompts, 512-token outputs, batch
    32, LLaMA 3-70B bf16 on 16 TPU v5e (weights split over all 16), prefill at 40% MFU, attention FLOPs left out as
    the book leaves them. The book: 0.91 s per prefill, P ≈ 3G."""
    pre = prefill_step(LLAMA70, V5E, batch=1, prompt_tokens=8192, chips=16, mfu=0.4)
    assert pre.bound == "compute"
    assert pre.step_time_s == pytest.approx(0.91, rel=0.01)  # 2*70e9*8192/(16*1.97e14*0.4) = 0.910 s
    dec = decode_step(LLAMA70, V5E, batch=32, context_tokens=8192 + 256, chips=16)
    # the decode step: (140 GB + 32 x 8,448 x 327,680 B) / (16 x 8.2e11 B/s) = 17.4 ms; the book rounds HBM-full to 19
    assert dec.step_time_s == pytest.approx(0.0174, rel=0.01)
    requests = 1.0
    prefill = fleet.prefill_replicas_needed(requests, [1.0], [pre.step_time_s], [1.0])
    decode = fleet.decode_replicas_needed(requests * 512, dec.tokens_per_s)
    assert prefill / decode == pytest.approx(3.0, rel=0.15)
    assert prefill / decode == pytest.approx(
        fleet.prefill_decode_server_ratio(pre.step_time_s, dec.step_time_s, 32, 512), rel=1e-12
    )


def test_prefill_replicas_are_the_request_weighted_pass_time_per_prompt():
    """10 requests/s, 75% in passes of 8 prompts taking 0.1 s, 25% in passes of 2 taking 0.4 s."""
    needed = fleet.prefill_replicas_needed(10.0, [0.75, 0.25], [0.1, 0.4], [8.0, 2.0])
    assert needed == pytest.approx(10.0 * (0.75 * 0.1 / 8 + 0.25 * 0.4 / 2))


# ---------------------------------------------------------------------------- the frontier's ends

H100 = Chip("H100", hbm_capacity_bytes=80e9, hbm_bandwidth_bytes_per_s=3.35e12, peak_bf16_flop_per_s=989.4e12)
DENSE = Model("dense-70b", params_total=70.6e9, params_active=70.6e9, kv_bytes_per_token=327_680.0)


def frontier(batch, context=1024.0):
    step = decode_step(
        DENSE, H100, batch=np.asarray(batch, float), context_tokens=context, chips=8, usd_per_chip_hour=2.0
    )
    return step.terms


def test_batch_one_runs_at_the_latency_floor():
    """Lecture a.3: at batch 1 a step reads the weights (and one sequence's KV): 141.2 GB / (8 x 3.35 TB/s)."""
    out = frontier([1.0])
    floor_s = (70.6e9 * 2 + 1024 * 327_680) / (8 * 3.35e12)
    assert out["tokens_per_s_per_user"][0] == pytest.approx(1 / floor_s, rel=1e-12)  # ≈ 189.4 tokens/s
    assert out["tokens_per_s_per_user"][0] == pytest.approx(189.4, rel=1e-3)
    assert not out["compute_bound"][0]


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
    cost = frontier([65_536.0], context=context)["usd_per_mtok"][0]
    assert cost == pytest.approx(floor_usd_per_mtok, rel=0.01)
    # memory-bound, the weights' share (141 GB / 65,536 sequences) still shows; compute-bound, the floor is exact
    assert (cost > floor_usd_per_mtok) if kv_bound else cost == pytest.approx(floor_usd_per_mtok, rel=1e-12)


def test_frontier_is_monotone_and_flags_what_fits():
    batch = np.arange(1.0, 2049.0)
    out = frontier(batch)
    speed, throughput, cost = out["tokens_per_s_per_user"], out["tokens_per_s_per_chip"], out["usd_per_mtok"]
    assert np.all(np.diff(speed) < 0) and np.all(np.diff(throughput) >= -1e-9 * throughput[1:])
    assert np.all(np.diff(cost) <= 1e-9 * cost[1:])
    assert throughput[-1] == pytest.approx(989.4e12 / (2 * 70.6e9))  # compute-bound: F/(2*N_act) tokens/s per chip
    # 8 x 80 GB - 141.2 GB = 498.8 GB of KV room; 1,024 x 327,680 B per sequence -> 1,486 sequences fit
    assert out["fits"].sum() == 1486
    assert np.allclose(throughput * 8 / speed, batch)  # B = (tokens/s/chip x G) / (tokens/s/user)


# ---------------------------------------------------------------------------- traffic, power, money


def test_traffic_split_and_contexts():
    inp, out = fleet.split_traffic(1.6e7, 15.0)
    assert (inp, out) == (pytest.approx(1.5e7), pytest.approx(1e6))
    mean = fleet.mean_prompt_tokens([1024, 4096, 16384], [0.5, 0.25, 0.25])
    assert mean == pytest.approx(512 + 1024 + 4096)
    assert fleet.decode_context_tokens(mean, 600) == pytest.approx(5632 + 300)


def test_a_decode_batch_holds_long_outputs_for_longer():
    """A simulated decode pool (one request joins every step, its output drawn from 500 and 1,500 tokens in equal
    shares, its prompt 2,000 tokens): the sequences it holds average an output of E[O²]/E[O] = 1,250 tokens, not the
    mean 1,000, and attend to 2,000 + 1,250/2 tokens, within 1% (decoding_output_tokens, decode_context_tokens)."""
    rng = np.random.default_rng(0)
    outputs = rng.choice([500.0, 1500.0], size=20_000)
    ends = np.arange(outputs.size) + outputs  # request i decodes from step i for outputs[i] steps
    held_o, held_context = [], []
    for step in range(2_000, 18_000, 7):  # past the start, before the end
        active = np.flatnonzero((np.arange(outputs.size) <= step) & (ends > step))
        held_o.append(outputs[active].mean())
        held_context.append(np.mean(2000.0 + step - active))
    decoding = float(fleet.decoding_output_tokens([500.0, 1500.0], [0.5, 0.5]))
    assert decoding == pytest.approx(1250.0)
    assert np.mean(held_o) == pytest.approx(decoding, rel=0.01)
    assert np.mean(held_context) == pytest.approx(float(fleet.decode_context_tokens(2000.0, decoding)), rel=0.01)
    assert float(fleet.decoding_output_tokens([800.0], [1.0])) == pytest.approx(800.0)  # one length is itself


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

    per_replica = rack_step().tokens_per_s

    def plan(t):
        needed = fleet.decode_replicas_needed(t, per_replica)
        hw = fleet.pool_hardware(needed, 64, 4, 64)
        power = fleet.facility_power_w(hw["chips"], 1200, 1.82, 1.2)
        return needed, hw["chips"], power, fleet.usd_per_hour(hw["chips"], 2.0)

    need1, chips1, power1, usd1 = plan(tokens_per_s)
    need_k, chips_k, power_k, usd_k = plan(k * tokens_per_s)
    assert need_k == pytest.approx(k * need1, rel=1e-9)
    assert k * chips1 - k * 64 - 1e-6 <= chips_k <= k * chips1 + 64 + 1e-6
    assert power_k / power1 == pytest.approx(chips_k / chips1, rel=1e-12)
    assert usd_k / usd1 == pytest.approx(chips_k / chips1, rel=1e-12)
