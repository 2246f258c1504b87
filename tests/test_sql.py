"""econ sql and econ tables: formats, stdin, files, read-only."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from econ.cli import main


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_formats(fixture_db, capsys):
    q = "select chip, hbm_capacity_bytes from hardware order by chip"
    code, out, _ = run(capsys, "sql", "--db", str(fixture_db), q, "--format", "csv")
    assert code == 0
    assert out.splitlines() == [
        "chip,hbm_capacity_bytes",
        "B200,180000000000.0",
        "H100,80000000000.0",
        "TPU-v5e,16000000000.0",
    ]
    _, out, _ = run(capsys, "sql", "--db", str(fixture_db), q, "--format", "json")
    assert json.loads(out)[1] == {"chip": "H100", "hbm_capacity_bytes": 80e9}
    _, out, _ = run(capsys, "sql", "--db", str(fixture_db), q, "--format", "markdown")
    # tables for people read 1.8e11 as 180 G (csv and json keep every digit)
    assert out.splitlines()[:3] == ["| chip | hbm_capacity_bytes |", "|---|---|", "| B200 | 180 G |"]
    _, out, _ = run(capsys, "sql", "--db", str(fixture_db), q)
    assert out.splitlines()[0].split() == ["chip", "hbm_capacity_bytes"] and out.splitlines()[-1] == "(3 rows)"
    assert out.splitlines()[2].split() == ["B200", "180", "G"] and out.splitlines()[4].split() == ["TPU-v5e", "16", "G"]


def test_query_from_stdin_and_file(fixture_db, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr("sys.stdin", io.StringIO("select 40 + 2 as answer"))
    assert run(capsys, "sql", "--db", str(fixture_db), "-", "--format", "csv")[1].split() == ["answer", "42"]
    query = tmp_path / "q.sql"
    query.write_text("-- a comment\nselect count(*) as n from models;\n")
    assert run(capsys, "sql", "--db", str(fixture_db), "-f", str(query), "--format", "csv")[1].split() == ["n", "3"]


@pytest.mark.parametrize(
    "statement",
    [
        "drop table prices",
        "insert into scenarios select * from scenarios",
        "create table x as select 1",
        "update hardware set tdp_w = 0",
    ],
)
def test_write_statements_are_refused_and_change_nothing(fixture_db, capsys, statement):
    before = hashlib.sha256(fixture_db.read_bytes()).hexdigest()
    code, out, err = run(capsys, "sql", "--db", str(fixture_db), statement)
    assert code == 1 and out == ""
    assert err.startswith("Error: write statements are refused:")
    assert "econ sql opens the database read-only" in err and "Traceback" not in err
    assert hashlib.sha256(fixture_db.read_bytes()).hexdigest() == before


def test_bad_sql_and_missing_database(fixture_db, capsys, tmp_path):
    code, _, err = run(capsys, "sql", "--db", str(fixture_db), "select nope from models")
    assert code == 1 and err.startswith("Error: the query failed: Binder Error")
    code, _, err = run(capsys, "sql", "--db", str(tmp_path / "none.duckdb"), "select 1")
    assert (
        code == 1
        and err.strip() == f"Error: no database at {tmp_path / 'none.duckdb'} — run econ build first (or pass --db)"
    )


def test_as_of_selects_current_prices(fixture_db, capsys):
    q = "select count(*) as n from price_current where model = 'claude-opus-4-6'"
    assert run(capsys, "sql", "--db", str(fixture_db), q, "--format", "csv", "--as-of", "2026-11-30")[1].split() == [
        "n",
        "2",
    ]
    assert run(capsys, "sql", "--db", str(fixture_db), q, "--format", "csv", "--as-of", "2025-01-01")[1].split() == [
        "n",
        "0",
    ]


def test_default_as_of_is_the_build_date(fixture_db, capsys):
    """The fixture database was built for 2026-11-30 (tests/conftest.py), whatever today is."""
    out = run(capsys, "sql", "--db", str(fixture_db), "select getvariable('as_of') as as_of", "--format", "csv")[1]
    assert out.split() == ["as_of", "2026-11-30"]


def test_tables_lists_tables_and_views(fixture_db, capsys):
    code, out, _ = run(capsys, "tables", "--db", str(fixture_db), "--format", "csv")
    rows = {line.split(",")[0]: line for line in out.splitlines()[1:]}
    assert code == 0
    assert rows["models"].startswith('models,table,3,"Open-weight architectures')
    assert rows["price_current"].startswith('price_current,view,4,"Prices in effect on a date')


def test_a_long_table_streams_with_widths_from_the_first_batch(fixture_db, capsys):
    """More rows than one batch: every row is printed, the count is right, and a later wider cell is written whole."""
    from econ.sql import BATCH_ROWS

    n = BATCH_ROWS * 2 + 7
    q = f"select i, case when i = {n - 1} then repeat('w', 40) else 'x' end as s from range({n}) t(i)"
    code, out, _ = run(capsys, "sql", "--db", str(fixture_db), q)
    lines = out.splitlines()
    assert code == 0 and lines[-1] == f"({n} rows)" and len(lines) == n + 3
    assert lines[2].split() == ["0", "x"] and lines[-2].split() == [str(n - 1), "w" * 40]
    assert lines[1] == "  ".join("-" * w for w in (len(str(BATCH_ROWS - 1)), 1))  # widths of the first batch
    code, out, _ = run(capsys, "sql", "--db", str(fixture_db), q, "--format", "json")
    assert code == 0 and len(json.loads(out)) == n
    code, out, _ = run(capsys, "sql", "--db", str(fixture_db), q, "--format", "csv")
    assert code == 0 and out.count("\n") == n + 1


def test_allow_files_lets_a_query_write_a_file(fixture_db, capsys, data_dir):
    code, _, err = run(capsys, "sql", "--db", str(fixture_db), "--allow-files", "copy (select 42 as x) to 'out.csv'")
    assert code == 0, err
    assert (data_dir.parent / "out.csv").read_text().split() == ["x", "42"]
