"""Memory capacity (lecture c.4, d.4, d.6): replica size, memory per chip with EP and PP, what fits.

Pure numpy, broadcasting. Capacities are decimal bytes; batch in sequences; context in tokens.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula


@formula("weights = N_tot·b_w", "lecture c.4")
def weight_bytes(params_total, weight_bytes_per_param):
    """Bytes of the weights = N_tot · b_w."""
    return np.multiply(params_total, weight_bytes_per_param)


@formula("KV = B·(L·b_kv + kv_window(L))", "lecture d.4")
def kv_bytes(batch, context_tokens, kv_bytes_per_token, kv_extra_bytes_per_sequence=0.0):
    """KV-cache bytes of a batch = B · (L · b_kv + kv_extra) (lecture d.4: "batch × context × bytes per token")."""
    return np.multiply(batch, np.multiply(context_tokens, kv_bytes_per_token) + kv_extra_bytes_per_sequence)


@formula("c_mem = (N_tot·b_w + B·L·b_kv) / (E·P)", "lecture d.4")
def memory_per_chip_bytes(
    params_total,
    weight_bytes_per_param,
    batch,
    context_tokens,
    kv_bytes_per_token,
    expert_parallel_chips,
    pipeline_stages=1,
):
    """HBM needed per chip [bytes] with expert parallelism E and P pipeline stages (lecture d.4).

    c_mem = (N_tot·b_w + B·L·b_kv) / (E·P), with B the global batch (P micro-batches in flight).
    Written with the micro-batch b = B/P this is N_tot·b_w/(E·P) + b·L·b_kv/E — "the Ps cancel":
    more stages shrink the weights per chip but not the KV per chip at a fixed micro-batch.
    """
    chips = np.multiply(expert_parallel_chips, pipeline_stages)
    return (
        weight_bytes(params_total, weight_bytes_per_param) + kv_bytes(batch, context_tokens, kv_bytes_per_token)
    ) / chips


@formula("c_mem = N_tot·b_w/(E·P) + b·L·b_kv/E", "lecture d.4")
def memory_per_chip_micro_batch_bytes(
    params_total,
    weight_bytes_per_param,
    micro_batch,
    context_tokens,
    kv_bytes_per_token,
    expert_parallel_chips,
    pipeline_stages=1,
):
    """The same c_mem written in the micro-batch b (lecture d.4's second line) [bytes].

    c_mem = N_tot·b_w / (E·P)  +  b·L·b_kv / E
    """
    weights = weight_bytes(params_total, weight_bytes_per_param) / np.multiply(expert_parallel_chips, pipeline_stages)
    return weights + kv_bytes(micro_batch, context_tokens, kv_bytes_per_token) / np.asarray(
        expert_parallel_chips, dtype=float
    )


@formula("B_max = ⌊(G·C_HBM − N_tot·b_w) / (L·b_kv + kv_window(L))⌋", "lecture d.4")
def max_batch(
    chips,
    hbm_capacity_bytes,
    params_total,
    weight_bytes_per_param,
    context_tokens,
    kv_bytes_per_token,
    kv_extra_bytes_per_sequence=0.0,
):
    """Largest batch whose weights and KV fit in G chips' HBM [sequences]; 0 if the weights alone do not fit.

    B_max = floor( (G·C_HBM − N_tot·b_w) / (L·b_kv + kv_extra) )   (inf when nothing grows with context; NaN when b_kv
    is unknown)
    """
    free = np.multiply(chips, hbm_capacity_bytes) - weight_bytes(params_total, weight_bytes_per_param)
    per_seq = np.multiply(context_tokens, kv_bytes_per_token) + kv_extra_bytes_per_sequence
    with np.errstate(divide="ignore", invalid="ignore"):
        fits = np.floor(np.divide(np.maximum(free, 0.0), per_seq))
    out = np.where(free > 0, np.where(per_seq > 0, fits, np.inf), 0.0)
    return np.where(np.isnan(per_seq) | np.isnan(free), np.nan, out)  # unknown KV or weights: unknown, not infinite


@formula("L_max = ⌊((G·C_HBM − N_tot·b_w)/B − kv_window) / b_kv⌋", "lecture d.4")
def max_context_tokens(
    chips,
    hbm_capacity_bytes,
    params_total,
    weight_bytes_per_param,
    batch,
    kv_bytes_per_token,
    kv_extra_bytes_per_sequence=0.0,
):
    """Longest context at which a batch fits in G chips' HBM [tokens]; 0 if it does not fit at any context.

    L_max = floor( ((G·C_HBM − N_tot·b_w)/B − kv_extra) / b_kv )   (inf without a growing KV cache)
    """
    free = np.multiply(chips, hbm_capacity_bytes) - weight_bytes(params_total, weight_bytes_per_param)
    per_seq = np.divide(free, batch) - kv_extra_bytes_per_sequence
    with np.errstate(divide="ignore", invalid="ignore"):
        fits = np.floor(np.divide(np.maximum(per_seq, 0.0), kv_bytes_per_token))
    out = np.where(per_seq > 0, np.where(np.asarray(kv_bytes_per_token) > 0, fits, np.inf), 0.0)
    return np.where(np.isnan(per_seq) | np.isnan(kv_bytes_per_token), np.nan, out)


@formula("G·C_HBM", "lecture c.4")
def replica_hbm_bytes(chips, hbm_capacity_bytes):
    """HBM of a replica of G chips [bytes]: what its weights and KV must fit in."""
    return np.multiply(chips, hbm_capacity_bytes)


@formula("W_eff = S·W", "lecture d.6")
def effective_bandwidth_bytes_per_s(scale_up_domain_chips, hbm_bandwidth_bytes_per_s):
    """W_eff = S · W: the weight-read bandwidth of one scale-up domain (lecture d.6) [bytes/s]."""
    return np.multiply(scale_up_domain_chips, hbm_bandwidth_bytes_per_s)


@formula(
    "G = smallest power of two ≤ S with G·C_HBM ≥ N_tot·b_w, else P·S with P the smallest power of two of domains "
    "that do",
    "econ rule (lecture d.1 for stages)",
)
def replica_chips(params_total, weight_bytes_per_param, hbm_capacity_bytes, scale_up_domain_chips):
    """Chips per replica and pipeline stages: the smallest replica whose HBM holds the weights.

    Rule: the smallest power of two G ≤ S (scale-up domain) with G·C_HBM ≥ N_tot·b_w; if no
    power of two up to S holds them, the whole domain S; if the domain does not hold them,
    P = the smallest power of two number of domains (pipeline stages across scale-out, lecture
    d.1), G = P·S. KV memory is not in the rule: whether a batch fits is a per-point check.

    Returns
    -------
    (chips G, pipeline_stages P), float arrays broadcast from the inputs.
    """
    need = np.divide(weight_bytes(params_total, weight_bytes_per_param), hbm_capacity_bytes)  # chips' worth of HBM
    domain = np.asarray(scale_up_domain_chips, dtype=float)
    pow2 = 2.0 ** np.ceil(np.log2(np.maximum(need, 1.0)))
    in_domain = np.where(pow2 <= domain, pow2, domain)
    stages = 2.0 ** np.ceil(np.log2(np.maximum(np.divide(need, domain), 1.0)))
    chips = np.where(need <= domain, in_domain, stages * domain)
    return chips, np.where(need <= domain, 1.0, stages)
