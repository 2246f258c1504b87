"""Shared fixtures: a copy of the tiny fixture data set, and a database built from it."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_DATA = FIXTURES / "data"
REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EXTERNAL = SHARED / "external"
REFERENCE = SHARED / "reference"
AS_OF = date(2026, 11, 30)


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    """A writable copy of tests/fixtures/data at ./data, with the working directory at its parent.

    Error messages name files relative to the working directory, so tests can pin
    ``data/prices.csv:5: …`` exactly.
    """
    target = tmp_path / "data"
    shutil.copytree(FIXTURE_DATA, target)
    monkeypatch.chdir(tmp_path)
    return target


@pytest.fixture(scope="session")
def fixture_db(tmp_path_factory) -> Path:
    """The fixture data set built once into a database (no report, no cache)."""
    from econ.build import build

    db = tmp_path_factory.mktemp("db") / "econ.duckdb"
    build(data_dir=FIXTURE_DATA, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
    return db
