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
from econ.physics import collectives, roofline, weights
from econ.physics.sequence import (
    decode_attention_flop_per_token,
    kv_bytes_held_per_sequence,
    kv_bytes_read_per_sequence,
    prefill_attention_flop,
)
from econ.units import MEGA

CACHE_KEYS = (
    "kv_bytes_per_token",
    "kv_index_bytes_per_token",
    "kv_window_bytes_per_sequence",
    "sliding_window_tokens",
    "kv_chunk_bytes_per_token",
    "attention_chunk_tokens",
    "state_bytes_per_sequence",
)
"""Cache parts of a model (bytes in the cache's format; :mod:`econ.physics.sequence`)."""

MODEL_KEYS = (
    "params_active",
    "rest_params",
    "shared_expert_params",
    "dense_ffn_params",
    "embedding_params",
    "head_params",
    "routed_expert_params",
    "moe_layers",
    "num_routed_experts",
    "experts_per_token",
    "params_per_expert",
    "hidden_size",
    "num_layers",
    "num_dense_layers",
    "num_shared_experts",
    "kv_shard_limit",
    "sparse_topk_tokens",
    "dense_attention_frac",
    "full_slope_decode",
    "full_slope_prefill",
    "window_slope",
    "chunk_slope",
    "index_slope",
    "state_flop_per_token",
    *CACHE_KEYS,
)
"""What :func:`decode_terms` and :func:`prefill_terms` read of a model (``model_derived`` columns)."""

CHIP_KEYS = (
    "peak_flop_per_s",
    "attention_peak_flop_per_s",
    "hbm_bandwidth_bytes_per_s",
    "hbm_capacity_bytes",
    "scale_up_domain_chips",
    "scale_up_bandwidth_bytes_per_s",
    "scale_out_bandwidth_bytes_per_s",
)

LAYOUT_KEYS = (
    "tensor_parallel",
    "attention_data_parallel",
    "pipeline_parallel",
    "replicate_attention",
    "replicate_shared_experts",
    "replicate_dense",
    "replicate_embeddings",
    "redundant_expert_slots",
)

STEP_TERMS = (
    "weight_bytes_read_per_chip",
    "kv_bytes_read_per_chip",
    "weight_flop_per_chip",
    "attention_flop_per_chip",
    "compute_time_s",
    "weight_time_s",
    "kv_time_s",
    "memory_time_s",
    "tp_comm_time_s",
    "ep_comm_time_s",
    "pp_comm_time_s",
    "comm_time_s",
    "overhead_time_s",
    "step_time_s",
    "step_time_serial_comm_s",
    "step_time_upper_s",
    "tokens_per_s_per_chip",
    "usd_per_mtok",
    "memory_per_chip_bytes",
)
"""The per-chip terms of a step that the layout search stores for every point (``serving_layouts``, a sweep's
``serving_layouts`` files), in column order."""

SETTINGS = {
    "weight_bytes_per_param": 1.0,
    "activation_bytes": 2.0,
    "dispatch_bytes": 1.0,
    "mfu": 1.0,
    "expert_mfu": 1.0,
    "mbu": 1.0,
    "link_frac": 1.0,
    "step_overhead_s": 0.0,
    "scale_up_latency_s": 0.0,
    "scale_out_latency_s": 0.0,
    "speculative_tokens": 0.0,
    "acceptance_frac": 0.0,
    "hbm_reserve_frac": 0.0,
    "usd_per_chip_hour": np.nan,
}
"""Run settings with their idealised defaults (every efficiency 1, no latency, no overhead). ``mfu`` applies to the
non-expert weight FLOPs and to attention, ``expert_mfu`` to the routed experts' grouped GEMMs, ``mbu`` to HBM
traffic, ``link_frac`` to link bandwidth."""


def _f(x):
    return np.asarray(x, dtype=float)


def _nz(x):
    x = _f(x)
    return np.where(np.isnan(x), 0.0, x)


def _settings(settings: dict | None) -> dict:
    unknown = set(settings or {}) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
    return {**SETTINGS, **(settings or {})}


