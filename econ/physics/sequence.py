"""What one sequence at context L holds, reads and computes in attention, for every attention variant.

A model's cache has up to five parts (columns of ``model_derived``, bytes at BF16; scale for another format):

- full attention (MHA/GQA/MQA, or the MLA latent): ``b_kv`` per context token, held and read for all L tokens;
  with sparse top-k attention (DeepSeek Sparse Attention) held for all L but read for only ``min(L, k_top)``,
  except on the share ``f_dense`` of the full layers a sparse model runs dense (MiniMax-M3: 3 of 60), read for all L;
- the sparse-attention indexer's keys: ``b_idx`` per token, held and read for all L (it scores every token);
- sliding-window layers: at most ``w`` tokens (``kv_window_bytes_per_sequence`` once L ≥ w);
- chunked layers (Llama-4 local attention): the tokens of the current chunk of ``c``; a chunk-sized buffer is
  held, and a decode step at a random position in a chunk reads c/2 tokens on average once L ≥ c;
- linear-attention / SSM layers: a fixed state (``state_bytes_per_sequence``), read and written every step.

Attention FLOPs per new token follow the same parts with their slopes [FLOP per cached token]
(:mod:`econ.physics.attention`: 2·n_q·(d_k + d_v) per layer; the indexer 2·n_idx·d_idx per layer);
a prefill of ℓ new tokens after c cached ones sums them over causal positions c+1 … c+ℓ.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics.model import kv_window_bytes


def _f(x):
    return np.asarray(x, dtype=float)


def _cap(x):
    """NaN (no such layers) -> inf (no cap)."""
    x = _f(x)
    return np.where(np.isnan(x), np.inf, x)


def _nz(x):
    x = _f(x)
    return np.where(np.isnan(x), 0.0, x)


def chunk_tokens_read(context_tokens, chunk_tokens):
    """Tokens a chunked layer attends to at a decode step: L below one chunk, c/2 on average beyond it."""
    c = _cap(chunk_tokens)
    return np.where(_f(context_tokens) < c, _f(context_tokens), np.where(np.isinf(c), 0.0, c / 2.0))


@formula(
    "held(L) = L·(b_kv + b_idx) + kv_window(L) + b_chunk·min(L, c) + state",
    "config.json attention layouts",
)
def kv_bytes_held_per_sequence(
    context_tokens,
    *,
    kv_bytes_per_token,
    kv_index_bytes_per_token=0.0,
    kv_window_bytes_per_sequence=0.0,
    sliding_window_tokens=np.nan,
    kv_chunk_bytes_per_token=0.0,
    attention_chunk_tokens=np.nan,
    state_bytes_per_sequence=0.0,
):
    """Cache bytes one sequence holds at context L [bytes] (what must fit in HBM)."""
    length = _f(context_tokens)
    window_part = kv_window_bytes(length, _nz(kv_window_bytes_per_sequence), sliding_window_tokens)
    chunk = np.minimum(length, _cap(attention_chunk_tokens))
    return (
        length * (_f(kv_bytes_per_token) + _nz(kv_index_bytes_per_token))
        + window_part
        + _nz(kv_chunk_bytes_per_token) * np.where(np.isinf(chunk), 0.0, chunk)
        + _nz(state_bytes_per_sequence)
    )


def sparse_tokens(length, sparse_topk_tokens, dense_attention_frac=0.0):
    """Tokens the full layers read per layer on average: (1 − f_dense)·min(L, k_top) + f_dense·L."""
    f = _nz(dense_attention_frac)
    return (1.0 - f) * np.minimum(length, _cap(sparse_topk_tokens)) + f * length


@formula(
    "read(L) = ((1 − f_dense)·min(L, k_top) + f_dense·L)·b_kv + L·b_idx + kv_window(L) + b_chunk·chunk_read(L) + "
    "2·state",
    "DeepSeek-V3.2 (DSA); config.json attention layouts",
)
def kv_bytes_read_per_sequence(
    context_tokens,
    *,
    kv_bytes_per_token,
    kv_index_bytes_per_token=0.0,
    sparse_topk_tokens=np.nan,
    dense_attention_frac=0.0,
    kv_window_bytes_per_sequence=0.0,
    sliding_window_tokens=np.nan,
    kv_chunk_bytes_per_token=0.0,
    attention_chunk_tokens=np.nan,
    state_bytes_per_sequence=0.0,
):
    """Cache bytes one decode step reads for one sequence at context L [bytes] (the state is read and written)."""
    length = _f(context_tokens)
    window_part = kv_window_bytes(length, _nz(kv_window_bytes_per_sequence), sliding_window_tokens)
    return (
        sparse_tokens(length, sparse_topk_tokens, dense_attention_frac) * _f(kv_bytes_per_token)
        + length * _nz(kv_index_bytes_per_token)
        + window_part
        + _nz(kv_chunk_bytes_per_token) * chunk_tokens_read(length, attention_chunk_tokens)
        + 2.0 * _nz(state_bytes_per_sequence)
    )


@formula(
    "FLOP_attn(L) = s_full·((1 − f_dense)·min(L, k_top) + f_dense·L) + s_idx·L + s_win·min(L, w) + "
    "s_chunk·chunk_read(L) + f_state",
    "lecture h.1; DeepSeek-V3.2 indexer",
)
def decode_attention_flop_per_token(
    context_tokens,
    *,
    full_slope,
    index_slope=0.0,
    sparse_topk_tokens=np.nan,
    dense_attention_frac=0.0,
    window_slope=0.0,
    sliding_window_tokens=np.nan,
    chunk_slope=0.0,
    attention_chunk_tokens=np.nan,
    state_flop_per_token=0.0,
):
    """Attention FLOPs of one new token at context L [FLOP/token]; slopes are per cached token."""
    length = _f(context_tokens)
    return (
        _nz(full_slope) * sparse_tokens(length, sparse_topk_tokens, dense_attention_frac)
        + _nz(index_slope) * length
        + _nz(window_slope) * np.minimum(length, _cap(sliding_window_tokens))
        + _nz(chunk_slope) * chunk_tokens_read(length, attention_chunk_tokens)
        + _nz(state_flop_per_token)
    )


@formula("Σ_{i=1..ℓ} min(c + i, cap)", "causal attention")
def causal_sum_min(cached_tokens, new_tokens, cap):
    """Σ over the ℓ new positions c+1 … c+ℓ of min(position, cap): the tokens a causal prefill attends to.

    Closed form: positions up to the cap contribute their index, the rest the cap (cap = inf: no cap).
    """
    c, n = _f(cached_tokens), _f(new_tokens)
    cap = _cap(cap)
    below_end = np.clip(cap, c, c + n)  # positions c+1 … below_end are below the cap

    def tri(x):
        return x * (x + 1.0) / 2.0

    with np.errstate(invalid="ignore"):
        capped = np.where(np.isinf(cap), 0.0, (c + n - below_end) * np.where(np.isinf(cap), 0.0, cap))
    return tri(below_end) - tri(c) + capped


def _chunk_position_sum(end, chunk):
    """Σ_{p=1..end} (p mod c)."""
    q, r = np.floor_divide(end, chunk), np.mod(end, chunk)
    return q * (chunk - 1.0) * chunk / 2.0 + r * (r + 1.0) / 2.0


@formula(
    "FLOP_prefill = Σ_i FLOP_attn(c + i) over the ℓ new tokens (causal)",
    "lecture h.1 (prefill averages ≈ L/2 per token)",
)
def prefill_attention_flop(
    cached_tokens,
    new_tokens,
    *,
    full_slope,
    index_slope=0.0,
    sparse_topk_tokens=np.nan,
    dense_attention_frac=0.0,
    window_slope=0.0,
    sliding_window_tokens=np.nan,
    chunk_slope=0.0,
    attention_chunk_tokens=np.nan,
    state_flop_per_token=0.0,
):
    """Attention FLOPs of a prefill of ℓ new tokens after c cached ones, one sequence [FLOP].

    Each new token attends causally to the tokens before it (min with k_top for sparse attention, the window
    for sliding layers, its own chunk's tokens for chunked layers); the indexer scores all of them.
    """
    c, n = _f(cached_tokens), _f(new_tokens)
    chunk = _cap(attention_chunk_tokens)
    with np.errstate(invalid="ignore"):
        chunk_part = np.where(
            np.isinf(chunk), 0.0, _chunk_position_sum(c + n, np.where(np.isinf(chunk), 1.0, chunk))
        ) - np.where(np.isinf(chunk), 0.0, _chunk_position_sum(c, np.where(np.isinf(chunk), 1.0, chunk)))
    return (
        _nz(full_slope)
        * (
            (1.0 - _nz(dense_attention_frac)) * causal_sum_min(c, n, sparse_topk_tokens)
            + _nz(dense_attention_frac) * causal_sum_min(c, n, np.inf)
        )
        + _nz(index_slope) * causal_sum_min(c, n, np.inf)
        + _nz(window_slope) * causal_sum_min(c, n, sliding_window_tokens)
        + _nz(chunk_slope) * chunk_part
        + _nz(state_flop_per_token) * n
    )
