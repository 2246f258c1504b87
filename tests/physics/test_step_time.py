"""The serving model's terms, each against an independent number: a simulation, an exact recursion, a paper's figure."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ.physics import deployment, step_time
from tests.analyses.helpers import deepseek_v3_h800_dep16


@pytest.mark.parametrize(("tokens", "k", "ranks"), [(4096, 8, 8), (512, 8, 32), (64, 8, 8), (2048, 4, 64)])
def test_the_busiest_expert_rank_matches_a_routing_simulation(tokens, k, ranks):
    """Balls into bins, checked by simulation: each token picks k of E experts uniformly, E/ranks per rank."""
    rng = np.random.default_rng(0)
    experts = 256
    draws = 300
    # k picks per token (with replacement: for k = 8 of 256 a repeat is 10% likely and moves the load < 1%)
    picks = rng.integers(0, experts, size=(draws, tokens * k)) // (experts // ranks)
    loads = np.stack([np.bincount(row, minlength=ranks) for row in picks])
    simulated = float(np.mean(loads.max(axis=1) / loads.mean(axis=1)))
    predicted = float(step_time.expert_imbalance_ratio(tokens, k, ranks))
    assert predicted == pytest.approx(simulated, rel=0.12)


def test_one_rank_or_no_tokens_has_no_imbalance():
    assert step_time.expert_imbalance_ratio(100, 8, 1) == 1.0
    assert step_time.expert_imbalance_ratio(0, 8, 8) == 1.0
    assert step_time.expert_imbalance_ratio(1, 1, 8) <= 8.0  # never more than every pair on one rank


def _exact_mva(demand, users, think):
    """Exact mean-value analysis of one queueing station and a delay (Lazowska et al. ch. 6, the recursion)."""
    queue = 0.0
    for n in range(1, users + 1):
        response = demand * (1.0 + queue)
        throughput = n / (response + think)
        queue = throughput * response
    return response


@pytest.mark.parametrize("users", [1, 2, 8, 32, 128, 512])
@pytest.mark.parametrize(("demand", "think"), [(0.05, 10.0), (0.5, 10.0), (0.1, 0.0)])
def test_the_closed_loop_response_tracks_exact_mean_value_analysis(users, demand, think):
    approx = float(step_time.closed_loop_response_s(demand, users, think))
    exact = _exact_mva(demand, users, think)
    assert approx == pytest.approx(exact, rel=0.25 if 1 < users < 512 else 0.02)
    assert approx >= demand * (1 - 1e-12) and approx >= users * demand - think - 1e-9  # both asymptotic bounds


def test_one_user_never_queues():
    assert step_time.closed_loop_response_s(0.2, 1, 5.0) == pytest.approx(0.2)
    assert step_time.burst_wait_s(1, 0.2) == 0.0
    assert step_time.burst_wait_s(11, 0.2) == pytest.approx(1.0)  # 10 requests ahead of the last, 0.2 s each, /2


def test_the_pipeline_bubble_is_gpipes():
    """GPipe (Huang et al. 2019, §2.3): the bubble is (K − 1)/(M + K − 1) of the pass."""
    k, m, stage = 4, 16, 0.01
    total = float(step_time.pipeline_pass_time_s(stage, m, k))
    assert (total - m * stage) / total == pytest.approx((k - 1) / (m + k - 1))
    assert float(step_time.pipeline_pass_time_s(stage, 1, 1)) == pytest.approx(stage)


@pytest.mark.parametrize(("a", "b"), [(1.0, 0.0), (1.0, 1.0), (3.0, 1.0), (0.0, 0.0), (1e-9, 2.0)])
def test_the_soft_roofline_lies_between_the_max_and_the_sum(a, b):
    s = float(step_time.smooth_max(a, b))
    assert max(a, b) - 1e-15 <= s <= a + b + 1e-15
    if min(a, b) == 0:
        assert s == pytest.approx(max(a, b))


def test_multi_token_prediction_gives_deepseeks_speed_up(real_db):
    """DeepSeek-V3 report §5.4.3: one MTP module, 85-90% of second tokens accepted, "1.8 times TPS"."""
    model, chip, layout = deepseek_v3_h800_dep16(real_db)
    settings = {
        "weight_bytes_per_param": 1.0,
        "dispatch_bytes": 1.0,
        "mfu": 0.5,
        "mbu": 0.8,
        "expert_mfu": 0.3,
        "kernel_serial": 1.0,
        "layer_overhead_s": 3e-5,
        "sequence_overhead_s": 3e-5,
    }
    plain = deployment.decode_terms(model, chip, layout, 256.0, 4000.0, kv_scale=0.5, settings=settings)
    mtp = deployment.decode_terms(
        model,
        chip,
        layout,
        256.0,
        4000.0,
        kv_scale=0.5,
        settings={**settings, "speculative_tokens": 1.0, "acceptance_frac": 0.87},
    )
    speed_up = float(mtp["tokens_per_s_per_user"][0] / plain["tokens_per_s_per_user"][0])
    assert 1.6 <= speed_up <= 1.87  # the verify step costs a little; DeepSeek measured 1.8


def test_an_fp8_cache_reads_half_the_bytes_of_deepseeks_latent(real_db):
    """MLA's cache is (kv_lora_rank 512 + rope 64) values per layer: 61 layers x 576 x 2 bytes = 70,272 bytes per
    token in BF16 (DeepSeek-V3 config.json), half of that in FP8."""
    model, chip, layout = deepseek_v3_h800_dep16(real_db)
    assert float(model["kv_bytes_per_token"][0]) == 61 * 576 * 2
    settings = {"weight_bytes_per_param": 1.0}
    bf16 = deployment.decode_terms(model, chip, layout, 64.0, 1000.0, kv_scale=1.0, settings=settings)
    fp8 = deployment.decode_terms(model, chip, layout, 64.0, 1000.0, kv_scale=0.5, settings=settings)
    ratio = float(fp8["kv_bytes_read_per_chip"][0] / bf16["kv_bytes_read_per_chip"][0])
    assert ratio == pytest.approx(0.5, rel=0.02)


def test_a_calibrated_step_is_never_faster_than_the_lecture_bound(real_db):
    model, chip, layout = deepseek_v3_h800_dep16(real_db)
    rng = np.random.default_rng(3)
    bound = deployment.decode_terms(model, chip, layout, np.geomspace(1, 4096, 13), 2000.0)["step_time_s"]
    for _ in range(10):
        settings = {
            "mfu": rng.uniform(0.05, 1.0),
            "expert_mfu": rng.uniform(0.05, 1.0),
            "mbu": rng.uniform(0.3, 1.0),
            "expert_mbu": rng.uniform(0.3, 1.0),
            "attention_mfu": rng.uniform(0.05, 1.0),
            "link_frac": rng.uniform(0.1, 1.0),
            "layer_overhead_s": rng.uniform(0, 1e-4),
            "sequence_overhead_s": rng.uniform(0, 1e-4),
            "expert_imbalance_scale": rng.uniform(0, 5),
            "kernel_serial": 1.0,
        }
        step = deployment.decode_terms(model, chip, layout, np.geomspace(1, 4096, 13), 2000.0, settings=settings)
        assert np.all(step["step_time_s"] >= bound * (1 - 1e-12))


def test_overlapping_communication_hides_it_behind_the_kernels():
    kwargs = dict(
        dense_flop=1.0,
        expert_flop=0.0,
        attention_flop=0.0,
        dense_bytes=0.0,
        expert_bytes=0.0,
        kv_bytes=0.0,
        peak_flop_per_s=1.0,
        attention_peak_flop_per_s=1.0,
        hbm_bandwidth_bytes_per_s=1.0,
        collective_hops=0.0,
        layers=0.0,
        sequences=0.0,
        expert_imbalance_ratio_=1.0,
        gemm_mfu=1.0,
        expert_mfu=1.0,
        attention_mfu=1.0,
        mbu=1.0,
        expert_mbu=1.0,
        link_frac=1.0,
        collective_latency_s=0.0,
        layer_overhead_s=0.0,
        sequence_overhead_s=0.0,
        step_overhead_s=0.0,
        expert_imbalance_scale=0.0,
    )
    serial = step_time.kernel_step_time_s(comm_time_at_peak_s=0.6, **kwargs)
    hidden = step_time.kernel_step_time_s(comm_time_at_peak_s=0.6, comm_overlap_frac=1.0, **kwargs)
    exposed = step_time.kernel_step_time_s(comm_time_at_peak_s=1.5, comm_overlap_frac=1.0, **kwargs)
    assert float(serial) == pytest.approx(1.6) and float(hidden) == pytest.approx(1.0)
    assert float(exposed) == pytest.approx(1.5)  # only what exceeds the kernels shows
    # the parts say which: 1 s of kernels, and the communication the step waits for (0.6, none, 0.5 of 1.5)
    for time, overlap, waited in ((0.6, 0.0, 0.6), (0.6, 1.0, 0.0), (1.5, 1.0, 0.5)):
        kernels, comm, fixed = step_time.kernel_step_parts(
            comm_time_at_peak_s=time, comm_overlap_frac=overlap, **kwargs
        )
        assert (float(kernels), float(comm), float(fixed)) == pytest.approx((1.0, waited, 0.0))


def test_a_balancer_leaves_the_busiest_rank_of_uniform_routing():
    """A skewed router (lognormal expert popularity, σ = 1) over 32 ranks, simulated: with the experts placed by
    their popularity as EPLB places them (32 redundant copies to the hottest, then the heaviest replica to the
    lightest rank with a free slot) the busiest rank's excess over the mean is uniform routing's
    (:func:`step_time.expert_imbalance_ratio`, within 25%), where contiguous placement carries over 5x that: the
    router's skew a balanced layout does not pay (``expert_balanced``)."""
    rng = np.random.default_rng(0)
    experts, ranks, k, redundant, tokens, draws = 256, 32, 8, 32, 2048, 40
    popularity = rng.lognormal(0.0, 1.0, experts)
    popularity /= popularity.sum()
    copies = np.ones(experts, int)
    for _ in range(redundant):
        copies[np.argmax(popularity / copies)] += 1
    replicas = np.repeat(np.arange(experts), copies)
    load, rank_of = popularity[replicas] / copies[replicas], np.empty(replicas.size, int)
    rank_load, free = np.zeros(ranks), np.full(ranks, (experts + redundant) // ranks)
    for i in np.argsort(-load):
        rank = int(np.argmin(np.where(free > 0, rank_load, np.inf)))
        rank_of[i], rank_load[rank], free[rank] = rank, rank_load[rank] + load[i], free[rank] - 1
    share = np.zeros((experts, ranks))  # an expert's tokens split evenly over its copies
    np.add.at(share, (replicas, rank_of), 1.0 / copies[replicas])
    picks = rng.choice(experts, size=(draws, tokens * k), p=popularity)
    placed = (rng.random(picks.shape)[..., None] > np.cumsum(share, axis=1)[picks]).sum(-1)

    def excess(rank_of_pick):
        loads = np.stack([np.bincount(row, minlength=ranks) for row in rank_of_pick])
        return float(np.mean(loads.max(axis=1) / loads.mean(axis=1))) - 1.0

    uniform = float(step_time.expert_imbalance_ratio(tokens, k, ranks)) - 1.0
    assert excess(placed) == pytest.approx(uniform, rel=0.25)
    assert excess(picks // (experts // ranks)) > 5 * uniform
    # and the step takes it so: a balanced layout's experts at scale 1 whatever the fitted scale
    kwargs = {
        **dict.fromkeys(("dense_flop", "attention_flop", "dense_bytes", "expert_bytes", "kv_bytes"), 0.0),
        **dict.fromkeys(("peak_flop_per_s", "attention_peak_flop_per_s", "hbm_bandwidth_bytes_per_s"), 1.0),
        **dict.fromkeys(("gemm_mfu", "expert_mfu", "attention_mfu", "mbu", "expert_mbu", "link_frac"), 1.0),
        **dict.fromkeys(("comm_time_at_peak_s", "collective_hops", "layers", "sequences"), 0.0),
        **dict.fromkeys(("collective_latency_s", "layer_overhead_s", "sequence_overhead_s", "step_overhead_s"), 0.0),
        "expert_flop": 1.0,
        "expert_imbalance_ratio_": 1.0 + uniform,
    }
    for scale in (1.0, 24.0):
        balanced = step_time.kernel_step_time_s(expert_imbalance_scale=scale, expert_balanced=1.0, **kwargs)
        assert float(balanced) == pytest.approx(1.0 + uniform)
    skewed = step_time.kernel_step_time_s(expert_imbalance_scale=24.0, **kwargs)
    assert float(skewed) == pytest.approx(1.0 + 24.0 * uniform)


def test_a_layout_is_balanced_where_it_says_so_or_holds_redundant_experts():
    """Redundant expert copies exist only where a balancer places them (DeepSeek's Day-6 units: 32)."""
    layout = {"redundant_expert_slots": np.array([0.0, 32.0, np.nan, 0.0]), "expert_balanced": [0, 0, 0, 1]}
    assert deployment.expert_balanced(layout).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert deployment.expert_balanced({}).tolist() == 0.0


@given(
    batch=st.floats(1.0, 4096.0),
    output_tokens=st.floats(1.0, 65_536.0),
    prompt_tokens=st.floats(1.0, 200_000.0),
    chunk_tokens=st.floats(64.0, 65_536.0),
)
def test_the_steps_that_carry_chunks_carry_every_prompt_token(batch, output_tokens, prompt_tokens, chunk_tokens):
    """The share c of steps that carry a chunk, each with (B/O)/c prompts, prefills B/O prompts a step: every
    prompt token once, at least a whole chunk in each step that carries one, and a chunk in every step once the
    prompts arrive faster than one chunk a step."""
    chunk = min(chunk_tokens, prompt_tokens)
    per_step = batch / output_tokens
    c = float(step_time.chunk_step_frac(per_step, prompt_tokens, chunk))
    assert 0.0 < c <= 1.0
    carried = per_step / c * prompt_tokens  # prompt tokens in a step that carries a chunk
    assert c * carried == pytest.approx(per_step * prompt_tokens, rel=1e-12)
    assert carried >= chunk * (1 - 1e-12)
    assert (c == 1.0) == (per_step * prompt_tokens >= chunk)
