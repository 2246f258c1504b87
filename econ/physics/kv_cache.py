"""KV-cache bytes per token from architecture columns (pure, vectorised).

Sources: the config.json conventions of each attention type (data/README.md), the scaling book
``inference.md`` (KV size = 2 · bytes · H_kv · d_head · layers per token), DeepSeek-V2/V3
(MLA caches the compressed latent plus the decoupled RoPE key per layer).

- MHA/GQA/MQA, per full-attention layer:  n_kv_heads · (d_k + d_v) values   (2·n_kv·d_head when d_k = d_v)
- MLA, per layer:                          kv_lora_rank + qk_rope_head_dim values
- sliding-window layers hold at most ``window`` tokens: a fixed cost per sequence, not a per-context-token
  slope; chunked layers hold the current chunk (:func:`kv_chunk_bytes_per_token` per token of it);
- linear-attention / SSM layers keep a fixed state per sequence (:func:`state_bytes_per_sequence`);
- a sparse-attention indexer caches one key per token per layer (:func:`kv_index_bytes_per_token`);
- compressed attention (DeepSeek-V4, ``attention == 'csa'``): every layer keeps a window of its last ``w`` tokens,
  and a compressed layer also one entry of ``n_kv·d_head`` values (K and V are one shared vector) per ``r`` tokens:
  ``r = 4`` on its compressed sparse layers (CSA, whose indexer keeps one key per entry and picks the top-k
  entries a query reads), ``r = 128`` on its heavily compressed layers (HCA, every entry read). Per context token
  that is ``n_csa/r_csa + n_hca/r_hca`` layers' worth of entries (:func:`compressed_entry_layers`), held like full
  attention, read as sparse attention reads (the HCA share dense, :func:`dense_attention_frac`). DeepSeek-V4
  report (huggingface.co/deepseek-ai/DeepSeek-V4-Pro), SGLang's ``DSv4PoolConfigurator`` (the same sum of pools).

All inputs are float arrays with NaN for blank (``attention`` an object array); outputs NaN where the layout is
unknown (``attention == 'other'``).
"""

from __future__ import annotations

import numpy as np

from econ.formats import kv_scale
from econ.formula import formula


def _nz(x, default):
    """NaN -> default (array or scalar)."""
    x = np.asarray(x, dtype=float)
    return np.where(np.isnan(x), default, x)


def full_attention_layers(
    num_layers,
    num_full_attention_layers,
    num_sliding_window_layers,
    num_linear_attention_layers,
    num_chunked_attention_layers=np.nan,
):
    """Layers whose KV cache grows with context: given explicitly, else all minus sliding, chunked and linear."""
    derived = (
        _nz(num_layers, np.nan)
        - _nz(num_sliding_window_layers, 0.0)
        - _nz(num_linear_attention_layers, 0.0)
        - _nz(num_chunked_attention_layers, 0.0)
    )
    return np.where(np.isnan(np.asarray(num_full_attention_layers, dtype=float)), derived, num_full_attention_layers)


def compressed(columns: dict) -> np.ndarray:
    """Rows whose attention is DeepSeek-V4's compressed attention (``attention == 'csa'``)."""
    return np.asarray(columns["attention"], dtype=object) == "csa"


@formula("layers per token = n_csa/r_csa + n_hca/r_hca", "DeepSeek-V4: one cached entry per r tokens of a layer")
def compressed_entry_layers(columns: dict) -> np.ndarray:
    """Cached entries per context token summed over a compressed-attention model's layers [layers]: each compressed
    sparse layer keeps one per ``csa_compress_tokens`` tokens, each heavily compressed layer one per
    ``hca_compress_tokens`` (DeepSeek-V4-Pro: 30/4 + 31/128 = 7.74); NaN for other models."""
    csa = _nz(columns.get("num_csa_layers", np.nan), 0.0) / _nz(columns.get("csa_compress_tokens", np.nan), np.nan)
    hca = _nz(columns.get("num_hca_layers", np.nan), 0.0) / _nz(columns.get("hca_compress_tokens", np.nan), np.nan)
    return np.where(compressed(columns), csa + hca, np.nan)


