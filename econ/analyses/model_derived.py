"""``model_derived``: what each architecture implies — KV-cache bytes per token, sparsity, weight bytes per format.

The ``models`` table holds what the config.json files say; everything computed from it lives here,
computed by :mod:`econ.physics.kv_cache`, :mod:`econ.physics.model` and :mod:`econ.physics.memory`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.formats import bytes_per_value
from econ.physics import kv_cache, memory, model, token_balance
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "model_derived"
INPUTS = ("models",)

ARCHITECTURE_COLUMNS = (
    "attention",
    "num_layers",
    "num_full_attention_layers",
    "num_sliding_window_layers",
    "num_linear_attention_layers",
    "num_kv_heads",
    "head_dim",
    "v_head_dim",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_num_kv_heads",
    "sliding_head_dim",
    "sliding_window_tokens",
)

MODEL_DERIVED = ResultTable(
    name="model_derived",
    grain="model",
    key=("model",),
    description=(
        "Per model: KV-cache bytes per context token (BF16 cache, full-attention layers) and the fixed KV of "
        "sliding-window layers, computed from the architecture columns; sparsity by parameters and by experts "
        "(lecture b.2: DeepSeek-V3 is 671/37 = 18 by parameters, 256/8 = 32 by experts; the lecture's 8 is neither); "
        "GQA group size; weight bytes per number format"
    ),
    columns=(
        C("model", "str", "", "key", "Model (models.model)"),
        C("lab", "str", "", "input", "Lab that released the model (models.lab)"),
        C("attention", "str", "", "input", "Attention of the full-context layers (models.attention)"),
        C("params_total", "float", "params", "input", "Total parameters N_tot (models.params_total)"),
        C("params_active", "float", "params", "input", "Parameters active per token N_act (models.params_active)"),
        C("sparsity_param_ratio", "float", "", "derived", "Sparsity by parameters", model.sparsity_param_ratio),
        C(
            "sparsity_expert_ratio",
            "float",
            "",
            "derived",
            "Sparsity by experts (null for dense models)",
            model.sparsity_expert_ratio,
        ),
        C("gqa_group_ratio", "float", "", "derived", "Query heads per KV head", model.gqa_group_ratio),
        C(
            "kv_bytes_per_token",
            "float",
            "bytes/token",
            "derived",
            "KV-cache bytes per context token at BF16, full-attention layers (null where the layout is not modelled)",
            kv_cache.kv_bytes_per_token,
        ),
        C(
            "kv_fp8_bytes_per_token",
            "float",
            "bytes/token",
            "derived",
            "The same for an FP8 cache",
            kv_cache.kv_bytes_in_format,
        ),
        C(
            "kv_window_bytes_per_sequence",
            "float",
            "bytes",
            "derived",
            "Fixed KV bytes per sequence held by sliding-window layers once the context exceeds the window, at BF16",
            kv_cache.kv_window_bytes_per_sequence,
        ),
        C(
            "weight_bf16_bytes",
            "float",
            "bytes",
            "derived",
            "Weights at BF16 (2 bytes per parameter)",
            memory.weight_bytes,
        ),
        C(
            "weight_fp8_bytes",
            "float",
            "bytes",
            "derived",
            "Weights at FP8 (1 byte per parameter)",
            memory.weight_bytes,
        ),
        C(
            "weight_fp4_bytes",
            "float",
            "bytes",
            "derived",
            "Weights at FP4 (half a byte per parameter)",
            memory.weight_bytes,
        ),
        C("pretrain_tokens", "float", "tokens", "input", "Reported pre-training tokens (models.pretrain_tokens)"),
        C(
            "pretrain_tokens_per_active_param_ratio",
            "float",
            "tokens/param",
            "derived",
            "Reported pre-training tokens per active parameter",
            token_balance.tokens_per_param_ratio,
        ),
    ),
)
TABLES = (MODEL_DERIVED,)


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

    def f(name, values):
        return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)

    return models.select("model", "lab", "attention", "params_total", "params_active", "pretrain_tokens").with_columns(
        f("sparsity_param_ratio", model.sparsity_param_ratio(num["params_total"], num["params_active"])),
        f("sparsity_expert_ratio", model.sparsity_expert_ratio(num["num_routed_experts"], num["experts_per_token"])),
        f("gqa_group_ratio", model.gqa_group_ratio(num["num_attention_heads"], num["num_kv_heads"])),
        f("kv_bytes_per_token", kv),
        f("kv_fp8_bytes_per_token", kv_cache.kv_bytes_in_format(kv, "fp8")),
        f("kv_window_bytes_per_sequence", kv_cache.kv_window_bytes_per_sequence(arch)),
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
