"""The database's self-description: every column of every table and view carries its meaning (and unit), econ describe
prints them, econ tables fits the terminal."""

from __future__ import annotations

import duckdb
import pytest

from econ.cli import main
from econ.db.objects import split_comment
from econ.db.views import relations_named, view_column_notes, view_header


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_column_of_every_table_and_view_has_a_comment(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        relations = con.execute(
            "select table_name from duckdb_tables() where database_name = current_database() union all "
            "select view_name from duckdb_views() where database_name = current_database() and not internal"
        ).fetchall()
        bare = con.execute(
            "select table_name || '.' || column_name from duckdb_columns() "
            "where database_name = current_database() and coalesce(trim(comment), '') = '' "
            "and table_name in (select table_name from duckdb_tables() where database_name = current_database() "
            "union all select view_name from duckdb_views() where database_name = current_database())"
        ).fetchall()
    assert len(relations) > 50 and bare == []


def test_a_view_header_gives_its_description_and_the_comments_of_the_columns_it_computes():
    sql = "-- What it is.\n-- Grain: one row per x.\n-- column n_rows: Rows counted [rows]\nselect 1 as n_rows"
    assert view_header(sql) == "What it is. Grain: one row per x."
    assert view_column_notes(sql) == {"n_rows": "Rows counted [rows]"}


@pytest.mark.parametrize(
    ("comment", "parts"),
    [
        ("Twice x; y = 2·x (a test) [s] — derived", ("Twice x; y = 2·x (a test)", "s", "derived")),
        ("Uncached input (prompt) price [USD/MTok]", ("Uncached input (prompt) price", "USD/MTok", "")),
        ("Seller of the tokens", ("Seller of the tokens", "", "")),
    ],
)
def test_a_comment_splits_into_meaning_unit_and_kind(comment, parts):
    assert split_comment(comment) == parts


def test_describe_prints_columns_with_units_and_meanings_within_the_width(fixture_db, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "90")
    code, out, _ = run(capsys, "describe", "--db", str(fixture_db), "price_current")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "price_current (view, 4 rows)"
    assert max(len(line) for line in lines) <= 90
    row = next(line for line in lines if line.startswith("input_usd_per_mtok "))
    assert row.split()[:4] == ["input_usd_per_mtok", "double", "USD/MTok", "input"]
    _, out, _ = run(capsys, "describe", "--db", str(fixture_db), "model_catalog", "--format", "csv")
    assert out.splitlines()[0] == "column,type,unit,kind,meaning" and "\ncanonical_model,varchar,,key," in out


def test_describe_of_an_unknown_name_suggests_the_close_ones(fixture_db, capsys):
    code, _, err = run(capsys, "describe", "--db", str(fixture_db), "price_curent")
    # a name that is no table or view may be a model (econ describe MODEL): the message says both
    assert code == 1 and "no table, view or model 'price_curent'" in err and "did you mean price_current, " in err


@pytest.mark.parametrize("width", [60, 100, 160])
def test_tables_fits_the_terminal(fixture_db, capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = run(capsys, "tables", "--db", str(fixture_db))
    assert code == 0 and max(len(line) for line in out.splitlines()) <= width
    assert any(line.startswith("price_current ") and line.endswith("…") for line in out.splitlines())


def test_a_stream_lands_in_order_a_few_chunks_an_insert(tmp_path, monkeypatch):
    """write_table gathers consecutive chunks up to WRITE_BATCH_BYTES before an insert: every row lands, in order,
    and no gathered batch holds more than the budget past its last chunk."""
    import polars as pl

    from econ import db

    chunks = [pl.DataFrame({"i": list(range(k * 10, k * 10 + 10)), "x": [float(k)] * 10}) for k in range(7)]
    monkeypatch.setattr(db, "WRITE_BATCH_BYTES", 3 * chunks[0].estimated_size())
    assert [b.height for b in db._batched(iter(chunks))] == [30, 30, 10]
    with duckdb.connect(str(tmp_path / "t.duckdb")) as con:
        assert db.write_table(con, "t", iter(chunks)) == 70
        assert con.execute("select i from t").fetchall() == [(i,) for i in range(70)]


def test_relations_named_reads_the_parse_tree_not_the_words():
    con = duckdb.connect()
    sql = "with recent as (select * from prices) select 'models' as t from recent join providers using (provider)"
    assert relations_named(con, sql) == {"recent", "prices", "providers"}  # a common table expression comes along
    assert relations_named(con, sql, with_ctes=False) == {"prices", "providers"}
    assert relations_named(con, "selec nothing") is None


def test_a_views_version_moves_with_its_sql_and_what_it_reads_and_only_then(tmp_path):
    """A view over a view over a table: its version is that of its SQL and its reads' versions, through the chain;
    a view that reads a relation without a version has none (the report hashes its rows instead)."""
    from econ.db.views import view_versions

    queries = tmp_path / "queries"
    queries.mkdir()
    (queries / "cheap.sql").write_text("select * from prices where usd < 1", encoding="utf-8")
    (queries / "cheapest.sql").write_text("select min(usd) as usd from cheap", encoding="utf-8")
    (queries / "loose.sql").write_text("select * from build_info", encoding="utf-8")
    con = duckdb.connect()
    first = view_versions(con, queries, {"prices": "a:1"})
    assert set(first) == {"cheap", "cheapest"}
    assert first == view_versions(con, queries, {"prices": "a:1", "models": "b:2"})  # what it does not read: no move
    moved = view_versions(con, queries, {"prices": "a:2"})
    assert moved["cheap"] != first["cheap"] and moved["cheapest"] != first["cheapest"]
    (queries / "cheap.sql").write_text("select * from prices where usd < 2", encoding="utf-8")
    rewritten = view_versions(con, queries, {"prices": "a:1"})
    assert rewritten["cheap"] != first["cheap"] and rewritten["cheapest"] != first["cheapest"]
