"""measured_points: every quote holds its number, every row is sourced, and a bad row names its line and column."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from econ.errors import DataError
from econ.load.measured_tables import value_as_number
from econ.load.spec import read_table
from econ.load.tables import MEASURED_POINTS

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data" / "measured_points.csv"


def rows() -> list[dict]:
    with SHIPPED.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def plain(written: str) -> float:
    """The test's own reading of a number as written (independent of value_as_number)."""
    text = written.lstrip("~").replace(",", "")
    scale = {"k": 1e3, "K": 1e3, "M": 1e6}.get(text[-1], 1.0)
    return float(text.rstrip("kKM")) * scale


def test_every_quote_contains_its_number():
    bad = []
    for r in rows():
        written, value = r["value_as_written"], float(r["measured_value"])
        if written not in r["quote"] or abs(plain(written) - value) > 1e-9 * value:
            bad.append(r["point_id"])
    assert bad == []


def test_the_number_is_a_whole_token_of_the_quote():
    """'value_as_written' is not a fragment of a longer number (e.g. '6,43' inside '6,430')."""
    bad = []
    for r in rows():
        w = re.escape(r["value_as_written"])
        if not re.search(rf"(?<![\d.,]){w}(?![\d]|[.,]\d)", r["quote"]):
            bad.append(r["point_id"])
    assert bad == []


def test_every_row_has_a_source_url_and_the_shipped_table_loads():
    assert all(r["source_url"].startswith("https://") for r in rows())
    frame = read_table(SHIPPED, MEASURED_POINTS)
    assert frame.height == len(rows()) >= 30


@pytest.mark.parametrize(
    ("written", "value"),
    [("~73.7k", 73_700.0), ("42.6K", 42_600.0), ("6,430", 6_430.0), ("70325.7", 70_325.7), ("2.2k", 2_200.0)],
)
def test_value_as_number(written, value):
    assert value_as_number(written) == pytest.approx(value, rel=1e-12)


def test_value_as_number_refuses_text():
    assert value_as_number("about six thousand") is None


def _write(tmp_path: Path, **change) -> Path:
    original = rows()[0]
    row = {**original, **change}
    path = tmp_path / "measured_points.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, list(original), lineterminator="\n")
        w.writeheader()
        w.writerow(row)
    return path


def test_a_number_missing_from_its_quote_names_line_and_column(tmp_path):
    path = _write(tmp_path, value_as_written="12345.6", measured_value="12345.6")
    with pytest.raises(DataError) as e:
        read_table(path, MEASURED_POINTS)
    text = str(e.value)
    assert ":2: column value_as_written" in text and "does not occur in the quote" in text


def test_a_moved_measured_value_is_refused(tmp_path):
    original = rows()[0]
    path = _write(tmp_path, measured_value=str(float(original["measured_value"]) * 1.1))
    with pytest.raises(DataError) as e:
        read_table(path, MEASURED_POINTS)
    assert ":2: column measured_value" in str(e.value)


def test_a_tensor_parallel_degree_must_divide_the_replica(tmp_path):
    path = _write(tmp_path, decode_replica_chips="8", decode_tensor_parallel="3")
    with pytest.raises(DataError) as e:
        read_table(path, MEASURED_POINTS)
    assert "column decode_tensor_parallel" in str(e.value)