# ---------------------------------------------------------------------------- layout arithmetic


@formula("c = TP·DP·PP", "layout")
def replica_chips(tensor_parallel, attention_data_parallel, pipeline_parallel):
    """Chips of one replica [chips]."""
    return _f(tensor_parallel) * _f(attention_data_parallel) * _f(pipeline_parallel)


@formula("n_r = max(B/(PP·DP), min(B, 1))", "layout: the busiest data-parallel rank")
def rank_sequences(batch, attention_data_parallel, pipeline_parallel):
    """Sequences one attention rank runs per micro-batch [sequences]: the batch spread evenly over PP micro-batches
    and DP ranks, but at least one sequence (the busiest rank) while the batch has one."""
    b = _f(batch)
    return np.maximum(b / (_f(pipeline_parallel) * _f(attention_data_parallel)), np.minimum(b, 1.0))


def _shards(layout: dict) -> dict:
    tp, dp = _f(layout["tensor_parallel"]), _f(layout["attention_data_parallel"])
    stage = tp * dp

    def shard(flag):
        return np.where(np.asarray(layout[flag], dtype=bool), tp, stage)

    return {
        "stage": stage,
        "attention": shard("replicate_attention"),
        "shared": shard("replicate_shared_experts"),
        "dense": shard("replicate_dense"),
        "embedding": shard("replicate_embeddings"),
    }


@formula(
    "w_held = (N_rest/sh_a + N_shared/sh_s + N_dense/sh_d + N_emb/sh_e + N_routed·(1 + R/E)/s)·b_w / PP",
    "layout: replicated classes split over TP, the rest over the stage",
)
def weight_bytes_per_chip(model: dict, layout: dict, weight_bytes_per_param):
    """Weight bytes one chip holds [bytes] (redundant expert slots hold copies of hot experts)."""
    sh = _shards(layout)
    e = _f(model["num_routed_experts"])
    with np.errstate(invalid="ignore", divide="ignore"):
        redundancy = np.where(e > 0, 1.0 + _nz(layout["redundant_expert_slots"]) / e, 1.0)
    params = (
        _f(model["rest_params"]) / sh["attention"]
        + _f(model["shared_expert_params"]) / sh["shared"]
        + _f(model["dense_ffn_params"]) / sh["dense"]
        + _f(model["embedding_params"]) / sh["embedding"]
        + _nz(model["routed_expert_params"]) * redundancy / sh["stage"]
    )
    return params * _f(weight_bytes_per_param) / _f(layout["pipeline_parallel"])


def _weights_read_per_chip(model, layout, tokens_per_micro_batch, weight_bytes_per_param):
    """Weight bytes a chip reads for all micro-batches of one step (PP micro-batches, 1/PP of the layers each)."""
    sh = _shards(layout)
    touched = _nz(model["moe_layers"]) * weights.distinct_experts(
        tokens_per_micro_batch, model["num_routed_experts"], model["experts_per_token"]
    )
    params = (
        _f(model["rest_params"]) / sh["attention"]
        + _f(model["shared_expert_params"]) / sh["shared"]
        + _f(model["dense_ffn_params"]) / sh["dense"]
        + _f(model["head_params"]) / sh["embedding"]
        + touched * _nz(model["params_per_expert"]) / sh["stage"]
    )
    return params * _f(weight_bytes_per_param)


def _kv_split(model, layout):
    """TP chips a rank's cache is split over: as many as there are KV heads (an MLA latent: 1)."""
    return np.minimum(_f(layout["tensor_parallel"]), np.maximum(_nz(model["kv_shard_limit"]), 1.0))


def _cache(model: dict, scale) -> dict:
    """The cache parts in the cache's format (``scale`` of the BF16 figures); the indexer's keys stay FP8."""
    scaled = (
        "kv_bytes_per_token",
        "kv_window_bytes_per_sequence",
        "kv_chunk_bytes_per_token",
        "state_bytes_per_sequence",
    )
    return {k: _f(model[k]) * (_f(scale) if k in scaled else 1.0) for k in CACHE_KEYS}


