"""The findings the Validation, Serving and Fleet pages open with (econ.report.serving_findings), read from the shipped
data's database."""

from __future__ import annotations

import re
import shutil
from datetime import date

import duckdb

from econ.report import serving_findings
from econ.report.page import SiteContext


def test_the_coverage_finding_names_the_group_its_bands_covered_least_and_is_weak_below_85_percent(real_db, tmp_path):
    """The bands cover ~90% of the held-out runs overall but not of every model or chip (on the shipped data
    Llama-3.1-8B's TTFT held out by chip, 70%): the sentence names the least-covered engine, chip or model of 100 runs
    or more and is weak while that group is below the 85% the issue asks of a band; with every group raised to 90%
    in a copy of the database, the same sentence is calibrated and says the group is within."""
    least_sql = (
        "select min(band_coverage_frac) from calibration_errors where n_points >= 100 and basis in ('model_out', "
        "'chip_out') and target in ('tpot', 'ttft') and group_kind in ('engine', 'chip', 'model')"
    )

    def coverage_finding(con):
        ctx = SiteContext(con=con, as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30))
        (f,) = [f for f in serving_findings.validation(ctx) if "p90 bands econ prints" in f.html]
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


def test_the_bound_finding_says_how_many_runs_it_holds_for_and_never_rounds_a_shortfall_up(real_db, tmp_path):
    """The roofline is labelled a bound, so its finding says what share of the measured runs it holds for (on the
    shipped data 98.4%: 42 of 2,640 runs beat the bound of the configuration their row states), rounded down: a bound
    that 1 run in 2,500 beats reads 99.9%, not 100%; only a bound every run respects reads 'every run'."""

    def bound_finding(con):
        ctx = SiteContext(con=con, as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30))
        (f,) = [f for f in serving_findings.validation(ctx) if "only as a bound" in f.html]
        return f, re.sub(r"<[^>]+>", "", str(f.html))  # the sentence as read, without the numbers' spans

    where = "basis = 'bound' and target = 'tpot' and group_kind = 'overall'"
    with duckdb.connect(str(real_db), read_only=True) as con:
        holds = con.sql(f"select band_coverage_frac from calibration_errors where {where}").fetchall()[0][0]
        f, text = bound_finding(con)
    assert f.status == "bound" and holds < 1.0
    assert f"it holds for {int(holds * 1000) / 10:.1f}% of the runs" in text and "every run" not in text

    db = shutil.copy(real_db, tmp_path / "econ.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute(f"update calibration_errors set band_coverage_frac = 0.9996 where {where}")
        assert "it holds for 99.9% of the runs" in bound_finding(con)[1]
        con.execute(f"update calibration_errors set band_coverage_frac = 1.0 where {where}")
        text = bound_finding(con)[1]
    assert "every run measures slower than it" in text and "holds for" not in text
