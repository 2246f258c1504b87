"""The databases the analysis tests read: the fixture data (``db``, the session's ``fixture_db``) and the shipped
data (``real_db``), each built once with every analysis."""

from __future__ import annotations

from pathlib import Path

import pytest

from econ.build import build
from tests.analyses.helpers import AS_OF, FIXTURE_DATA


@pytest.fixture
def db(fixture_db) -> Path:
    return fixture_db


@pytest.fixture(scope="session")
def real_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("real") / "econ.duckdb"
    build(data_dir=FIXTURE_DATA.parents[2] / "data", db_path=path, cache_dir=None, reports_dir=None, as_of=AS_OF)
    return path
