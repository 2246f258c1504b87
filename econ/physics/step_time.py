"""What a serving step and a request take on real engines: the terms the idealised roofline leaves out.

The lecture's step time ``max(compute, memory, communication)`` is a lower bound: every byte and FLOP at peak,
perfectly overlapped. Measured engines (the InferenceX runs of ``data/inferencex_train.csv``) run a step as a
sequence of kernels, each bound by its own roofline, plus fixed costs no roofline sees. This module holds those
terms, each a function of arrays (broadcasting), each with its source:

- **kernels in sequence**: a step is the dense GEMMs, the routed experts' grouped GEMMs and attention one after
  another, each ``smax(FLOPs/(P·η_c), bytes/(W·η_m))`` (a soft roofline: the p-norm of the two times, which is
  the max far from the ridge and a gradual knee near it, as measured kernels show), plus communication at
  ``η_l`` of the link, a latency per collective hop, a fixed cost per layer (kernel launches, norms, routing:
  what sets a large MoE model's speed at batch 1), per sequence scheduled (the engine's per-request work each
  step) and per step;
- **expert load imbalance**: the busiest expert-parallel rank, not the mean, sets the grouped GEMMs' time; with
  uniform routing of ``m`` token-expert pairs per rank over ``n`` ranks the busiest holds ``m + √(2·m·ln n)``
  (Raab & Steger 1998, "Balls into bins", the heavily loaded case), and real routers are more skewed (a fitted
  scale of the excess). Where a load balancer places the experts from measured routing statistics (DeepSeek's
  EPLB, with or without redundant copies of hot experts) the skew is balanced away and the busiest rank is
  uniform routing's: LMSYS's "simulated perfect EPLB" is "random expert selection following group-limited
  routing semantics" (lmsys.org/blog/2025-05-05-large-scale-ep, Profile Results);
- **pipeline bubbles**: a pass of M micro-batches through PP stages takes ``(M + PP − 1)`` stage times (GPipe,
  Huang et al. 2019: bubble share ``(PP − 1)/(M + PP − 1)``);
- **queueing in TTFT**: a benchmark client keeps C requests in flight (a closed loop: each user sends its next
  request when the last one ends, after its ``Z = (O − 1)·TPOT`` of decoding), so a request waits for the
  prefill work queued ahead of it. Schweitzer's approximate mean-value analysis of one queue of demand D per
  request with C users and think time Z gives the response ``R = ((C·D − Z) + √((C·D − Z)² + 4·D·Z))/2``
  (exact at C = 1 and in both asymptotes: ``D`` unloaded, ``C·D − Z`` saturated); the benchmark's opening burst
  of C requests adds ``(C − 1)·D/2`` to each of its first requests; where the decode pool holds K < C sequences
  the others wait for a slot, ``(C/K − 1)`` request lifetimes, and a router blind to load makes users wait on a
  busy worker while another has room (:mod:`econ.physics.slot_wait`).

Prefill chunks sharing an aggregated worker's decode steps run in a share of them (:func:`chunk_step_frac`), and an
engine may hold new prompts back to prefill them together (:mod:`econ.physics.prompt_hold`). Speculative
decoding (:func:`econ.physics.deployment.accepted_tokens_per_step`) and the KV-cache format (``kv_scale`` of the
deployment terms) live with the step terms.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula

SMOOTH_MAX_POWER = 2.0
"""p of the soft roofline ``(a^p + b^p)^(1/p)``: at the ridge (a = b) a kernel takes 2^(1/2) = 1.41x the max of its
two times, 1.12x once one is twice the other, 1.005x at ten times. A stated shape (the Euclidean norm of the compute
and memory times), not a fitted constant; the calibration's efficiencies absorb what it over- or under-charges."""


def _f(x):
    return np.asarray(x, dtype=float)


