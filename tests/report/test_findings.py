"""The findings pages open with (econ.report.findings), read from the shipped data's database."""

from __future__ import annotations

from datetime import date

import duckdb

from econ.report import findings
from econ.report.page import SiteContext

ROW = "source, provider, model, variant, tier_min_prompt_tokens, component"


def test_the_what_changed_findings_name_two_moves_not_one_twice(real_db):
    """On the shipped data the largest first-party move of the newest snapshot (xai's grok-code-fast cache read,
    0.02 -> 0.2 USD/MTok, 10x) was also the largest move of at most 10x, and the page said the same move twice; the
    second finding now names the largest other move."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        ctx = SiteContext(con=con, as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30))
        said = [f for f in findings.what_changed(ctx) if f.table == "price_changes"]
        first, second = (con.sql(f"select {ROW} from price_changes where {f.where}").fetchall() for f in said[:2])
    assert "first-party" in said[0].html and "at most 10×" in said[1].html
    assert len(first) == len(second) == 1 and first != second, (first, second)
