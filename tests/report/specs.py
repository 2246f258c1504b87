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
    return with_records(json.loads(m.group(1)))


def with_records(spec: dict) -> dict:
    """``spec`` with its CSV datasets (:func:`econ.report.downloads.inline_csv`) read back into row objects, each
    column parsed as the spec's ``format.parse`` says (Vega's reading: an empty cell is null)."""
    parse: dict[str, dict] = {}

    def find(value):
        if isinstance(value, dict):
            data = value.get("data")
            if isinstance(data, dict) and "name" in data and "format" in data:
                parse[data["name"]] = data["format"].get("parse", {})
            for v in value.values():
                find(v)
        elif isinstance(value, list):
            for v in value:
                find(v)

    find(spec)
    readers = {"number": float, "boolean": lambda v: v == "true"}
    datasets = {}
    for name, rows in (spec.get("datasets") or {}).items():
        if isinstance(rows, str):
            kinds = parse.get(name, {})
            rows = [
                {
                    k: (None if v == "" and k in kinds else readers[kinds[k]](v) if k in kinds else v)
                    for k, v in r.items()
                }
                for r in csv.DictReader(rows.splitlines())
            ]
        datasets[name] = rows
    return {**spec, "datasets": datasets}


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
