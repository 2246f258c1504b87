"""The findings the Validation, Serving and Fleet pages open with (econ.report.serving_findings), read from the shipped
data's database."""

from __future__ import annotations

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
