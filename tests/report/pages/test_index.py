"""Index page: every page's findings, each linking to its evidence, against the lecture's numbers; the scenario."""

from __future__ import annotations

import re

import pytest

from ..html_tables import read_tables
from ..test_site import RENDERED


def findings(path) -> list[str]:
    return re.findall(r'<li class="finding[^"]*"(.*?)</li>', path.read_text(encoding="utf-8"), re.S)


def test_the_dense_balance_batch_finding_is_the_lectures_h100_figure(built_report):
    """Lecture b.1's table: an H100 at BF16 balances at R = 295 sequences."""
    html = (built_report / "index.html").read_text(encoding="utf-8")
    value = re.search(r'data-table="hardware_derived"[^>]*data-column="critical_batch_ratio"[^>]*>([\d,]+)<', html)
    assert value and float(value.group(1).replace(",", "")) == pytest.approx(295, rel=0.01)


def test_the_index_holds_every_pages_findings_linking_to_their_page(built_report):
    index = findings(built_report / "index.html")
    on_pages = [f for page in RENDERED if page != "index.html" for f in findings(built_report / page)]
    assert len(index) == len(on_pages) > 0
    for page in RENDERED:
        if page == "index.html":
            continue
        for f in findings(built_report / page):
            assert 'href="#' in f  # on its page, the link is to a section of the same page
    assert all(re.search(r'href="[a-z-]+\.html#[a-z0-9-]+"', f) for f in index)


def test_the_assumptions_are_those_of_the_findings(built_report):
    rows = {r["Assumption"]: r for r in read_tables(built_report / "index.html")["scenario"]}
    assert (
        rows["usd_per_chip_hour"]["Value (bound)"],
        rows["usd_per_chip_hour"]["Low"],
        rows["usd_per_chip_hour"]["High"],
    ) == (
        "2",
        "1.5",
        "4",
    )
    assert rows["serving_chip"]["Value (bound)"] == "B200"
    assert "Scenario used" not in (built_report / "index.html").read_text(encoding="utf-8")


def test_calibrated_findings_show_the_efficiencies_they_use(real_db, tmp_path):
    """Issue 26: the overview ended with "Scenario used: base" while its headlines were calibrated. On the shipped
    data the section names both: the scenario's values (the bound) and, read independently from
    calibration_parameters, the fitted efficiencies the calibrated findings use instead."""
    from datetime import date

    import duckdb

    from econ.analyses.calibration_scenario import FIELDS
    from econ.report.page import SiteContext
    from econ.report.pages.index import _scenario

    with duckdb.connect(str(real_db), read_only=True) as con:
        con.execute("set variable as_of = date '2026-11-30'")
        section = _scenario(SiteContext(con=con, as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30)))
        fitted = dict(
            con.sql(
                "select parameter, estimate from calibration_parameters where group_kind = '' and status = 'ok'"
            ).fetchall()
        )
        n_points = con.sql("select max(n_points) from calibration_parameters where group_kind = ''").fetchall()[0][0]
    page = tmp_path / "section.html"
    page.write_text("".join(section.blocks), encoding="utf-8")
    table = read_tables(page)["scenario"]
    rows = {r["Assumption"]: r for r in table}
    assert len(rows) == len(table)  # one row per assumption
    assert section.heading == "Assumptions: scenario base, calibrated where fitted"
    for parameter, fields in FIELDS.items():  # the GEMM efficiency sets both pools' MFU, the HBM share both MBUs
        for name in fields:
            if name in rows and parameter in fitted:
                assert float(rows[name]["Calibrated (fitted)"]) == pytest.approx(fitted[parameter], rel=1e-3), name
    for name in ("decode_mfu_frac", "prefill_mfu_frac", "expert_mfu_frac", "decode_mbu_frac", "prefill_mbu_frac"):
        assert rows[name]["Value (bound)"] == "1" and rows[name]["Calibrated (fitted)"] != ""
    assert rows["usd_per_chip_hour"]["Calibrated (fitted)"] == ""  # not fitted: the same in both
    assert f"{n_points:,} measured operating points" in section.intro
