"""Conformance of ``econ cost`` with the sellers' own pages: every case of tests/fixtures/billing_cases/cases.csv
(a request, a seller, the bill by hand from the page quoted in pages.csv, the arithmetic) billed on the shipped data
by the function ``econ cost`` runs, to 1e-9 relative, or refused with the reason the page gives.

The cases are written by tests/fixtures/billing_cases/write_cases.py from the pages' rates and words alone (it imports
nothing from econ). The database is the session's ``real_db``; prices at each case's date come from ``price_history``
(read once), as ``price_current`` gives them.
"""

from __future__ import annotations

import csv
from itertools import groupby
from pathlib import Path

import polars as pl
import pytest

from econ.analyses.billing import bill_each
from econ.analyses.cost_command import parse_at, single_request

CASES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "billing_cases"
CASES = list(csv.DictReader((CASES_DIR / "cases.csv").read_text(encoding="utf-8").splitlines()))
PAGES = {r["page_id"]: r for r in csv.DictReader((CASES_DIR / "pages.csv").read_text(encoding="utf-8").splitlines())}
FIRST_PARTY = {"anthropic", "google", "openai", "xai", "deepseek", "alibaba", "minimax", "moonshot", "zai"}
"""The sellers data/prices.csv prices first-party (hand-kept rows)."""
REFUSALS = {"limit": "above the seller's limit", "retired": "retired"}


def request(case: dict, number: int) -> pl.DataFrame:
    return single_request(
        input_tokens=int(case["input_tokens"]),
        output_tokens=int(case["output_tokens"]),
        cached_input_tokens=int(case["cached_input_tokens"]),
        cache_write_tokens=int(case["cache_write_tokens"]),
        cache_ttl=case["cache_ttl"],
        at=parse_at(case["at"] or None),
    ).with_columns(pl.lit(number, pl.Int64).alias("request"))


@pytest.fixture(scope="module")
def bills(tables_at) -> dict[str, dict]:
    """Every case billed: one bill per date, seller, model and variant, its cases as separate requests."""
    scope = lambda c: (c["as_of"], c["provider"], c["model"], c["variant"])  # noqa: E731
    out = {}
    for (as_of, provider, model, variant), group in groupby(sorted(CASES, key=scope), key=scope):
        group = list(group)
        requests = pl.concat(request(c, i) for i, c in enumerate(group))
        got = bill_each(tables_at(as_of), provider=provider, model=model, variant=variant, requests=requests)
        out |= {c["case_id"]: g for c, g in zip(group, got)}
    return out


def test_the_suite_covers_every_first_party_seller_rule_and_threshold_position():
    assert len(CASES) >= 150 and {c["page_id"] for c in CASES} <= set(PAGES)
    assert FIRST_PARTY <= {c["provider"] for c in CASES}
    classes = {c["class"] for c in CASES}
    for position in ("just below", "just above", "far above"):
        assert f"tier: {position}" in classes
    assert {"tier: at (exceeds: base)", "tier: at (reaches)"} <= classes
    for needed in (
        "batch x 1h write",
        "cache write billed as input (0 in the map)",
        "single write price, 1h asked",
        "batch: cache price wins",
        "time: off-peak",
        "retired: billed as grok-4.3",
        "retired",
        "limit: just above",
        "date: a price taking effect on the as-of date",
    ):
        assert any(c.startswith(needed) for c in classes), needed


@pytest.mark.parametrize("case", CASES, ids=[c["case_id"] for c in CASES])
def test_econ_bills_the_case_as_the_page_says(bills, case):
    got = bills[case["case_id"]]
    if case["expected_refusal"]:
        assert got["cost_usd"] is None and REFUSALS[case["expected_refusal"]] in (got["refusal"] or ""), got
    else:
        assert got["refusal"] is None, got
        assert got["cost_usd"] == pytest.approx(float(case["expected_usd"]), rel=1e-9, abs=1e-12), case["arithmetic"]


HELD_OUT = list(csv.DictReader((CASES_DIR / "held_out.csv").read_text(encoding="utf-8").splitlines()))


def test_held_out_requests_are_billed_to_the_cent_or_refused_for_the_right_reason(tables_at):
    """The issue's check: >= 99% of held-out cited requests (other models and sizes, written after the rules were
    frozen) billed to the cent or refused with the right reason. Measured once before any fix: 80 of 81 (98.8%),
    the miss a data error (grok-4.20-0309-reasoning's 1M limit where xAI lists 2M), since fixed."""
    scope = lambda c: (c["as_of"], c["provider"], c["model"], c["variant"])  # noqa: E731
    misses = []
    for (as_of, provider, model, variant), group in groupby(sorted(HELD_OUT, key=scope), key=scope):
        group = list(group)
        requests = pl.concat(request(c, i) for i, c in enumerate(group))
        got = bill_each(tables_at(as_of), provider=provider, model=model, variant=variant, requests=requests)
        for case, bill in zip(group, got):
            if case["expected_refusal"]:
                right = bill["cost_usd"] is None and REFUSALS[case["expected_refusal"]] in (bill["refusal"] or "")
            else:
                right = bill["cost_usd"] is not None and abs(bill["cost_usd"] - float(case["expected_usd"])) < 0.005
            if not right:
                misses.append((case["case_id"], case["class"], case["expected_usd"], bill))
    assert len(HELD_OUT) >= 80 and len(misses) <= 0.01 * len(HELD_OUT), misses
