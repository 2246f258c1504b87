"""genai-prices' data file -> price rows: values checked against the providers' published prices and the file."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from econ.errors import DataError
from econ.load.importers import import_file, normalise
from econ.load.importers.genai_prices import normalise as genai_normalise
from econ.load.price_tables import DATED_SNAPSHOT
from econ.load.spec import read_table

REPO = Path(__file__).resolve().parents[3]
SLICE = REPO / "tests" / "fixtures" / "importers" / "genai_prices_slice.json"
COLS = [
    "tier_min_prompt_tokens",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "declared_from_date",
    "declared_to_date",
]


@pytest.fixture(scope="module")
def sliced():
    return genai_normalise(json.loads(SLICE.read_text(encoding="utf-8")))


def rows_of(frame: pl.DataFrame, provider: str, model: str) -> list[tuple]:
    return frame.filter((pl.col("provider") == provider) & (pl.col("model") == model)).select(COLS).rows()


def test_every_entry_is_imported_or_skipped_with_a_reason(sliced):
    assert (sliced.entries, sliced.imported, sliced.frame.height) == (11, 9, 17)
    assert sliced.skipped == {
        "no per-token text price": 1,  # azure mai-ds-r1:free: "prices": {}
        "no output price (embedding, rerank or other input-only model)": 1,  # voyage-3
    }
    assert sliced.ignored_keys["off-peak price (outside a time-of-day window)"] == 1


def test_tiered_and_dated_prices_are_anthropics_published_ones(sliced):
    """Claude Opus 4.6 (https://platform.claude.com/docs/en/about-claude/pricing): $5 / $25, cache read $0.50, 5-minute
    write $6.25, 1-hour write $10; above 200k prompt tokens $10 / $37.50 until the long-context premium ended on
    2026-03-13, the file's own dated change."""
    assert rows_of(sliced.frame, "anthropic", "claude-opus-4-6") == [
        (0, 5.0, 25.0, 0.5, 6.25, 10.0, None, date(2026, 3, 13)),
        (0, 5.0, 25.0, 0.5, 6.25, 10.0, date(2026, 3, 13), None),
        (200000, 10.0, 37.5, 1.0, 12.5, 20.0, None, date(2026, 3, 13)),
    ]


def test_a_price_change_the_file_dates_ahead(sliced):
    """OpenAI cut gpt-5.6 luna by 80% on 2026-07-30: the file keeps both prices, split at that day, each tier too."""
    assert rows_of(sliced.frame, "openai", "gpt-5.6-luna") == [
        (0, 1.0, 6.0, 0.1, 1.25, None, None, date(2026, 7, 30)),
        (0, 0.2, 1.2, 0.02, 0.25, None, date(2026, 7, 30), None),
        (272000, 2.0, 9.0, 0.2, 2.5, None, None, date(2026, 7, 30)),
        (272000, 0.4, 1.8, 0.04, 0.5, None, date(2026, 7, 30), None),
    ]


def test_deepseek_daytime_window_is_the_standard_price(sliced):
    """The file files DeepSeek's standard price (https://api-docs.deepseek.com/quick_start/pricing: $0.27 / $1.10,
    cache hit $0.07) as a 00:30-16:30 UTC window over the off-peak half price."""
    assert rows_of(sliced.frame, "deepseek", "deepseek-chat") == [(0, 0.27, 1.1, 0.07, None, None, None, None)]


def test_providers_are_named_as_econ_names_sellers_and_keys_keep_their_rule(sliced):
    frame = sliced.frame
    assert set(frame["provider"]) == {"anthropic", "deepseek", "google", "huggingface_novita", "openai", "xai"}
    hf = frame.filter(pl.col("provider") == "huggingface_novita").row(0, named=True)
    assert (hf["model"], hf["hugging_face_id"], hf["source_key"]) == (
        "MiniMaxAI/MiniMax-M2",
        "MiniMaxAI/MiniMax-M2",
        "huggingface_novita:MiniMaxAI/MiniMax-M2",
    )
    rule = json.loads(frame.filter(pl.col("model") == "grok-4.3")["match_rule"][0])
    assert {"equals": "grok-4.3"} in rule["or"]
    assert frame.filter(pl.col("model") == "gemini-2.5-pro")["source_url"][0] == (
        "https://ai.google.dev/gemini-api/docs/pricing"
    )


def test_rows_pass_the_dated_snapshot_spec(sliced, tmp_path):
    path = tmp_path / "s.csv"
    path.write_text(sliced.frame.write_csv())
    assert read_table(path, DATED_SNAPSHOT).height == sliced.frame.height


@pytest.mark.parametrize(
    ("prices", "reason"),
    [
        ({"input_mtok": -1, "output_mtok": 2}, "invalid price value"),
        ({"input_mtok": "x", "output_mtok": 2}, "invalid price value"),
        ({"input_mtok": 1e9, "output_mtok": 2}, "price above 100000 USD/MTok"),
        (
            [{"prices": {"input_mtok": 1, "output_mtok": 2}}, {"constraint": {"start_date": "soon"}, "prices": {}}],
            "invalid start_date in a price constraint",
        ),  # fmt: skip
    ],
)
def test_a_bad_value_skips_its_entry_and_names_it(prices, reason):
    obj = [{"id": "acme", "models": [{"id": "m1", "match": {"equals": "m1"}, "prices": prices}]}]
    result = genai_normalise(obj)
    assert result.imported == 0
    assert [k for k in result.skipped if k.startswith(reason)]
    assert list(result.examples.values()) == [["acme:m1"]]


@pytest.mark.parametrize(
    ("obj", "found"), [({"models": []}, "found an object)"), ([1, 2], "found a list whose items are not providers)")]
)
def test_a_wrong_shape_says_what_the_file_holds(tmp_path, obj, found):
    with pytest.raises(DataError, match=re.escape(found)):
        normalise("genai_prices", obj, tmp_path / "data.json")


def test_a_wrong_shape_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"data": []}))
    with pytest.raises(DataError, match="is not a genai-prices data file"):
        normalise("genai_prices", json.loads(path.read_text()), path)


