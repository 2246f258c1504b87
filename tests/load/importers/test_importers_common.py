"""Shared importer pieces: value parsing, JSON reading errors, the row frame (conversion, order, checks)."""

from __future__ import annotations

import math

import pytest

from econ.errors import DataError
from econ.load.importers.common import (
    DUPLICATE_ROW,
    INVALID,
    MAX_BELOW_TIER,
    ORPHAN_TIER,
    RowCollector,
    parse_price,
    parse_tokens,
    read_json,
)
from econ.load.tables import PRICE_SNAPSHOT


@pytest.mark.parametrize(
    "value, expected",
    [
        (3e-06, 3e-06),
        (0, 0.0),
        ("0.0000032", 3.2e-06),  # OpenRouter writes prices as strings
        (" 1e-7 ", 1e-07),
        ("", None),
        (None, None),
        (-1, INVALID),  # OpenRouter's router mark
        ("-1", INVALID),
        ("abc", INVALID),
        (True, INVALID),  # bool is an int in Python; not a price
        ({"search_context_size_low": 0.01}, INVALID),
        ([1e-6], INVALID),
        (float("nan"), INVALID),
        (float("inf"), INVALID),
        (8e-184, INVALID),  # a subnormal-scale price the snapshot loader refuses (below 1e-30 USD/MTok)
        (2e-36, 2e-36),  # 2e-30 USD/MTok: the smallest magnitude the loader keeps
    ],
)
def test_parse_price(value, expected):
    result = parse_price(value)
    assert (
        result is expected if expected is INVALID or expected is None else result == pytest.approx(expected, rel=1e-15)
    )


@pytest.mark.parametrize(
    "value, expected",
    [
        (128000, 128000),
        (128000.0, 128000),
        ("262144", 262144),
        (0, None),
        (-5, None),
        (1.5, None),
        ("big", None),
        (None, None),
        (True, None),
        (float("inf"), None),
    ],
)
def test_parse_tokens(value, expected):
    assert parse_tokens(value) == expected


def _frame(entries):
    rows = RowCollector()
    for model, prices, max_input in entries:
        rows.add_entry("acme", model, model, "https://example.org", prices, max_input_tokens=max_input)
    return rows, rows.frame()


def test_frame_converts_per_token_to_per_mtok_without_float_noise():
    # 2.5e-08 $/token (LiteLLM) is $0.025/MTok, but 2.5e-08 * 1e6 is 0.024999999999999998 in binary floating
    # point; 8.38323353293413e-06 is OpenRouter's image-token price for seedream (more digits than any price has).
    rows, frame = _frame(
        [("m", {("standard", 0): {"input": 2.5e-08, "output": 1.5e-05, "cache_read": 8.38323353293413e-06}}, None)]
    )
    assert 2.5e-08 * 1e6 != 0.025
    assert frame["input_usd_per_mtok"].to_list() == [0.025]
    assert frame["output_usd_per_mtok"].to_list() == [15.0]
    assert frame["cache_read_usd_per_mtok"].to_list() == [8.38323353293]
    assert frame.columns == [c.name for c in PRICE_SNAPSHOT.columns]


def test_frame_order_is_provider_model_variant_rank_tier():
    prices = {
        ("priority", 272000): {"input": 1.6e-05},
        ("standard", 272000): {"input": 8e-06},
        ("priority", 0): {"input": 8e-06},
        ("batch", 0): {"input": 2e-06},
        ("standard", 0): {"input": 4e-06},
    }
    _, frame = _frame([("b", prices, None), ("a", {("standard", 0): {"input": 1e-06}}, None)])
    assert list(zip(frame["model"], frame["variant"], frame["tier_min_prompt_tokens"])) == [
        ("a", "standard", 0),
        ("b", "standard", 0),
        ("b", "standard", 272000),
        ("b", "batch", 0),
        ("b", "priority", 0),
        ("b", "priority", 272000),
    ]


@pytest.mark.parametrize(
    "prices, max_input, rows_expected, dropped, ignored, max_expected",
    [
        # a tier without a base-tier price in its variant is dropped
        ({("standard", 0): {"input": 1e-06}, ("flex", 200000): {"input": 1e-06}}, None, 1, {ORPHAN_TIER: 1}, {}, None),
        # a tier at or above max_input_tokens contradicts it: the tier is kept, max_input_tokens left blank
        (
            {("standard", 0): {"input": 3e-06}, ("standard", 200000): {"input": 6e-06}},
            200000,
            2,
            {},
            {MAX_BELOW_TIER: 1},
            None,
        ),
        ({("standard", 0): {"input": 3e-06}, ("standard", 200000): {"input": 6e-06}}, 1000000, 2, {}, {}, 1000000),
        # a row without any price is not a row
        ({("standard", 0): {"input": 3e-06}, ("batch", 0): {}}, None, 1, {}, {}, None),
    ],
)
def test_add_entry_rules(prices, max_input, rows_expected, dropped, ignored, max_expected):
    rows, frame = _frame([("m", prices, max_input)])
    assert frame.height == rows_expected
    assert dict(rows.dropped) == dropped
    assert dict(rows.ignored) == ignored
    assert set(frame["max_input_tokens"].to_list()) == {max_expected}


def test_entry_with_only_orphan_tiers_gives_no_rows_and_counts_nothing():
    rows = RowCollector()
    assert rows.add_entry("acme", "m", "m", "u", {("standard", 200000): {"input": 1e-06}}, max_input_tokens=None) == 0
    assert not rows.dropped and rows.frame().height == 0


def test_duplicate_keys_across_entries_keep_the_first():
    rows, frame = _frame(
        [("m", {("standard", 0): {"input": 1e-06}}, None), ("m", {("standard", 0): {"input": 2e-06}}, None)]
    )
    assert frame["input_usd_per_mtok"].to_list() == [1.0]
    assert dict(rows.dropped) == {DUPLICATE_ROW: 1}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "x.json: the file is empty — is the file complete? download it again"),
        (b"  \n", "x.json: the file is empty — is the file complete? download it again"),
        (
            b'{\n  "a": {\n    "input_cost_per_token": 1e-06,\n',
            "x.json:4: column 1: invalid JSON (Expecting property name enclosed "
            "in double quotes) — is the file complete? download it again",
        ),
        (
            b'{\n  "a": {"input_cost_per_token": 1e-06}\n  "b": {}\n}',
            "x.json:3: column 3: invalid JSON (Expecting ',' delimiter) — is the file complete? download it again",
        ),
        (
            b'{\n "m\xe9": {}\n}',
            "x.json:2: is not valid UTF-8 (byte 0xe9) — JSON files are UTF-8; download the file again "
            "or save it as UTF-8",
        ),
    ],
)
def test_read_json_errors(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_bytes(content)
    with pytest.raises(DataError) as e:
        read_json(tmp_path / "x.json")
    assert str(e.value) == message


def test_read_json_accepts_a_bom(tmp_path):
    (tmp_path / "x.json").write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json(tmp_path / "x.json") == {"a": 1}


def test_read_json_missing_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match=r"^nope.json: does not exist — check the path of the file to import$"):
        read_json(tmp_path / "nope.json")


def test_nan_literal_in_json_is_read_then_rejected_as_a_price(tmp_path):
    (tmp_path / "x.json").write_text('{"a": NaN}', encoding="utf-8")
    value = read_json(tmp_path / "x.json")["a"]
    assert math.isnan(value) and parse_price(value) is INVALID
