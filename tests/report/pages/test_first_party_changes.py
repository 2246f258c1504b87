"""A refresh that cuts a maker's own price is reported as a first-party change (issue 26: What changed said "No
first-party price changed" after Anthropic's own Sonnet price fell 20% in a LiteLLM map, because only hand-kept rows
counted as first-party).

The expected change is read independently from the two snapshot files (plain csv: the rows the maker sells itself
whose prices differ), not from the page's query.
"""

from __future__ import annotations

import csv
import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest

from tests.conftest import FIXTURE_DATA, REPO
from tests.report.html_tables import read_tables

REAL = REPO / "data" / "snapshots" / "litellm_2026-11-20.csv"
KEYS = ("anthropic,claude-sonnet-4-5,", "azure_ai,azure_ai/claude-sonnet-4-5,")  # the maker's own key, a reseller's
CUT = 0.8


def _snapshots(folder: Path) -> None:
    """Two LiteLLM snapshots of the same rows: on 2026-11-20 Anthropic's own claude-sonnet-4-5 (standard and batch)
    costs 20% less; the reseller's row is unchanged."""
    lines = REAL.read_text(encoding="utf-8").splitlines()
    rows = [line for line in lines[1:] if line.startswith(KEYS)]
    assert len(rows) == 3
    (folder / "snapshots").mkdir()
    (folder / "snapshots" / "litellm_2026-08-20.csv").write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8")
    header = lines[0].split(",")
    newer = []
    for row in csv.DictReader([lines[0], *rows]):
        if row["provider"] == "anthropic":
            for column in ("input_usd_per_mtok", "output_usd_per_mtok"):
                row[column] = repr(float(row[column]) * CUT)
        newer.append(",".join(row[c] for c in header))
    (folder / "snapshots" / "litellm_2026-11-20.csv").write_text("\n".join([lines[0], *newer]) + "\n", encoding="utf-8")


def _expected(folder: Path) -> set[tuple]:
    """(provider, model, variant, component, old, new) of every price that moved in a row whose seller is the maker
    (anthropic sells claude: data/providers.csv and model_families.csv), read from the two files."""

    def read(name):
        with (folder / "snapshots" / name).open(encoding="utf-8") as f:
            return {(r["provider"], r["model"], r["variant"]): r for r in csv.DictReader(f)}

    old, new = read("litellm_2026-08-20.csv"), read("litellm_2026-11-20.csv")
    return {
        (
            *key,
            column.removesuffix("_usd_per_mtok"),
            round(float(old[key][column]), 6),
            round(float(new[key][column]), 6),
        )
        for key in old
        if key[0] == "anthropic"
        for column in ("input_usd_per_mtok", "output_usd_per_mtok")
        if old[key][column] != new[key][column]
    }


@pytest.fixture(scope="module")
def cut_db(tmp_path_factory) -> tuple[Path, Path]:
    from econ.build import build

    root = tmp_path_factory.mktemp("first-party")
    data = root / "data"
    shutil.copytree(FIXTURE_DATA, data)
    _snapshots(data)
    db = root / "econ.duckdb"
    build(data_dir=data, db_path=db, cache_dir=None, reports_dir=None, as_of=date(2026, 11, 30))
    return data, db


@pytest.mark.slow  # a build of the fixture data (about 15 s)
def test_a_cut_of_the_makers_own_price_is_a_first_party_change(cut_db, tmp_path):
    from econ.report.page import SiteContext, findings_html
    from econ.report.pages import changes

    data, db = cut_db
    expected = _expected(data)
    assert len(expected) == 4  # input and output, standard and batch
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("set variable as_of = date '2026-11-30'")
        page = changes.render(SiteContext(con=con, as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30)))
    html = "".join(str(b) for s in page.sections for b in s.blocks if isinstance(b, str))
    assert "No first-party price changed" not in html
    out = tmp_path / "page.html"
    out.write_text(html, encoding="utf-8")
    shown = {
        (r["Provider"], r["Model"], r["Variant"], r["Component"], float(r["Old"]), float(r["New"]))
        for r in read_tables(out)["changed-first-party"]
    }
    assert shown == expected  # the reseller's unchanged row is not there, and no other row either
    (finding,) = [f for f in page.findings if "largest first-party price move" in f.html]
    assert "claude-sonnet-4-5 at anthropic" in finding.html and "−20%" in findings_html([finding]).replace("-", "−")
    assert "2026-08-20" in finding.html and "2026-11-20" in finding.html  # its window: the two snapshots
