"""``attention_crossover``: attention vs weight FLOPs per decode token and the context where they cross (lecture h).

The arithmetic is :mod:`econ.physics.attention`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.inputs import models_at
from econ.physics import attention
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "attention_crossover"
INPUTS = ("models", "model_derived", "hardware_derived", "scenarios")

CONTEXTS = (("8k", 8_192), ("128k", 131_072), ("1m", 1_048_576))

ATTENTION_CROSSOVER = ResultTable(
    name="attention_crossover",
    grain="model",
    key=("model",),
    description=(
        "Attention FLOPs vs weight FLOPs per decode token by architecture (full, sliding-window up to the window, "
        "MLA, hybrid; linear layers not counted) and the context where they cross (lecture h.1)"
    ),
    columns=(
        C("model", "str", "", "key", "Model (models.model)"),
        C("attention", "str", "", "input", "Attention of the full-context layers (models.attention)"),
        C(
            "full_attention_flop_per_context_token",
            "float",
            "FLOP/token",
            "derived",
            "FLOPs per new token per cached token over the full-attention layers (MLA expanded form)",
            attention.attention_flop_per_context_token,
        ),
        C(
            "window_attention_flop_per_context_token",
            "float",
            "FLOP/token",
            "derived",
            "The same for sliding-window layers, counted up to the window",
            attention.attention_flop_per_context_token,
        ),
        C("sliding_window_tokens", "float", "tokens", "input", "Sliding window (models)"),
        C(
            "weight_flop_per_token",
            "float",
            "FLOP/token",
            "derived",
            "FLOPs of the weights per token",
            attention.weight_flop_per_token,
        ),
        C(
            "crossover_context_tokens",
            "float",
            "tokens",
            "derived",
            "Context where attention FLOPs per decode token equal weight FLOPs (MLA expanded form; inf if never)",
            attention.attention_crossover_tokens,
        ),
        C(
            "crossover_context_absorbed_mla_tokens",
            "float",
            "tokens",
            "derived",
            "The same with MLA attention in the latent (decode kernels); = crossover for non-MLA",
            attention.attention_crossover_tokens,
        ),
        *(
            C(
                f"attention_over_weight_flop_at_{label}_ratio",
                "float",
                "",
                "derived",
                f"Attention over weight FLOPs per decode token at {ctx:,} context",
                attention.attention_over_weight_flop_ratio,
            )
            for label, ctx in CONTEXTS
        ),
        C("chip", "str", "", "assumption", "Chip of kv_over_attention_time_ratio (scenario serving_chip)"),
        C(
            "kv_over_attention_time_ratio",
            "float",
            "",
            "bound",
            "KV read vs attention compute time per context token on that chip, F its bf16 peak, KV at the scenario's "
            "kv_cache_format (lecture h.2)",
            attention.kv_over_attention_time_ratio,
        ),
    ),
)
TABLES = (ATTENTION_CROSSOVER,)

# The columns attention.attention_slopes reads. num_chunked_attention_layers is not among them: Llama-4's chunked
# layers count as full attention here (an upper bound on their FLOPs at a context beyond one chunk, said in the
# Serving page's caption), where model_derived's slopes leave them to chunk_slope.

ARCHITECTURE = (
    "attention",
    "num_layers",
    "num_attention_heads",
    "head_dim",
    "v_head_dim",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "num_full_attention_layers",
    "num_sliding_window_layers",
    "num_linear_attention_layers",
    "sliding_head_dim",
    "num_csa_layers",
    "csa_compress_tokens",
    "num_hca_layers",
    "hca_compress_tokens",
)


def crossover(models: pl.DataFrame, chip_bf16: pl.DataFrame, chip: str | None) -> pl.DataFrame:
    """``attention_crossover`` for ``models`` (KV at the scenario's format) and the chip's bf16 row of
    hardware_derived."""

    def a(name):
        return models[name].cast(pl.Float64).fill_null(np.nan).to_numpy()

    cols = {n: (models[n].to_numpy() if n == "attention" else a(n)) for n in ARCHITECTURE}
    full, window = attention.attention_slopes(cols)
    full_abs, window_abs = attention.attention_slopes(cols, mla_form="absorbed")
    n_act, w = a("params_active"), a("sliding_window_tokens")
    if chip_bf16.height:
        kv_ratio = attention.kv_over_attention_time_ratio(
            a("kv_bytes_per_token"),
            full,
            float(chip_bf16["peak_flop_per_s"][0]),
            float(chip_bf16["hbm_bandwidth_bytes_per_s"][0]),
        )
    else:
        kv_ratio = np.full(models.height, np.nan)

    def f(name, values):
        return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)

    return models.select("model", "attention").with_columns(
        f("full_attention_flop_per_context_token", full),
        f("window_attention_flop_per_context_token", window),
        f("sliding_window_tokens", w),
        f("weight_flop_per_token", attention.weight_flop_per_token(n_act)),
        f("crossover_context_tokens", attention.attention_crossover_tokens(n_act, full, window, w)),
        f(
            "crossover_context_absorbed_mla_tokens",
            attention.attention_crossover_tokens(n_act, full_abs, window_abs, w),
        ),
        *(
            f(
                f"attention_over_weight_flop_at_{label}_ratio",
                attention.attention_over_weight_flop_ratio(ctx, full, window, w, n_act),
            )
            for label, ctx in CONTEXTS
        ),
        pl.lit(chip).alias("chip"),
        f("kv_over_attention_time_ratio", kv_ratio),
    )


def run(ctx) -> None:
    s = ctx.scenario("base")
    chip = ctx.query("select * from hardware_derived where chip = ? and number_format = 'bf16'", [s.serving_chip])
    ctx.write(ATTENTION_CROSSOVER, crossover(models_at(ctx, s.kv_cache_format), chip, s.serving_chip))
