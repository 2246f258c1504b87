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


def test_scenario_used_is_shown_with_ranges(built_report):
    rows = {r["Assumption"]: r for r in read_tables(built_report / "index.html")["scenario"]}
    assert (
        rows["usd_per_chip_hour"]["Value"],
        rows["usd_per_chip_hour"]["Low"],
        rows["usd_per_chip_hour"]["High"],
    ) == (
        "2",
        "1.5",
        "4",
    )
    assert rows["serving_chip"]["Value"] == "B200"