def _full_layers(columns: dict):
    """Full-attention layers; for compressed attention the layers' worth of entries per context token."""
    return np.where(compressed(columns), compressed_entry_layers(columns), _uncompressed_full_layers(columns))


def _uncompressed_full_layers(columns: dict):
    return full_attention_layers(
        columns["num_layers"],
        columns["num_full_attention_layers"],
        columns["num_sliding_window_layers"],
        columns["num_linear_attention_layers"],
        columns.get("num_chunked_attention_layers", np.nan),
    )


def kv_values_per_layer_token(attention, num_kv_heads, head_dim, v_head_dim, kv_lora_rank, qk_rope_head_dim):
    """Cached values per full-attention layer per token: MLA latent+rope; compressed attention (``csa``) one shared
    K=V vector per KV head, n_kv·d_head; else n_kv·(d_k+d_v)."""
    attention = np.asarray(attention, dtype=object)
    mla_like = ~np.isnan(np.asarray(kv_lora_rank, dtype=float))
    latent = _nz(kv_lora_rank, np.nan) + _nz(qk_rope_head_dim, np.nan)
    heads = _nz(num_kv_heads, np.nan) * (_nz(head_dim, np.nan) + _nz(v_head_dim, _nz(head_dim, np.nan)))
    shared = _nz(num_kv_heads, np.nan) * _nz(head_dim, np.nan)
    values = np.where(mla_like, latent, np.where(attention == "csa", shared, heads))
    return np.where(attention == "other", np.nan, values)


@formula(
    "b_kv = full layers · (n_kv·(d_k + d_v), or MLA r_kv + d_rope) · bytes per value",
    "lecture f.2; scaling book inference.md; DeepSeek-V2 §2.1",
)
def kv_bytes_per_token(columns: dict, *, bytes_per_value: float = 2.0) -> np.ndarray:
    """KV-cache bytes per token of context, summed over the full-attention layers.

    Parameters
    ----------
    columns : mapping of architecture column name -> array (NaN = blank), as in ``models``.
    bytes_per_value : 2 for a BF16 cache (the reference convention), 1 for FP8.

    Returns
    -------
    bytes per context token [bytes/token]; the lecture's ``b_kv``.
    """
    layers = _full_layers(columns)
    per_layer = kv_values_per_layer_token(
        columns["attention"],
        columns["num_kv_heads"],
        columns["head_dim"],
        columns["v_head_dim"],
        columns["kv_lora_rank"],
        columns["qk_rope_head_dim"],
    )
    return layers * per_layer * bytes_per_value


@formula("window_bytes = window layers · window · n_kv · (d_k + d_v) · bytes per value", "config.json sliding_window")
def kv_window_bytes_per_sequence(columns: dict, *, bytes_per_value: float = 2.0) -> np.ndarray:
    """Fixed KV bytes per sequence held by sliding-window layers once the context exceeds the window.

    window_layers · window · n_kv_sliding · (d_k + d_v) · bytes; 0 where there are none. Compressed attention keeps
    the window on every layer, of its shared K=V vectors (:func:`window_layers`, :func:`kv_values_per_layer_token`).
    """
    n_kv = _nz(columns["sliding_num_kv_heads"], _nz(columns["num_kv_heads"], np.nan))
    sliding_dim = np.asarray(columns["sliding_head_dim"], dtype=float)
    head = _nz(columns["head_dim"], np.nan)
    kv_dims = np.where(np.isnan(sliding_dim), head + _nz(columns["v_head_dim"], head), 2.0 * sliding_dim)
    values = np.where(compressed(columns), n_kv * head, n_kv * kv_dims)
    layers = window_layers(columns)
    window = _nz(columns["sliding_window_tokens"], 0.0)
    return np.where(layers > 0, layers * window * values * bytes_per_value, 0.0)


def window_layers(columns: dict) -> np.ndarray:
    """Layers that keep a sliding window [layers]: the sliding-window layers; every layer of a compressed-attention
    model (DeepSeek-V4 attends to its last ``sliding_window`` tokens uncompressed on each layer)."""
    every = _nz(columns["num_layers"], np.nan)
    return np.where(compressed(columns), every, _nz(columns["num_sliding_window_layers"], 0.0))


