"""What one step of a serving pool (:mod:`econ.physics.deployment`) reads and writes: the model, chip and layout
columns it takes, the per-chip terms it returns (``serving_layouts``' columns), and the run settings with their
idealised defaults (every efficiency 1, no latency, no overhead: the lecture's bound)."""

from __future__ import annotations

import numpy as np

from econ.physics import sharding

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
    "kernel_layers",
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
    *sharding.CACHE_KEYS,
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
    "step_time_bound_s",
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
    "attention_mfu": np.nan,
    "expert_mbu": np.nan,
    "layer_overhead_s": 0.0,
    "sequence_overhead_s": 0.0,
    "expert_imbalance_scale": 0.0,
    "kernel_serial": 0.0,
    "expert_weight_bytes_per_param": np.nan,
}
"""Run settings with their idealised defaults (every efficiency 1, no latency, no overhead). ``mfu`` applies to the
non-expert weight FLOPs (and to attention unless ``attention_mfu`` is set), ``expert_mfu`` to the routed experts'
grouped GEMMs, ``mbu`` to HBM traffic (the routed experts' weight reads at ``expert_mbu`` where it is set),
``link_frac`` to link bandwidth. ``kernel_serial`` 1 times a step as real engines run it
(:func:`econ.physics.step_time.kernel_step_time_s`: kernel classes in sequence, latencies per hop,
``layer_overhead_s`` per layer, the busiest expert rank at ``expert_imbalance_scale`` of uniform routing's excess); 0
keeps the lecture's lower bound ``max(compute, memory, communication) + overhead``."""


def _settings(settings: dict | None) -> dict:
    unknown = set(settings or {}) - set(SETTINGS)
    if unknown:
        raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
    return {**SETTINGS, **(settings or {})}
