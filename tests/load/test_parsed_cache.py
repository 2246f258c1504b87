"""Parsed input files in the build cache: the same frames as parsing, a changed file parsed again, a bad entry or a
bad file never trusted."""

from __future__ import annotations

import pytest

from econ.errors import DataError, EconNotice
from econ.load import parsed_cache
from econ.load.loader import load_all
from tests.load.test_loader import row, snap


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name
        assert a[name].schema == b[name].schema, name


def _entries(cache):
    return sorted(p.parent.parent.name for p in (cache / parsed_cache.FOLDER).rglob(parsed_cache.FRAME))


def test_frames_read_back_from_the_cache_are_the_parsed_ones(data_dir, tmp_path, monkeypatch):
    """Every input table and snapshot, read a second time from the cache, equals the parse (values, dtypes, the
    file and line columns errors name); the second read parses no CSV at all."""
    cache = tmp_path / "cache"
    snap(data_dir, "litellm_2025-09-01.csv", row("kept", 1, 5), row("changed", 1.25, 10, 0.3125))
    snap(data_dir, "litellm_2026-03-01.csv", row("kept", 1, 5), row("changed", 1.25, 10, 0.125))
    parsed = load_all(data_dir)
    first = load_all(data_dir, cache_dir=cache, salt="s")
    assert "prices.csv" in _entries(cache) and any(e.startswith("litellm_") for e in _entries(cache))

    def no_parsing(*args, **kwargs):
        raise AssertionError("a CSV was parsed although its frame is cached")

    monkeypatch.setattr(parsed_cache, "read_table", no_parsing)
    second = load_all(data_dir, cache_dir=cache, salt="s")
    _same(parsed, first)
    _same(parsed, second)


def test_a_changed_file_or_other_code_is_parsed_again(data_dir, tmp_path):
    cache = tmp_path / "cache"
    load_all(data_dir, cache_dir=cache, salt="s")
    hardware = data_dir / "hardware.csv"
    hardware.write_text(hardware.read_text().replace(",700,https://epoch.ai", ",701,https://epoch.ai", 1))
    changed = load_all(data_dir, cache_dir=cache, salt="s")["hardware"]
    assert changed.filter(chip="H100")["tdp_w"].to_list() == [701]
    assert len([e for e in _entries(cache) if e == "hardware.csv"]) == 1  # one entry per file: the newest
    calls = []
    original = parsed_cache.read_table

    def counting(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    parsed_cache.read_table = counting
    try:
        load_all(data_dir, cache_dir=cache, salt="other code")
    finally:
        parsed_cache.read_table = original
    assert len(calls) >= len(list(data_dir.glob("*.csv")))  # a new salt reads every file again


def test_an_altered_entry_is_not_trusted(data_dir, tmp_path):
    cache = tmp_path / "cache"
    parsed = load_all(data_dir)
    load_all(data_dir, cache_dir=cache, salt="s")
    frame = next(
        p for p in (cache / parsed_cache.FOLDER).rglob(parsed_cache.FRAME) if p.parent.parent.name == "models.csv"
    )
    frame.write_bytes(frame.read_bytes()[:-100])
    with pytest.warns(EconNotice, match="cached parse of .*models.csv failed its check"):
        again = load_all(data_dir, cache_dir=cache, salt="s")
    _same(parsed, again)


def test_a_file_that_fails_its_checks_is_never_stored_and_still_fails(data_dir, tmp_path):
    cache = tmp_path / "cache"
    hardware = data_dir / "hardware.csv"
    hardware.write_text(hardware.read_text() + "not,a,row\n")
    for _ in range(2):
        with pytest.raises(DataError):
            load_all(data_dir, cache_dir=cache, salt="s")
    assert "hardware.csv" not in _entries(cache)