@formula("m_chip = w_held + ⌈n_r⌉·held(L)/TP_kv", "layout; sequence.kv_bytes_held_per_sequence")
def memory_per_chip_bytes(model: dict, layout: dict, batch, context_tokens, *, weight_bytes_per_param, kv_scale=1.0):
    """HBM one chip needs for its weights and its rank's cache at a batch and context [bytes]: the busiest rank holds
    the whole sequences ⌈B/(PP·DP)⌉ (step times use the even spread, a lower bound)."""
    held = kv_bytes_held_per_sequence(context_tokens, **_cache(model, kv_scale))
    spread = rank_sequences(batch, layout["attention_data_parallel"], layout["pipeline_parallel"])
    n_r = np.ceil(spread - 1e-9)  # whole sequences: the busiest rank holds the remainder
    # the chip holds 1/PP of the layers for PP micro-batches of n_r sequences: n_r·held over its KV split
    kv = n_r * held / _kv_split(model, layout)
    return weight_bytes_per_chip(model, layout, weight_bytes_per_param) + kv


@formula("B_max = ⌊(C·(1 − reserve) − w_held)·TP_kv / held(L)⌋·DP·PP", "layout")
def max_batch_per_replica(
    model: dict, layout: dict, chip: dict, context_tokens, *, weight_bytes_per_param, kv_scale=1.0, hbm_reserve_frac=0.0
):
    """Largest batch per replica whose weights and cache fit every chip [sequences]; 0 if the weights do not."""
    free = _f(chip["hbm_capacity_bytes"]) * (1.0 - _f(hbm_reserve_frac)) - weight_bytes_per_chip(
        model, layout, weight_bytes_per_param
    )
    held = kv_bytes_held_per_sequence(context_tokens, **_cache(model, kv_scale))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_rank = np.floor(np.maximum(free, 0.0) * _kv_split(model, layout) / held)
    batch = per_rank * _f(layout["attention_data_parallel"]) * _f(layout["pipeline_parallel"])
    return np.where(free > 0, np.where(held > 0, batch, np.inf), 0.0)


# ---------------------------------------------------------------------------- communication


@formula(
    "t_comm = n_AR·T_AR(n_r·q·d·b_act) + moe_layers·T_EP + PP·T_PP",
    "collectives: TP all-reduce, EP dispatch/combine, pipeline hand-off",
)
def communication_times_s(model: dict, chip: dict, layout: dict, tokens_per_rank, settings: dict) -> dict:
    """Per chip and step: the tensor-parallel, expert-parallel and pipeline communication times [s].

    ``tokens_per_rank`` are one attention rank's tokens per micro-batch. Two all-reduces per layer when TP > 1
    (after attention, after the FFN; a MoE layer without shared experts only the first). Dispatch + combine
    per MoE layer when the stage has more than one chip: tokens go to the chips of their experts; the share of
    destinations outside the scale-up domain crosses scale-out. A pipeline boundary per stage and micro-batch.
    """
    tp, dp, pp = _f(layout["tensor_parallel"]), _f(layout["attention_data_parallel"]), _f(layout["pipeline_parallel"])
    stage = tp * dp
    domain = _f(chip["scale_up_domain_chips"])
    up = _f(chip["scale_up_bandwidth_bytes_per_s"]) * settings["link_frac"]
    out = _f(chip["scale_out_bandwidth_bytes_per_s"]) * settings["link_frac"]
    a_up, a_out = settings["scale_up_latency_s"], settings["scale_out_latency_s"]
    d, b_act = _f(model["hidden_size"]), settings["activation_bytes"]
    message = _f(tokens_per_rank) * d * b_act
    tp_link = np.where(tp <= domain, up, out)
    tp_latency = np.where(tp <= domain, a_up, a_out)
    ffn_all_reduces = _nz(model["num_dense_layers"]) + _nz(model["moe_layers"]) * (_nz(model["num_shared_experts"]) > 0)
    dense_model = _nz(model["moe_layers"]) == 0
    all_reduces = _f(model["num_layers"]) + np.where(dense_model, _f(model["num_layers"]), ffn_all_reduces)
    tp_s = all_reduces * collectives.all_reduce_time_s(message, tp, tp_link, tp_latency)

    tokens_per_chip = _f(tokens_per_rank) / tp
    remote = collectives.remote_chips_per_token(stage, model["experts_per_token"])
    with np.errstate(invalid="ignore", divide="ignore"):
        outside = np.where(stage > domain, (stage - domain) / np.maximum(stage - 1.0, 1.0), 0.0)

    def ep(share, link, latency):
        return collectives.dispatch_combine_time_s(
            tokens_per_chip,
            remote * share,
            d,
            link,
            dispatch_bytes_per_value=settings["dispatch_bytes"],
            combine_bytes_per_value=b_act,
            latency_s=latency,
        )

    per_layer = np.maximum(ep(1.0 - outside, up, a_up), np.where(outside > 0, ep(outside, out, a_out), 0.0))
    ep_s = np.where(dense_model, 0.0, _nz(model["moe_layers"]) * per_layer)

    replica = stage * pp
    pp_link = np.where(replica <= domain, up, out)
    pp_latency = np.where(replica <= domain, a_up, a_out)
    pp_s = np.where(
        pp > 1,
        pp
        * collectives.pipeline_handoff_time_s(
            tokens_per_chip, d, pp_link, activation_bytes=b_act, latency_s=pp_latency
        ),
        0.0,
    )
    return {"tp_comm_time_s": tp_s, "ep_comm_time_s": ep_s, "pp_comm_time_s": pp_s}


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


