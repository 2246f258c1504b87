"""``db``: the fixture data built once with every analysis (the session's ``fixture_db``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db(fixture_db) -> Path:
    return fixture_db
