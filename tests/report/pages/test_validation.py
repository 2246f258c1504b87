"""Validation page: what a reader sees, checked against the tables it reads."""

from __future__ import annotations

import shutil
from datetime import date

import duckdb

from econ.report.page import SiteContext
from econ.report.pages import validation


def test_the_lead_states_each_targets_own_count_of_repeated_runs(real_db, tmp_path):
    """The repeatability sentence names how many runs each of its two spreads is over (TPOT and TTFT are measured on
    different sets of repeated runs): it printed the TPOT count for both. The shipped data now has 528 of each, so the
    copy read here gives TTFT one run more, and the sentence must follow each."""
    db = shutil.copy(real_db, tmp_path / "econ.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute(
            "update calibration_errors set n_points = n_points + 1 "
            "where basis = 'replicates' and group_kind = 'overall' and target = 'ttft'"
        )
        counts = dict(
            con.sql(
                "select target, n_points from calibration_errors where basis = 'replicates' and group_kind = 'overall'"
            ).fetchall()
        )
        lead = validation.render(SiteContext(con, date(2026, 11, 30), date(2026, 11, 30))).lead
    assert set(counts) == {"tpot", "ttft"} and counts["tpot"] != counts["ttft"]
    assert f"{counts['tpot']} runs that state exactly" in lead
    assert f"and {counts['ttft']} such runs by" in lead


def test_the_lead_states_the_error_held_out_one_campaign_at_a_time(real_db):
    """The lead reads the runs' leave-one-source-out figures (InferenceX's runs, then NVIDIA's) from the table."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        held = {
            target: (median, p90)
            for target, median, p90 in con.sql(
                "select target, error_factor, error_factor_p90 from calibration_errors "
                "where basis = 'source_out' and group_kind = 'overall'"
            ).fetchall()
        }
        covered = dict(
            con.sql(
                "select target, band_coverage_frac from calibration_errors "
                "where basis = 'source_out' and group_kind = 'overall'"
            ).fetchall()
        )
        lead = validation.render(SiteContext(con, date(2026, 11, 30), date(2026, 11, 30))).lead
    (tpot, tpot90), (ttft, ttft90) = held["tpot"], held["ttft"]
    assert 1.0 < tpot < ttft
    assert (
        f"time per output token is {tpot:.2f}× off ({tpot90:.2f}×) and time to first token {ttft:.2f}× off "
        f"({ttft90:.2f}×)" in lead
    )
    assert f"the p90 bands econ prints cover {covered['tpot']:.0%} and {covered['ttft']:.0%} of those runs." in lead


def test_the_bands_section_says_which_lengths_the_runs_span(real_db):
    """The shipped InferenceX runs' prompts run from 128 to 15,000 tokens and their outputs from 100 to 8,192 (the
    isl and osl columns of data/inferencex_train.csv, read here); the bands section says so, as econ predict's notes
    do for a point outside them."""
    import polars as pl

    from tests.conftest import REPO

    runs = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000)
    with duckdb.connect(str(real_db), read_only=True) as con:
        page = validation.render(SiteContext(con, date(2026, 11, 30), date(2026, 11, 30)))
    (intro,) = [s.intro for s in page.sections if s.heading == "Error bands and their coverage"]
    span = f"{runs['isl'].min():,}-{runs['isl'].max():,} prompt and {runs['osl'].min():,}-{runs['osl'].max():,} output"
    assert f"The runs span {span} tokens (calibration_lengths)" in intro
