"""The ``model_derived`` table's declaration (:data:`MODEL_DERIVED`: its columns, units and the functions that compute
them) and the architecture grouping its ``architecture_group`` column holds (:func:`architecture_groups`, over the
``models`` columns that fix a model's shape). :mod:`econ.analyses.model_derived` computes the table."""

from __future__ import annotations

import polars as pl

from econ.formula import formula
from econ.physics import attention, kv_cache, memory, model, step_time, token_balance, weights
from econ.results import ResultColumn as C
from econ.results import ResultTable

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
    "num_attention_heads",
    "num_chunked_attention_layers",
    "attention_chunk_tokens",
    "index_topk_tokens",
    "index_num_heads",
    "index_head_dim",
    "num_index_layers",
    "num_csa_layers",
    "csa_compress_tokens",
    "num_hca_layers",
    "hca_compress_tokens",
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
    "hyper_connection_streams",
)

SPLIT_COLUMNS = (
    "params_total",
    "params_active",
    "hidden_size",
    "num_layers",
    "num_routed_experts",
    "num_shared_experts",
    "experts_per_token",
    "num_dense_layers",
    "num_moe_layers",
    "vocab_size",
    "tie_word_embeddings",
    "intermediate_size",
    "moe_intermediate_size",
    "shared_expert_intermediate_size",
    "expert_hidden_size",
    "expert_ffn_matrices",
)

SHAPE_COLUMNS = tuple(dict.fromkeys((*ARCHITECTURE_COLUMNS, *SPLIT_COLUMNS[2:], "q_lora_rank", "num_mtp_layers")))
"""The columns that fix a model's weights shape and serving cost (every architecture and size column of ``models``;
not the reported parameter counts, rounded differently between re-releases, nor names, dates or sources)."""


