"""The rows a bill reads: the rows in effect on a date are the ones the price_current view gives, and a model is
found by any spelling of its canonical name."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from econ.analyses.billing_rows import resolve, seller_rows
from econ.analyses.cost_command import read_billing
from econ.errors import EconError


@pytest.mark.parametrize("day", [date(2025, 3, 1), date(2026, 7, 29), date(2026, 7, 30), date(2026, 11, 30)])
def test_the_rows_in_effect_on_a_day_are_price_currents(real_db, day):
    """BillingTables.on_each_date (polars, what econ cost and the worked examples bill) against the SQL view users
    query."""
    data = read_billing(real_db)
    with duckdb.connect(str(real_db), read_only=True) as con:
        con.execute(f"set variable as_of = date '{day.isoformat()}'")
        view = con.sql("select source, provider, model, variant, tier_min_prompt_tokens, from_date from price_current")
        expected = sorted(view.fetchall(), key=repr)
    rows = data.on(day).prices.select("source", "provider", "model", "variant", "tier_min_prompt_tokens", "from_date")
    assert sorted(rows.rows(), key=repr) == expected and len(expected) > 20


def test_a_model_is_found_by_any_spelling_and_a_wrong_seller_is_named(real_db):
    tables = read_billing(real_db).on(date(2026, 11, 30))
    (a, name_a), (b, name_b) = resolve(tables, "claude-sonnet-4-5"), resolve(tables, "claude-sonnet-4.5")
    assert name_a == name_b == "claude-sonnet-4.5" and a.height == b.height > 0
    with pytest.raises(EconError, match="opena1 sells no gpt-5.4 on 2026-11-30") as e:
        seller_rows(tables, "gpt-5.4", "opena1", None, "standard")
    assert "did you mean openai" in e.value.hint
