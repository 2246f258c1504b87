"""Attention FLOPs vs weight FLOPs per token, by architecture (lecture h.1–h.2).

One new token attending to ``L`` cached tokens costs, per attention layer, a QKᵀ product
(2·n_q·d_k FLOPs per cached token) and an AV product (2·n_q·d_v) — the lecture's
4·n_q·d_head·L per layer when d_k = d_v. Layer kinds:

- full (MHA/GQA/MQA): every cached token, so the cost grows with L (GQA does not reduce
  FLOPs: every query head still attends);
- sliding-window / chunked: at most ``window`` tokens, so the cost stops growing at the window;
- linear-attention / SSM: a fixed-size state, not counted here (no context slope);
- compressed (DeepSeek-V4): one entry per r tokens, so a layer's slope per context token is 1/r of a full layer's
  (:func:`econ.physics.kv_cache.compressed_entry_layers`), and every layer adds a window of w tokens;
- MLA (DeepSeek-V2/V3): ``expanded`` form decompresses K and V per head (d_k = head_dim =
  qk_nope + qk_rope, d_v = v_head_dim; what prefill and training run); ``absorbed`` form
  attends in the latent (d_k = kv_lora_rank + qk_rope, d_v = kv_lora_rank; what decode
  kernels run to read only the compressed cache), which costs more FLOPs per context token.

This is the cost of a *decode* token (or the last prompt token); averaged over a causal
prefill of L tokens each token attends to ≈ L/2. Weight FLOPs per token are 2·N_act.
"""

from __future__ import annotations

import numpy as np

from econ.errors import EconError
from econ.formula import formula
from econ.physics.kv_cache import _nz, compressed, compressed_entry_layers, full_attention_layers, index_entry_layers
from econ.physics.kv_cache import window_layers as kv_window_layers


@formula("slope = 2·n_q·(d_k + d_v)·layers", "lecture h.1")
def attention_flop_per_context_token(num_attention_heads, key_dim, value_dim, layers):
    """Attention FLOPs per new token per cached token over ``layers`` layers [FLOP/token].

    slope = 2 · n_q · (d_k + d_v) · layers    (= 4·n_q·d_head·layers when d_k = d_v; lecture h.1)
    """
    return 2.0 * np.multiply(np.multiply(num_attention_heads, np.add(key_dim, value_dim)), layers)


@formula("FLOP_attn(L) = full_slope·L + window_slope·min(L, w)", "lecture h.1")
def attention_flop_per_token(
    context_tokens, full_slope_flop_per_token, window_slope_flop_per_token=0.0, sliding_window_tokens=np.inf
):
    """Attention FLOPs of one new token at a context [FLOP] = full_slope·L + window_slope·min(L, window)."""
    window = np.where(np.isnan(np.asarray(sliding_window_tokens, dtype=float)), np.inf, sliding_window_tokens)
    return np.multiply(full_slope_flop_per_token, context_tokens) + np.multiply(
        window_slope_flop_per_token, np.minimum(context_tokens, window)
    )


@formula("L where full_slope·L + window_slope·min(L, w) = 2·N_act", "lecture h.1")
def attention_crossover_tokens(
    params_active, full_slope_flop_per_token, window_slope_flop_per_token=0.0, sliding_window_tokens=np.inf
):
    """Context [tokens] where attention FLOPs per token equal weight FLOPs per token (2·N_act).

    Solves full·L + window·min(L, w) = 2·N_act: L = 2·N_act/(full + window) if that is within the
    window, else (2·N_act − window·w)/full; inf when only window layers grow (never crosses).
    """
    weight = 2.0 * np.asarray(params_active, dtype=float)
    full = np.asarray(full_slope_flop_per_token, dtype=float)
    slope_in = full + np.asarray(window_slope_flop_per_token, dtype=float)
    window = np.where(np.isnan(np.asarray(sliding_window_tokens, dtype=float)), np.inf, sliding_window_tokens)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = weight / slope_in
        beyond = (weight - np.multiply(window_slope_flop_per_token, np.where(np.isinf(window), 0.0, window))) / full
    return np.where(inside <= window, inside, np.where(full > 0, beyond, np.inf))


@formula("(b_kv / W) / (slope / F)", "lecture h.2")
def kv_over_attention_time_ratio(
    kv_bytes_per_token, full_slope_flop_per_token, peak_flop_per_s, hbm_bandwidth_bytes_per_s
):
    """Per context token, KV read time over attention compute time (lecture h.2) [ratio].

    (b_kv / W) / (slope / F): ≈ R / GQA group for GQA (≈ 40 for typical H100 GQA-8) — why memory,
    not attention compute, limits context.
    """
    return np.divide(
        np.divide(kv_bytes_per_token, hbm_bandwidth_bytes_per_s), np.divide(full_slope_flop_per_token, peak_flop_per_s)
    )


