"""KV-cache bytes per token: econ's computed values against reference/models.csv and worked examples.

``econ.physics.kv_cache`` derives ``kv_bytes_per_token`` from the architecture columns of
``data/models.csv`` (stored in ``model_derived`` by ``econ.analyses.model_derived``); nothing in the data
types a KV byte count. The first half of this file
compares every model with the independently computed ``kv_bytes_per_token_bf16`` of
``reference/models.csv`` (exact, except a documented list of deliberate differences). The
second half checks the formula functions on published worked examples.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from econ.analyses.model_derived import derived
from econ.load.spec import read_table
from econ.load.tables import MODELS
from econ.physics import sequence
from econ.physics.kv_cache import full_attention_layers, kv_bytes_per_token, kv_window_bytes_per_sequence

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "tests" / "fixtures" / "reference" / "models.csv"

# reference/models.csv name -> data/models.csv name, where they differ
RENAMED = {"GLM-4.7 (FP8 release)": "GLM-4.7"}

# Models the (vendored, unmodified) reference does not list: model -> (reference model of the same layout, why)
SAME_LAYOUT_AS = {
    "Qwen3-Coder-30B-A3B-Instruct": (
        "Qwen3-30B-A3B",
        "added for its Model Studio tiered prices (issue 24); its card gives the Qwen3-30B-A3B layout (48 layers, "
        "32 Q / 4 KV heads, 128 experts / 8 active)",
    ),
    "DeepSeek-V3.1": (
        "DeepSeek-V3",
        "added for the measured file's nvidia/DeepSeek-V3.1-NVFP4 rows (issue 23); its config.json (aiconfigurator "
        "copy) differs from V3's only in transformers_version",
    ),
    "Kimi-K2.6": (
        "Kimi-K2.5",
        "added with its NVFP4 config (aiconfigurator copy): K2.5's text backbone field for field",
    ),
    "Llama-3.3-70B": ("Llama-3.1-70B", "added for predict points naming it: config.json has 3.1-70B's layout"),
    "GLM-5.3": ("GLM-5.2", "added with its config (aiconfigurator copy): GLM-5.2's in every architecture field"),
    "Kimi-K2.7-Code": ("Kimi-K2.5", "added with its NVFP4 config (aiconfigurator copy): K2.5's text backbone"),
    "Qwen3-VL-235B-A22B": ("Qwen3-235B-A22B", "text backbone of the VL config: Qwen3-235B-A22B's layout"),
    "Qwen3-VL-30B-A3B": ("Qwen3-30B-A3B", "text backbone of the VL config: Qwen3-30B-A3B's layout"),
    "Qwen3-VL-32B": ("Qwen3-32B", "text backbone of the VL config: Qwen3-32B's layout"),
    "Qwen3.6-35B-A3B": ("Qwen3.5-35B-A3B", "added with its NVFP4 config (aiconfigurator copy): 3.5-35B-A3B's layout"),
}
SAME_LAYOUT_NOT_IN_REFERENCE = {  # both added without a reference row: same by hand
    "Qwen3.6-27B": "Qwen3.5-27B",
    "Qwen3-VL-8B": "Qwen3-8B",
    "Qwen3-VL-2B": "Qwen3-1.7B",
}
# Models the reference lacks entirely: model -> (bytes/token by hand from the config, why)
NOT_IN_REFERENCE = {
    "Qwen3.5-122B-A10B": (
        2 * 12 * 2 * 256 * 2,
        "added for its Model Studio tiered prices (issue 24): 12 full GQA layers of 2 KV heads x 256 grow with context "
        "(36 Gated DeltaNet layers hold a fixed state)",
    ),
    **{
        model: (2 * layers * 8 * 128 * 2, f"{why}: {layers} GQA layers of 8 KV heads x 128, BF16 K and V")
        for model, layers, why in (
            ("Qwen3-8B", 36, "a dense Qwen3 of AIConfigurator's model configs, which the measured file may name"),
            ("Qwen3-1.7B", 28, "a dense Qwen3 of AIConfigurator's model configs, tied embeddings"),
            ("Qwen3-0.6B", 28, "a dense Qwen3 of AIConfigurator's model configs, tied embeddings"),
            ("Qwen3-VL-4B", 36, "the text backbone of AIConfigurator's Qwen3-VL-4B config"),
            ("Mixtral-8x7B-v0.1", 32, "a MoE of AIConfigurator's model configs and of a measured point"),
        )
    },
    "Qwen3.5-27B": (
        2 * 16 * 4 * 256 * 2,
        "added for its Model Studio tiered prices: dense; layer_types of its config.json (aiconfigurator copy) list 16 "
        "full_attention layers of 64 (4 KV heads x head_dim 256) and 48 linear_attention layers of fixed state",
    ),
}

# Deliberate differences: model -> (econ bytes/token, reference bytes/token, why)
DIFFERENCES = {
    "Llama-4-Maverick-17B-128E": (
        12 * 2 * 8 * 128 * 2,
        48 * 2 * 8 * 128 * 2,
        "the reference counts all 48 layers as an upper bound; 36 of them are chunked-attention layers "
        "(attention_chunk_size 8192) that hold at most one 8192-token chunk, so econ encodes them as chunked "
        "layers and only the 12 global NoPE layers grow with context",
    ),
    "Llama-4-Scout-17B-16E": (
        12 * 2 * 8 * 128 * 2,
        48 * 2 * 8 * 128 * 2,
        "same chunked/global layout as Maverick (reference gives the all-layer upper bound)",
    ),
}

COLUMNS = (
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


def _reference() -> dict[str, float | None]:
    with REFERENCE.open(newline="") as f:
        rows = list(csv.DictReader(f))
    return {
        RENAMED.get(r["model"], r["model"]): (
            float(r["kv_bytes_per_token_bf16"]) if r["kv_bytes_per_token_bf16"] else None
        )
        for r in rows
    }


REF = _reference()


@pytest.fixture(scope="module")
def models() -> pl.DataFrame:
    return derived(read_table(REPO / "data" / "models.csv", MODELS))


def test_every_model_is_in_the_reference_and_back(models):
    extra = {**SAME_LAYOUT_AS, **NOT_IN_REFERENCE, **SAME_LAYOUT_NOT_IN_REFERENCE}
    assert sorted(m for m in models["model"].to_list() if m not in extra) == sorted(REF)


@pytest.mark.parametrize("model", sorted(NOT_IN_REFERENCE))
def test_a_model_the_reference_lacks_matches_its_config_by_hand(models, model):
    expected, why = NOT_IN_REFERENCE[model]
    assert models.filter(pl.col("model") == model)["kv_bytes_per_token"][0] == expected, why


@pytest.mark.parametrize(("model", "same"), sorted(SAME_LAYOUT_NOT_IN_REFERENCE.items()))
def test_a_model_added_beside_one_the_reference_lacks_has_its_bytes(models, model, same):
    assert models.filter(pl.col("model") == model)["kv_bytes_per_token"][0] == NOT_IN_REFERENCE[same][0]


@pytest.mark.parametrize("model", sorted(SAME_LAYOUT_AS))
def test_a_model_the_reference_lacks_matches_its_same_layout_model(models, model):
    same, why = SAME_LAYOUT_AS[model]
    assert models.filter(pl.col("model") == model)["kv_bytes_per_token"][0] == REF[same], why


COMPRESSED = {
    "DeepSeek-V4-Pro": 2 * 512 * (30 / 4 + 31 / 128),
    "DeepSeek-V4-Flash": 2 * 512 * (21 / 4 + 20 / 128),
}
"""The reference leaves DeepSeek-V4's compressed attention blank; econ derives it by hand from config.json: one
shared 512-value entry per 4 tokens on the compressed sparse layers (Pro 30, Flash 21) and per 128 tokens on the
heavily compressed ones (Pro 31, Flash 20), in BF16 (tests/physics/test_sequence.py checks the sum against SGLang's
pool sizing and a published 1M-token figure)."""


@pytest.mark.parametrize("model", sorted(m for m in REF if m not in DIFFERENCES and m not in COMPRESSED))
def test_kv_bytes_match_reference(models, model):
    assert models.filter(pl.col("model") == model)["kv_bytes_per_token"][0] == REF[model]


@pytest.mark.parametrize("model", sorted(COMPRESSED))
def test_compressed_attention_the_reference_leaves_blank_is_derived(models, model):
    assert REF[model] is None
    assert models.filter(pl.col("model") == model)["kv_bytes_per_token"][0] == COMPRESSED[model]


@pytest.mark.parametrize("model", sorted(DIFFERENCES))
def test_deliberate_differences_are_the_documented_ones(models, model):
    ours, reference, why = DIFFERENCES[model]
    assert REF[model] == reference, why
    assert models.filter(pl.col("model") == model)["kv_bytes_per_token"][0] == ours, why
    # the chunked layers hold the tokens of one chunk: 36 layers x 8 KV heads x (128 + 128) x 2 B per chunk token
    row = models.filter(pl.col("model") == model).row(0, named=True)
    assert row["kv_chunk_bytes_per_token"] == 36 * 8 * 256 * 2 and row["attention_chunk_tokens"] == 8192
    assert row["kv_window_bytes_per_sequence"] == 0


# ------------------------------------------------------------------ formula functions on worked examples


def cols(**given) -> dict[str, np.ndarray]:
    """One-row architecture columns; unspecified numeric columns are blank (NaN)."""
    out = {c: np.array([np.nan]) for c in COLUMNS if c != "attention"}
    out["attention"] = np.array([given.pop("attention", "gqa")], dtype=object)
    for k, v in given.items():
        out[k] = np.array([v], dtype=float)
    return out


WORKED = [
    # (case, columns, bytes per value, expected bytes per token, source)
    (
        "scaling book LLaMA-3-70B: 2*8*128*80 values at bf16",
        cols(num_layers=80, num_kv_heads=8, head_dim=128),
        2,
        327_680,
        "jax-ml scaling book, inference.md (320 kB per token)",
    ),
    (
        "LLaMA-2-13B MHA: 40 layers, 40 heads of 128",
        cols(attention="mha", num_layers=40, num_kv_heads=40, head_dim=128),
        2,
        819_200,
        "scaling book inference.md: 6.7 GB per 8192-token sequence",
    ),
    (
        "DeepSeek-V3 MLA: 61*(512+64)*2",
        cols(
            attention="mla",
            num_layers=61,
            num_kv_heads=128,
            head_dim=192,
            v_head_dim=128,
            kv_lora_rank=512,
            qk_rope_head_dim=64,
        ),
        2,
        70_272,
        "DeepSeek-V3 config; lecture-math f.2 (~70 KB/token at BF16)",
    ),
    (
        "DeepSeek-V3 MLA at FP8",
        cols(attention="mla", num_layers=61, kv_lora_rank=512, qk_rope_head_dim=64, head_dim=192),
        1,
        35_136,
        "lecture-math f.2 (~35 KB at FP8)",
    ),
    (
        "lecture layout check: 1 global layer x 2 x 128 x 8 at 1 byte",
        cols(
            num_layers=26,
            num_full_attention_layers=1,
            num_sliding_window_layers=25,
            sliding_window_tokens=1024,
            num_kv_heads=8,
            head_dim=128,
        ),
        1,
        2_048,
        "lecture f.2: '8 KV heads and a d-head of 128. That gives you exactly this number'",
    ),
    (
        "K and V head dims differ (MiMo-V2-Flash global layers)",
        cols(num_layers=48, num_sliding_window_layers=39, num_kv_heads=4, head_dim=192, v_head_dim=128),
        2,
        9 * 4 * (192 + 128) * 2,
        "reference/models.md",
    ),
]


@pytest.mark.parametrize(
    ("case", "columns", "bytes_per_value", "expected", "source"), WORKED, ids=[w[0] for w in WORKED]
)
def test_kv_bytes_per_token_worked_examples(case, columns, bytes_per_value, expected, source):
    assert kv_bytes_per_token(columns, bytes_per_value=bytes_per_value)[0] == expected, source


def test_llama2_13b_sequence_is_the_scaling_books_6_7_gb():
    per_token = kv_bytes_per_token(cols(attention="mha", num_layers=40, num_kv_heads=40, head_dim=128))[0]
    result = per_token * 8192
    assert result == 6_710_886_400
    assert result == pytest.approx(6.7e9, rel=0.01)  # published figure, rounded to 2 digits


def test_other_attention_is_not_derived():
    result = kv_bytes_per_token(
        cols(attention="other", num_layers=61, num_kv_heads=1, head_dim=512, qk_rope_head_dim=64)
    )
    assert np.isnan(result[0])


@pytest.mark.parametrize(
    ("num_layers", "full", "sliding", "linear", "expected"),
    [
        (36, np.nan, 18, np.nan, 18),  # gpt-oss: all minus sliding
        (60, np.nan, np.nan, 45, 15),  # Qwen3.5-397B: all minus linear
        (np.nan, 12, np.nan, 48, 12),  # Nemotron-3-Ultra: no num_hidden_layers, explicit count wins
        (93, 24, np.nan, 69, 24),  # Kimi-K3: explicit count
        (80, np.nan, np.nan, np.nan, 80),  # dense: every layer
    ],
)
def test_full_attention_layers(num_layers, full, sliding, linear, expected):
    assert (
        full_attention_layers(np.array([num_layers]), np.array([full]), np.array([sliding]), np.array([linear]))[0]
        == expected
    )


@pytest.mark.parametrize(
    ("case", "columns", "expected"),
    [
        (
            "gpt-oss-120b: 18 sliding layers x 128 tokens x 8 KV x (64+64) x 2 B",
            cols(num_layers=36, num_sliding_window_layers=18, sliding_window_tokens=128, num_kv_heads=8, head_dim=64),
            2 * 18 * 8 * 64 * 2 * 128,
        ),
        (
            "gemma-4: sliding layers use their own 8 KV heads of dim 256",
            cols(
                num_layers=30,
                num_sliding_window_layers=25,
                sliding_window_tokens=1024,
                num_kv_heads=2,
                head_dim=512,
                sliding_num_kv_heads=8,
                sliding_head_dim=256,
            ),
            25 * 1024 * 8 * (256 + 256) * 2,
        ),
        ("no sliding layers: nothing fixed", cols(num_layers=80, num_kv_heads=8, head_dim=128), 0),
    ],
)
def test_window_bytes_per_sequence(case, columns, expected):
    # gpt-oss expectation is reference/models.csv's own '+2*18*8*64*2B*128 bytes fixed'
    assert kv_window_bytes_per_sequence(columns)[0] == expected


def test_vectorised_over_rows():
    columns = {c: np.array([np.nan, np.nan, np.nan]) for c in COLUMNS if c != "attention"}
    columns["attention"] = np.array(["gqa", "mla", "other"], dtype=object)
    columns["num_layers"] = np.array([80.0, 61.0, 43.0])
    columns["num_kv_heads"] = np.array([8.0, 128.0, 1.0])
    columns["head_dim"] = np.array([128.0, 192.0, 512.0])
    columns["kv_lora_rank"] = np.array([np.nan, 512.0, np.nan])
    columns["qk_rope_head_dim"] = np.array([np.nan, 64.0, 64.0])
    result = kv_bytes_per_token(columns)
    assert result.shape == (3,)
    assert result[:2].tolist() == [327_680, 70_272]
    assert np.isnan(result[2])


def _at_a_million_tokens(models, model):
    """(decode FLOPs per token, cache bytes held) of one sequence of ``model`` at 1M tokens of context, its cache in
    BF16 (the indexer's keys FP8): the weights' 2·N_act plus attention (econ.physics.sequence)."""
    r = models.filter(pl.col("model") == model).row(0, named=True)
    length = 1_048_576
    flop = 2 * r["params_active"] + sequence.decode_attention_flop_per_token(
        length,
        full_slope=r["full_slope_decode_flop_per_token"],
        index_slope=r["index_slope_flop_per_token"],
        sparse_topk_tokens=r["sparse_topk_tokens"] or np.nan,
        dense_attention_frac=r["dense_attention_frac"],
        window_slope=r["window_slope_flop_per_token"],
        sliding_window_tokens=r["sliding_window_tokens"] or np.nan,
    )
    held = sequence.kv_bytes_held_per_sequence(
        length,
        kv_bytes_per_token=r["kv_bytes_per_token"],
        kv_index_bytes_per_token=r["kv_index_bytes_per_token"],
        kv_window_bytes_per_sequence=r["kv_window_bytes_per_sequence"],
        sliding_window_tokens=r["sliding_window_tokens"] or np.nan,
    )
    return float(flop), float(held)


@pytest.mark.parametrize(
    ("model", "flop_frac", "cache_frac"), [("DeepSeek-V4-Pro", 0.27, 0.10), ("DeepSeek-V4-Flash", 0.10, 0.07)]
)
def test_deepseek_v4_costs_at_a_million_tokens_the_share_of_v32_its_card_states(models, model, flop_frac, cache_frac):
    """DeepSeek's model cards (huggingface.co/deepseek-ai/DeepSeek-V4-Pro, 2026-04-24): at 1M tokens of context
    V4-Pro needs 27% of DeepSeek-V3.2's single-token inference FLOPs and 10% of its KV cache, V4-Flash 10% and 7%.
    From data/models.csv alone econ reads 26% and 11.4% (Pro), 12% and 8.0% (Flash): within 25% of each stated
    share (the cards round, and do not say in which formats they count the caches)."""
    v32_flop, v32_held = _at_a_million_tokens(models, "DeepSeek-V3.2")
    flop, held = _at_a_million_tokens(models, model)
    assert flop / v32_flop == pytest.approx(flop_frac, rel=0.25)
    assert held / v32_held == pytest.approx(cache_frac, rel=0.25)
