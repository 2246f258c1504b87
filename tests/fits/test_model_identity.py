"""The canonical model of a price key: the common key shapes, overrides, unmapped keys, first-party and free rows.

The expected canonical models are what the sellers' own pages call the model (Anthropic's model overview names
"Claude Sonnet 4.5" claude-sonnet-4-5 with snapshot claude-sonnet-4-5-20250929; Bedrock's model ids add a region and
vendor prefix and -v1:0; Vertex adds @date; OpenRouter writes anthropic/claude-sonnet-4.5), not the code's output.
"""

from __future__ import annotations

import polars as pl
import pytest

from econ.fits import model_identity as mi

FAMILIES = pl.DataFrame(
    {
        "prefix": ["claude-sonnet", "claude", "deepseek", "gpt-oss", "gpt", "llama", "qwen"],
        "family": ["claude-sonnet", "claude", "deepseek", "gpt-oss", "gpt", "llama", "qwen"],
        "maker": ["anthropic", "anthropic", "deepseek", "openai", "openai", "meta", "alibaba"],
        "open_weights": ["no", "no", None, "yes", "no", "yes", None],
    }
)
PROVIDERS = pl.DataFrame(
    {
        "provider": [
            "anthropic",
            "bedrock_converse",
            "vertex_ai-anthropic_models",
            "deepseek",
            "openrouter",
            "mistral",
        ],
        "organisation": ["anthropic", "amazon", "google", "deepseek", "openrouter", "mistral"],
        "seller_kind": ["lab", "cloud", "cloud", "lab", "router", "lab"],
    }
)
MODELS = pl.DataFrame(
    {"model": ["DeepSeek-V3", "gpt-oss-120b"], "hf_repo": ["deepseek-ai/DeepSeek-V3", "openai/gpt-oss-120b"]}
).with_columns(pl.lit(None, pl.Date).alias("release_date"))
NO_ALIASES = pl.DataFrame(schema={"alias": pl.String, "provider": pl.String, "canonical_model": pl.String})


def key(source, provider, model, hf=None):
    return {"source": source, "provider": provider, "model": model, "hugging_face_id": hf}


def mapped(keys, aliases=NO_ALIASES) -> pl.DataFrame:
    return mi.map_price_keys(
        pl.DataFrame(keys, schema={c: pl.String for c in ("source", "provider", "model", "hugging_face_id")}),
        models=MODELS,
        families=FAMILIES,
        providers=PROVIDERS,
        aliases=aliases,
    )


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4.5"),  # Anthropic API snapshot id
        ("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4.5"),  # Bedrock cross-region id
        ("vertex_ai/claude-sonnet-4-5@20250929", "claude-sonnet-4.5"),  # Vertex AI model id
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4.5"),  # OpenRouter id
        ("together_ai/deepseek-ai/DeepSeek-V3", "deepseek-v3"),  # a Hugging Face repo behind a reseller
        ("fireworks_ai/accounts/fireworks/models/deepseek-v3p1", "deepseek-v3.1"),  # Fireworks writes 3.1 as 3p1
        ("bedrock/us-east-1/deepseek.v3.2", "deepseek-v3.2"),  # Bedrock vendor prefix is the family
        ("meta.llama3-1-70b-instruct-v1:0", "llama3.1-70b-instruct"),
        ("openai/gpt-oss-120b:free", "gpt-oss-120b"),  # OpenRouter's free variant of the same model
        ("vertex_ai/openai/gpt-oss-120b-maas", "gpt-oss-120b"),
        ("openai.gpt-oss-120b-1:0", "gpt-oss-120b"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("ft:gpt-4o-2024-08-06", None),  # a fine-tune is not the base model
    ],
)
def test_normalised_names_of_the_common_key_shapes(raw, name):
    assert pl.select(mi.model_name(pl.lit(raw))).item() == name


