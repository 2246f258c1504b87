"""Read a generated page's chart specs and the fixture's input CSVs back, for tests that check what a reader sees."""

from __future__ import annotations

import csv
import json
import re
from html import unescape
from pathlib import Path

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"


def chart_spec(page: Path, slug: str) -> dict:
    """The inline Vega-Lite spec of figure ``slug`` on ``page``."""
    html = page.read_text(encoding="utf-8")
    m = re.search(
        rf'<script type="application/json" id="spec-{re.escape(page.stem)}-{re.escape(slug)}">(.*?)</script>',
        html,
        flags=re.S,
    )
    assert m, f"no figure {slug} on {page.name}"
    return json.loads(m.group(1))


def figure_text(page: Path, slug: str) -> str:
    """The caption, formula and source of figure ``slug`` as plain text."""
    html = page.read_text(encoding="utf-8")
    m = re.search(
        rf'<figure class="chart" id="fig-{re.escape(page.stem)}-{re.escape(slug)}">(.*?)</figure>', html, flags=re.S
    )
    assert m, f"no figure {slug} on {page.name}"
    return unescape(re.sub(r"<[^>]+>", " ", m.group(1)))


def rows(name: str, data_dir: Path = FIXTURE_DATA) -> list[dict]:
    """Rows of an input CSV, read with the csv module (independently of econ's loader)."""
    with (data_dir / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def by(rows_: list[dict], key: str) -> dict[str, dict]:
    return {r[key]: r for r in rows_}


def scenario_value(name: str, scenario: str = "base") -> float:
    return float(next(r["value"] for r in rows("scenarios") if r["scenario"] == scenario and r["name"] == name))


def number(text: str) -> float:
    """A number as the report prints it (thousands separators, a signed percentage, an exponent)."""
    return float(text.replace(",", "").replace("%", "").replace("−", "-"))
