"""The analysis runner: results restored from cache when inputs are unchanged, recomputed when they change."""

from __future__ import annotations

import types
from datetime import date

import duckdb
import pytest

from econ.analyses.runner import input_fingerprint, run_analyses
from econ.results import ResultColumn, ResultTable

RESULT = ResultTable(
    name="result",
    grain="database",
    key=(),
    description="Sum of src.x",
    columns=(ResultColumn("total", "int", "units", "derived", "Sum"),),
)


def counting_analysis():
    calls = []

    def run(ctx):
        calls.append(1)
        ctx.write(RESULT, ctx.query("select sum(x) as total from src"))

    return types.SimpleNamespace(NAME="demo", INPUTS=("src",), TABLES=(RESULT,), run=run), calls


def test_second_run_is_restored_from_cache_with_comments(tmp_path):
    con = duckdb.connect()
    con.execute("create table src as select * from (values (1, null), (2, 'a')) t(x, note)")
    module, calls = counting_analysis()
    first = run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=tmp_path, code_hash="c")
    con.execute("drop table result")
    second = run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=tmp_path, code_hash="c")
    assert (first, second, len(calls)) == ({"demo": "ran"}, {"demo": "cached"}, 1)
    assert con.execute("select total from result").fetchall() == [(3,)]
    assert con.execute("select comment from duckdb_columns() where table_name = 'result'").fetchall() == [
        ("Sum [units] — derived",)
    ]


def test_changed_input_code_or_date_reruns(tmp_path):
    con = duckdb.connect()
    con.execute("create table src as select 1 as x")
    module, calls = counting_analysis()
    run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=tmp_path, code_hash="c")
    con.execute("insert into src values (5)")
    assert run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=tmp_path, code_hash="c") == {"demo": "ran"}
    assert run_analyses(con, [module], as_of=date(2026, 1, 2), cache_dir=tmp_path, code_hash="c") == {"demo": "ran"}
    assert run_analyses(con, [module], as_of=date(2026, 1, 2), cache_dir=tmp_path, code_hash="d") == {"demo": "ran"}
    assert len(calls) == 4 and con.execute("select total from result").fetchall() == [(6,)]


def test_fingerprint_ignores_row_order_and_is_stable_with_nulls():
    a, b = duckdb.connect(), duckdb.connect()
    a.execute("create table t as select * from (values (1, null), (2, 'x')) v(i, s)")
    b.execute("create table t as select * from (values (2, 'x'), (1, null)) v(i, s)")
    assert input_fingerprint(a, ["t"]) == input_fingerprint(b, ["t"]) == input_fingerprint(a, ["t"])
    b.execute("update t set s = 'y' where i = 2")
    assert input_fingerprint(a, ["t"]) != input_fingerprint(b, ["t"])


def test_a_module_that_writes_other_tables_than_it_declares_is_a_bug(tmp_path):
    con = duckdb.connect()
    con.execute("create table src as select 1 as x")
    module = types.SimpleNamespace(NAME="demo", INPUTS=("src",), TABLES=(RESULT,), run=lambda ctx: None)
    with pytest.raises(RuntimeError, match=r"analysis demo wrote \[\], declared \['result'\]"):
        run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=None, code_hash="c")
