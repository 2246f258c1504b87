"""The bill in pieces: a workload billed a few requests at a time is the same bill as in one piece."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from econ.analyses import billing
from econ.analyses.cost_command import read_billing


def _workload(n: int) -> pl.DataFrame:
    """Prompts on both sides of the 128k and 272k tiers, cache reads and writes, and times in and out of DeepSeek's
    off-peak hours (data/billing_windows.csv)."""
    start = datetime(2026, 12, 1, tzinfo=UTC)
    return pl.DataFrame(
        {
            "request": range(n),
            "input_tokens": [1_000 + 13_001 * i for i in range(n)],
            "cached_input_tokens": [(i * 5_003) % 40_000 for i in range(n)],
            "cache_write_tokens": [(i * 701) % 3_000 for i in range(n)],
            "output_tokens": [100 + 37 * i for i in range(n)],
            "cache_ttl": ["5m" if i % 3 else "1h" for i in range(n)],
            "cache_storage_hours": [0.0] * n,
            "requests": [1 + i % 4 for i in range(n)],
            "at": [None if i % 5 == 0 else start + timedelta(minutes=97 * i) for i in range(n)],
        },
        schema_overrides={"at": pl.Datetime("us", "UTC")},
    )


@pytest.mark.parametrize("model", ["deepseek-v4-pro", "gpt-5.6-luna", "claude-sonnet-4.5"])
def test_a_workload_billed_in_pieces_is_the_bill_in_one_piece(real_db, monkeypatch, model):
    tables = read_billing(real_db).on(date(2026, 11, 30))
    requests = _workload(40)
    whole = billing.bill(tables, model=model, requests=requests)
    whole_each = billing.bill(tables, model=model, requests=requests, by_request=True)
    monkeypatch.setattr(billing, "CHUNK_REQUESTS", 7)
    pieces = billing.bill(tables, model=model, requests=requests)
    pieces_each = billing.bill(tables, model=model, requests=requests, by_request=True)
    assert whole.schedules.height > 1 and whole.schedules["requests"].max() == requests["requests"].sum()
    for a, b in ((whole, pieces), (whole_each, pieces_each)):
        key = ["schedule", *(["request"] if "request" in a.schedules.columns else [])]
        # sums added in another order: equal to rounding; everything else exactly
        assert_frame_equal(a.schedules.sort(key), b.schedules.sort(key), rel_tol=1e-12, abs_tol=0.0)
        assert a.notes == b.notes


def _alone(ask: billing.Ask) -> list[dict]:
    """:func:`econ.analyses.billing.bill_each` of one ask through :func:`~econ.analyses.billing.bill` (what
    ``econ cost`` runs): the holding schedule of the seller's main offer, per request."""
    try:
        result = billing.bill(
            ask.tables,
            model=ask.model,
            requests=ask.requests,
            provider=ask.provider,
            source=ask.source,
            variant=ask.variant,
            by_request=True,
        )
    except billing.EconError as e:
        return [dict.fromkeys(billing.BILLED) | {"refusal": str(e)} for _ in range(ask.requests.height)]
    held = result.schedules.filter(pl.col("offer_rank") == 1)
    main = held.sort(pl.col("offer").str.split("|").list.get(1) != "", "offer")["offer"][0]
    by_request = {r["request"]: r for r in held.filter(pl.col("offer") == main).iter_rows(named=True)}
    return [{k: by_request[i][k] for k in billing.BILLED} for i in ask.requests["request"]]


def test_bills_asked_together_are_each_the_bill_alone(real_db):
    """The worked examples' sellers on their dates (time-of-day windows, tiers, retirements that refuse), a misspelt
    seller and a workload of forty requests, billed in one pass: each ask's bill is the one ``econ cost`` gives it
    alone, request by request, exactly (no ask sees another's rows, dates or requests)."""
    from econ.analyses.billing_example_bills import _request
    from econ.db import connect_read_only

    billing_tables = read_billing(real_db)
    with connect_read_only(real_db) as con:
        examples = con.sql("select * from billing_examples order by example_id").pl()
    asks = [
        billing.Ask(
            billing_tables.on(row["as_of"]),
            row["provider"],
            row["model"],
            row["variant"],
            _request(row).with_columns(pl.lit(0, pl.Int64).alias("request")),
            row["source"],
        )
        for row in examples.iter_rows(named=True)
    ]
    today = billing_tables.on(date(2026, 11, 30))
    asks += [
        billing.Ask(today, "anthropik", "claude-sonnet-4.5", "standard", asks[0].requests),
        billing.Ask(today, "deepseek", "deepseek-v4-pro", "standard", _workload(40)),
    ]
    together = billing.bill_asks(asks)
    alone = [_alone(a) for a in asks]
    assert together == alone
    assert any(r["refusal"] for bills in together for r in bills)
    assert sum(r["cost_usd"] is not None for bills in together for r in bills) > 30
