"""``model_derived``: what each architecture implies — KV-cache bytes per token, sparsity, weight bytes per format.

The ``models`` table holds what the config.json files say; everything computed from it lives here,
computed by :mod:`econ.physics.kv_cache`, :mod:`econ.physics.model` and :mod:`econ.physics.memory`. The table's
columns are declared in :mod:`econ.analyses.model_derived_columns`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.model_derived_columns import (
    ARCHITECTURE_COLUMNS,
    MODEL_DERIVED,
    SPLIT_COLUMNS,
    architecture_groups,
)
from econ.formats import bytes_per_value
from econ.physics import attention, kv_cache, memory, model, step_time, token_balance, weights

NAME = "model_derived"
INPUTS = ("models",)
TABLES = (MODEL_DERIVED,)


def split_in(models: pl.DataFrame, name: str) -> np.ndarray:
    return models[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def derived(models: pl.DataFrame) -> pl.DataFrame:
    """``model_derived`` from a ``models`` frame (vectorised over rows)."""
    arch = {
        c: models[c].to_numpy() if c == "attention" else models[c].cast(pl.Float64).fill_null(np.nan).to_numpy()
        for c in ARCHITECTURE_COLUMNS
    }
    num = {
        c: models[c].cast(pl.Float64).fill_null(np.nan).to_numpy()
        for c in (
            "params_total",
            "params_active",
            "num_routed_experts",
            "experts_per_token",
            "num_attention_heads",
            "num_kv_heads",
            "pretrain_tokens",
        )
    }
    kv = kv_cache.kv_bytes_per_token(arch)
    split = weights.parameter_classes(
        {c: models[c].cast(pl.Float64).fill_null(np.nan).to_numpy() for c in SPLIT_COLUMNS}
    )
    full_decode, window = attention.attention_slopes(arch, mla_form="absorbed")
    full_prefill, _ = attention.attention_slopes(arch)
    mixers = model.mixer_layers(
        arch["num_layers"],
        arch["num_full_attention_layers"],
        arch["num_sliding_window_layers"],
        arch["num_chunked_attention_layers"],
        arch["num_linear_attention_layers"],
    )

    def f(name, values):
        return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)

    return models.select("model", "lab", "attention", "params_total", "params_active", "pretrain_tokens").with_columns(
        architecture_groups(models),
        f("sparsity_param_ratio", model.sparsity_param_ratio(num["params_total"], num["params_active"])),
        f("sparsity_expert_ratio", model.sparsity_expert_ratio(num["num_routed_experts"], num["experts_per_token"])),
        f("gqa_group_ratio", model.gqa_group_ratio(num["num_attention_heads"], num["num_kv_heads"])),
        f("kv_bytes_per_token", kv),
        f("kv_fp8_bytes_per_token", kv_cache.kv_bytes_in_format(kv, "fp8")),
        f("kv_window_bytes_per_sequence", kv_cache.kv_window_bytes_per_sequence(arch)),
        f("kv_index_bytes_per_token", kv_cache.kv_index_bytes_per_token(arch)),
        f("kv_chunk_bytes_per_token", kv_cache.kv_chunk_bytes_per_token(arch)),
        f("attention_chunk_tokens", arch["attention_chunk_tokens"]),
        f("sliding_window_tokens", arch["sliding_window_tokens"]),
        f("sparse_topk_tokens", kv_cache.sparse_topk_tokens(arch)),
        f("dense_attention_frac", kv_cache.dense_attention_frac(arch)),
        f("state_bytes_per_sequence", kv_cache.state_bytes_per_sequence(arch)),
        f("kv_shard_limit", kv_cache.kv_shard_limit(arch["num_kv_heads"], arch["kv_lora_rank"])),
        f("hidden_size", split_in(models, "hidden_size")),
        f("num_layers", mixers),
        f(
            "kernel_layers",
            step_time.kernel_layers(
                mixers,
                kv_cache.mla_layers(arch),
                kv_cache.index_layers(arch),
                arch["num_linear_attention_layers"],
                step_time.hyper_connection_layers(mixers, arch["hyper_connection_streams"]),
                kv_cache.compressed_layers(arch),
            ),
        ),
        f("num_dense_layers", np.nan_to_num(split_in(models, "num_dense_layers"))),
        *(f(c, num[c]) for c in ("num_routed_experts", "experts_per_token")),
        f("num_shared_experts", split_in(models, "num_shared_experts")),
        *(f(k, v) for k, v in split.items()),
        f("full_slope_decode_flop_per_token", full_decode),
        f("full_slope_prefill_flop_per_token", full_prefill),
        f("window_slope_flop_per_token", window),
        f("chunk_slope_flop_per_token", attention.chunk_slope(arch)),
        f("index_slope_flop_per_token", attention.index_slope(arch)),
        f("state_flop_per_token", attention.state_flop_per_token(arch)),
        *(
            f(f"weight_{fmt}_bytes", memory.weight_bytes(num["params_total"], bytes_per_value(fmt)))
            for fmt in ("bf16", "fp8", "fp4")
        ),
        f(
            "pretrain_tokens_per_active_param_ratio",
            token_balance.tokens_per_param_ratio(num["pretrain_tokens"], num["params_active"]),
        ),
    )


def run(ctx) -> None:
    ctx.write(MODEL_DERIVED, derived(ctx.query("select * from models order by model")))
