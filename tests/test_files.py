"""Folder swap and SOURCE_DATE_EPOCH."""

from __future__ import annotations

from datetime import date

import pytest

from econ.errors import EconError
from econ.files import source_date


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
