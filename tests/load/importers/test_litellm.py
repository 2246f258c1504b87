"""LiteLLM map -> price rows: key grammar, counts on the real files, rows checked against values read in the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from econ.load.importers.common import DUPLICATE_ROW, MAX_BELOW_TIER, ORPHAN_TIER
from econ.load.importers.litellm import REPO_URL, classify_key, normalise
from econ.load.spec import read_table
from econ.load.tables import PRICE_SNAPSHOT

REPO = Path(__file__).resolve().parents[3]
EXTERNAL = REPO / "tests" / "fixtures" / "external"
SLICE = REPO / "tests" / "fixtures" / "importers" / "litellm_slice.json"
PRICE_COLS = [
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_write_12h_usd_per_mtok",
]


@pytest.fixture(scope="module")
def current():
    return normalise(json.loads((EXTERNAL / "litellm_model_prices.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def tokencost():
    return normalise(json.loads((EXTERNAL / "tokencost_model_prices_2025-09-01.json").read_text(encoding="utf-8")))


def rows_of(frame: pl.DataFrame, model: str) -> list[tuple]:
    """(variant, tier, input, output, cache read, 5m write, 1h write, 12h write) of one model, in file order."""
    sub = frame.filter(pl.col("model") == model)
    return [tuple(r) for r in sub.select(["variant", "tier_min_prompt_tokens", *PRICE_COLS]).iter_rows()]


# ---------------------------------------------------------------------------- key grammar


@pytest.mark.parametrize(
    "key, expected",
    [
        ("input_cost_per_token", ("price", "input", 0, "standard")),
        ("output_cost_per_token_batches", ("price", "output", 0, "batch")),
        ("cache_read_input_token_cost_flex", ("price", "cache_read", 0, "flex")),
        ("input_cost_per_token_above_272k_tokens_priority", ("price", "input", 272000, "priority")),
        ("input_cost_per_token_ultrafast", ("price", "input", 0, "fast")),
        ("cache_creation_input_token_cost", ("price", "cache_write_5m", 0, "standard")),
        ("cache_creation_input_token_cost_above_1hr", ("price", "cache_write_1h", 0, "standard")),
        (
            "cache_creation_input_token_cost_above_1hr_above_200k_tokens",
            ("price", "cache_write_1h", 200000, "standard"),
        ),
        ("cache_creation_input_token_cost_above_12hr", ("price", "cache_write_12h", 0, "standard")),
        (
            "cache_creation_input_token_cost_above_12hr_above_272k_tokens_flex",
            ("price", "cache_write_12h", 272000, "flex"),
        ),
        ("output_cost_per_token_above_128k_tokens", ("price", "output", 128000, "standard")),
        ("input_cost_per_token_above_32k_tokens", ("price", "input", 32000, "standard")),
        ("cache_read_input_token_cost_above_512k_tokens", ("price", "cache_read", 512000, "standard")),
        ("input_cost_per_token_above_100k_tokens_batches", ("price", "input", 100000, "batch")),
        ("input_cost_per_token_balanced", ("ignored", "_balanced variant")),
        ("input_cost_per_token_above_272k_tokens_decisions", ("ignored", "_decisions variant")),
        ("explicit_cache_read_input_token_cost", ("ignored", "explicit cache")),
        ("input_cost_per_audio_token_above_200k_tokens_priority", ("ignored", "audio")),
        ("output_cost_per_image_token_batches", ("ignored", "image")),
        ("input_cost_per_second", ("ignored", "per second")),
        ("search_context_cost_per_query", ("ignored", "search / grounding")),
        ("output_cost_per_reasoning_token", ("ignored", "reasoning tokens")),
        ("input_cost_per_token_cache_hit", ("ignored", "cache hit (same as cache read)")),
        ("off_peak_pricing", ("ignored", "off-peak pricing")),
        ("fedramp_uplift_multiplier", ("ignored", "uplift multiplier")),
        ("some_new_cost_per_widget", ("ignored", "some_new_cost_per_widget")),  # an unknown price key is its own family
        ("supports_vision", ("other",)),
        ("max_input_tokens", ("other",)),
    ],
)
def test_classify_key(key, expected):
    assert classify_key(key) == expected


# ---------------------------------------------------------------------------- the real files

CURRENT_SKIPPED = {
    "mode image_generation is not text generation": 414,
    "mode embedding is not text generation": 159,
    "no per-token text price": 117,
    "mode audio_transcription is not text generation": 109,
    "alias of another entry (no prices of its own)": 98,
    "mode video_generation is not text generation": 90,
    "mode realtime is not text generation": 59,
    "mode audio_speech is not text generation": 56,
    "mode image_edit is not text generation": 44,
    "mode rerank is not text generation": 41,
    "mode evaluation is not text generation": 35,
    "mode search is not text generation": 24,
    "mode ocr is not text generation": 20,
    "mode decisions is not text generation": 4,
    "mode moderation is not text generation": 3,
    "mode extraction is not text generation": 2,
    "not a model entry": 2,  # sample_spec, fallback_generalizations
    "mode guardrail is not text generation": 1,
    "mode vector_store is not text generation": 1,
}
TOKENCOST_SKIPPED = {
    "mode image_generation is not text generation": 103,
    "no per-token text price": 84,
    "mode embedding is not text generation": 77,
    "mode audio_transcription is not text generation": 52,
    "mode rerank is not text generation": 13,
    "mode moderation is not text generation": 12,
    "mode audio_speech is not text generation": 10,
}


@pytest.mark.parametrize(
    "which, entries, imported, rows, skipped",
    [
        ("current", 4878, 3599, 5451, CURRENT_SKIPPED),  # 4,876 models + sample_spec + fallback_generalizations
        ("tokencost", 1701, 1350, 1481, TOKENCOST_SKIPPED),
    ],
)
def test_every_entry_is_imported_or_skipped_with_a_reason(request, which, entries, imported, rows, skipped):
    result = request.getfixturevalue(which)
    assert (result.entries, result.imported, result.frame.height) == (entries, imported, rows)
    assert result.skipped == skipped
    assert result.imported + sum(result.skipped.values()) == result.entries
    assert result.frame["source_key"].n_unique() == result.imported


def test_ignored_keys_are_counted_by_family(current):
    assert current.ignored_keys["search / grounding"] == 533
    assert current.ignored_keys["_balanced variant"] == 30
    assert current.ignored_keys["explicit cache"] == 5
    assert current.ignored_keys["off-peak pricing"] == 10
    assert current.ignored_keys[MAX_BELOW_TIER] == 29
    assert current.dropped_rows == {DUPLICATE_ROW: 5}
    # independent count: search/grounding price keys of the imported entries, read straight from the JSON
    raw = json.loads((EXTERNAL / "litellm_model_prices.json").read_text(encoding="utf-8"))
    imported = set(current.frame["source_key"].to_list())
    search = sum(1 for k in imported for name in raw[k] if ("search" in name or "grounding" in name) and "cost" in name)
    assert search == 533


def test_mode_count_matches_the_file(current):
    """Independent count: entries whose mode is chat/completion/responses, read straight from the JSON."""
    raw = json.loads((EXTERNAL / "litellm_model_prices.json").read_text(encoding="utf-8"))
    text_modes = sum(
        1 for v in raw.values() if isinstance(v, dict) and v.get("mode") in ("chat", "completion", "responses")
    )
    assert text_modes == 3471 + 32 + 205
    skipped_as_not_text = sum(n for reason, n in current.skipped.items() if reason.startswith("mode "))
    # every entry has a text mode, another mode, no mode (aliases, price classes, fallback_generalizations) or is
    # sample_spec (whose mode is a description); 2 mode-less fireworks embedding classes count as mode embedding
    no_mode = sum(1 for v in raw.values() if isinstance(v, dict) and "mode" not in v)
    assert text_modes + (skipped_as_not_text - 2) + no_mode + 1 == len(raw)


@pytest.mark.parametrize(
    "model, expected",
    [
        # values read in litellm_model_prices.json, USD/token x 1e6 by hand
        (
            "gemini/gemini-3.1-pro-preview",
            [
                ("standard", 0, 2.0, 12.0, 0.2, None, None, None),
                ("standard", 200000, 4.0, 18.0, 0.4, None, None, None),
                ("batch", 0, 1.0, 6.0, 0.2, None, None, None),
                ("batch", 200000, 2.0, 9.0, 0.4, None, None, None),
                ("flex", 0, 1.0, 6.0, 0.2, None, None, None),
                ("flex", 200000, 2.0, 9.0, 0.4, None, None, None),
                ("priority", 0, 3.6, 21.6, 0.36, None, None, None),
                ("priority", 200000, 7.2, 32.4, 0.72, None, None, None),
            ],
        ),
        (
            "claude-opus-4-6",
            [
                ("standard", 0, 5.0, 25.0, 0.5, 6.25, 10.0, None),
                ("batch", 0, 2.5, 12.5, 0.25, 3.125, None, None),
            ],
        ),
        # provider_specific_entry {"us": 1.1, "fast": 2.0}: fast = 2 x standard, speed_ratio blank
        (
            "claude-opus-5",
            [
                ("standard", 0, 5.0, 25.0, 0.5, 6.25, 10.0, None),
                ("batch", 0, 2.5, 12.5, 0.25, 3.125, None, None),
                ("fast", 0, 10.0, 50.0, 1.0, 12.5, 20.0, None),
            ],
        ),
        # DashScope tiered_pricing: ranges [0, 32k], [32k, 128k], [128k, 256k], [256k, 1M]
        (
            "dashscope/qwen3-coder-flash",
            [
                ("standard", 0, 0.3, 1.5, 0.08, None, None, None),
                ("standard", 32000, 0.5, 2.5, 0.12, None, None, None),
                ("standard", 128000, 0.8, 4.0, 0.2, None, None, None),
                ("standard", 256000, 1.6, 9.6, 0.4, None, None, None),
            ],
        ),
        # 12-hour cache writes, >272k tiers and the _above_272k_tokens_priority row
        (
            "gpt-5.6",
            [
                ("standard", 0, 4.0, 20.0, 0.4, 5.0, None, 10.0),
                ("standard", 272000, 8.0, 30.0, 0.8, 10.0, None, 20.0),
                ("batch", 0, 2.0, 10.0, 0.2, 2.5, None, None),
                ("batch", 272000, 4.0, 15.0, 0.4, 5.0, None, None),
                ("flex", 0, 2.0, 10.0, 0.2, 2.5, None, 5.0),
                ("flex", 272000, 4.0, 15.0, 0.4, 5.0, None, 10.0),
                ("priority", 0, 8.0, 40.0, 0.8, 10.0, None, 20.0),
                ("priority", 272000, 16.0, 60.0, 1.6, 20.0, None, 40.0),
            ],
        ),
    ],
)
def test_rows_match_values_read_in_the_json(current, model, expected):
    assert rows_of(current.frame, model) == expected


def test_gemini_25_pro_cache_read_history(current, tokencost):
    """gemini/gemini-2.5-pro cache read: $0.3125/MTok in the 2025-09-01 copy, $0.125/MTok on 2026-11-20."""
    assert rows_of(tokencost.frame, "gemini/gemini-2.5-pro")[0] == ("standard", 0, 1.25, 10.0, 0.3125, None, None, None)
    assert rows_of(current.frame, "gemini/gemini-2.5-pro")[0] == ("standard", 0, 1.25, 10.0, 0.125, None, None, None)


def test_provider_source_and_context_columns(current):
    row = current.frame.filter(pl.col("model") == "claude-opus-4-6", pl.col("variant") == "standard").row(0, named=True)
    assert (row["provider"], row["max_input_tokens"], row["source_key"], row["speed_ratio"]) == (
        "anthropic",
        1000000,
        "claude-opus-4-6",
        None,
    )
    assert row["source_url"] == "https://platform.claude.com/docs/en/about-claude/pricing"  # the entry's "source"
    assert current.frame.filter(pl.col("model") == "gpt-5.6")["source_url"].unique().to_list() == [
        REPO_URL
    ]  # no "source"
    gem = current.frame.filter(pl.col("model") == "gemini/gemini-3.1-pro-preview").row(0, named=True)
    assert gem["provider"] == "gemini"
    assert gem["source_url"].startswith("https://")
    # the provider comes from litellm_provider, not from the key
    bedrock = current.frame.filter(pl.col("model") == "us.anthropic.claude-sonnet-4-5-20250929-v1:0").row(0, named=True)
    assert bedrock["provider"] == "bedrock_converse"


def test_tier_above_max_input_keeps_the_tier_and_blanks_max_input(current):
    # LiteLLM: max_input_tokens 200000 and an _above_200k_tokens price (the 1M-context beta price)
    rows = current.frame.filter(pl.col("model") == "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert rows.select(
        "variant", "tier_min_prompt_tokens", "input_usd_per_mtok", "output_usd_per_mtok", "max_input_tokens"
    ).rows() == [
        ("standard", 0, 3.3, 16.5, None),
        ("standard", 200000, 6.6, 24.75, None),
        ("batch", 0, 1.65, 8.25, None),
    ]


@pytest.mark.parametrize("which", ["current", "tokencost"])
def test_real_rows_pass_the_snapshot_spec(request, which, tmp_path):
    frame = request.getfixturevalue(which).frame
    path = tmp_path / "s.csv"
    frame.write_csv(path)
    assert read_table(path, PRICE_SNAPSHOT).height == frame.height


def test_slice_columns_and_skip_reasons():
    result = normalise(json.loads(SLICE.read_text(encoding="utf-8")))
    assert result.frame.columns == [c.name for c in PRICE_SNAPSHOT.columns]
    assert result.skipped == {
        "not a model entry": 1,
        "alias of another entry (no prices of its own)": 1,
        "mode embedding is not text generation": 2,
        "no per-token text price": 2,
    }


# ---------------------------------------------------------------------------- odd entries (never crash)


def P(**kw):
    """A minimal chat entry of provider acme."""
    return {"litellm_provider": "acme", "mode": "chat", **kw}


@pytest.mark.parametrize(
    "entry, skipped, rows",
    [
        (P(input_cost_per_token="3e-06", output_cost_per_token=1.5e-05), None, [("standard", 0, 3.0, 15.0)]),
        (P(input_cost_per_token="abc"), "invalid price value", []),
        (P(input_cost_per_token=-1e-06), "invalid price value", []),
        (P(input_cost_per_token={"low": 1e-06}), "invalid price value", []),
        (P(input_cost_per_token=True), "invalid price value", []),
        (P(input_cost_per_token=float("nan")), "invalid price value", []),
        (P(input_cost_per_token=None, output_cost_per_token=None), "no per-token text price", []),
        (P(input_cost_per_second=0.001), "no per-token text price", []),
        (P(input_cost_per_token_above_200k_tokens=1e-06), "no per-token text price", []),  # a tier, no base
        ({"mode": "chat", "input_cost_per_token": 1e-06}, "no litellm_provider", []),
        ({"litellm_provider": 7, "input_cost_per_token": 1e-06}, "no litellm_provider", []),
        (P(mode=["chat"], input_cost_per_token=1e-06), "mode ['chat'] is not text generation", []),
        (P(mode="embedding", input_cost_per_token=1e-06), "mode embedding is not text generation", []),
        ({"litellm_provider": "acme", "input_cost_per_token": 1e-06}, None, [("standard", 0, 1.0, None)]),  # no mode
        (
            {"litellm_provider": "x-embedding-models", "input_cost_per_token": 1e-06},
            "mode embedding is not text generation",
            [],
        ),
        ({"alias_of": "other"}, "alias of another entry (no prices of its own)", []),
        ("a string", "not a model entry", []),
        ([1, 2], "not a model entry", []),
        (None, "not a model entry", []),
        (P(input_cost_per_token=1e-06, tiered_pricing="weird"), None, [("standard", 0, 1.0, None)]),
        (P(tiered_pricing=[{"range": [0, 1000], "input_cost_per_token": "x"}]), "invalid price value", []),
        (P(tiered_pricing=[{"range": "all", "input_cost_per_token": 1e-06}]), "no per-token text price", []),
        (
            P(
                tiered_pricing=[
                    {"range": [0, 1000], "input_cost_per_token": 1e-06},
                    {"range": [1000.0, 5000], "input_cost_per_token": 2e-06},
                ]
            ),
            None,
            [("standard", 0, 1.0, None), ("standard", 1000, 2.0, None)],
        ),
        (P(input_cost_per_token=1e-06, provider_specific_entry={"fast": "x"}), None, [("standard", 0, 1.0, None)]),
        (
            P(input_cost_per_token=1e-06, provider_specific_entry={"fast": 6}),
            None,
            [("standard", 0, 1.0, None), ("fast", 0, 6.0, None)],
        ),
        (
            P(input_cost_per_token=1e-06, input_cost_per_token_ultrafast=2e-06, provider_specific_entry={"fast": 6}),
            None,
            [("standard", 0, 1.0, None), ("fast", 0, 2.0, None)],
        ),  # the explicit _ultrafast price wins over the multiplier
    ],
)
def test_odd_entries(entry, skipped, rows):
    result = normalise({"acme/m": entry})
    assert result.skipped == ({skipped: 1} if skipped else {})
    got = [
        tuple(r)
        for r in result.frame.select(
            "variant", "tier_min_prompt_tokens", "input_usd_per_mtok", "output_usd_per_mtok"
        ).iter_rows()
    ]
    assert got == rows


@pytest.mark.parametrize(
    "entry, ignored, dropped",
    [
        (
            P(input_cost_per_token=1e-06, max_input_tokens="big"),
            {"max_input_tokens (not a positive whole number)": 1},
            {},
        ),
        (
            P(input_cost_per_token=1e-06, input_cost_per_token_above_200k_tokens=2e-06, max_input_tokens=200000),
            {MAX_BELOW_TIER: 1},
            {},
        ),
        (P(input_cost_per_token=1e-06, input_cost_per_token_above_200k_tokens_flex=2e-06), {}, {ORPHAN_TIER: 1}),
        (
            P(input_cost_per_token=1e-06, tiered_pricing=[{"range": [0, 5], "input_cost_per_token": 2e-06}]),
            {},
            {DUPLICATE_ROW: 1},
        ),
        (
            P(input_cost_per_token=1e-06, input_cost_per_audio_token=1e-05, output_cost_per_image=0.04),
            {"audio": 1, "image": 1},
            {},
        ),
        (P(input_cost_per_token=1e-06, tiered_pricing="weird"), {"tiered_pricing (not a list of ranges)": 1}, {}),
    ],
)
def test_what_is_not_imported_is_counted(entry, ignored, dropped):
    result = normalise({"acme/m": entry})
    assert (result.ignored_keys, result.dropped_rows) == (ignored, dropped)


_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**9), 10**9),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(["3e-06", "-1", "chat", "embedding", "", "1e999"]),
)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_keys = st.sampled_from(
    sorted(
        {
            "input_cost_per_token",
            "output_cost_per_token",
            "cache_read_input_token_cost",
            "cache_creation_input_token_cost",
            "cache_creation_input_token_cost_above_1hr",
            "input_cost_per_token_above_200k_tokens",
            "output_cost_per_token_batches",
            "input_cost_per_token_priority",
            "input_cost_per_token_above_272k_tokens_flex",
            "mode",
            "litellm_provider",
            "max_input_tokens",
            "tiered_pricing",
            "provider_specific_entry",
            "source",
            "alias_of",
            "input_cost_per_second",
        }
    )
)
_entry = st.one_of(
    _json,
    st.dictionaries(_keys, _json, max_size=8),
    st.fixed_dictionaries(
        {"litellm_provider": st.just("acme"), "input_cost_per_token": _json},
        optional={
            "mode": st.sampled_from(["chat", "completion", "embedding"]),
            "tiered_pricing": st.lists(
                st.dictionaries(st.sampled_from(["range", "input_cost_per_token"]), _json), max_size=3
            ),
            "max_input_tokens": _json,
            "provider_specific_entry": _json,
        },
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=6), _entry, max_size=6))
@example({"0": {"litellm_provider": "acme", "input_cost_per_token": 1.8e302}})  # x 1e6 was inf in the snapshot
@example({"0": {"litellm_provider": "acme", "input_cost_per_token": 8.08e-184}})  # under the 1e-30 floor
@example({"0": {"litellm_provider": "acme", "input_cost_per_token": 10**400, "max_input_tokens": 10**30}})
def test_never_crashes_and_accounts_for_every_entry(tmp_path_factory, obj):
    result = normalise(obj)
    assert result.imported + sum(result.skipped.values()) == result.entries == len(obj)
    if result.frame.height:
        path = tmp_path_factory.mktemp("h") / "s.csv"
        result.frame.write_csv(path)
        assert read_table(path, PRICE_SNAPSHOT).height == result.frame.height
