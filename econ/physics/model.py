"""Model architectures: the ``Model`` a notebook passes to :func:`econ.physics.decode_step`.

A ``Model`` carries what the roofline needs (total and active parameters, KV-cache bytes
per context token at BF16, the fixed KV of sliding-window layers) and the architecture
columns the attention-FLOP and network formulas use. Build it from a ``models`` row with
:meth:`Model.from_row` (where ``kv_bytes_per_token`` is already computed by
``econ.physics.kv_cache``) or by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.formats import KV_REFERENCE_FORMAT, kv_scale
from econ.formula import formula
from econ.physics.rows import record_fields


@dataclass(frozen=True)
class Model:
    """One model architecture in base units (params, bytes), as in the ``models`` table.

    ``kv_bytes_per_token`` is the per-context-token KV of the layers whose cache grows with
    context, at BF16 (the lecture's b_kv). ``kv_window_bytes_per_sequence`` is what the
    sliding-window layers hold once the context exceeds ``sliding_window_tokens`` (0 if none).
    """

    model: str
    params_total: float
    params_active: float
    kv_bytes_per_token: float
    kv_window_bytes_per_sequence: float = 0.0
    sliding_window_tokens: float | None = None
    attention: str = "gqa"
    num_layers: int | None = None
    kernel_layers: float | None = None  # layers weighted by their kernels (model_derived; blank: num_layers)
    num_attention_heads: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = None
    v_head_dim: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    num_full_attention_layers: int | None = None
    num_sliding_window_layers: int | None = None
    sliding_head_dim: int | None = None
    num_linear_attention_layers: int | None = None
    num_routed_experts: int | None = None
    experts_per_token: int | None = None
    num_shared_experts: int | None = None
    num_dense_layers: int | None = None
    hidden_size: int | None = None
    # the weight classes and cache parts of model_derived (absent: a dense model whose weights are all read)
    rest_params: float | None = None
    shared_expert_params: float = 0.0
    dense_ffn_params: float = 0.0
    embedding_params: float = 0.0
    head_params: float = 0.0
    routed_expert_params: float = 0.0
    moe_layers: float = 0.0
    params_per_expert: float | None = None
    kv_index_bytes_per_token: float = 0.0
    kv_chunk_bytes_per_token: float = 0.0
    attention_chunk_tokens: float | None = None
    state_bytes_per_sequence: float = 0.0
    sparse_topk_tokens: float | None = None
    dense_attention_frac: float = 0.0
    kv_shard_limit: float | None = None
    full_slope_decode_flop_per_token: float = 0.0
    full_slope_prefill_flop_per_token: float = 0.0
    window_slope_flop_per_token: float = 0.0
    chunk_slope_flop_per_token: float = 0.0
    index_slope_flop_per_token: float = 0.0
    state_flop_per_token: float = 0.0

    @classmethod
    def from_row(cls, row: dict) -> Model:
        """A ``Model`` from a ``models`` row (extra keys ignored, NaN/None = blank)."""
        return cls(
            **record_fields(
                cls,
                row,
                ("model", "params_total", "params_active", "kv_bytes_per_token"),
                table="model",
                hint="fill the architecture columns in data/models.csv (kv_bytes_per_token is computed from them)",
            )
        )

    def deployment_arrays(self) -> dict:
        """The model as :func:`econ.physics.deployment.decode_terms` reads it (``deployment.MODEL_KEYS``, BF16 cache).

        Without the class split (a model built by hand) every weight is read every step (``rest_params`` =
        N_tot); without ``hidden_size`` no communication is counted; without attention slopes no attention FLOPs.
        """

        def value(x, default=np.nan):
            return float(default if x is None else x)

        routed = self.routed_expert_params
        rest = self.params_total - routed if self.rest_params is None else self.rest_params
        return {
            "params_active": float(self.params_active),
            "rest_params": float(rest),
            "shared_expert_params": float(self.shared_expert_params),
            "dense_ffn_params": float(self.dense_ffn_params),
            "embedding_params": float(self.embedding_params),
            "head_params": float(self.head_params),
            "routed_expert_params": float(routed),
            "moe_layers": float(self.moe_layers),
            "num_routed_experts": value(self.num_routed_experts),
            "experts_per_token": value(self.experts_per_token),
            "params_per_expert": value(self.params_per_expert),
            "hidden_size": value(self.hidden_size, 0.0),
            "num_layers": value(self.num_layers, 0.0),
            "kernel_layers": value(self.kernel_layers),
            "num_dense_layers": value(self.num_dense_layers, 0.0),
            "num_shared_experts": value(self.num_shared_experts, 0.0),
            "kv_shard_limit": value(self.kv_shard_limit, self.num_kv_heads if self.num_kv_heads else np.inf),
            "sparse_topk_tokens": value(self.sparse_topk_tokens),
            "dense_attention_frac": float(self.dense_attention_frac),
            "full_slope_decode": float(self.full_slope_decode_flop_per_token),
            "full_slope_prefill": float(self.full_slope_prefill_flop_per_token),
            "window_slope": float(self.window_slope_flop_per_token),
            "chunk_slope": float(self.chunk_slope_flop_per_token),
            "index_slope": float(self.index_slope_flop_per_token),
            "state_flop_per_token": float(self.state_flop_per_token),
            "kv_bytes_per_token": float(self.kv_bytes_per_token),
            "kv_index_bytes_per_token": float(self.kv_index_bytes_per_token),
            "kv_window_bytes_per_sequence": float(self.kv_window_bytes_per_sequence),
            "sliding_window_tokens": value(self.sliding_window_tokens),
            "kv_chunk_bytes_per_token": float(self.kv_chunk_bytes_per_token),
            "attention_chunk_tokens": value(self.attention_chunk_tokens),
            "state_bytes_per_sequence": float(self.state_bytes_per_sequence),
        }

    def kv_bytes_per_token_at(self, kv_format: str = KV_REFERENCE_FORMAT) -> float:
        """KV bytes per context token for a cache stored in ``kv_format`` (``kv_bytes_per_token`` is at bf16)."""
        return self.kv_bytes_per_token * kv_scale(kv_format)

    @property
    def sparsity_param_ratio(self) -> float:
        """N_tot / N_act: the lecture's sparsity, in parameters (b.1)."""
        return float(sparsity_param_ratio(self.params_total, self.params_active))

    @property
    def sparsity_expert_ratio(self) -> float:
        """E / k (routed experts over experts per token); NaN for a dense model (b.2)."""
        e, k = self.num_routed_experts, self.experts_per_token
        return float(sparsity_expert_ratio(np.nan if e is None else e, np.nan if k is None else k))


@formula("kv_window(L) = window_bytes · min(L, window) / window", "sliding-window layers hold at most the window")
def kv_window_bytes(context_tokens, kv_window_bytes_per_sequence, sliding_window_tokens):
    """KV bytes per sequence of the sliding-window layers at a context [bytes].

    window_bytes · min(L, window) / window: a window layer holds at most ``window`` tokens,
    so its cache grows with context until the window is full, then stays fixed. 0 where a
    model has no window layers (``kv_window_bytes_per_sequence`` 0, window blank/NaN).
    """
    window_bytes = np.asarray(kv_window_bytes_per_sequence, dtype=float)
    window = np.asarray(np.nan if sliding_window_tokens is None else sliding_window_tokens, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        filled = np.minimum(np.divide(context_tokens, window), 1.0)
    return np.where(window_bytes > 0, window_bytes * np.nan_to_num(filled, nan=1.0), 0.0)


@formula("N_tot / N_act", "lecture b.1")
def sparsity_param_ratio(params_total, params_active):
    """The lecture's sparsity in parameters (what B*₀ uses) [ratio]; DeepSeek-V3: 671/37 ≈ 18."""
    return np.divide(np.asarray(params_total, dtype=float), params_active)


@formula("E / k", "lecture b.2")
def sparsity_expert_ratio(num_routed_experts, experts_per_token):
    """Routed experts over experts per token [ratio]; NaN for a dense model (blank counts); DeepSeek-V3: 256/8 = 32."""
    return np.divide(np.asarray(num_routed_experts, dtype=float), np.asarray(experts_per_token, dtype=float))


@formula("n_q / n_kv", "GQA (Ainslie et al. 2023)")
def gqa_group_ratio(num_attention_heads, num_kv_heads):
    """Query heads per KV head [ratio]: how many query heads share one cached K/V head."""
    return np.divide(np.asarray(num_attention_heads, dtype=float), np.asarray(num_kv_heads, dtype=float))


@formula("MoE layers = layers − dense layers", "config.json first_k_dense_replace")
def moe_layers(num_layers, num_dense_layers):
    """Layers with routed experts [layers]: all layers but the leading dense ones (blank = none dense)."""
    return np.asarray(num_layers, dtype=float) - np.nan_to_num(np.asarray(num_dense_layers, dtype=float))


@formula("mixer layers = num_layers, else full + sliding + chunked + linear", "config.json layer types")
def mixer_layers(num_layers, full, sliding, chunked, linear):
    """Blocks with an attention or linear-attention mixer [layers]: the config's count, else the sum of the kinds
    (Nemotron-H lists block types instead of a layer count)."""
    parts = np.nansum(np.stack([np.asarray(x, dtype=float) for x in (full, sliding, chunked, linear)]), axis=0)
    layers = np.asarray(num_layers, dtype=float)
    return np.where(np.isnan(layers), parts, layers)