@formula("smax(a, b) = (a^p + b^p)^(1/p)", "soft roofline (p-norm of compute and memory time)")
def smooth_max(a, b, power: float = SMOOTH_MAX_POWER):
    """The soft maximum of two non-negative times [s]: ≥ max(a, b), → max(a, b) as one dominates.

    At p = 2 it is ``√(a² + b²)`` (the serving grids hold millions of points: the scaled form took ~4x as long);
    where that is not finite (an infinite or NaN time, a square beyond the float range) the scaled form decides, so
    a time that cannot be computed stays NaN as before."""
    a, b = _f(a), _f(b)
    if power != 2.0:
        return _scaled_max(a, b, power)
    with np.errstate(over="ignore", invalid="ignore"):
        norm = np.sqrt(a * a + b * b)
    bad = ~np.isfinite(norm)
    if bad.any():
        norm = np.array(norm)
        norm[bad] = _scaled_max(np.broadcast_to(a, bad.shape)[bad], np.broadcast_to(b, bad.shape)[bad], power)
    return norm


def _scaled_max(a: np.ndarray, b: np.ndarray, power: float) -> np.ndarray:
    """``(a^p + b^p)^(1/p)`` as ``max · ((a/max)^p + (b/max)^p)^(1/p)``: no power overflows."""
    top = np.maximum(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio_a = np.where(top > 0, a / top, 0.0)
        ratio_b = np.where(top > 0, b / top, 0.0)
    return top * (ratio_a**power + ratio_b**power) ** (1.0 / power)


@formula("r = min(1 + √(2·ln n / m), n),  m = t·k/n", "Raab & Steger 1998: max load of m·n balls in n bins")
def expert_imbalance_ratio(tokens, experts_per_token, expert_parallel):
    """Busiest expert-parallel rank's token-expert pairs over the mean, under uniform routing [ratio].

    ``tokens`` routed tokens each pick ``experts_per_token`` experts spread over ``expert_parallel`` ranks:
    ``m = t·k/n`` pairs per rank on average, ``m + √(2·m·ln n)`` on the busiest (the heavily loaded case of
    balls into bins), never more than all of them (n times the mean). 1 for one rank or no experts.
    """
    n = np.maximum(_f(expert_parallel), 1.0)
    m = _f(tokens) * np.nan_to_num(_f(experts_per_token)) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        excess = np.sqrt(2.0 * np.log(n) / m)
    ratio = np.minimum(1.0 + np.where(m > 0, excess, 0.0), n)
    return np.where((n > 1) & (m > 0), ratio, 1.0)


GQA_LAYER_KERNELS = 9.0
"""Kernels one decoder layer of grouped-query attention and a gated FFN launches per step, as SGLang's Llama runs
it (``python/sglang/srt/models/llama.py``, ``LlamaDecoderLayer.forward``): input norm, QKV projection, rotary
embedding, attention, output projection, post-attention norm, gate/up projection, activation, down projection. The
unit of the fixed cost per layer (``layer_overhead_s``: the cost of such a layer's launches)."""

MLA_EXTRA_KERNELS = 5.0
"""Kernels DeepSeek's multi-head latent attention launches beyond GQA's, in its absorbed decode form (SGLang
``python/sglang/srt/models/deepseek_v2.py``, ``DeepseekV2AttentionMLA.forward_absorb``): the query and latent
down-projections run as one matmul in the QKV projection's place, then the two norms of the low-rank latents
(``q_a_layernorm``, ``kv_a_layernorm``), the query up-projection (``q_b_proj``) and the two batched matmuls that absorb
the key and value up-projections (``w_kc``, ``w_vc``). The quantisations and copies between them are elementwise
kernels that optimised engines fuse; they are not counted."""

INDEX_EXTRA_KERNELS = 5.0
"""Kernels a sparse-attention indexer adds to its layer (DeepSeek-V3.2's lightning indexer, GLM-5's; DeepSeek-V3.2
technical report, section 2.1, eq. 1-2): the index queries', keys' and head weights' projections, the index-score
kernel and the top-k selection."""

LINEAR_EXTRA_KERNELS = 3.0
"""Kernels a Gated DeltaNet linear-attention mixer launches beyond GQA's four (Qwen3-Next / Qwen3.5; SGLang
``python/sglang/srt/models/qwen3_next.py``, ``Qwen3GatedDeltaNet``): its two input projections, short convolution,
gating, recurrent delta-rule kernel, gated norm and output projection (seven against QKV, rotary embedding,
attention and output)."""


HYPER_CONNECTION_KERNELS = 4.0
"""Kernels a layer with hyper-connections launches to mix its residual streams (DeepSeek-V4's mHC; SGLang
``python/sglang/srt/models/deepseek_v4.py``, ``DeepseekV4DecoderLayer.forward``): ``hc_pre`` before and ``hc_post``
after its attention and again around its MoE, each one fused TileLang kernel (``mhc_pre``, ``mhc_post``)."""

COMPRESSOR_KERNELS = 1.0
"""Kernels a compressed-attention layer launches to pool its newest tokens into a compressed entry (DeepSeek-V4's
``Compressor``, run as SGLang's fused "Flash Compressor"); the compressed sparse layer's indexer keys come from a
compressor of their own in place of the key projection :data:`INDEX_EXTRA_KERNELS` counts."""


def hyper_connection_layers(num_layers, hyper_connection_streams):
    """Layers that mix hyper-connections' residual streams [layers]: every layer of a model with more than one stream
    (DeepSeek-V4's ``hc_mult`` of 4); 0 for a plain residual (blank or 1)."""
    return np.where(np.nan_to_num(_f(hyper_connection_streams)) > 1, _f(num_layers), 0.0)


@formula(
    "L_k = (9·L + 5·L_MLA + 5·L_index + 3·L_linear + 4·L_hc + L_compressed)/9",
    "kernels per layer: SGLang llama.py, deepseek_v2.py, qwen3_next.py, deepseek_v4.py; DeepSeek-V3.2 report eq. 1-2",
)
def kernel_layers(
    num_layers, mla_layers=0.0, index_layers=0.0, linear_layers=0.0, hyper_layers=0.0, compressed_layers=0.0
):
    """A model's layers weighted by the kernels each launches, in GQA layers [layers]: the fixed cost of a step per
    layer (kernel launches and the latency floor of small kernels, ``layer_overhead_s``) is a cost per kernel, and an
    MLA layer launches 14 of a GQA layer's 9 (:data:`MLA_EXTRA_KERNELS`), an indexed sparse-attention layer 5 more
    (:data:`INDEX_EXTRA_KERNELS`), a linear-attention layer 3 more (:data:`LINEAR_EXTRA_KERNELS`), a layer with
    hyper-connections 4 more (:data:`HYPER_CONNECTION_KERNELS`) and a compressed-attention layer 1 more
    (:data:`COMPRESSOR_KERNELS`). A routed-expert
    FFN is counted as a dense one: its router, top-k and permutation kernels are in the experts' fitted terms (counting
    them here as well made the leave-one-model-out TPOT error worse, 1.19x -> 1.21x). Blank counts are 0."""
    extra = (
        MLA_EXTRA_KERNELS * np.nan_to_num(_f(mla_layers))
        + INDEX_EXTRA_KERNELS * np.nan_to_num(_f(index_layers))
        + LINEAR_EXTRA_KERNELS * np.nan_to_num(_f(linear_layers))
        + HYPER_CONNECTION_KERNELS * np.nan_to_num(_f(hyper_layers))
        + COMPRESSOR_KERNELS * np.nan_to_num(_f(compressed_layers))
    )
    return _f(num_layers) + extra / GQA_LAYER_KERNELS


@formula(
    "t = smax(F_d/(P·η_g), M_d/(W·η_m)) + smax(r_e·F_e/(P·η_e), M_e/(W·η_me)) + smax(F_a/(P_a·η_a), M_kv/(W·η_m))"
    " + X/η_l + α·hops + τ_L·layers + τ_q·sequences + τ_S",
    "kernels in sequence, each a soft roofline; α–β collectives; fixed launch costs",
)
def kernel_step_time_s(**terms):
    """A step's time as real engines run it [s]: the sum of :func:`kernel_step_parts` (same arguments)."""
    kernels, comm, fixed = kernel_step_parts(**terms)
    return kernels + comm + fixed


@formula(
    "(kernels, exposed, fixed) = (Σ smax(F/(P·η), M/(W·η_m)), X/η_l − f·min(X/η_l, kernels) + α·hops,"
    " τ_L·layers + τ_q·sequences + τ_S); the routed experts' bytes at η_me",
    "kernels in sequence; communication overlapped with another micro-batch (DeepSeek's dual-batch overlap)",
)
def kernel_step_parts(
    *,
    dense_flop,
    expert_flop,
    attention_flop,
    dense_bytes,
    expert_bytes,
    kv_bytes,
    peak_flop_per_s,
    attention_peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    comm_time_at_peak_s,
    collective_hops,
    layers,
    sequences,
    expert_imbalance_ratio_,
    gemm_mfu,
    expert_mfu,
    attention_mfu,
    mbu,
    expert_mbu,
    link_frac,
    collective_latency_s,
    layer_overhead_s,
    sequence_overhead_s,
    step_overhead_s,
    expert_imbalance_scale,
    comm_overlap_frac=0.0,
    expert_balanced=0.0,
):
    """(kernels, exposed communication, fixed costs) of a step as real engines run it [s]: the three kernel classes
    in sequence, each bound by its own soft roofline at its achieved efficiency; the communication the step waits
    for (bandwidth time at ``link_frac`` and a latency per hop, less the ``comm_overlap_frac`` of it hidden behind
    the kernels where the layout overlaps two micro-batches, DeepSeek's dual-batch overlap); fixed costs per layer,
    per sequence the rank schedules (the engine's per-request work each step: batching, sampling, detokenisation)
    and per step. The routed experts' weights are read at their own share of HBM bandwidth (``expert_mbu``: a
    grouped GEMM over many expert matrices, each read once for the few tokens routed to it, reaches less of it than a
    dense GEMM; the calibration fits it apart). The routed experts' FLOPs are the busiest
    rank's: the mean times ``1 + scale·(r − 1)`` (``r`` from :func:`expert_imbalance_ratio`; scale 1 = uniform routing,
    the scale of a layout whose experts a load balancer places, ``expert_balanced`` 1).

    Every efficiency at 1 and every fixed cost at 0 gives the sum over kernel classes of their rooflines: an upper
    bound of the lecture's ``max(compute, memory)`` and never below it.
    """
    bw = _f(hbm_bandwidth_bytes_per_s) * _f(mbu)
    # a balancer (EPLB) leaves uniform routing's fluctuation, not the router's skew
    scale = np.where(_f(expert_balanced) > 0, 1.0, _f(expert_imbalance_scale))
    busiest = 1.0 + scale * (_f(expert_imbalance_ratio_) - 1.0)
    dense = smooth_max(_f(dense_flop) / (_f(peak_flop_per_s) * _f(gemm_mfu)), _f(dense_bytes) / bw)
    expert_bw = _f(hbm_bandwidth_bytes_per_s) * _f(expert_mbu)
    experts = smooth_max(
        busiest * _f(expert_flop) / (_f(peak_flop_per_s) * _f(expert_mfu)), _f(expert_bytes) / expert_bw
    )
    attention = smooth_max(_f(attention_flop) / (_f(attention_peak_flop_per_s) * _f(attention_mfu)), _f(kv_bytes) / bw)
    kernels = dense + experts + attention
    bandwidth = _f(comm_time_at_peak_s) / _f(link_frac)
    # a layout that overlaps communication with another micro-batch's kernels shows only what exceeds them
    hidden = _f(comm_overlap_frac) * np.minimum(bandwidth, kernels)
    comm = bandwidth - hidden + _f(collective_latency_s) * _f(collective_hops)
    fixed = _f(layer_overhead_s) * _f(layers) + _f(sequence_overhead_s) * _f(sequences) + _f(step_overhead_s)
    return kernels, comm, fixed


@formula("T_pass = (M + PP − 1)·t_stage", "GPipe (Huang et al. 2019): bubble share (PP − 1)/(M + PP − 1)")
def pipeline_pass_time_s(stage_time_s, micro_batches, stages):
    """Time for ``micro_batches`` to pass all ``stages`` when one stage takes ``stage_time_s`` per micro-batch [s]."""
    return (_f(micro_batches) + _f(stages) - 1.0) * _f(stage_time_s)


@formula("R = ((N·D − Z) + √((N·D − Z)² + 4·D·Z))/2", "Schweitzer's approximate MVA: one queue, N users, think Z")
def closed_loop_response_s(demand_s, users, think_s):
    """Mean response time of a queue of demand ``D`` per request shared by ``N`` users who think ``Z`` between
    requests [s] (Schweitzer 1979; Lazowska et al., *Quantitative System Performance*, ch. 6).

    From ``R = D·(1 + (N − 1)/N·Q)`` and ``Q = N·R/(R + Z)``: ``R² + (Z − N·D)·R − D·Z = 0``. Equals D at N = 1,
    tends to D with no load and to N·D − Z at saturation (the closed-loop bound ``X ≤ 1/D``).
    """
    d, n, z = _f(demand_s), _f(users), _f(think_s)
    b = n * d - z
    return (b + np.sqrt(b * b + 4.0 * d * z)) / 2.0


@formula("W_burst = (C − 1)·D/2", "C requests arriving at once, served one D apart")
def burst_wait_s(users, demand_s):
    """Mean wait of a burst of ``C`` requests that a queue serves one every ``D`` [s] (the benchmark's start)."""
    return np.maximum(_f(users) - 1.0, 0.0) * _f(demand_s) / 2.0


@formula("c = min(1, λ·I/k),  λ = B/O", "a prompt prefilled once over its O steps, in chunks of k tokens")
def chunk_step_frac(prompts_per_step, prompt_tokens, chunk_tokens):
    """Share of an aggregated worker's decode steps that carry a prefill chunk [frac]: ``λ = B/O`` new prompts a step
    (each request's prompt is prefilled once over its ``O`` steps) of ``I`` tokens, run in chunks of ``k = min(chunk,
    I)`` tokens. Those steps carry ``λ/c`` prompts (a whole chunk while ``c < 1``); the others decode alone, so TPOT
    is the mean step ``(1 − c)·t(decode) + c·t(decode + chunk)``. A chunk's routed experts and GEMMs are read and run
    in the steps that carry it, not spread thin over every step: the expert weights a step reads grow with its
    tokens less than in proportion, so a step with the average prefill (32 tokens of an 8k prompt at 4 users) read
    most of a MoE's experts every step and came out too slow (InferenceX's long-prompt runs, 1.29x held out)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(_f(prompts_per_step) * _f(prompt_tokens) / _f(chunk_tokens), 0.0, 1.0)


@formula(
    "TTFT = S₀ + τ₀ + σ·t_step + ω·(R − D) + β·W_burst/waves",
    "a request's first pass, fixed front-end costs, a wait in decode steps, queueing (closed loop and opening burst)",
)
def ttft_s(
    first_pass_s,
    demand_s,
    users,
    think_s,
    step_s,
    *,
    ttft_overhead_s,
    stream_steps,
    queue_wait_frac,
    burst_wait_frac,
    waves=10.0,
):
    """Mean time to first token [s]: the request's own prefill ``S₀``, a fixed front-end cost ``τ₀`` (request
    handling, tokenisation, routing; in disaggregated serving the KV hand-off), ``σ`` decode steps of wait
    (``step_s`` each: a step, not a token, where speculative decoding yields several tokens a step) the other terms
    miss (fitted: TensorRT-LLM and SGLang send the first token at once, their stream interval delays only later
    chunks, so ``σ`` is not a stream interval but what the model does not otherwise see), the closed-loop queueing
    ``R − D`` of :func:`closed_loop_response_s` and the opening burst (:func:`burst_wait_s`), which the first of
    ``waves`` requests per user meet (InferenceX sends 10 requests per user slot)."""
    response = closed_loop_response_s(demand_s, users, think_s)
    queue = np.maximum(response - _f(demand_s), 0.0)
    return (
        _f(first_pass_s)
        + _f(ttft_overhead_s)
        + _f(stream_steps) * _f(step_s)
        + _f(queue_wait_frac) * queue
        + _f(burst_wait_frac) * burst_wait_s(users, demand_s) / _f(waves)
    )
