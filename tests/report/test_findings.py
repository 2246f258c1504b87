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


def test_the_coverage_finding_names_the_group_its_bands_covered_least_and_is_weak_below_85_percent(real_db, tmp_path):
    """The bands cover ~90% of the held-out runs overall but not of every model or chip (on the shipped data
    Llama-3.1-8B's TTFT held out by chip, 70%): the sentence names the least-covered engine, chip or model of 100 runs
    or more and is weak while that group is below the 85% the issue asks of a band; with every group raised to 90%
    in a copy of the database, the same sentence is calibrated and says the group is within."""
    import shutil

    least_sql = (
        "select min(band_coverage_frac) from calibration_errors where n_points >= 100 and basis in ('model_out', "
        "'chip_out') and target in ('tpot', 'ttft') and group_kind in ('engine', 'chip', 'model')"
    )

    def coverage_finding(con):
        ctx = SiteContext(con=con, as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30))
        (f,) = [f for f in findings.validation(ctx) if "p90 bands econ prints" in f.html]
        return f

    with duckdb.connect(str(real_db), read_only=True) as con:
        least = con.sql(least_sql).fetchall()[0][0]
        f = coverage_finding(con)
    assert f.status == ("weak" if least < 0.85 else "calibrated")
    assert f"{least:.0%}" in f.html and ("below the 85%" in f.html) == (least < 0.85)

    db = shutil.copy(real_db, tmp_path / "econ.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("update calibration_errors set band_coverage_frac = greatest(band_coverage_frac, 0.9)")
        f = coverage_finding(con)
    assert f.status == "calibrated" and "within the 85%" in f.html and "below" not in f.html and "90%" in f.html