@formula("b_kv(format) = b_kv,bf16 · bytes(format) / 2", "number formats (econ.formats)")
def kv_bytes_in_format(kv_bytes_bf16, kv_format: str):
    """KV bytes of a cache stored in ``kv_format`` from the BF16 figure (fp8 halves it) [bytes]."""
    return kv_bytes_bf16 * kv_scale(kv_format)


@formula("b_chunk = chunked layers · n_kv · (d_k + d_v) · bytes per value", "config.json attention_chunk_size")
def kv_chunk_bytes_per_token(columns: dict, *, bytes_per_value: float = 2.0) -> np.ndarray:
    """KV bytes per token of the current chunk, summed over the chunked-attention layers (Llama-4) [bytes/token]."""
    head = _nz(columns["head_dim"], np.nan)
    per_layer = _nz(columns["num_kv_heads"], np.nan) * (head + _nz(columns["v_head_dim"], head))
    layers = _nz(columns.get("num_chunked_attention_layers", np.nan), 0.0)
    return np.where(layers > 0, layers * per_layer * bytes_per_value, 0.0)


INDEX_KEY_BYTES_PER_VALUE = 1.0
INDEX_SCALE_BYTES = 4.0
"""DeepSeek's lightning indexer keeps its keys in FP8 with one FP32 scale per key (DeepSeek-V3.2: the indexer
"can be implemented in FP8"; the open inference code caches them so), whatever the format of the main cache."""


@formula("b_idx = index layers · (d_idx · 1 byte + 4-byte scale)", "DeepSeek-V3.2 lightning indexer (FP8 keys)")
def kv_index_bytes_per_token(columns: dict) -> np.ndarray:
    """Indexer key bytes per context token of a sparse-attention model, over its index layers [bytes/token].

    FP8 keys plus a scale (:data:`INDEX_KEY_BYTES_PER_VALUE`, :data:`INDEX_SCALE_BYTES`); 0 without an indexer. A
    compressed sparse layer keys its entries, one per ``csa_compress_tokens`` tokens (:func:`index_entry_layers`).
    """
    per_layer = _nz(columns.get("index_head_dim", np.nan), 0.0) * INDEX_KEY_BYTES_PER_VALUE + INDEX_SCALE_BYTES
    return index_entry_layers(columns) * per_layer


@formula(
    "k_top = index_topk (DSA: tokens; compressed sparse layers: entries of r_csa tokens, r_csa·index_topk)",
    "DeepSeek-V3.2; DeepSeek-V4 (index_topk counts compressed entries)",
)
def sparse_topk_tokens(columns: dict) -> np.ndarray:
    """Context tokens a sparse layer's query reads [tokens]: DSA's ``index_topk`` tokens; DeepSeek-V4's indexer
    picks ``index_topk`` compressed entries, each of ``csa_compress_tokens`` tokens; NaN without sparse attention."""
    topk = np.asarray(columns.get("index_topk_tokens", np.nan), dtype=float)
    ratio = np.where(compressed(columns), _nz(columns.get("csa_compress_tokens", np.nan), np.nan), 1.0)
    return topk * ratio


def index_layers(columns: dict) -> np.ndarray:
    """Layers with a sparse-attention indexer [layers]: the config's count, else every full-attention layer of a
    model with an indexer (``index_topk_tokens``), every compressed sparse layer of a compressed-attention model; 0
    without one."""
    sparse = ~np.isnan(np.asarray(columns.get("index_topk_tokens", np.nan), dtype=float))
    layers = _nz(columns.get("num_index_layers", np.nan), np.nan)
    every = np.where(compressed(columns), _nz(columns.get("num_csa_layers", np.nan), 0.0), _full_layers(columns))
    return np.where(sparse, np.where(np.isnan(layers), every, layers), 0.0)


def index_entry_layers(columns: dict) -> np.ndarray:
    """Indexer keys per context token summed over the index layers [layers]: one per token on a DSA layer, one per
    ``csa_compress_tokens`` tokens on a compressed sparse layer."""
    ratio = np.where(compressed(columns), _nz(columns.get("csa_compress_tokens", np.nan), np.nan), 1.0)
    return index_layers(columns) / ratio


