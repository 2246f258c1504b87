"""Spec of ``models``: open-weight architectures, with their head and layer counts checked against each other.

The FFN/expert columns and those of chunked, sparse-indexer and linear-attention layers live in
:mod:`econ.load.model_layer_columns`.

Part of the contract between ``data/`` and the database (``econ.load.tables`` lists every table).
"""

from __future__ import annotations

import polars as pl

from econ import units
from econ.errors import Problem
from econ.load import ceilings
from econ.load.model_layer_columns import FFN_COLUMNS, LAYER_VARIANT_COLUMNS
from econ.load.physical import check_model_counts
from econ.load.spec import FILE, LINE, Column, TableSpec

ATTENTION = ("mha", "gqa", "mqa", "mla", "hybrid", "csa", "other")
CSA_COLUMNS = (
    "num_csa_layers",
    "csa_compress_tokens",
    "num_hca_layers",
    "hca_compress_tokens",
    "num_kv_heads",
    "head_dim",
    "sliding_window_tokens",
    "index_topk_tokens",
    "index_num_heads",
    "index_head_dim",
)
"""What compressed attention (DeepSeek-V4) needs to be timed: its two compressed layer kinds, the shared KV entry,
the window every layer keeps and the indexer of the sparse layers."""


def _rows(frame: pl.DataFrame, mask: pl.Expr) -> list[dict]:
    return frame.filter(mask).to_dicts()


# ---------------------------------------------------------------------------- models


def _check_models(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    problems = []
    for row in _rows(frame, pl.col("params_active") > pl.col("params_total")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "params_active_b",
                "active parameters exceed total parameters",
                "check params_active_b and params_total_b",
            )
        )
    for row in _rows(frame, pl.col("experts_per_token") > pl.col("num_routed_experts")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "experts_per_token",
                "more active experts than routed experts",
                "check experts_per_token and num_routed_experts",
            )
        )
    mla_missing = (pl.col("attention") == "mla") & (
        pl.col("kv_lora_rank").is_null() | pl.col("qk_rope_head_dim").is_null()
    )
    for row in _rows(frame, mla_missing):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "kv_lora_rank",
                "MLA needs kv_lora_rank and qk_rope_head_dim",
                "fill both from the model's config.json",
            )
        )
    csa_missing = (pl.col("attention") == "csa") & pl.any_horizontal(pl.col(c).is_null() for c in CSA_COLUMNS)
    for row in _rows(frame, csa_missing):
        blank = [c for c in CSA_COLUMNS if row[c] is None]
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                blank[0],
                f"compressed attention (csa) needs {', '.join(blank)}",
                "fill them from the model's config.json (compress_ratios counted by ratio, sliding_window, index_*)",
            )
        )
    return problems


MODELS = TableSpec(
    name="models",
    grain="one row per open-weight model architecture",
    description="Open-weight architectures from config.json: parameters, attention layout, experts, KV-cache bytes "
    "per token (computed)",
    key=("model",),
    columns=(
        Column("model", "str", "", "Model name", required=True),
        Column("hf_repo", "str", "", "Hugging Face repository id (joins OpenRouter's hugging_face_id)"),
        Column("lab", "str", "", "Lab that released the model", required=True),
        Column("release_date", "date", "", "Release date of the weights"),
        Column(
            "attention",
            "str",
            "",
            "Attention of the full-context layers (hybrid: some layers are sliding-window or linear; csa: "
            "DeepSeek-V4's compressed layers)",
            required=True,
            allowed=ATTENTION,
        ),
        Column(
            "params_total_b",
            "float",
            "billion params",
            "Total parameters",
            required=True,
            positive=True,
            db_name="params_total",
            factor=units.BILLION,
            db_unit="params",
            ceiling=ceilings.PARAMS,
        ),
        Column(
            "params_active_b",
            "float",
            "billion params",
            "Parameters active per token",
            required=True,
            positive=True,
            db_name="params_active",
            factor=units.BILLION,
            db_unit="params",
            ceiling=ceilings.PARAMS,
        ),
        Column(
            "num_layers",
            "int",
            "layers",
            "Transformer blocks (num_hidden_layers)",
            positive=True,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "hidden_size",
            "int",
            "",
            "Model width d_model",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "num_attention_heads",
            "int",
            "heads",
            "Query heads per layer",
            positive=True,
            ceiling=ceilings.HEADS,
        ),
        Column(
            "num_kv_heads",
            "int",
            "heads",
            "KV heads per full-attention layer (MHA: = query heads)",
            positive=True,
            ceiling=ceilings.HEADS,
        ),
        Column(
            "head_dim",
            "int",
            "",
            "Query/key head dimension (MLA: qk_nope + qk_rope)",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "v_head_dim",
            "int",
            "",
            "Value head dimension when it differs from head_dim",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "kv_lora_rank",
            "int",
            "",
            "MLA compressed KV latent dimension",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "qk_rope_head_dim",
            "int",
            "",
            "MLA decoupled RoPE key dimension",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "q_lora_rank",
            "int",
            "",
            "MLA query latent dimension",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "num_full_attention_layers",
            "int",
            "layers",
            "Layers whose KV cache grows with context (blank: all layers)",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "num_sliding_window_layers",
            "int",
            "layers",
            "Sliding-window layers",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "sliding_window_tokens",
            "int",
            "tokens",
            "Window of the sliding layers",
            positive=True,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "sliding_num_kv_heads",
            "int",
            "heads",
            "KV heads of the sliding layers when they differ",
            positive=True,
            ceiling=ceilings.HEADS,
        ),
        Column(
            "sliding_head_dim",
            "int",
            "",
            "K and V head dimension of the sliding layers when it differs",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "num_linear_attention_layers",
            "int",
            "layers",
            "Linear-attention / SSM layers (fixed-size state)",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        *FFN_COLUMNS,
        *LAYER_VARIANT_COLUMNS,
        Column(
            "num_mtp_layers",
            "int",
            "layers",
            "Multi-token-prediction (draft) layers shipped with the model",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "max_position_embeddings",
            "int",
            "tokens",
            "Native context from config.json",
            positive=True,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "pretrain_tokens_t",
            "float",
            "trillion tokens",
            "Reported pre-training tokens",
            positive=True,
            db_name="pretrain_tokens",
            factor=units.TRILLION,
            db_unit="tokens",
            ceiling=ceilings.TRAINING_TOKENS,
        ),
        Column("pretrain_tokens_source_url", "str", "", "Where the pre-training token count was reported"),
        Column("source_url", "str", "", "config.json the architecture was read from", required=True),
        Column("notes", "str", "", "Caveats"),
    ),
    checks=(_check_models, check_model_counts),
    min_rows=1,
)