def test_import_adds_the_newest_snapshot_of_the_history(data_dir):
    result = import_file("genai_prices", SLICE, data_dir=data_dir, as_of=date(2026, 8, 22))
    assert (result.status, result.as_of, result.rows) == ("new", date(2026, 8, 22), 17)
    commits = (data_dir / "history" / "genai_prices_commits.csv").read_text().splitlines()
    assert commits[1].startswith("0,sha256:") and ",2026-08-22T23:59:59Z,2026-08-22,17," in commits[1]
    again = import_file("genai_prices", SLICE, data_dir=data_dir, as_of=date(2026, 8, 23))
    assert (again.status, again.as_of) == ("unchanged", date(2026, 8, 22))


KILLED_IMPORT = """
import os, signal, sys
from pathlib import Path
from econ.files import staging_path
from econ.lock import Locks

data = Path(sys.argv[1])
target = data / "history" / "genai_prices_changes.csv"
with Locks(command="econ import") as locks:
    locks.acquire([data])
    staged = staging_path(target)
    locks.record(staged, output=data)
    staged.write_text("half of a history")
    print(staged, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_an_import_removes_what_a_killed_import_staged_in_the_history_and_nothing_else(data_dir):
    """A run that died after staging a history file recorded it in the data folder's lock: the next import removes
    it; a file that only looks like a staging copy (no run recorded it) is the user's and stays."""
    import subprocess
    import sys

    (data_dir / "history").mkdir(exist_ok=True)
    lookalike = data_dir / "history" / ".genai_prices_changes.csv.stage-1-0123abcd"
    lookalike.write_text("the user's")
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IMPORT, str(data_dir)],
        env={"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    staged = Path(killed.stdout.strip())
    assert killed.returncode == -9 and staged.is_file(), killed.stderr
    assert import_file("genai_prices", SLICE, data_dir=data_dir, as_of=date(2026, 8, 22)).status == "new"
    assert not staged.exists() and lookalike.read_text() == "the user's"
    assert sorted(p.name for p in (data_dir / "history").iterdir() if not p.name.startswith(".")) == [
        "genai_prices_changes.csv",
        "genai_prices_commits.csv",
    ]
