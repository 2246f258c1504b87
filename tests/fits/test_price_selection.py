"""One price source per model and the architecture behind a price row, on real keys from the three sources."""

from __future__ import annotations

import polars as pl
import pytest

from econ.fits.price_selection import attach_architecture, choose_sources, name_key
from fits.pricing_data import frames


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("gemini/gemini-3.1-pro-preview", "gemini-3-1-pro-preview"),
        ("gemini-3.1-pro-preview", "gemini-3-1-pro-preview"),
        ("vertex_ai/claude-haiku-5-5@default", "claude-haiku-5-5"),
        ("global.openai.gpt-6-astra", "gpt-6-astra"),
        ("together_ai/deepseek-ai/DeepSeek-V3", "deepseek-v3"),
        ("empiriolabs/glm-5-1", "glm-5-1"),
        ("z-ai/glm-5.1", "glm-5-1"),
    ],
)
def test_name_key(key, expected):
    assert pl.DataFrame({"model": [key]}).select(name_key())["model"][0] == expected


def rows(*entries):
    return pl.DataFrame([dict(zip(("source", "provider", "model", "variant"), e)) for e in entries])


def test_hand_beats_litellm_and_first_party_beats_resellers():
    frame = rows(
        ("litellm", "gemini", "gemini/gemini-3.1-pro-preview", "standard"),
        ("hand", "google", "gemini-3.1-pro-preview", "standard"),
        ("litellm", "kyma", "kyma/deepseek-v3", "standard"),
        ("litellm", "deepseek", "deepseek/deepseek-v3", "standard"),
        ("litellm", "together_ai", "together_ai/deepseek-ai/DeepSeek-V3", "standard"),
        ("openrouter", "openrouter", "deepseek/deepseek-chat", "standard"),
    )
    chosen = dict(choose_sources(frame).select("name_key", "model").iter_rows())
    assert chosen["gemini-3-1-pro-preview"] == "gemini-3.1-pro-preview"
    assert chosen["deepseek-v3"] == "deepseek/deepseek-v3"
    assert chosen["deepseek-chat"] == "deepseek/deepseek-chat"  # only source: openrouter


def test_one_source_keeps_all_variants_of_that_source():
    frame = rows(
        ("hand", "google", "g", "standard"), ("hand", "google", "g", "batch"), ("litellm", "gemini", "gemini/g", "flex")
    )
    out = choose_sources(frame)
    assert set(out["source"]) == {"hand"} and set(out["variant"]) == {"standard", "batch"}


def test_architecture_rules_on_real_rows():
    """OpenRouter's hugging_face_id, a LiteLLM key embedding the HF repo, the name rule; a moving alias is not
    mapped."""
    f = frames()
    p = f["price_current"]
    picked = p.filter(
        pl.col("model").is_in(
            ["deepseek/deepseek-chat", "together_ai/deepseek-ai/DeepSeek-V3", "empiriolabs/glm-5-1", "deepseek-chat"]
        )
        & (pl.col("tier_min_prompt_tokens") == 0)
        & (pl.col("variant") == "standard")
    )
    out = {
        r["model"]: (r["arch_model"], r["arch_match"])
        for r in attach_architecture(picked, f["models"]).iter_rows(named=True)
    }
    assert out["deepseek/deepseek-chat"] == ("DeepSeek-V3", "hugging_face_id")
    assert out["together_ai/deepseek-ai/DeepSeek-V3"] == ("DeepSeek-V3", "litellm_key")
    assert out["empiriolabs/glm-5-1"] == ("GLM-5.1", "name")
    assert out["deepseek-chat"] == (None, None)
    assert attach_architecture(picked, f["models"]).height == picked.height  # a left join: no row lost or doubled
