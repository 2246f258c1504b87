"""econ's bill against pydantic's genai-prices (a test dependency, its bundled data: no network) on every first-party
model both price (hand-kept rows on the build date, and the models the billing rules retire): plain requests, cache
reads, 5-minute and 1-hour writes, batch where genai-prices prices it, and prompts at and around every tier threshold
either tool knows. Each disagreement is listed in tests/fixtures/genai_prices/disagreements.csv with the page that
says who is right; the test fails on a new disagreement, on a listed one that went away, and on a changed bill."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from tests.analyses.genai_crosscheck import comparisons, disagreements

LISTED = Path(__file__).resolve().parents[1] / "fixtures" / "genai_prices" / "disagreements.csv"
KEY = ["provider", "model", "variant", "shape"]


@pytest.fixture(scope="module")
def compared(tables_at) -> pl.DataFrame:
    pytest.importorskip("genai_prices")
    return comparisons(tables_at(date(2026, 11, 30)))


def test_both_tools_bill_every_first_party_seller_they_share(compared):
    sellers = set(compared["provider"])
    assert {"anthropic", "google", "openai", "xai", "deepseek", "minimax", "moonshot", "zai"} <= sellers
    assert compared.select("provider", "model").unique().height >= 40 and compared.height >= 300
    assert {"batch"} <= set(compared["variant"]) and any(s.startswith("prompt 200,000") for s in compared["shape"])


def test_every_disagreement_is_listed_with_who_is_right(compared):
    listed = pl.read_csv(LISTED, schema_overrides={"econ_usd": pl.Float64, "genai_usd": pl.Float64})
    found = disagreements(compared)
    assert sorted(found.select(KEY).rows()) == sorted(listed.select(KEY).rows())
    both = found.join(listed, on=KEY, suffix="_listed")
    assert both.height == listed.height
    for r in both.iter_rows(named=True):  # the bills are the listed ones (a changed bill is a new finding)
        assert r["genai_usd"] == pytest.approx(r["genai_usd_listed"], rel=1e-9)
        assert (r["econ_usd"] is None) == (r["econ_usd_listed"] is None)
        if r["econ_usd"] is not None:
            assert r["econ_usd"] == pytest.approx(r["econ_usd_listed"], rel=1e-9)
    rows = list(csv.DictReader(LISTED.read_text(encoding="utf-8").splitlines()))
    assert all(
        r["right"] in ("econ", "genai-prices") and r["source_url"].startswith("https://") and r["quote"] for r in rows
    )
    assert not [r for r in rows if r["right"] == "genai-prices"], "econ is wrong where genai-prices is right: fix it"
