"""Collective communication times: tensor-parallel all-reduce, expert-parallel dispatch/combine, pipeline hand-off.

Bandwidths are per chip, one direction (``hardware``'s convention). Each time is the larger of a bandwidth term
and a latency term (the scaling book's ``T = max(T_min·hops, bytes/W)``: a lower bound, since a real collective
pays some of both).

- All-gather / reduce-scatter over N ranks moves (N − 1)/N of the array through each chip's link: the scaling
  book's ``bytes·(N − 1)/(N·W)`` (gpus.md; 8×H100, 33.5 MB: 65 µs); an all-reduce is both, twice that.
- Expert-parallel dispatch sends each token's hidden vector to the chips of its routed experts and the combine
  brings the outputs back: ``t·n_dest·d·(b_dispatch + b_combine)/W`` per chip (DeepSeek ISCA '25 §2.3.2:
  32 tokens × 9 destinations × 7K × 3 bytes / 50 GB/s = 120.96 µs).
- A pipeline hand-off sends one activation vector per token to the next stage.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics.network import distinct_chips_per_token


def _f(x):
    return np.asarray(x, dtype=float)


@formula("T_AG = max(α·(N − 1), bytes·(N − 1)/(N·W))", "scaling book sharding.md, gpus.md")
def all_gather_time_s(array_bytes, ranks, link_bytes_per_s, latency_s=0.0):
    """All-gather (or reduce-scatter) of an array of ``array_bytes`` over N ranks [s]; 0 for one rank."""
    n, size = _f(ranks), _f(array_bytes)
    with np.errstate(invalid="ignore", divide="ignore"):
        bandwidth = np.where(size > 0, size * (n - 1.0) / (n * _f(link_bytes_per_s)), 0.0)
    return np.where(n > 1, np.maximum(_f(latency_s) * (n - 1.0), bandwidth), 0.0)


@formula("T_AR = 2·T_AG", "scaling book: reduce-scatter then all-gather")
def all_reduce_time_s(array_bytes, ranks, link_bytes_per_s, latency_s=0.0):
    """All-reduce of ``array_bytes`` over N ranks [s] (no in-network reduction)."""
    return 2.0 * all_gather_time_s(array_bytes, ranks, link_bytes_per_s, latency_s)


@formula("T_EP = max(2·α, t·n_dest·d·(b_dispatch + b_combine)/W)", "DeepSeek ISCA '25 §2.3.2")
def dispatch_combine_time_s(
    tokens_per_chip,
    destinations_per_token,
    hidden_size,
    link_bytes_per_s,
    *,
    dispatch_bytes_per_value=1.0,
    combine_bytes_per_value=2.0,
    latency_s=0.0,
):
    """Expert-parallel dispatch plus combine of one MoE layer, per chip [s].

    Each of a chip's ``tokens_per_chip`` tokens goes to ``destinations_per_token`` other chips and comes back:
    bytes = t · n_dest · d · (b_dispatch + b_combine); two messages, so at least two latencies.
    """
    size = _f(tokens_per_chip) * _f(destinations_per_token) * _f(hidden_size)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_byte = (_f(dispatch_bytes_per_value) + _f(combine_bytes_per_value)) / _f(link_bytes_per_s)
        return np.where(size > 0, np.maximum(2.0 * _f(latency_s), size * per_byte), 0.0)


@formula("k_remote = k_GPU·(E_p − 1)/E_p", "lecture c.5; scaling book ragged all-to-all")
def remote_chips_per_token(expert_parallel_chips, experts_per_token):
    """Expected distinct *other* chips a token's k routed experts live on [chips] (own chip excluded).

    k_GPU = E_p·(1 − (1 − 1/E_p)^k) distinct chips (:func:`econ.physics.network.distinct_chips_per_token`), of
    which a fraction (E_p − 1)/E_p are not the token's own.
    """
    ep = _f(expert_parallel_chips)
    k = np.nan_to_num(_f(experts_per_token))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = distinct_chips_per_token(ep, k) * (ep - 1.0) / ep
    return np.where(ep > 1, out, 0.0)


@formula("T_PP = max(α, t·d·b_act/W)", "scaling book gpus.md (pipeline hop)")
def pipeline_handoff_time_s(tokens_per_chip, hidden_size, link_bytes_per_s, *, activation_bytes=2.0, latency_s=0.0):
    """One pipeline stage boundary: a chip sends its tokens' activations to the next stage [s]."""
    size = _f(tokens_per_chip) * _f(hidden_size) * _f(activation_bytes)
    with np.errstate(invalid="ignore", divide="ignore"):
        bandwidth = np.where(size > 0, size / _f(link_bytes_per_s), 0.0)
    return np.maximum(_f(latency_s), bandwidth)