def compressed_layers(columns: dict) -> np.ndarray:
    """Layers with a compressed cache [layers]: a compressed-attention model's compressed sparse and heavily
    compressed layers (DeepSeek-V4-Pro: 30 + 31); 0 for other models."""
    layers = _nz(columns.get("num_csa_layers", np.nan), 0.0) + _nz(columns.get("num_hca_layers", np.nan), 0.0)
    return np.where(compressed(columns), layers, 0.0)


def mla_layers(columns: dict) -> np.ndarray:
    """Layers whose attention is multi-head latent attention [layers]: every full-attention layer of a model with an
    MLA latent (``kv_lora_rank``), and every layer of a compressed-attention model (its low-rank query and output
    projections and one shared latent-sized KV entry launch at least MLA's kernels); 0 without one."""
    mla = ~np.isnan(np.asarray(columns["kv_lora_rank"], dtype=float))
    every = _nz(columns["num_layers"], np.nan)
    return np.where(mla, _full_layers(columns), np.where(compressed(columns), every, 0.0))


@formula("f_dense = (full layers − index layers) / full layers of a sparse-attention model", "config.json")
def dense_attention_frac(columns: dict) -> np.ndarray:
    """Share of a sparse-attention model's full-attention layers that run dense, without its indexer [fraction].

    MiniMax-M3 puts its sparse attention on 57 of 60 layers (``sparse_attention_config``): the other 3 read their
    whole KV every step. DeepSeek-V4's heavily compressed layers read every entry: their share of the entries per
    token, (n_hca/r_hca)/(n_csa/r_csa + n_hca/r_hca) (Pro: 0.031). 0 for a model without an indexer, or whose indexer
    covers every full layer.
    """
    sparse = ~np.isnan(np.asarray(columns.get("index_topk_tokens", np.nan), dtype=float))
    full = np.asarray(_full_layers(columns), dtype=float)
    index = _nz(columns.get("num_index_layers", np.nan), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(np.isnan(index) | ~(full > 0), 0.0, np.clip((full - index) / full, 0.0, 1.0))
        heavy = _nz(columns.get("num_hca_layers", np.nan), 0.0) / _nz(columns.get("hca_compress_tokens", np.nan), 1.0)
        frac = np.where(compressed(columns), heavy / full, frac)
    return np.where(sparse, frac, 0.0)


@formula(
    "state = linear layers · (n_v·d_k·d_v + (2·n_k·d_k + n_v·d_v)·(kernel − 1)) · bytes per value",
    "Gated DeltaNet (Qwen3-Next/3.5); Mamba-2 with n_v = heads, d_v = head dim, d_k = state size, n_k = groups",
)
def state_bytes_per_sequence(columns: dict, *, bytes_per_value: float = 2.0) -> np.ndarray:
    """Fixed recurrent state of the linear-attention / SSM layers per sequence [bytes].

    Per layer: the n_v·d_k·d_v recurrent state plus the causal convolution's last (kernel − 1) inputs of its
    q/k/v (Mamba-2: x/B/C) channels. 0 where a model has no such layers.
    """
    n_k = _nz(columns.get("linear_num_key_heads", np.nan), 0.0)
    n_v = _nz(columns.get("linear_num_value_heads", np.nan), 0.0)
    d_k = _nz(columns.get("linear_key_head_dim", np.nan), 0.0)
    d_v = _nz(columns.get("linear_value_head_dim", np.nan), 0.0)
    kernel = _nz(columns.get("linear_conv_kernel_dim", np.nan), 1.0)
    layers = _nz(columns["num_linear_attention_layers"], 0.0)
    per_layer = n_v * d_k * d_v + (2.0 * n_k * d_k + n_v * d_v) * (kernel - 1.0)
    return layers * per_layer * bytes_per_value


@formula("TP_kv = n_kv (MLA: 1)", "tensor parallelism splits a cache by KV heads; an MLA latent is one")
def kv_shard_limit(num_kv_heads, kv_lora_rank):
    """Most tensor-parallel chips one sequence's cache can split over [chips]: its KV heads; 1 for an MLA latent
    (every TP chip of a rank then holds and reads all of it)."""
    mla = ~np.isnan(np.asarray(kv_lora_rank, dtype=float))
    return np.where(mla, 1.0, np.asarray(num_kv_heads, dtype=float))
