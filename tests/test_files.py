"""Folder swap and SOURCE_DATE_EPOCH."""

from __future__ import annotations

from datetime import date

import pytest

from econ.errors import EconError
from econ.files import source_date, swap_in


def test_swap_in_replaces_the_folder_and_leaves_nothing_behind(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "old.html").write_text("old")
    (tmp_path / "staged").mkdir()
    (tmp_path / "staged" / "new.html").write_text("new")
    swap_in(tmp_path / "staged", tmp_path / "reports")
    assert [p.name for p in tmp_path.iterdir()] == ["reports"]
    assert [p.name for p in (tmp_path / "reports").iterdir()] == ["new.html"]


def test_swap_in_without_a_previous_folder(tmp_path):
    (tmp_path / "staged").mkdir()
    swap_in(tmp_path / "staged", tmp_path / "reports")
    assert (tmp_path / "reports").is_dir() and not (tmp_path / "staged").exists()


@pytest.mark.parametrize(
    ("raw", "expected"), [(None, None), ("", None), ("1796083200", date(2026, 12, 1)), ("0", date(1970, 1, 1))]
)
def test_source_date(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    else:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", raw)
    assert source_date() == expected


def test_bad_source_date_epoch(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "tomorrow")
    with pytest.raises(EconError, match="SOURCE_DATE_EPOCH='tomorrow' is not a Unix time"):
        source_date()