def _finish(out: dict, layout: dict, settings: dict, tokens_out_per_step, chips):
    lower, serial, upper = overlap_bounds(
        out["compute_time_s"], out["memory_time_s"], out["comm_time_s"], out["overhead_time_s"]
    )
    out["step_time_s"], out["step_time_serial_comm_s"], out["step_time_upper_s"] = lower, serial, upper
    out["compute_bound"] = out["compute_time_s"] >= np.maximum(out["memory_time_s"], out["comm_time_s"])
    out["tokens_per_s_per_chip"] = roofline.tokens_per_s(tokens_out_per_step, lower) / chips
    out["usd_per_mtok"] = (
        roofline.usd_per_token(lower, tokens_out_per_step, chips, settings["usd_per_chip_hour"]) * MEGA
    )
    return out


def _common(model, chip, layout, batch, tokens_per_seq, settings):
    tp, dp, pp = _f(layout["tensor_parallel"]), _f(layout["attention_data_parallel"]), _f(layout["pipeline_parallel"])
    chips = tp * dp * pp
    n_r = rank_sequences(batch, dp, pp)
    micro_tokens = rank_sequences(batch, 1.0, pp) * _f(tokens_per_seq)
    return tp, dp, pp, chips, n_r, micro_tokens


@formula(
    "FLOP_chip = n_r·q·2·(N_act − N_routed,act − N_lookup)/TP + (B/PP)·q·2·N_routed,act/(TP·DP)",
    "layout: a rank's own tokens through its weights; every token's experts over the replica",
)
def weight_flop_per_chip(model: dict, layout: dict, rank_tokens, micro_tokens):
    """Weight FLOPs one chip does per step [FLOP]: its rank's tokens through the rank's (replicated) weights split
    over TP, and its share of all the stage's tokens through the routed experts (spread over every chip).

    ``rank_tokens`` are one rank's tokens per micro-batch, ``micro_tokens`` the stage's. With nothing replicated the
    non-routed weights are split over the whole stage too.
    """
    tp, dp = _f(layout["tensor_parallel"]), _f(layout["attention_data_parallel"])
    routed = _nz(model["moe_layers"]) * _nz(model["experts_per_token"]) * _nz(model["params_per_expert"])
    lookup = _nz(model["embedding_params"]) - _nz(model["head_params"])  # an untied input table: rows, no FLOPs
    other = _f(model["params_active"]) - routed - np.maximum(lookup, 0.0)
    replicated = np.asarray(layout["replicate_attention"], dtype=bool)
    own = np.where(replicated, _f(rank_tokens) * other / tp, _f(micro_tokens) * other / (tp * dp))
    return 2.0 * (own + expert_flop_per_chip(model, layout, micro_tokens) / 2.0)


