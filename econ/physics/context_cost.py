"""What one more token of context costs, per generated token and per prompt token, under the deployment model.

The long-context price tiers are read against these (``econ.fits.context_tiers``):

- **decode** — one more context token adds its KV (or indexer-key) bytes to every later decode step's reads.
  Per generated token the KV/state part of the step costs

      c_kv(L) = t_kv(L) · c · p / (B · accepted),    t_kv = n_r · read(L) / (TP_kv · W · mbu)

  with n_r = B/(PP·DP) sequences per attention rank, so c_kv = read(L) · (TP/TP_kv) · p / (W · mbu · accepted):
  independent of the batch B. It is the slope of the cost in L while the step is memory-bound (the KV read is on
  the critical path), which is what a tier priced for long prompts meets; a compute-bound step at short
  contexts would hide it. (:func:`econ.physics.deployment.decode_terms` evaluates it, so sparse top-k
  attention, sliding windows, linear-attention states and MLA's TP replication are the deployment model's.)
- **prefill** — a prompt of L tokens costs its weight FLOPs, its causal attention FLOPs (≈ L/2 per token for
  full attention), the cache it writes and, for chunked passes, reads, and its communication:
  :func:`econ.physics.deployment.prefill_terms` at one prompt per attention rank.

Both are evaluated per row (one model × chip × layout each) at the given contexts, vectorised.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import deployment, sharding
from econ.physics.sequence import kv_bytes_read_per_sequence, prefill_attention_flop
from econ.units import SECONDS_PER_HOUR


def _col(d: dict) -> dict:
    return {k: np.asarray(v, dtype=float)[:, None] if np.ndim(v) else v for k, v in d.items()}


def _one_per_rank(layout: dict):
    return np.asarray(layout["attention_data_parallel"], dtype=float) * np.asarray(
        layout["pipeline_parallel"], dtype=float
    )


@formula("c_kv(L) = read(L)·(TP/TP_kv)·p/(W·mbu·accepted), memory-bound decode", "lecture a.2, a.4; deployment model")
def decode_kv_usd_per_token(model: dict, chip: dict, layout: dict, context_tokens, *, kv_scale, settings: dict):
    """KV/state part of the decode cost per generated token at each context [$/token] (module docstring).

    ``model``/``chip``/``layout``: one row per case (arrays); ``context_tokens``: (cases, contexts); ``settings``
    as :func:`econ.physics.deployment.decode_terms` takes them (arrays of one value per case, or scalars).
    """
    lay = {k: np.asarray(v)[:, None] for k, v in layout.items()}
    batch = _one_per_rank(layout)[:, None]
    out = deployment.decode_terms(
        _col(model), _col(chip), lay, batch, np.asarray(context_tokens, dtype=float), kv_scale=kv_scale,
        settings=_col(settings),
    )  # fmt: skip
    accepted = deployment.accepted_tokens_per_step(settings["speculative_tokens"], settings["acceptance_frac"])
    usd_per_s = np.asarray(settings["usd_per_chip_hour"], dtype=float) / SECONDS_PER_HOUR
    return out["kv_time_s"] * out["replica_chips"] * np.reshape(usd_per_s, (-1, 1)) / (batch * accepted)


@formula("read(L) of econ.physics.sequence.kv_bytes_read_per_sequence at the KV format", "architecture")
def decode_kv_bytes_read(model: dict, context_tokens, *, kv_scale):
    """Cache bytes one decode step reads per sequence at each context [bytes] (KV format applied)."""
    m = _col(model)
    scaled = (
        "kv_bytes_per_token",
        "kv_window_bytes_per_sequence",
        "kv_chunk_bytes_per_token",
        "state_bytes_per_sequence",
    )
    parts = {k: m[k] * (kv_scale if k in scaled else 1.0) for k in sharding.CACHE_KEYS}
    return kv_bytes_read_per_sequence(
        np.asarray(context_tokens, dtype=float),
        sparse_topk_tokens=m["sparse_topk_tokens"],
        dense_attention_frac=m.get("dense_attention_frac", 0.0),
        **parts,
    )


@formula("c_in(L) = prefill pass cost / L at one prompt per rank", "lecture f.3, h.1; deployment model")
def prefill_usd_per_token(model: dict, chip: dict, layout: dict, prompt_tokens, *, kv_scale, settings: dict):
    """Prefill cost per prompt token of a prompt of ``prompt_tokens`` (nothing cached) [$/token]: the pass of one
    prompt per attention rank (:func:`econ.physics.deployment.prefill_terms`)."""
    lay = {k: np.asarray(v)[:, None] for k, v in layout.items()}
    batch = _one_per_rank(layout)[:, None]
    s = {k: v for k, v in _col(settings).items() if k not in ("speculative_tokens", "acceptance_frac")}
    out = deployment.prefill_terms(
        _col(model), _col(chip), lay, batch, np.asarray(prompt_tokens, dtype=float), 0.0, kv_scale=kv_scale,
        settings=s,
    )  # fmt: skip
    return out["usd_per_mtok"] / 1e6


@formula("A(L)/L = Σ_i FLOP_attn(i) / L over the prompt's causal positions", "lecture h.1")
def prefill_attention_flop_per_token(model: dict, prompt_tokens):
    """Attention FLOPs per prompt token of a prompt of L tokens, nothing cached [FLOP/token]."""
    m = _col(model)
    length = np.asarray(prompt_tokens, dtype=float)
    total = prefill_attention_flop(
        0.0,
        length,
        full_slope=m["full_slope_prefill"],
        index_slope=m["index_slope"],
        sparse_topk_tokens=m["sparse_topk_tokens"],
        dense_attention_frac=m.get("dense_attention_frac", 0.0),
        window_slope=m["window_slope"],
        sliding_window_tokens=m["sliding_window_tokens"],
        chunk_slope=m["chunk_slope"],
        attention_chunk_tokens=m["attention_chunk_tokens"],
        state_flop_per_token=m["state_flop_per_token"],
    )
    return total / length
