"""A replica's layout and memory: its chips, the sequences of its busiest rank, the weights and cache each chip
holds, the largest batch that fits, and the weight FLOPs each chip does per step. This is the layout half of
:mod:`econ.physics.deployment`, whose module docstring states the layout: ``c = TP·DP·PP`` chips, ``PP`` stages of
``TP·DP`` chips, replicated weight classes split over ``TP``, the rest over the stage."""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import weights
from econ.physics.sequence import (
    decode_attention_flop_per_token,
    kv_bytes_held_per_sequence,
    prefill_attention_flop,
)

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


def _f(x):
    return np.asarray(x, dtype=float)


def _nz(x):
    x = _f(x)
    return np.where(np.isnan(x), 0.0, x)


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


def shards(layout: dict) -> dict:
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
    "w_held = ((N_rest/sh_a + N_shared/sh_s + N_dense/sh_d + N_emb/sh_e)·b_w + N_routed·(1 + R/E)/s·b_e) / PP",
    "layout: replicated classes split over TP, the rest over the stage",
)
def weight_bytes_per_chip(model: dict, layout: dict, weight_bytes_per_param, expert_weight_bytes_per_param=np.nan):
    """Weight bytes one chip holds [bytes] (redundant expert slots hold copies of hot experts); the routed experts
    at ``expert_weight_bytes_per_param`` where their format differs (NaN: the same)."""
    sh = shards(layout)
    e = _f(model["num_routed_experts"])
    b_w = _f(weight_bytes_per_param)
    b_e = np.where(np.isnan(_f(expert_weight_bytes_per_param)), b_w, _f(expert_weight_bytes_per_param))
    with np.errstate(invalid="ignore", divide="ignore"):
        redundancy = np.where(e > 0, 1.0 + _nz(layout["redundant_expert_slots"]) / e, 1.0)
    rest = (
        _f(model["rest_params"]) / sh["attention"]
        + _f(model["shared_expert_params"]) / sh["shared"]
        + _f(model["dense_ffn_params"]) / sh["dense"]
        + _f(model["embedding_params"]) / sh["embedding"]
    )
    experts = _nz(model["routed_expert_params"]) * redundancy / sh["stage"]
    return (rest * b_w + experts * b_e) / _f(layout["pipeline_parallel"])


def weights_read_per_chip(model, layout, tokens_per_micro_batch, weight_bytes_per_param, expert_bytes_per_param):
    """(dense, routed-expert) weight bytes a chip reads for all micro-batches of one step (PP micro-batches, 1/PP of
    the layers each): every non-routed class in full, of the experts the distinct ones the tokens touch."""
    sh = shards(layout)
    touched = _nz(model["moe_layers"]) * weights.distinct_experts(
        tokens_per_micro_batch, model["num_routed_experts"], model["experts_per_token"]
    )
    dense = (
        _f(model["rest_params"]) / sh["attention"]
        + _f(model["shared_expert_params"]) / sh["shared"]
        + _f(model["dense_ffn_params"]) / sh["dense"]
        + _f(model["head_params"]) / sh["embedding"]
    )
    experts = touched * _nz(model["params_per_expert"]) / sh["stage"]
    return dense * _f(weight_bytes_per_param), experts * _f(expert_bytes_per_param)


def kv_split(model, layout):
    """TP chips a rank's cache is split over: as many as there are KV heads (an MLA latent: 1)."""
    return np.minimum(_f(layout["tensor_parallel"]), np.maximum(_nz(model["kv_shard_limit"]), 1.0))


def cache_parts(model: dict, scale) -> dict:
    """The cache parts in the cache's format (``scale`` of the BF16 figures); the indexer's keys stay FP8."""
    scaled = (
        "kv_bytes_per_token",
        "kv_window_bytes_per_sequence",
        "kv_chunk_bytes_per_token",
        "state_bytes_per_sequence",
    )
    return {k: _f(model[k]) * (_f(scale) if k in scaled else 1.0) for k in CACHE_KEYS}


@formula("m_chip = w_held + ⌈n_r⌉·held(L)/TP_kv", "layout; sequence.kv_bytes_held_per_sequence")
def memory_per_chip_bytes(
    model: dict, layout: dict, batch, context_tokens, *, weight_bytes_per_param, kv_scale=1.0, expert_bytes=np.nan
):
    """HBM one chip needs for its weights and its rank's cache at a batch and context [bytes]: the busiest rank holds
    the whole sequences ⌈B/(PP·DP)⌉ (step times use the even spread, a lower bound)."""
    held = kv_bytes_held_per_sequence(context_tokens, **cache_parts(model, kv_scale))
    spread = rank_sequences(batch, layout["attention_data_parallel"], layout["pipeline_parallel"])
    n_r = np.ceil(spread - 1e-9)  # whole sequences: the busiest rank holds the remainder
    # the chip holds 1/PP of the layers for PP micro-batches of n_r sequences: n_r·held over its KV split
    kv = n_r * held / kv_split(model, layout)
    return weight_bytes_per_chip(model, layout, weight_bytes_per_param, expert_bytes) + kv


@formula("B_max = ⌊(C·(1 − reserve) − w_held)·TP_kv / held(L)⌋·DP·PP", "layout")
def max_batch_per_replica(
    model: dict,
    layout: dict,
    chip: dict,
    context_tokens,
    *,
    weight_bytes_per_param,
    kv_scale=1.0,
    hbm_reserve_frac=0.0,
    expert_bytes=np.nan,
):
    """Largest batch per replica whose weights and cache fit every chip [sequences]; 0 if the weights do not."""
    free = _f(chip["hbm_capacity_bytes"]) * (1.0 - _f(hbm_reserve_frac)) - weight_bytes_per_chip(
        model, layout, weight_bytes_per_param, expert_bytes
    )
    held = kv_bytes_held_per_sequence(context_tokens, **cache_parts(model, kv_scale))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_rank = np.floor(np.maximum(free, 0.0) * kv_split(model, layout) / held)
    batch = per_rank * _f(layout["attention_data_parallel"]) * _f(layout["pipeline_parallel"])
    return np.where(free > 0, np.where(held > 0, batch, np.inf), 0.0)


# ---------------------------------------------------------------------------- FLOPs per chip


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


def attention_flop(model, context_tokens, cached_tokens, prompt_tokens):
    """(decode FLOPs per new token at context L, prefill FLOPs of one prompt of ℓ new tokens after c cached)."""
    shared = {
        "index_slope": model["index_slope"],
        "sparse_topk_tokens": model["sparse_topk_tokens"],
        "dense_attention_frac": model.get("dense_attention_frac", 0.0),
        "window_slope": model["window_slope"],
        "sliding_window_tokens": model["sliding_window_tokens"],
        "chunk_slope": model["chunk_slope"],
        "attention_chunk_tokens": model["attention_chunk_tokens"],
        "state_flop_per_token": model["state_flop_per_token"],
    }
    decode = decode_attention_flop_per_token(context_tokens, full_slope=model["full_slope_decode"], **shared)
    prefill = prefill_attention_flop(cached_tokens, prompt_tokens, full_slope=model["full_slope_prefill"], **shared)
    return decode, np.where(np.isnan(_f(prompt_tokens)), 0.0, prefill)
