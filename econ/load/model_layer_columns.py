"""Columns of ``models`` past the attention core: the FFN, mixture-of-experts and vocabulary widths
(:data:`FFN_COLUMNS`) and the shapes of chunked, sparse-indexer, compressed and linear-attention layers
(:data:`LAYER_VARIANT_COLUMNS`).

:data:`econ.load.model_tables.MODELS` places them, in this order, after the layer counts of its hybrid layers.
"""

from __future__ import annotations

from econ.load import ceilings
from econ.load.spec import Column

FFN_COLUMNS = (
    Column(
        "num_routed_experts",
        "int",
        "experts",
        "Routed experts per MoE layer (blank: dense)",
        positive=True,
        ceiling=ceilings.EXPERTS,
    ),
    Column(
        "num_shared_experts",
        "int",
        "experts",
        "Always-active shared experts per MoE layer",
        min=0,
        ceiling=ceilings.EXPERTS,
    ),
    Column(
        "experts_per_token",
        "int",
        "experts",
        "Routed experts activated per token",
        positive=True,
        ceiling=ceilings.EXPERTS,
    ),
    Column(
        "num_dense_layers",
        "int",
        "layers",
        "Dense (non-MoE) FFN layers",
        min=0,
        ceiling=ceilings.LAYERS,
    ),
    Column(
        "vocab_size",
        "int",
        "tokens",
        "Vocabulary (rows of the embedding and the output head)",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "tie_word_embeddings",
        "int",
        "",
        "1 when the output head shares the input embedding, else 0",
        min=0,
        max=1,
    ),
    Column(
        "intermediate_size",
        "int",
        "",
        "FFN width of the dense layers (config intermediate_size)",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "moe_intermediate_size",
        "int",
        "",
        "FFN width of one routed expert",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "shared_expert_intermediate_size",
        "int",
        "",
        "FFN width of a shared expert (blank: moe_intermediate_size)",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "expert_hidden_size",
        "int",
        "",
        "Width routed experts work in (latent MoE; blank: hidden_size)",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "expert_ffn_matrices",
        "int",
        "",
        "Matrices per expert FFN: 3 gated (SwiGLU/GeGLU, blank), 2 plain (relu2)",
        min=2,
        max=3,
    ),
    Column(
        "num_moe_layers",
        "int",
        "layers",
        "MoE layers (blank: num_layers - num_dense_layers)",
        min=0,
        ceiling=ceilings.LAYERS,
    ),
)
"""Experts, FFN widths and the vocabulary (config.json)."""

LAYER_VARIANT_COLUMNS = (
    Column(
        "num_chunked_attention_layers",
        "int",
        "layers",
        "Chunked local-attention layers (Llama-4)",
        min=0,
        ceiling=ceilings.LAYERS,
    ),
    Column(
        "attention_chunk_tokens",
        "int",
        "tokens",
        "Chunk of the chunked layers (attention_chunk_size)",
        positive=True,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "index_topk_tokens",
        "int",
        "tokens",
        "Tokens sparse attention selects per query (DSA index_topk)",
        positive=True,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "index_num_heads",
        "int",
        "heads",
        "Heads of the sparse-attention indexer",
        positive=True,
        ceiling=ceilings.HEADS,
    ),
    Column(
        "index_head_dim",
        "int",
        "",
        "Key dimension of the sparse-attention indexer",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "num_index_layers",
        "int",
        "layers",
        "Layers that cache indexer keys (blank: every attention layer)",
        min=0,
        ceiling=ceilings.LAYERS,
    ),
    Column(
        "num_csa_layers",
        "int",
        "layers",
        "Compressed sparse attention layers: one cached entry per csa_compress_tokens tokens, the indexer's top-k of "
        "them read (DeepSeek-V4: compress_ratios of 4)",
        min=0,
        ceiling=ceilings.LAYERS,
    ),
    Column(
        "csa_compress_tokens",
        "int",
        "tokens",
        "Tokens per cached entry of the compressed sparse layers",
        positive=True,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "num_hca_layers",
        "int",
        "layers",
        "Heavily compressed attention layers: one cached entry per hca_compress_tokens tokens, every entry read "
        "(DeepSeek-V4: compress_ratios of 128)",
        min=0,
        ceiling=ceilings.LAYERS,
    ),
    Column(
        "hca_compress_tokens",
        "int",
        "tokens",
        "Tokens per cached entry of the heavily compressed layers",
        positive=True,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "linear_num_key_heads",
        "int",
        "heads",
        "Linear-attention key heads (Mamba-2: n_groups)",
        positive=True,
        ceiling=ceilings.HEADS,
    ),
    Column(
        "linear_num_value_heads",
        "int",
        "heads",
        "Linear-attention value heads (Mamba-2: mamba heads)",
        positive=True,
        ceiling=ceilings.HEADS,
    ),
    Column(
        "linear_key_head_dim",
        "int",
        "",
        "Linear-attention key dimension (Mamba-2: ssm_state_size)",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "linear_value_head_dim",
        "int",
        "",
        "Linear-attention value dimension (Mamba-2: head dim)",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "linear_conv_kernel_dim",
        "int",
        "",
        "Causal convolution kernel of the linear layers",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
    Column(
        "hyper_connection_streams",
        "int",
        "streams",
        "Residual streams of hyper-connections, mixed around every attention and FFN (DeepSeek-V4: hc_mult; blank: "
        "one residual)",
        positive=True,
        ceiling=ceilings.WIDTH,
    ),
)
"""Chunked local attention, the sparse-attention indexer, compressed attention and linear-attention / SSM layers
(config.json)."""