@formula("group = models whose every shape column is equal; named by its earliest-released model", "this module")
def architecture_groups(models: pl.DataFrame) -> pl.Series:
    """Each model's architecture group: the models whose :data:`SHAPE_COLUMNS` are all equal (a model and its
    re-releases or fine-tunes: DeepSeek-V3 and DeepSeek-R1), named by the group's earliest-released model (ties and
    undated: alphabetical). Cross-validation leaves a group out whole: one member teaches the fit the other's
    every kernel."""
    key = pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in SHAPE_COLUMNS], separator="|")
    first = (
        pl.col("model")
        .sort_by([pl.col("release_date").is_null(), pl.col("release_date"), pl.col("model")])
        .first()
        .over(key)
    )
    return models.select(first.alias("architecture_group"))["architecture_group"]


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
        C(
            "architecture_group",
            "str",
            "",
            "derived",
            "The models of identical architecture and size (a model and its re-releases or fine-tunes), named by the "
            "earliest released: grouped cross-validation leaves them out together",
            architecture_groups,
        ),
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
            "KV-cache bytes per context token at BF16, full-attention layers (compressed attention: its entries, one "
            "per r tokens of a layer; null where the layout is not modelled)",
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
            "Fixed KV bytes per sequence held by sliding-window layers once the context exceeds the window, at BF16 "
            "(compressed attention: every layer's window)",
            kv_cache.kv_window_bytes_per_sequence,
        ),
        C(
            "kv_index_bytes_per_token",
            "float",
            "bytes/token",
            "derived",
            "Sparse-attention indexer key bytes per context token, FP8 keys with a scale (0 without an indexer)",
            kv_cache.kv_index_bytes_per_token,
        ),
        C(
            "kv_chunk_bytes_per_token",
            "float",
            "bytes/token",
            "derived",
            "KV bytes per token of the current chunk over the chunked-attention layers at BF16 (0 without)",
            kv_cache.kv_chunk_bytes_per_token,
        ),
        C("attention_chunk_tokens", "float", "tokens", "input", "Chunk of the chunked layers (models)"),
        C("sliding_window_tokens", "float", "tokens", "input", "Window of the sliding layers (models)"),
        C(
            "sparse_topk_tokens",
            "float",
            "tokens",
            "derived",
            "Context tokens sparse attention reads per query: index_topk (compressed sparse layers: that many entries "
            "of csa_compress_tokens tokens each)",
            kv_cache.sparse_topk_tokens,
        ),
        C(
            "dense_attention_frac",
            "float",
            "",
            "derived",
            "Share of a sparse-attention model's full layers that run dense, reading every token (compressed "
            "attention: the heavily compressed layers' share of the entries per token; 0 without)",
            kv_cache.dense_attention_frac,
        ),
        C(
            "state_bytes_per_sequence",
            "float",
            "bytes",
            "derived",
            "Linear-attention / SSM state per sequence at BF16, read and written every step (0 without)",
            kv_cache.state_bytes_per_sequence,
        ),
        C(
            "kv_shard_limit",
            "float",
            "chips",
            "derived",
            "Tensor-parallel chips a sequence's KV splits over: the KV heads (an MLA latent: 1)",
            kv_cache.kv_shard_limit,
        ),
        C("hidden_size", "float", "", "input", "Model width d (models)"),
        C(
            "num_layers",
            "float",
            "layers",
            "derived",
            "Blocks with an attention or linear mixer (given, else summed)",
            model.mixer_layers,
        ),
        C(
            "kernel_layers",
            "float",
            "layers",
            "derived",
            "Layers weighted by the kernels each launches per step, in layers of GQA attention and a gated FFN (an MLA "
            "layer 14/9, a sparse-attention indexer +5/9, a linear-attention mixer +3/9, hyper-connections +4/9, a "
            "compressor +1/9): what the fixed cost per layer multiplies",
            step_time.kernel_layers,
        ),
        C("num_dense_layers", "float", "layers", "input", "Dense FFN layers of a MoE model (models; blank 0)"),
        C("num_routed_experts", "float", "experts", "input", "Routed experts per MoE layer (models)"),
        C("num_shared_experts", "float", "experts", "input", "Shared experts per MoE layer (models)"),
        C("experts_per_token", "float", "experts", "input", "Routed experts per token (models)"),
        C("moe_layers", "float", "layers", "derived", "MoE layers", weights.moe_layer_count),
        C("params_per_expert", "float", "params", "derived", "Parameters of one routed expert", weights.ffn_params),
        C("routed_expert_params", "float", "params", "derived", "All routed experts", weights.routed_expert_params),
        C("shared_expert_params", "float", "params", "derived", "All shared experts", weights.shared_expert_params),
        C("dense_ffn_params", "float", "params", "derived", "FFNs of the dense layers", weights.ffn_params),
        C(
            "embedding_params",
            "float",
            "params",
            "derived",
            "Input embedding and output head",
            weights.embedding_params,
        ),
        C("head_params", "float", "params", "derived", "Output head, read in full by every step", weights.ffn_params),
        C(
            "rest_params",
            "float",
            "params",
            "derived",
            "Attention, norms, routers and linear mixers: the reported total less the classes above",
            weights.attention_and_other_params,
        ),
        C(
            "active_params_from_split",
            "float",
            "params",
            "check",
            "Active parameters recomputed from the class split (compare params_active)",
            weights.active_params,
        ),
        C(
            "full_slope_decode_flop_per_token",
            "float",
            "FLOP/token",
            "derived",
            "Attention FLOPs per new token per cached token, full layers, decode (MLA absorbed)",
            attention.attention_flop_per_context_token,
        ),
        C(
            "full_slope_prefill_flop_per_token",
            "float",
            "FLOP/token",
            "derived",
            "The same in prefill (MLA expanded)",
            attention.attention_flop_per_context_token,
        ),
        C(
            "window_slope_flop_per_token",
            "float",
            "FLOP/token",
            "derived",
            "Attention FLOPs per new token per cached token over the sliding-window layers",
            attention.attention_flop_per_context_token,
        ),
        C(
            "chunk_slope_flop_per_token",
            "float",
            "FLOP/token",
            "derived",
            "The same over the chunked layers, per token of the chunk",
            attention.chunk_slope,
        ),
        C(
            "index_slope_flop_per_token",
            "float",
            "FLOP/token",
            "derived",
            "Sparse-attention indexer FLOPs per new token per cached token",
            attention.index_slope,
        ),
        C(
            "state_flop_per_token",
            "float",
            "FLOP/token",
            "derived",
            "Linear-attention / SSM state FLOPs per token",
            attention.state_flop_per_token,
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
