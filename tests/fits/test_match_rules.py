"""genai-prices' match rules, evaluated as genai-prices evaluates them, and resolved to canonical models."""

from __future__ import annotations

import json

import polars as pl
import pytest

from econ.fits.match_rules import apply, compile_rule, matches, resolve, rule_matches

# genai-prices' own examples (packages/python/genai_prices/types.py: every clause compares the lower-cased id; regex
# searches it)
CASES = [
    ({"equals": "gpt-5.6-luna"}, "GPT-5.6-Luna", True),
    ({"starts_with": "claude-3-5-haiku"}, "claude-3-5-haiku-20241022", True),
    ({"starts_with": "claude-3-5-haiku"}, "claude-3.5-haiku", False),
    ({"ends_with": "-preview"}, "gemini-3-pro-preview", True),
    ({"contains": "grok"}, "x-ai/grok-4.3", True),
    ({"regex": r"^gpt-5\.6-luna-\d{4}-\d{2}-\d{2}$"}, "gpt-5.6-luna-2026-07-30", True),
    ({"regex": r"^gpt-5\.6-luna-\d{4}-\d{2}-\d{2}$"}, "gpt-5.6-luna", False),
    ({"or": [{"equals": "o3"}, {"starts_with": "o3-2025"}]}, "o3-2025-04-16", True),
    ({"and": [{"starts_with": "claude"}, {"contains": "opus"}]}, "claude-sonnet-4", False),
    ({"and": [{"starts_with": "claude"}, {"contains": "opus"}]}, "claude-opus-4", True),
    ({"unknown": "x"}, "x", False),
]


@pytest.mark.parametrize(("rule", "name", "expected"), CASES)
def test_a_rule_matches_as_genai_prices_matches(rule, name, expected):
    frame = pl.DataFrame({"name": [name]})
    assert frame.select(compile_rule(rule, pl.col("name").str.to_lowercase())).item() is expected


KEYS = pl.DataFrame(
    {
        "source": ["litellm", "litellm", "litellm", "litellm", "hand"],
        "provider": ["anthropic", "anthropic", "vertex_ai-anthropic_models", "openai", "openai"],
        "model": [
            "claude-3-5-haiku-20241022",
            "claude-3-5-haiku-latest",
            "vertex_ai/claude-3-5-haiku@20241022",
            "o3-2025-04-16",
            "o3",
        ],
        "canonical_model": ["claude-3.5-haiku", None, "claude-3.5-haiku", "o3", "o3"],
        "seller": ["anthropic", "anthropic", "google", "openai", "openai"],
    }
)
RULES = pl.DataFrame(
    {
        "provider": ["anthropic", "google", "openai"],
        "model": ["claude-3-5-haiku-latest", "claude-3-5-haiku", "o-series"],
        "match_rule": [
            json.dumps({"starts_with": "claude-3-5-haiku"}),
            json.dumps({"starts_with": "claude-3-5-haiku"}),
            json.dumps({"or": [{"starts_with": "o3"}, {"starts_with": "o1"}, {"regex": "(unbalanced"}]}),
        ],
        "seller": ["anthropic", "google", "openai"],
    }
)


def test_rules_name_the_keys_of_the_same_seller():
    pairs = rule_matches(RULES, KEYS).sort("provider", "matched_model")
    assert pairs.select("provider", "model", "matched_model").rows() == [
        ("anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku-20241022"),
        ("anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku-latest"),
        ("google", "claude-3-5-haiku", "vertex_ai/claude-3-5-haiku@20241022"),  # Google runs Vertex: one seller
        ("openai", "o-series", "o3"),
        ("openai", "o-series", "o3-2025-04-16"),
    ]


def test_an_entry_takes_the_one_model_its_keys_are():
    resolved = resolve(RULES, KEYS).sort("provider")
    assert resolved.select("provider", "model", "matched_keys", "matched_models", "canonical_model").rows() == [
        ("anthropic", "claude-3-5-haiku-latest", 2, 1, "claude-3.5-haiku"),
        ("google", "claude-3-5-haiku", 1, 1, "claude-3.5-haiku"),
        ("openai", "o-series", 2, 1, "o3"),
    ]
    two = pl.concat([KEYS, KEYS.head(1).with_columns(pl.lit("claude-3.5-sonnet").alias("canonical_model"),
                                                     pl.lit("claude-3-5-haiku-x").alias("model"))])  # fmt: skip
    ambiguous = resolve(RULES.head(1), two)
    assert ambiguous.select("matched_models", "canonical_model").rows() == [(2, None)]  # two models: not guessed


def test_only_unmapped_and_moving_keys_take_the_rule_s_model():
    mapping = pl.DataFrame(
        {
            "source": ["genai_prices", "genai_prices", "litellm"],
            "provider": ["anthropic", "anthropic", "anthropic"],
            "model": ["claude-3-5-haiku-latest", "claude-3-5-haiku", "claude-3-5-haiku-20241022"],
            "canonical_model": [None, "claude-3.5-haiku-named", "claude-3.5-haiku"],
            "match_rule": ["moving_alias", "first_party", "first_party"],
            "seller_organisation": ["anthropic"] * 3,
        }
    )
    rules = pl.DataFrame(
        {
            "provider": ["anthropic", "anthropic"],
            "model": ["claude-3-5-haiku-latest", "claude-3-5-haiku"],
            "match_rule": [json.dumps({"starts_with": "claude-3-5-haiku"})] * 2,
        }
    )
    out = apply(mapping, rules).sort("model")
    assert out.select("model", "canonical_model", "match_rule", "rule_matched_keys").rows() == [
        ("claude-3-5-haiku", "claude-3.5-haiku-named", "first_party", 1),
        ("claude-3-5-haiku-20241022", "claude-3.5-haiku", "first_party", None),
        ("claude-3-5-haiku-latest", "claude-3.5-haiku", "genai_match", 1),
    ]
    # the model catalog reads the matches once and hands them to apply: applying the rules changes none of the
    # keys the rules are read against, so the matches read after it are the same, and apply gives the same rows
    pairs = matches(mapping, rules)
    assert matches(out, rules).sort(pl.all()).equals(pairs.sort(pl.all()))
    assert apply(mapping, rules, pairs=pairs).sort("model").equals(out)
