"""The InferenceX launch tables are checked like every input table: a malformed or disordered row names its file,
line and column, and nothing is written."""

from __future__ import annotations

import pytest

from tests.load.test_spec import run_build


def _edit(path, line: int, column: str, value: str) -> None:
    rows = path.read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    cells = rows[line - 1].split(",")
    cells[header.index(column)] = value
    rows[line - 1] = ",".join(cells)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "column", "value", "message"),
    [
        (
            "inferencex_node_launches.csv",
            "concurrency_start",
            "100000",
            "column concurrency_end: concurrency_end is before concurrency_start — a concurrency sweep: "
            "concurrency_start comes first",
        ),
        (
            "inferencex_launches.csv",
            "first_date",
            "2027-01-01",
            "column last_date: last_date is before first_date — the commits that held a launch: first_date comes first",
        ),
        (
            "inferencex_launches.csv",
            "speculative_decoding",
            "maybe",
            'column speculative_decoding: "maybe" is not allowed',
        ),
    ],
)
def test_a_bad_launch_row_names_its_place_and_writes_nothing(data_dir, capsys, file, column, value, message):
    _edit(data_dir / file, 2, column, value)
    code, err = run_build(data_dir, capsys)
    assert code == 1 and err.startswith(f"Error: data/{file}:2: {message}"), err
    assert not (data_dir.parent / "out.duckdb").exists()
