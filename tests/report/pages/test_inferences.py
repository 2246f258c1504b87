"""What-prices-tell-us findings: only an `ok` reading is headlined, with its left-out coverage and skill in the
sentence; a reading that fails its check is never stated as a finding (issue 24, "the report headlines only ok
readings").

Checked two ways, neither re-running the page's own selection: on a database written by hand (an `ok` reading and
an `uninformative` one whose numbers look better, so a page that headlined by its numbers would pick the wrong
one), and on the shipped data, where every number a finding cites is traced back to its `inference_quantities` row
and that row's status is read with an SQL query of its own.
"""

from __future__ import annotations

import re
from datetime import date

import duckdb
import pytest

from econ.report import inference_findings
from econ.report.page import SiteContext

NUMBER = re.compile(r'data-table="([^"]+)" data-where="([^"]+)" data-column="([^"]+)" data-value="([^"]+)"')
QUANTITY = re.compile(r"quantity = &#x27;([^&]+)&#x27;|quantity = '([^']+)'")
HEADLINE = {"validated", "fitted", "calibrated", "measured", "bound"}
"""Finding statuses that state a number as something the data support (``weak`` and the like say the opposite)."""


def cited(finding) -> list[tuple[str, str, str, float]]:
    """(table, quantity or where, column, value) of every number the finding's sentence reads from a row."""
    out = []
    for table, where, column, value in NUMBER.findall(str(finding.html)):
        m = QUANTITY.search(where)
        out.append((table, (m.group(1) or m.group(2)) if m else where, column, float(value)))
    return out


def hand_db() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        """
        create table inference_quantities as select * from (values
          ('good_reading', 'reading', 'the good price', 'ok', 6, 5, 0.83, 0.9, 0.41, 1.2, 2.0, 4.5, 'passes'),
          ('flashy_reading', 'reading', 'the flashy price', 'uninformative', 30, 26, 0.97, 0.9, -0.2, 0.5, 0.4, 1.1,
           'no skill against the no-price baseline'),
          ('crossover', 'hypothesis', 'the threshold', 'falsified', 9, 8, 0.0, 0.9, null, 9.0, 2.0, 900.0, 'misses')
        ) as t(quantity, role, reading, status, n_models, n_architecture_groups, coverage_groups_frac, level_frac,
               skill_score_frac, interval_score_log, baseline_interval_score_log, interval_width_ratio, status_reason)
        """
    )
    return con


def test_only_the_ok_reading_is_headlined_with_its_coverage_and_skill_by_hand():
    """The `uninformative` reading has more models, higher coverage and a narrower interval than the `ok` one; the
    page must still headline only the `ok` one, and name the others only in a `weak` sentence that gives no
    coverage or skill of theirs."""
    with hand_db() as con:
        ctx = SiteContext(con, date(2026, 11, 30), date(2026, 11, 30))
        findings = inference_findings.inferences(ctx)
    headlines = [f for f in findings if f.status in HEADLINE]
    assert [f.status for f in headlines] == ["validated"]
    numbers = cited(headlines[0])
    assert {q for _, q, _, _ in numbers} == {"good_reading"}
    columns = {c: v for _, _, c, v in numbers}
    assert columns["coverage_groups_frac"] == 0.83 and columns["skill_score_frac"] == 0.41  # in the sentence
    assert "83%" in str(headlines[0].html) and "41%" in str(headlines[0].html)
    others = [f for f in findings if f.status not in HEADLINE]
    assert others and all(f.status == "weak" for f in others)
    for f in others:
        for _, q, column, _ in cited(f):
            assert q != "good_reading"
            assert column not in {"coverage_groups_frac", "skill_score_frac", "interval_width_ratio"}, (q, column)


def test_nothing_is_headlined_when_no_reading_passes():
    with hand_db() as con:
        con.execute("update inference_quantities set status = 'uninformative' where quantity = 'good_reading'")
        ctx = SiteContext(con, date(2026, 11, 30), date(2026, 11, 30))
        findings = inference_findings.inferences(ctx)
    assert findings and all(f.status not in HEADLINE for f in findings)


@pytest.fixture(scope="module")
def shipped(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        yield con


@pytest.mark.parametrize("page", ["inferences", "context_pricing", "io_cache"])
def test_no_finding_on_the_shipped_data_headlines_a_reading_that_fails_its_check(shipped, page):
    """Every number a headline finding reads from ``inference_quantities`` belongs to a reading whose status, read
    here by its own query, is ok; a failing reading appears only in a `weak` sentence."""
    status = dict(shipped.execute("select quantity, status from inference_quantities").fetchall())
    ctx = SiteContext(shipped, date(2026, 11, 30), date(2026, 11, 30))
    findings = getattr(inference_findings, page)(ctx)
    for finding in findings:
        for table, quantity, _, _ in cited(finding):
            if table != "inference_quantities":
                continue
            if status[quantity] != "ok":
                assert finding.status == "weak", (page, quantity, status[quantity], str(finding.html))
            else:
                assert finding.status == "validated", (page, quantity, str(finding.html))
    if page == "inferences":
        ok = {q for q, s in status.items() if s == "ok"}
        headlined = {q for f in findings if f.status == "validated" for t, q, _, _ in cited(f)}
        assert headlined == set(sorted(ok)[:4])