@formula("FLOP_expert,chip = (B/PP)·q·2·N_routed,act/(TP·DP)", "layout: every token's experts over the stage")
def expert_flop_per_chip(model: dict, layout: dict, micro_tokens):
    """The routed experts' share of :func:`weight_flop_per_chip` [FLOP]: the stage's tokens through their top-k
    experts, spread over all TP·DP chips (0 for a dense model)."""
    routed = _nz(model["moe_layers"]) * _nz(model["experts_per_token"]) * _nz(model["params_per_expert"])
    return 2.0 * _f(micro_tokens) * routed / (_f(layout["tensor_parallel"]) * _f(layout["attention_data_parallel"]))


@formula("decode step: terms above with t = (B/PP)·(1 + n_draft) tokens per micro-batch", "this module")
def decode_terms(model: dict, chip: dict, layout: dict, batch, context_tokens, *, kv_scale=1.0, settings=None) -> dict:
    """One decode step of a replica: every sequence of ``batch`` verifies 1 + n_draft tokens at ``context_tokens``.

    Arguments broadcast (numpy): ``model``/``chip``/``layout`` are mappings of arrays (``MODEL_KEYS``,
    ``CHIP_KEYS``, ``LAYOUT_KEYS``), ``settings`` overrides ``SETTINGS``. Returns per-chip bytes, FLOPs and
    times, the three overlap rules, tokens/s per chip and per user, $/MTok of output and memory per chip.
    """
    s = _settings(settings)
    q = 1.0 + s["speculative_tokens"]
    tp, dp, pp, chips, n_r, micro_tokens = _common(model, chip, layout, batch, q, s)
    weights_read = _weights_read_per_chip(model, layout, micro_tokens, s["weight_bytes_per_param"])
    cache_read = (
        n_r
        * kv_bytes_read_per_sequence(
            context_tokens,
            sparse_topk_tokens=model["sparse_topk_tokens"],
            dense_attention_frac=model.get("dense_attention_frac", 0.0),
            **_cache(model, kv_scale),
        )
        / _kv_split(model, layout)
    )
    attention = decode_attention_flop_per_token(
        context_tokens,
        full_slope=model["full_slope_decode"],
        index_slope=model["index_slope"],
        sparse_topk_tokens=model["sparse_topk_tokens"],
        dense_attention_frac=model.get("dense_attention_frac", 0.0),
        window_slope=model["window_slope"],
        sliding_window_tokens=model["sliding_window_tokens"],
        chunk_slope=model["chunk_slope"],
        attention_chunk_tokens=model["attention_chunk_tokens"],
        state_flop_per_token=model["state_flop_per_token"],
    )
    # PP micro-batches through 1/PP of the layers: per step, one micro-batch's worth of the whole model
    weight_flop = weight_flop_per_chip(model, layout, n_r * q, micro_tokens)
    expert_flop = expert_flop_per_chip(model, layout, micro_tokens)
    attention_flop = n_r * q * attention / tp
    out = _pool(model, chip, layout, s, weights_read, cache_read, (weight_flop, expert_flop, attention_flop), n_r * q)
    accepted = accepted_tokens_per_step(s["speculative_tokens"], s["acceptance_frac"])
    out = _finish(out, layout, s, _f(batch) * accepted, chips)
    out["tokens_per_s_per_user"] = accepted / out["step_time_s"]
    out["memory_per_chip_bytes"] = memory_per_chip_bytes(
        model, layout, batch, context_tokens, weight_bytes_per_param=s["weight_bytes_per_param"], kv_scale=kv_scale
    )
    out["fits"] = out["memory_per_chip_bytes"] <= _f(chip["hbm_capacity_bytes"]) * (1.0 - s["hbm_reserve_frac"])
    out["replica_chips"] = chips
    return out


