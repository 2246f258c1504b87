"""llm-prices' vendor files, its published historical-v1.json and its pre-2025-10 page -> price rows."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from econ.errors import DataError
from econ.load.importers import normalise
from econ.load.importers.llm_prices import legacy_presets, tier_of
from econ.load.importers.llm_prices import normalise as llm_normalise

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "importers"
SLICE = FIXTURES / "llm_prices_slice.json"
PRESETS = FIXTURES / "llm_prices_presets_6d3a320.js"
COLS = [
    "provider",
    "model",
    "tier_min_prompt_tokens",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "declared_from_date",
    "declared_to_date",
]


@pytest.fixture(scope="module")
def sliced():
    return llm_normalise(json.loads(SLICE.read_text(encoding="utf-8")))


def test_every_model_is_imported_or_skipped_with_a_reason(sliced):
    assert (sliced.entries, sliced.imported, sliced.frame.height) == (10, 8, 10)
    assert sliced.skipped == {
        "image generation (not text generation)": 1,  # gpt-image-1
        "duplicate model id in its vendor (kept the first)": 1,  # xai lists grok-4-fast twice
    }


def test_the_luna_price_history_and_its_long_context_tier(sliced):
    """The file's own dated change: gpt-5.6 luna $1 / $6 (cached $0.10) until 2026-07-30, then $0.20 / $1.20; the
    >272k entry is the tier of gpt-5.6-luna (2x input, 1.5x output)."""
    luna = sliced.frame.filter(pl.col("model") == "gpt-5.6-luna").select(COLS).rows()
    assert luna == [
        ("openai", "gpt-5.6-luna", 0, 1.0, 6.0, 0.1, None, date(2026, 7, 30)),
        ("openai", "gpt-5.6-luna", 0, 0.2, 1.2, 0.02, date(2026, 7, 30), None),
        ("openai", "gpt-5.6-luna", 272000, 2.0, 9.0, 0.2, None, date(2026, 7, 30)),
        ("openai", "gpt-5.6-luna", 272000, 0.4, 1.8, 0.04, date(2026, 7, 30), None),
    ]


@pytest.mark.parametrize(
    ("model_id", "name", "expected"),
    [
        ("gpt-5.5-272k", "GPT-5.5 >272k", ("gpt-5.5", 272000)),
        ("gemini-2.5-pro--200k", "Gemini 2.5 Pro >200k", ("gemini-2.5-pro", 200000)),  # the old page's double dash
        ("grok-4-fast-128k", "Grok 4 Fast >128k", ("grok-4-fast", 128000)),
        ("kimi-k2-0905-preview", "Kimi K2 0905 Preview", ("kimi-k2-0905-preview", 0)),
        ("minimax-m1-80k", "MiniMax M1 80k", ("minimax-m1-80k", 0)),  # a context size in the name is no tier
        ("qwen-256k", "Qwen >256k", ("qwen", -1)),  # a tier of a model the file does not list
    ],
)
def test_tier_entries(model_id, name, expected):
    assert tier_of(model_id, name, {"gpt-5.5", "gemini-2.5-pro", "grok-4-fast"}) == expected


def test_the_published_historical_file_gives_the_same_rows(sliced):
    """historical-v1.json (llm-prices' build of its data/ files) is one record per price: the same rows."""
    records = []
    for vendor in json.loads(SLICE.read_text(encoding="utf-8")):
        for model in vendor["models"]:
            for p in model["price_history"]:
                records.append({"id": model["id"], "vendor": vendor["vendor"], "name": model["name"], **p})
    published = llm_normalise({"prices": records})
    assert published.frame.sort(COLS, nulls_last=True).equals(sliced.frame.sort(COLS, nulls_last=True))


def test_the_old_page_presets_with_deepseeks_scheduled_change():
    """The page at 6d3a320 (2025-10-06): 66 presets; DeepSeek's getPrice switches at 2025-02-08T16:00Z from $0.14 /
    $0.28 to $0.27 / $1.10 (https://api-docs.deepseek.com/news/news250120)."""
    files = legacy_presets(PRESETS.read_text(encoding="utf-8"))
    assert sum(len(f["models"]) for f in files) == 66
    result = llm_normalise(files)
    chat = result.frame.filter(pl.col("model") == "deepseek-chat").select(COLS[3:]).rows()
    assert chat == [(0.14, 0.28, None, None, date(2025, 2, 8)), (0.27, 1.1, None, date(2025, 2, 8), None)]
    pro = result.frame.filter(pl.col("model") == "gemini-2.5-pro").select(COLS[2:5]).rows()
    assert pro == [(0, 1.25, 10.0), (200000, 2.5, 15.0)]
    assert set(result.frame["provider"]) == {"anthropic", "bedrock", "deepseek", "google", "mistral", "openai", "xai"}


def test_a_page_without_presets_has_none():
    assert legacy_presets("<html>fetch('current-v1.json')</html>") == []


@pytest.mark.parametrize(
    ("start", "end"), [("someday", None), ("2025-03-01", "2025-03-01"), ("2025-03-02", "2025-03-01")]
)
def test_a_bad_date_skips_its_model_and_names_it(start, end):
    """An unreadable date, or a period that ends on or before its start (which the snapshot spec refuses, stopping a
    whole replay with 'please report it'), skips its model, named."""
    obj = {"vendor": "openai", "models": [{"id": "m", "name": "M", "price_history": [
        {"input": 1, "output": 2, "from_date": start, "to_date": end}]}]}  # fmt: skip
    result = llm_normalise(obj)
    assert result.skipped == {"invalid from_date or to_date": 1} and result.examples == {
        "invalid from_date or to_date": ["openai:m"]
    }


def test_a_wrong_shape_is_an_error(tmp_path):
    with pytest.raises(DataError, match="is not llm-prices data"):
        normalise("llm_prices", {"data": []}, tmp_path / "x.json")


def test_a_vendor_file_alone_is_refused_for_an_import(tmp_path):
    """An import is the whole price list at a moment: one vendor's file would end every other vendor's prices (a
    google.json import wrote 135 'drop' rows for openai, xai, anthropic …). The published list is taken."""
    vendor = {"vendor": "google", "models": [{"id": "gemini-x", "name": "Gemini X", "price_history": []}]}
    for partial in (vendor, [vendor]):
        with pytest.raises(DataError, match="is one or a few of llm-prices' vendor files, not its whole price list"):
            normalise("llm_prices", partial, tmp_path / "google.json")
    records = [
        {"id": model["id"], "vendor": f["vendor"], "name": model["name"], **p}
        for f in json.loads(SLICE.read_text(encoding="utf-8"))
        for model in f["models"]
        for p in model["price_history"]
    ]
    assert normalise("llm_prices", {"prices": records}, tmp_path / "historical-v1.json").imported > 0
