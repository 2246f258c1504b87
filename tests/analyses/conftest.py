"""``db``: the fixture data built once with every analysis (the session's ``fixture_db``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def db(fixture_db) -> Path:
    return fixture_db


@pytest.fixture(scope="session")
def tables_at(real_db):
    """What a bill reads from the shipped data on a date (``price_history`` read once; the billing tables)."""
    from datetime import date

    from econ.analyses.billing_rows import BillingTables, prices_at
    from econ.db import connect_read_only

    with connect_read_only(real_db) as con:
        history = con.sql("select * from price_history").pl()
        rules = con.sql("select * from billing_rules").pl()
        windows = con.sql("select * from billing_windows").pl()
        providers = con.sql("select provider, seller from providers").pl()
    cache: dict = {}

    def at(day) -> BillingTables:
        day = date.fromisoformat(day) if isinstance(day, str) else day
        if day not in cache:
            cache[day] = BillingTables(prices_at(history, day), rules, windows, providers, day)
        return cache[day]

    return at