@formula("prefill pass: b prompts of ℓ new tokens after L_c cached; TTFT = pass time", "this module")
def prefill_terms(
    model: dict, chip: dict, layout: dict, batch, prompt_tokens, cached_tokens=0.0, *, kv_scale=1.0, settings=None
) -> dict:
    """One prefill pass of ``batch`` prompts of ``prompt_tokens`` new tokens after ``cached_tokens`` cached ones.

    The cache is read and the new tokens' cache written once per layer; attention FLOPs are causal (expanded MLA).
    ``ttft_s`` is the pass's time: a prompt's first token leaves with its pass. ``usd_per_mtok`` is per prompt token.
    """
    s = _settings(settings)
    tp, dp, pp, chips, n_r, micro_tokens = _common(model, chip, layout, batch, prompt_tokens, s)
    total = _f(cached_tokens) + _f(prompt_tokens)
    weights_read = _weights_read_per_chip(model, layout, micro_tokens, s["weight_bytes_per_param"])
    cache_read = n_r * kv_bytes_held_per_sequence(total, **_cache(model, kv_scale)) / _kv_split(model, layout)
    attention = prefill_attention_flop(
        cached_tokens,
        prompt_tokens,
        full_slope=model["full_slope_prefill"],
        index_slope=model["index_slope"],
        sparse_topk_tokens=model["sparse_topk_tokens"],
        dense_attention_frac=model.get("dense_attention_frac", 0.0),
        window_slope=model["window_slope"],
        sliding_window_tokens=model["sliding_window_tokens"],
        chunk_slope=model["chunk_slope"],
        attention_chunk_tokens=model["attention_chunk_tokens"],
        state_flop_per_token=model["state_flop_per_token"],
    )
    weight_flop = weight_flop_per_chip(model, layout, n_r * _f(prompt_tokens), micro_tokens)
    expert_flop = expert_flop_per_chip(model, layout, micro_tokens)
    attention_flop = n_r * attention / tp
    flops = (weight_flop, expert_flop, attention_flop)
    out = _pool(model, chip, layout, s, weights_read, cache_read, flops, n_r * _f(prompt_tokens))
    out = _finish(out, layout, s, _f(batch) * _f(prompt_tokens), chips)
    out["ttft_s"] = out["step_time_s"]
    out["memory_per_chip_bytes"] = memory_per_chip_bytes(
        model, layout, batch, total, weight_bytes_per_param=s["weight_bytes_per_param"], kv_scale=kv_scale
    )
    out["fits"] = out["memory_per_chip_bytes"] <= _f(chip["hbm_capacity_bytes"]) * (1.0 - s["hbm_reserve_frac"])
    out["replica_chips"] = chips
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


def _pool(model, chip, layout, s, weights_read, cache_read, flops, tokens_per_rank) -> dict:
    weight_flop, expert_flop, attention_flop = flops
    bandwidth = _f(chip["hbm_bandwidth_bytes_per_s"]) * s["mbu"]
    attention_peak = chip.get("attention_peak_flop_per_s", chip["peak_flop_per_s"])
    out = {
        "weight_bytes_read_per_chip": weights_read,
        "kv_bytes_read_per_chip": cache_read,
        "weight_flop_per_chip": weight_flop,
        "expert_flop_per_chip": expert_flop,
        "attention_flop_per_chip": attention_flop,
        "compute_time_s": compute_time_s(
            weight_flop, expert_flop, attention_flop, chip["peak_flop_per_s"], attention_peak, s["mfu"], s["expert_mfu"]
        ),
        "weight_time_s": weights_read / bandwidth,
        "kv_time_s": cache_read / bandwidth,
    }
    out["memory_time_s"] = out["weight_time_s"] + out["kv_time_s"]
    out.update(communication_times_s(model, chip, layout, tokens_per_rank, s))
    out["comm_time_s"] = out["tp_comm_time_s"] + out["ep_comm_time_s"] + out["pp_comm_time_s"]
    out["overhead_time_s"] = np.broadcast_to(_f(s["step_overhead_s"]), np.shape(out["compute_time_s"])).astype(float)
    return out
