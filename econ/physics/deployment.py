"""One step of a serving pool under a parallel layout: every term of its time, its memory per chip, its cost.

A replica of ``c = TP·DP·PP`` chips serves a pool (prefill or decode). Each of its ``PP`` pipeline stages has
``s = TP·DP`` chips: ``DP`` attention data-parallel ranks of ``TP`` tensor-parallel chips, and the stage's
routed experts spread over all ``s`` chips (expert parallelism; a dense model has none). A weight class the
layout *replicates* (attention, shared experts, dense layers, embeddings) is held by every DP rank, split over
its TP chips; one it does not is split over all ``s``. The ``B`` sequences of a step run as ``PP`` micro-batches
(lecture d.1–d.2), each DP rank taking ``n_r = B/(PP·DP)`` sequences of each (at least one: the busiest rank
sets the pace).

Per chip and step (all micro-batches through the chip's stage), each a column of ``serving_layouts``:

- weight bytes read: every class once per micro-batch over its shard; of the routed experts, the distinct ones
  the micro-batch's ``t`` tokens touch, ``D(t) = E·(1 − (1 − k/E)^t)`` per MoE layer (:mod:`econ.physics.weights`);
- cache bytes read: ``n_r`` sequences' KV/state at context L (:mod:`econ.physics.sequence`), split over the TP
  chips only as far as there are KV heads (an MLA latent is one head: every TP chip reads all of it);
- FLOPs: 2·N_act per token over the replica's chips, plus the rank's attention FLOPs over its TP chips
  (decode: MLA in its absorbed form; prefill: expanded, causal);
- communication: a TP all-reduce after attention and after each TP-split FFN; EP dispatch + combine per MoE
  layer over the scale-up link, or the scale-out link for the part that leaves the scale-up domain; a pipeline
  hand-off per stage boundary (:mod:`econ.physics.collectives`);
- a per-step overhead (scheduling, kernel launches: a scenario value, 0 in the idealised bound).

Overlap rules, all three reported: **lower bound** ``max(compute, memory, communication) + overhead`` (perfect
overlap, the lecture's t_step; ``step_time_s``), **serial communication**
``max(compute, memory) + communication + overhead`` (compute and HBM overlap, collectives do not: a stack
without micro-batch overlap), **upper bound** the sum of all terms.

Speculative decoding (MTP) verifies ``1 + n_draft`` tokens per sequence per step and keeps
``(1 − a^(n+1))/(1 − a)`` of them on average at acceptance rate ``a``.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import roofline, sharding, step_time
from econ.physics.deployment_keys import (  # noqa: F401 (declared there; callers read them as deployment.X)
    CHIP_KEYS,
    LAYOUT_KEYS,
    MODEL_KEYS,
    SETTINGS,
    STEP_TERMS,
    _settings,
)
from econ.physics.pool_comm import communication_times_s, expert_parallel
from econ.physics.sequence import (
    kv_bytes_held_per_sequence,
    kv_bytes_read_per_sequence,
)
from econ.units import MEGA


def _f(x):
    return np.asarray(x, dtype=float)


def _nz(x):
    x = _f(x)
    return np.where(np.isnan(x), 0.0, x)


def expert_balanced(layout) -> np.ndarray:
    """1 where a load balancer places the layout's routed experts [flag]: the layout says so (``expert_balanced``:
    a source states EPLB, or a launch recipe names ``eplbN``), or it holds redundant expert slots, copies of hot
    experts that only a balancer from routing statistics places (DeepSeek's EPLB; its Day-6 units carry 32)."""
    stated = _nz(layout.get("expert_balanced", 0.0)) > 0
    return np.where(stated | (_nz(layout.get("redundant_expert_slots", 0.0)) > 0), 1.0, 0.0)


# ---------------------------------------------------------------------------- steps


@formula("accepted = (1 − a^(n+1)) / (1 − a)", "speculative decoding (Leviathan et al. 2023)")
def accepted_tokens_per_step(speculative_tokens, acceptance_frac):
    """Tokens a sequence keeps per step when ``n`` draft tokens are verified at acceptance rate ``a`` [tokens]."""
    n, a = _f(speculative_tokens), _f(acceptance_frac)
    with np.errstate(invalid="ignore", divide="ignore"):
        geometric = (1.0 - a ** (n + 1.0)) / (1.0 - a)
    return np.where(n <= 0, 1.0, np.where(a >= 1.0, n + 1.0, geometric))


@formula(
    "lower = max(t_c, t_m, t_comm) + t_o;  serial = max(t_c, t_m) + t_comm + t_o;  upper = t_c + t_m + t_comm + t_o",
    "lecture a.2; scaling book T_lower/T_upper",
)
def overlap_bounds(compute_s, memory_s, comm_s, overhead_s):
    """(lower bound, serial-communication rule, upper bound) of a step [s]."""
    c, m, x, o = _f(compute_s), _f(memory_s), _f(comm_s), _f(overhead_s)
    return np.maximum(np.maximum(c, m), x) + o, np.maximum(c, m) + x + o, c + m + x + o


def _finish(out: dict, settings: dict, tokens_out_per_step, chips):
    lower, serial, upper = overlap_bounds(
        out["compute_time_s"], out["memory_time_s"], out["comm_time_s"], out["overhead_time_s"]
    )
    kernel = out["kernel_step_time_s"]
    serial_kernels = np.asarray(settings["kernel_serial"], dtype=float) > 0
    step = np.where(serial_kernels, kernel, lower)
    # the communication the step waits for: past the overlap (kernels in sequence), or past max(t_c, t_m) (the bound)
    beyond = np.maximum(out["comm_time_s"] - np.maximum(out["compute_time_s"], out["memory_time_s"]), 0.0)
    out["comm_exposed_time_s"] = np.where(serial_kernels, out["comm_exposed_time_s"], beyond)
    out["step_time_s"], out["step_time_serial_comm_s"], out["step_time_upper_s"] = step, serial, upper
    out["step_time_bound_s"] = lower
    out["compute_bound"] = out["compute_time_s"] >= np.maximum(out["memory_time_s"], out["comm_time_s"])
    out["tokens_per_s_per_chip"] = roofline.tokens_per_s(tokens_out_per_step, step) / chips
    out["usd_per_mtok"] = roofline.usd_per_token(step, tokens_out_per_step, chips, settings["usd_per_chip_hour"]) * MEGA
    return out


@formula(
    "step: B decode sequences × q tokens at context L + P prompts × ℓ new tokens after c cached, over the layout",
    "this module; a chunked-prefill step of aggregated serving carries both",
)
def step_terms(
    model: dict,
    chip: dict,
    layout: dict,
    *,
    decode_batch,
    context_tokens,
    prefill_prompts=0.0,
    prompt_tokens=np.nan,
    cached_tokens=0.0,
    kv_scale=1.0,
    settings=None,
) -> dict:
    """Every per-chip term of one step that runs ``decode_batch`` sequences' next ``1 + n_draft`` tokens at
    ``context_tokens`` and ``prefill_prompts`` prompts of ``prompt_tokens`` new tokens (after ``cached_tokens``
    cached ones) together — a decode step (no prompts), a prefill pass (no sequences) or an aggregated-serving
    step whose prefill chunks share the step with decode (both; fractional prompts are the average chunk).

    Weights are read once for all the step's tokens; the cache of every decoding sequence is read, and each
    prompt's read and written; FLOPs add. Arguments broadcast (numpy).
    """
    s = _settings(settings)
    q = 1.0 + _f(s["speculative_tokens"])
    tp, dp, pp = _f(layout["tensor_parallel"]), _f(layout["attention_data_parallel"]), _f(layout["pipeline_parallel"])
    b, p = _f(decode_batch), _f(prefill_prompts)
    ell = np.where(np.isnan(_f(prompt_tokens)), 0.0, _f(prompt_tokens))
    n_r, p_r = sharding.rank_sequences(b, dp, pp), sharding.rank_sequences(p, dp, pp)
    rank_tokens = n_r * q + p_r * ell
    micro_tokens = sharding.rank_sequences(b, 1.0, pp) * q + sharding.rank_sequences(p, 1.0, pp) * ell
    b_w = _f(s["weight_bytes_per_param"])
    b_e = np.where(np.isnan(_f(s["expert_weight_bytes_per_param"])), b_w, _f(s["expert_weight_bytes_per_param"]))
    dense_read, expert_read = sharding.weights_read_per_chip(model, layout, micro_tokens, b_w, b_e)
    cache = sharding.cache_parts(model, kv_scale)
    split = sharding.kv_split(model, layout)
    total = _f(cached_tokens) + ell
    cache_read = (
        n_r
        * kv_bytes_read_per_sequence(
            context_tokens,
            sparse_topk_tokens=model["sparse_topk_tokens"],
            dense_attention_frac=model.get("dense_attention_frac", 0.0),
            **cache,
        )
        + p_r * np.where(ell > 0, kv_bytes_held_per_sequence(total, **cache), 0.0)
    ) / split
    decode_attention, prefill_attention = sharding.attention_flop(model, context_tokens, cached_tokens, prompt_tokens)
    weight_flop = sharding.weight_flop_per_chip(model, layout, rank_tokens, micro_tokens)
    expert_flop = sharding.expert_flop_per_chip(model, layout, micro_tokens)
    attention_flop = (n_r * q * decode_attention + p_r * prefill_attention) / tp
    out = _pool(model, chip, layout, s, (dense_read, expert_read), cache_read, weight_flop, expert_flop, attention_flop)
    out.update(communication_times_s(model, chip, layout, rank_tokens, s))
    out["comm_time_s"] = out["tp_comm_time_s"] + out["ep_comm_time_s"] + out["pp_comm_time_s"]
    # PP micro-batches through the chip's 1/PP of the layers: one micro-batch's worth of every layer's kernels, each
    # layer weighted by the kernels it launches (model_derived.kernel_layers; blank in a hand-built model: unweighted)
    kernel_layers = _f(model["kernel_layers"])
    layers = np.where(np.isnan(kernel_layers), _f(model["num_layers"]), kernel_layers)
    out["layers_per_step"] = np.broadcast_to(layers, np.shape(out["compute_time_s"])).astype(float)
    out["sequences_per_step"] = np.broadcast_to((n_r + p_r) * pp, np.shape(out["compute_time_s"])).astype(float)
    out["overhead_time_s"] = (
        _f(s["step_overhead_s"])
        + _f(s["layer_overhead_s"]) * out["layers_per_step"]
        + _f(s["sequence_overhead_s"]) * out["sequences_per_step"]
    )
    out["expert_imbalance_ratio"] = step_time.expert_imbalance_ratio(
        micro_tokens, model["experts_per_token"], np.where(_nz(model["moe_layers"]) > 0, expert_parallel(layout), 1.0)
    )
    out["comm_overlap_frac"] = np.broadcast_to(
        _f(layout.get("overlap_comm", 0.0)), np.shape(out["compute_time_s"])
    ).astype(float)
    out["expert_balanced"] = np.broadcast_to(expert_balanced(layout), np.shape(out["compute_time_s"])).astype(float)
    kernels, out["comm_exposed_time_s"], fixed = kernel_parts_s(out, s)
    out["kernel_step_time_s"] = kernels + out["comm_exposed_time_s"] + fixed
    out["replica_chips"] = tp * dp * pp
    out["rank_tokens"] = rank_tokens
    return out


def expert_mbu_frac(s: dict):
    """The achieved share of HBM bandwidth of the routed experts' weight reads under run settings ``s``: ``expert_mbu``
    where it is set (the calibrated scenario's fitted value), else the pool's ``mbu``."""
    return np.where(np.isnan(_f(s["expert_mbu"])), _f(s["mbu"]), _f(s["expert_mbu"]))


def kernel_parts_s(terms: dict, s: dict):
    """:func:`econ.physics.step_time.kernel_step_parts` of a step's terms under run settings ``s``: (kernels, exposed
    communication, fixed costs) [s]."""
    attention_mfu = np.where(np.isnan(_f(s["attention_mfu"])), _f(s["mfu"]), _f(s["attention_mfu"]))
    latency = _f(s["scale_up_latency_s"]) * terms["collective_hops"]
    latency = latency + _f(s["scale_out_latency_s"]) * terms["collective_hops_scale_out"]
    return step_time.kernel_step_parts(
        dense_flop=terms["weight_flop_per_chip"] - terms["expert_flop_per_chip"],
        expert_flop=terms["expert_flop_per_chip"],
        attention_flop=terms["attention_flop_per_chip"],
        dense_bytes=terms["dense_bytes_read_per_chip"],
        expert_bytes=terms["expert_bytes_read_per_chip"],
        kv_bytes=terms["kv_bytes_read_per_chip"],
        peak_flop_per_s=terms["peak_flop_per_s"],
        attention_peak_flop_per_s=terms["attention_peak_flop_per_s"],
        hbm_bandwidth_bytes_per_s=terms["hbm_bandwidth_bytes_per_s"],
        comm_time_at_peak_s=terms["comm_peak_time_s"],
        collective_hops=1.0,
        layers=terms["layers_per_step"],
        sequences=terms["sequences_per_step"],
        expert_imbalance_ratio_=terms["expert_imbalance_ratio"],
        gemm_mfu=s["mfu"],
        expert_mfu=s["expert_mfu"],
        attention_mfu=attention_mfu,
        mbu=s["mbu"],
        expert_mbu=expert_mbu_frac(s),
        link_frac=s["link_frac"],
        collective_latency_s=latency,
        layer_overhead_s=s["layer_overhead_s"],
        sequence_overhead_s=s["sequence_overhead_s"],
        step_overhead_s=s["step_overhead_s"],
        expert_imbalance_scale=s["expert_imbalance_scale"],
        comm_overlap_frac=terms.get("comm_overlap_frac", 0.0),
        expert_balanced=terms.get("expert_balanced", 0.0),
    )


@formula("decode step: terms above with t = (B/PP)·(1 + n_draft) tokens per micro-batch", "this module")
def decode_terms(
    model: dict,
    chip: dict,
    layout: dict,
    batch,
    context_tokens,
    *,
    kv_scale=1.0,
    settings=None,
    prefill_tokens=0.0,
    prompt_tokens=np.nan,
) -> dict:
    """One decode step of a replica: every sequence of ``batch`` verifies 1 + n_draft tokens at ``context_tokens``;
    in aggregated serving ``prefill_tokens`` new prompt tokens (prompts of ``prompt_tokens``) share the step.

    Arguments broadcast (numpy): ``model``/``chip``/``layout`` are mappings of arrays (``MODEL_KEYS``,
    ``CHIP_KEYS``, ``LAYOUT_KEYS``), ``settings`` overrides ``SETTINGS``. Returns per-chip bytes, FLOPs and
    times, the three overlap rules, tokens/s per chip and per user, $/MTok of output and memory per chip.
    """
    s = _settings(settings)
    with np.errstate(invalid="ignore", divide="ignore"):
        prompts = np.where(_f(prefill_tokens) > 0, _f(prefill_tokens) / _f(prompt_tokens), 0.0)
    out = step_terms(
        model,
        chip,
        layout,
        decode_batch=batch,
        context_tokens=context_tokens,
        prefill_prompts=prompts,
        prompt_tokens=prompt_tokens,
        kv_scale=kv_scale,
        settings=s,
    )
    accepted = accepted_tokens_per_step(s["speculative_tokens"], s["acceptance_frac"])
    out = _finish(out, s, _f(batch) * accepted, out["replica_chips"])
    out["tokens_per_s_per_user"] = accepted / out["step_time_s"]
    out["memory_per_chip_bytes"] = sharding.memory_per_chip_bytes(
        model,
        layout,
        batch,
        context_tokens,
        weight_bytes_per_param=s["weight_bytes_per_param"],
        kv_scale=kv_scale,
        expert_bytes=s["expert_weight_bytes_per_param"],
    )
    out["fits"] = out["memory_per_chip_bytes"] <= _f(chip["hbm_capacity_bytes"]) * (1.0 - s["hbm_reserve_frac"])
    return out


@formula("prefill pass: b prompts of ℓ new tokens after L_c cached; TTFT = (M + PP − 1)/M · pass", "this module")
def prefill_terms(
    model: dict, chip: dict, layout: dict, batch, prompt_tokens, cached_tokens=0.0, *, kv_scale=1.0, settings=None
) -> dict:
    """One prefill pass of ``batch`` prompts of ``prompt_tokens`` new tokens after ``cached_tokens`` cached ones.

    The cache is read and the new tokens' cache written once per layer; attention FLOPs are causal (expanded MLA).
    ``ttft_s`` is the pass's time through every pipeline stage: the chip's step covers its stage for the PP
    micro-batches, and a prompt's first token leaves after ``M + PP − 1`` stage times (the pipeline bubble,
    :func:`econ.physics.step_time.pipeline_pass_time_s`). ``usd_per_mtok`` is per prompt token.
    """
    s = {**_settings(settings), "speculative_tokens": 0.0}
    out = step_terms(
        model,
        chip,
        layout,
        decode_batch=0.0,
        context_tokens=0.0,
        prefill_prompts=batch,
        prompt_tokens=prompt_tokens,
        cached_tokens=cached_tokens,
        kv_scale=kv_scale,
        settings=s,
    )
    out = _finish(out, s, _f(batch) * _f(prompt_tokens), out["replica_chips"])
    pp = _f(layout["pipeline_parallel"])
    micro = np.minimum(pp, np.maximum(_f(batch), 1.0))  # micro-batches in flight: at most one per prompt
    # the chip's step is one micro-batch through every layer: a stage takes 1/PP of it per micro-batch
    out["ttft_s"] = step_time.pipeline_pass_time_s(out["step_time_s"] / pp, micro, pp)
    out["memory_per_chip_bytes"] = sharding.memory_per_chip_bytes(
        model,
        layout,
        batch,
        _f(cached_tokens) + _f(prompt_tokens),
        weight_bytes_per_param=s["weight_bytes_per_param"],
        kv_scale=kv_scale,
        expert_bytes=s["expert_weight_bytes_per_param"],
    )
    out["fits"] = out["memory_per_chip_bytes"] <= _f(chip["hbm_capacity_bytes"]) * (1.0 - s["hbm_reserve_frac"])
    return out


@formula(
    "t_c = (FLOP_w − FLOP_e)/(F·mfu) + FLOP_e/(F·mfu_e) + FLOP_attn/(F_attn·mfu)",
    "roofline per FLOP class: the routed experts' grouped GEMMs and attention (at its own format's peak) apart",
)
def compute_time_s(
    weight_flop, expert_flop, attention_flop, peak_flop_per_s, attention_peak_flop_per_s, mfu, expert_mfu
):
    """Compute time of a chip's step [s]: weight FLOPs at the weight format's peak, the routed experts' part at
    their own efficiency, attention at the peak of the cache's format (BF16 unless the cache is FP8)."""
    dense = (_f(weight_flop) - _f(expert_flop)) / (_f(peak_flop_per_s) * _f(mfu))
    experts = _f(expert_flop) / (_f(peak_flop_per_s) * _f(expert_mfu))
    return dense + experts + _f(attention_flop) / (_f(attention_peak_flop_per_s) * _f(mfu))


def _pool(model, chip, layout, s, weights_read, cache_read, weight_flop, expert_flop, attention_flop) -> dict:
    dense_read, expert_read = weights_read
    bandwidth = _f(chip["hbm_bandwidth_bytes_per_s"]) * s["mbu"]
    expert_bandwidth = _f(chip["hbm_bandwidth_bytes_per_s"]) * expert_mbu_frac(s)
    attention_peak = chip.get("attention_peak_flop_per_s", chip["peak_flop_per_s"])
    attention_mfu = np.where(np.isnan(_f(s["attention_mfu"])), _f(s["mfu"]), _f(s["attention_mfu"]))
    compute = compute_time_s(weight_flop, expert_flop, 0.0, chip["peak_flop_per_s"], 1.0, s["mfu"], s["expert_mfu"])
    compute = compute + _f(attention_flop) / (_f(attention_peak) * attention_mfu)
    out = {
        "weight_bytes_read_per_chip": dense_read + expert_read,
        "dense_bytes_read_per_chip": dense_read,
        "expert_bytes_read_per_chip": expert_read,
        "kv_bytes_read_per_chip": cache_read,
        "weight_flop_per_chip": weight_flop,
        "expert_flop_per_chip": expert_flop,
        "attention_flop_per_chip": attention_flop,
        "compute_time_s": compute,
        "weight_time_s": dense_read / bandwidth + expert_read / expert_bandwidth,
        "kv_time_s": cache_read / bandwidth,
        "peak_flop_per_s": _f(chip["peak_flop_per_s"]),
        "attention_peak_flop_per_s": _f(attention_peak),
        "hbm_bandwidth_bytes_per_s": _f(chip["hbm_bandwidth_bytes_per_s"]),
    }
    out["memory_time_s"] = out["weight_time_s"] + out["kv_time_s"]
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}