def attention_slopes(columns: dict, *, mla_form: str = "expanded"):
    """Full-layer and window-layer attention slopes from ``models`` columns [FLOP per new token per cached token].

    Parameters
    ----------
    columns : mapping of ``models`` column -> array (NaN = blank): num_layers, num_attention_heads,
        head_dim, v_head_dim, kv_lora_rank, qk_rope_head_dim, num_full_attention_layers,
        num_sliding_window_layers, num_linear_attention_layers, sliding_head_dim.
    mla_form : 'expanded' (per-head K/V, prefill/training) or 'absorbed' (attention in the MLA latent, decode).

    Returns
    -------
    (full_slope, window_slope) float arrays; NaN where the architecture is unknown (``attention == 'other'``).
    """
    if mla_form not in ("expanded", "absorbed"):
        raise EconError(
            f"mla_form must be 'expanded' or 'absorbed', not {mla_form!r}",
            "expanded for prefill and training, absorbed for decode kernels",
        )
    heads = _nz(columns["num_attention_heads"], np.nan)
    key_dim = _nz(columns["head_dim"], np.nan)
    value_dim = _nz(columns["v_head_dim"], key_dim)
    if mla_form == "absorbed":
        mla = ~np.isnan(np.asarray(columns["kv_lora_rank"], dtype=float))
        latent = _nz(columns["kv_lora_rank"], np.nan)
        key_dim = np.where(mla, latent + _nz(columns["qk_rope_head_dim"], 0.0), key_dim)
        value_dim = np.where(mla, latent, value_dim)
    full_layers = full_attention_layers(
        columns["num_layers"],
        columns["num_full_attention_layers"],
        columns["num_sliding_window_layers"],
        columns["num_linear_attention_layers"],
        columns.get("num_chunked_attention_layers", np.nan),
    )
    # compressed attention (DeepSeek-V4): each cached entry is one token's worth of a full layer's work, so the
    # slope per context token counts n_csa/r_csa + n_hca/r_hca layers (kv_cache.compressed_entry_layers)
    full_layers = np.where(compressed(columns), compressed_entry_layers(columns), full_layers)
    full = attention_flop_per_context_token(heads, key_dim, value_dim, full_layers)
    sliding_dim = np.asarray(columns["sliding_head_dim"], dtype=float)
    window_key = np.where(np.isnan(sliding_dim), _nz(columns["head_dim"], np.nan), sliding_dim)
    window_value = np.where(
        np.isnan(sliding_dim), _nz(columns["v_head_dim"], _nz(columns["head_dim"], np.nan)), sliding_dim
    )
    window = attention_flop_per_context_token(heads, window_key, window_value, kv_window_layers(columns))
    unknown = np.asarray(columns["attention"], dtype=object) == "other"  # layout not modelled (as kv_cache.py)
    return np.where(unknown, np.nan, full), np.where(unknown, np.nan, window)


@formula("s_chunk = 2·n_q·(d_k + d_v)·chunked layers", "lecture h.1; config.json attention_chunk_size")
def chunk_slope(columns: dict):
    """Attention FLOPs per new token per token of its chunk, over the chunked layers [FLOP/token]."""
    key_dim = _nz(columns["head_dim"], np.nan)
    return attention_flop_per_context_token(
        _nz(columns["num_attention_heads"], np.nan),
        key_dim,
        _nz(columns["v_head_dim"], key_dim),
        _nz(columns.get("num_chunked_attention_layers", np.nan), 0.0),
    )


@formula("s_idx = 2·n_idx·d_idx·index layers", "DeepSeek-V3.2 lightning indexer")
def index_slope(columns: dict):
    """FLOPs per new token per cached token of a sparse-attention indexer (q·k over its heads) [FLOP/token]: its
    keys per context token (:func:`econ.physics.kv_cache.index_entry_layers`: one per token of each DSA layer, one
    per compressed entry of each compressed sparse layer)."""
    sparse = ~np.isnan(np.asarray(columns.get("index_topk_tokens", np.nan), dtype=float))
    heads = _nz(columns.get("index_num_heads", np.nan), 0.0)
    dim = _nz(columns.get("index_head_dim", np.nan), 0.0)
    return np.where(sparse, 2.0 * heads * dim * index_entry_layers(columns), 0.0)


@formula("f_state = 6·n_v·d_k·d_v·linear layers", "gated delta rule: S·k, rank-1 update, S·q")
def state_flop_per_token(columns: dict):
    """FLOPs per token of the linear-attention / SSM state update and read-out, independent of context [FLOP]."""
    n_v = _nz(columns.get("linear_num_value_heads", np.nan), 0.0)
    d_k = _nz(columns.get("linear_key_head_dim", np.nan), 0.0)
    d_v = _nz(columns.get("linear_value_head_dim", np.nan), 0.0)
    return 6.0 * n_v * d_k * d_v * _nz(columns["num_linear_attention_layers"], 0.0)


@formula("2·N_act", "lecture a.2")
def weight_flop_per_token(params_active):
    """FLOPs of the weights per token [FLOP/token]: 2 per multiply-add of each active parameter."""
    return 2.0 * np.asarray(params_active, dtype=float)


@formula("FLOP_attn(L) / (2·N_act)", "lecture h.1")
def attention_over_weight_flop_ratio(
    context_tokens, full_slope_flop_per_token, window_slope_flop_per_token, sliding_window_tokens, params_active
):
    """Attention over weight FLOPs of one decode token at a context [ratio]."""
    return attention_flop_per_token(
        context_tokens, full_slope_flop_per_token, window_slope_flop_per_token, sliding_window_tokens
    ) / weight_flop_per_token(params_active)
