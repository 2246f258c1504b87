"""OpenRouter /api/v1/models -> price rows: counts on the real file, rows checked against values read in the JSON."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from econ.load.importers.openrouter import normalise
from econ.load.spec import read_table
from econ.load.tables import PRICE_SNAPSHOT

REPO = Path(__file__).resolve().parents[3]
EXTERNAL = REPO / "tests" / "fixtures" / "external"
SLICE = REPO / "tests" / "fixtures" / "importers" / "openrouter_slice.json"
COLS = [
    "variant",
    "tier_min_prompt_tokens",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "max_input_tokens",
    "hugging_face_id",
]


@pytest.fixture(scope="module")
def real():
    return normalise(json.loads((EXTERNAL / "openrouter_models_2026-08-19.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def sliced():
    return normalise(json.loads(SLICE.read_text(encoding="utf-8")))


def rows_of(frame: pl.DataFrame, model: str) -> list[tuple]:
    return frame.filter(pl.col("model") == model).select(COLS).rows()


def test_every_model_is_imported_or_skipped_with_a_reason(real):
    assert (real.entries, real.imported, real.frame.height) == (549, 409, 473)
    assert real.skipped == {
        "output image is not text generation": 34,
        "output embeddings is not text generation": 34,
        "output video is not text generation": 23,
        "output transcription is not text generation": 19,
        "output speech is not text generation": 18,
        "output rerank is not text generation": 7,
        "variable price (router)": 5,
    }
    assert real.imported + sum(real.skipped.values()) == real.entries
    assert real.dropped_rows == {}


def test_counts_match_the_file(real):
    """Independent counts read straight from the JSON."""
    raw = json.loads((EXTERNAL / "openrouter_models_2026-08-19.json").read_text(encoding="utf-8"))["data"]
    text = [m for m in raw if "text" in m["architecture"]["output_modalities"]]
    routers = [m for m in text if float(m["pricing"]["prompt"]) < 0]
    assert len(routers) == 5 and "openrouter/auto" in {m["id"] for m in routers}
    assert real.imported == len(text) - len(routers)
    tiers = sum(
        1
        for m in text
        if float(m["pricing"]["prompt"]) >= 0
        for o in m["pricing"].get("overrides", [])
        if "min_prompt_tokens" in o
    )
    assert real.frame.height == real.imported + tiers
    batch = sum(1 for m in text if m["id"].endswith(":batch"))
    assert real.frame.filter(pl.col("variant") == "batch", pl.col("tier_min_prompt_tokens") == 0).height == batch
    windows = sum(1 for m in text for o in m["pricing"].get("overrides", []) if "utc_start" in o)
    assert real.ignored_keys["overrides: time-of-day window (utc_start/utc_end)"] == windows == 8


@pytest.mark.parametrize(
    "model, expected",
    [
        # values read in openrouter_models_2026-08-19.json, USD/token x 1e6 by hand
        ("qwen/qwen3.8-27b", [("standard", 0, 0.45, 3.2, 0.05, None, None, 262144, "Qwen/Qwen3.8-27B")]),
        (
            "qwen/qwen3.7-flash",
            [
                ("standard", 0, 0.03, 0.13, 0.006, 0.038, None, 1000000, None),
                ("standard", 32000, 0.1, 0.4, 0.02, 0.125, None, 1000000, None),
                ("standard", 256000, 0.2, 0.8, 0.04, 0.25, None, 1000000, None),
            ],
        ),
        (
            "x-ai/grok-4.6",
            [
                ("standard", 0, 2.0, 6.0, 0.5, None, None, 500000, None),
                ("standard", 200000, 4.0, 12.0, 1.0, None, None, 500000, None),
            ],
        ),
        # the :batch endpoint is the batch variant of the same model; hugging_face_id "" is blank
        (
            "anthropic/claude-opus-4.6",
            [
                ("standard", 0, 5.0, 25.0, 0.5, 6.25, 10.0, 1000000, None),
                ("batch", 0, 2.5, 12.5, 0.25, 3.125, 5.0, 1000000, None),
            ],
        ),
        # time-of-day overrides are not tiers: only the base row
        (
            "deepseek/deepseek-v4-pro-0813",
            [("standard", 0, 0.66, 1.98, 0.022, None, None, 1048576, "deepseek-ai/DeepSeek-V4-Pro-0813")],
        ),
        # free models are imported at 0
        ("dots-studio/dots-3-note-preview:free", [("standard", 0, 0.0, 0.0, None, None, None, 512000, None)]),
    ],
)
@pytest.mark.parametrize("which", ["real", "sliced"])
def test_rows_match_values_read_in_the_json(request, which, model, expected):
    assert rows_of(request.getfixturevalue(which).frame, model) == expected


def test_slice_counts_and_source_columns(sliced):
    assert sliced.skipped == {"variable price (router)": 1, "output embeddings is not text generation": 1}
    assert sliced.ignored_keys == {"web_search": 3, "overrides: time-of-day window (utc_start/utc_end)": 4}
    batch = sliced.frame.filter(pl.col("variant") == "batch").row(0, named=True)
    assert (batch["provider"], batch["model"], batch["source_key"], batch["source_url"]) == (
        "openrouter",
        "anthropic/claude-opus-4.6",
        "anthropic/claude-opus-4.6:batch",
        "https://openrouter.ai/anthropic/claude-opus-4.6:batch",
    )
    assert set(sliced.frame["provider"]) == {"openrouter"}


def test_real_rows_pass_the_snapshot_spec(real, tmp_path):
    path = tmp_path / "s.csv"
    real.frame.write_csv(path)
    assert read_table(path, PRICE_SNAPSHOT).height == real.frame.height


def M(**pricing):
    return {"id": "acme/m", "architecture": {"output_modalities": ["text"]}, "context_length": 1000, "pricing": pricing}


@pytest.mark.parametrize(
    "model, skipped, rows",
    [
        (M(prompt="0.000001", completion="0.000002"), None, [("standard", 0, 1.0, 2.0)]),
        (M(prompt=1e-06, completion=None), None, [("standard", 0, 1.0, None)]),
        (M(prompt="-1", completion="-1"), "variable price (router)", []),
        (M(prompt="free", completion="0"), "invalid price value", []),
        (M(prompt={"a": 1}), "invalid price value", []),
        (M(web_search="0.01"), "no per-token text price", []),
        ({"id": "acme/m", "pricing": None}, "no per-token text price", []),
        (
            {"id": "acme/m", "pricing": {"prompt": "1e-6"}},
            None,
            [("standard", 0, 1.0, None)],
        ),  # no architecture: assume text
        ({"pricing": {"prompt": "1e-6"}}, "no model id", []),
        ({"id": 5, "pricing": {"prompt": "1e-6"}}, "no model id", []),
        ("acme/m", "not a model entry", []),
        (
            {"id": "a", "architecture": {"output_modalities": ["image"]}, "pricing": {"prompt": "0"}},
            "output image is not text generation",
            [],
        ),
        (
            M(prompt="1e-6", overrides=[{"min_prompt_tokens": 500, "prompt": "2e-6"}]),
            None,
            [("standard", 0, 1.0, None), ("standard", 500, 2.0, None)],
        ),
        (M(prompt="1e-6", overrides=[{"min_prompt_tokens": 500, "prompt": "-1"}]), "variable price (router)", []),
        (
            M(prompt="1e-6", overrides=[{"min_prompt_tokens": 5000, "prompt": "2e-6"}]),
            None,
            [("standard", 0, 1.0, None), ("standard", 5000, 2.0, None)],
        ),
        (M(prompt="1e-6", overrides="odd"), None, [("standard", 0, 1.0, None)]),
        (
            M(prompt="1e-6", overrides=[{"min_prompt_tokens": 500}]),
            None,
            [("standard", 0, 1.0, None)],
        ),  # a tier without prices
    ],
)
def test_odd_models(model, skipped, rows):
    result = normalise({"data": [model]})
    assert result.skipped == ({skipped: 1} if skipped else {})
    assert (
        result.frame.select("variant", "tier_min_prompt_tokens", "input_usd_per_mtok", "output_usd_per_mtok").rows()
        == rows
    )


def test_duplicate_ids_keep_the_first():
    result = normalise({"data": [M(prompt="1e-6"), M(prompt="2e-6")]})
    assert result.skipped == {"duplicate model id (kept the first)": 1}
    assert result.frame["input_usd_per_mtok"].to_list() == [1.0]


def test_tier_beyond_context_length_blanks_context_length():
    result = normalise({"data": [M(prompt="1e-6", overrides=[{"min_prompt_tokens": 5000, "prompt": "2e-6"}])]})
    assert result.frame["max_input_tokens"].to_list() == [None, None]
    assert result.ignored_keys == {"max_input_tokens (not above a tier threshold; left blank)": 1}