def test_the_shapes_of_one_model_map_to_one_canonical_model_and_first_party_is_the_makers_own_api():
    out = mapped(
        [
            key("hand", "anthropic", "claude-sonnet-4-5"),
            key("litellm", "anthropic", "claude-sonnet-4-5-20250929"),
            key("litellm", "bedrock_converse", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            key("litellm", "vertex_ai-anthropic_models", "vertex_ai/claude-sonnet-4-5@20250929"),
            key("openrouter", "openrouter", "anthropic/claude-sonnet-4.5"),
        ]
    )
    assert set(out["canonical_model"]) == {"claude-sonnet-4.5"}
    first = dict(zip(out["provider"], out["is_first_party"]))
    assert first == {
        "anthropic": True,
        "bedrock_converse": False,
        "vertex_ai-anthropic_models": False,
        "openrouter": False,
    }


def test_a_moving_alias_stays_unmapped_and_a_repo_on_the_row_decides():
    aliases = pl.DataFrame(
        {"alias": ["deepseek-chat"], "provider": [None], "canonical_model": [None]},
        schema={"alias": pl.String, "provider": pl.String, "canonical_model": pl.String},
    )
    out = mapped(
        [
            key("litellm", "deepseek", "deepseek/deepseek-chat"),  # which version? the key does not say
            key("hand", "deepseek", "deepseek-chat", "deepseek-ai/DeepSeek-V3"),  # this period says V3
            key("hand", "deepseek", "deepseek-chat", "deepseek-ai/DeepSeek-V3.2"),
            key("litellm", "mistral", "mistral/mistral-large-latest"),  # -latest without a version moves
            key("litellm", "anthropic", "claude-3-5-sonnet-latest"),  # the newest 3.5 Sonnet snapshot
        ],
        aliases,
    )
    got = {
        (r["model"], r["hugging_face_id"]): (r["canonical_model"], r["match_rule"]) for r in out.iter_rows(named=True)
    }
    assert got == {
        ("deepseek/deepseek-chat", None): (None, "override_unmapped"),
        ("deepseek-chat", "deepseek-ai/DeepSeek-V3"): ("deepseek-v3", "hugging_face_id"),
        ("deepseek-chat", "deepseek-ai/DeepSeek-V3.2"): ("deepseek-v3.2", "hugging_face_id"),
        ("mistral/mistral-large-latest", None): (None, "moving_alias"),
        ("claude-3-5-sonnet-latest", None): ("claude-3.5-sonnet", "first_party"),
    }


def test_a_name_no_one_vouches_for_is_never_guessed_and_an_override_maps_it():
    keys = [key("litellm", "fireworks_ai", "fireworks-ai-4.1b-to-16b"), key("litellm", "kyma", "kyma/deepseek-v3")]
    out = mapped(keys)
    assert out.filter(pl.col("model") == "fireworks-ai-4.1b-to-16b")["match_rule"].to_list() == ["unmapped"]
    # a reseller's bare name maps only because the architecture (models) names deepseek-v3
    assert out.filter(pl.col("provider") == "kyma")["canonical_model"].to_list() == ["deepseek-v3"]
    aliases = pl.DataFrame(
        {"alias": ["fireworks-ai-4.1b-to-16b"], "provider": ["fireworks_ai"], "canonical_model": ["x"]}
    )
    assert mapped(keys, aliases).filter(pl.col("provider") == "fireworks_ai")["canonical_model"].to_list() == ["x"]


@pytest.mark.parametrize(
    ("inp", "out", "free"),
    [(0.0, 0.0, True), (0.0, None, True), (0.001, 0.001, True), (0.02, 0.02, False), (None, None, False)],
)
def test_free_rows(inp, out, free):
    frame = pl.DataFrame({"i": [inp], "o": [out]}, schema={"i": pl.Float64, "o": pl.Float64})
    assert frame.select(mi.is_free(pl.col("i"), pl.col("o"))).item() is free


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("claude-4.5-sonnet", "claude-sonnet-4.5", True),  # Replicate's order and Anthropic's
        ("claude-3.5-sonnet", "claude-sonnet-3.5", True),
        ("nemotron-3.5-content-safety", "nemotron-content-safety-3.5", True),
        ("qwen-3-14b", "qwen3-14b", True),  # dashes never matter
        ("qwen-3-14b", "qwen-14b-3", False),  # a size is no word: nothing moves
        ("gemini-2.5-pro-preview-05-06", "gemini-2.5-pro-preview-06-05", False),  # dates keep their order
        ("claude-sonnet-4.5", "claude-sonnet-4.6", False),
    ],
)
def test_a_version_written_before_or_after_the_words_is_one_model(a, b, same):
    keys = pl.select(mi.match_key(pl.lit(a)).alias("a"), mi.match_key(pl.lit(b)).alias("b")).row(0)
    assert (keys[0] == keys[1]) is same


def _signature(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """An independent reading of "the same words and numbers, only the version moved": the word tokens in order and
    the other tokens (versions, sizes, dates) in order."""
    import re

    tokens = name.replace("_", "-").split("-")
    words = tuple(t for t in tokens if re.fullmatch("[a-z]+", t))
    return words, tuple(t for t in tokens if t not in words)


def test_no_identity_split_is_left_in_the_shipped_maps(real_db):
    """Every key of the shipped price maps (data/prices.csv and data/snapshots, built into real_db): no two canonical
    models are one name with its version moved (claude-4.5-sonnet beside claude-sonnet-4.5 was one), and the keys a
    naming rule maps (not an override or a repo id) that read as one name map to one canonical model."""
    import duckdb

    with duckdb.connect(str(real_db), read_only=True) as con:
        canonical = [n for (n,) in con.sql("select canonical_model from model_catalog").fetchall()]
        keys = con.sql(
            "select model_name, canonical_model from price_keys where model_name is not null and match_rule in "
            "('name', 'first_party', 'hand', 'openrouter', 'hf_path', 'unmapped')"
        ).fetchall()
    assert len(canonical) > 500 and len(keys) > 4000
    seen: dict[tuple, str] = {}
    for name in canonical:
        assert seen.setdefault(_signature(name), name) == name, f"{name} and {seen[_signature(name)]} are one model"
    by_signature: dict[tuple, set] = {}
    for name, model in keys:
        by_signature.setdefault(_signature(name), set()).add(model)
    assert {k: v for k, v in by_signature.items() if len(v) > 1} == {}
