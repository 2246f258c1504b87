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

from econ.physics.rows import record_fields

KV_REFERENCE_BYTES_PER_VALUE = 2.0
"""``models.kv_bytes_per_token`` is stored for a BF16 cache; other cache formats scale from it."""


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

    def kv_bytes_per_token_at(self, kv_bytes_per_value: float = KV_REFERENCE_BYTES_PER_VALUE) -> float:
        """KV bytes per context token for a cache stored at ``kv_bytes_per_value`` bytes per value."""
        return self.kv_bytes_per_token * kv_bytes_per_value / KV_REFERENCE_BYTES_PER_VALUE

    @property
    def sparsity_param_ratio(self) -> float:
        """N_tot / N_act: the lecture's sparsity, in parameters (b.1)."""
        return self.params_total / self.params_active

    @property
    def sparsity_expert_ratio(self) -> float:
        """E / k (routed experts over experts per token); NaN for a dense model (b.2)."""
        if self.num_routed_experts is None or self.experts_per_token is None:
            return float("nan")
        return self.num_routed_experts / self.experts_per_token


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
