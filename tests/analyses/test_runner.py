"""The analysis runner: results restored from cache when inputs are unchanged, recomputed when they change."""

from __future__ import annotations

import subprocess
import sys
import threading
import types
from datetime import date

import duckdb
import pytest

from econ.analyses import analyses
from econ.analyses.runner import dependencies, input_fingerprint, run_analyses
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


def _module(name, inputs, tables, run):
    return types.SimpleNamespace(NAME=name, INPUTS=inputs, TABLES=tables, run=run)


def _table(name):
    return ResultTable(
        name=name, grain="database", key=(), description=name, columns=(ResultColumn("x", "int", "", "derived", "x"),)
    )


def test_independent_analyses_run_side_by_side_and_a_reader_waits_for_its_writer(tmp_path):
    """Two analyses that read nothing of each other's start together (each waits at a barrier the other must reach:
    run one after the other they would time out); one that reads a view over their table starts after both."""
    con = duckdb.connect()
    (tmp_path / "over_a.sql").write_text("select x from a\n")
    barrier, events = threading.Barrier(2, timeout=20), []

    def writer(name):
        def run(ctx):
            events.append(f"start {name}")
            barrier.wait()
            ctx.write(_table(name), ctx.query("select 1 as x"))
            events.append(f"end {name}")

        return run

    def reader(ctx):
        events.append("start c")
        ctx.write(_table("c"), ctx.query("select x + 1 as x from over_a"))

    modules = [
        _module("a", (), (_table("a"),), writer("a")),
        _module("b", (), (_table("b"),), writer("b")),
        _module("c", ("over_a",), (_table("c"),), reader),
    ]

    def views(module):
        if module.NAME == "a":
            con.execute("create or replace view over_a as select x from a")

    status = run_analyses(
        con, modules, as_of=date(2026, 1, 1), cache_dir=None, code_hash="c", after_each=views,
        queries_dir=tmp_path, workers=2,
    )  # fmt: skip
    assert status == {"a": "ran", "b": "ran", "c": "ran"}
    assert set(events[:2]) == {"start a", "start b"} and events.index("start c") > events.index("end a")
    assert con.execute("select x from c").fetchall() == [(2,)]


def test_an_analysis_that_reads_nothing_just_written_starts_before_its_views_are_made(tmp_path):
    """When a finishes, b (next in order, reading nothing of a's) takes the free worker while the views over a's table
    are made; c, which reads one, starts only after them."""
    con = duckdb.connect()
    (tmp_path / "over_a.sql").write_text("select x from a\n")
    b_started, events = threading.Event(), []

    def writer(name, wait_for=None):
        def run(ctx):
            events.append(f"start {name}")
            if wait_for is not None:
                assert wait_for.wait(timeout=20)
            ctx.write(_table(name), ctx.query("select 1 as x"))

        return run

    def starts_b(ctx):
        b_started.set()
        writer("b")(ctx)

    def reader(ctx):
        events.append("start c")
        ctx.write(_table("c"), ctx.query("select x + 1 as x from over_a"))

    modules = [
        _module("a", (), (_table("a"),), writer("a")),
        _module("x", (), (_table("x"),), writer("x", b_started)),  # holds the other worker until b starts
        _module("b", (), (_table("b"),), starts_b),
        _module("c", ("over_a",), (_table("c"),), reader),
    ]

    def views(module):
        if module.NAME == "a":
            assert b_started.wait(timeout=20)  # b started while a's views were still to make
            events.append("views of a")
            con.execute("create or replace view over_a as select x from a")

    status = run_analyses(
        con, modules, as_of=date(2026, 1, 1), cache_dir=None, code_hash="c", after_each=views,
        queries_dir=tmp_path, workers=2,
    )  # fmt: skip
    assert status == {"a": "ran", "x": "ran", "b": "ran", "c": "ran"}
    assert events.index("start c") > events.index("views of a")
    assert con.execute("select x from c").fetchall() == [(2,)]


def test_an_earlier_analysis_waiting_for_views_keeps_its_worker(tmp_path):
    """c, earlier in order than b, waits for the views over a's table: b does not take the worker before them."""
    con = duckdb.connect()
    (tmp_path / "over_a.sql").write_text("select x from a\n")
    events, c_started = [], threading.Event()

    def run_as(name, sql="select 1 as x"):
        def run(ctx):
            events.append(f"start {name}")
            if name == "c":
                c_started.set()
            if name == "x":
                c_started.wait(timeout=5)  # holds the other worker (at worst 5 s, then the assert below fails)
            ctx.write(_table(name), ctx.query(sql))

        return run

    modules = [
        _module("a", (), (_table("a"),), run_as("a")),
        _module("x", (), (_table("x"),), run_as("x")),
        _module("c", ("over_a",), (_table("c"),), run_as("c", "select x + 1 as x from over_a")),
        _module("b", (), (_table("b"),), run_as("b")),
    ]

    def views(module):
        if module.NAME == "a":
            events.append("views of a")
            con.execute("create or replace view over_a as select x from a")

    run_analyses(
        con, modules, as_of=date(2026, 1, 1), cache_dir=None, code_hash="c", after_each=views,
        queries_dir=tmp_path, workers=2,
    )  # fmt: skip
    assert events.index("start c") < events.index("start b")


def test_a_failing_analysis_stops_the_schedule_and_raises_its_error(tmp_path):
    con = duckdb.connect()
    ran = []

    def fail(ctx):
        raise ValueError("bad input row")

    def later(ctx):
        ran.append("later")
        ctx.write(_table("later"), ctx.query("select 1 as x"))

    modules = [_module("bad", (), (_table("bad"),), fail), _module("later", ("bad",), (_table("later"),), later)]
    with pytest.raises(ValueError, match="bad input row"):
        run_analyses(con, modules, as_of=date(2026, 1, 1), cache_dir=None, code_hash="c", workers=2)
    assert ran == []


def test_the_build_order_reads_only_what_earlier_analyses_write():
    """Every analysis's INPUTS that some analysis writes are written by an earlier one (the order is a schedule)."""
    modules = analyses()
    deps = dependencies(duckdb.connect(), modules)
    position = {m.NAME: i for i, m in enumerate(modules)}
    assert all(position[d] < position[name] for name, ds in deps.items() for d in ds)
    assert deps["price_timeline"] >= {"price_history"} and deps["serving_layouts"] >= {"calibration"}


def test_a_change_outside_what_an_analysis_reads_keeps_its_key(tmp_path):
    """READS narrows the key to the rows the analysis reads: a new row it filters out neither reruns it nor restores
    it from a stale result; a row it reads reruns it."""
    con = duckdb.connect()
    con.execute("create table src as select * from (values (1, 'a'), (2, 'b')) t(x, kind)")
    calls = []

    def run(ctx):
        calls.append(1)
        ctx.write(RESULT, ctx.query("select sum(x) as total from src where kind = 'a'"))

    module = types.SimpleNamespace(
        NAME="demo", INPUTS=("src",), READS={"src": "select x from src where kind = 'a'"}, TABLES=(RESULT,), run=run
    )
    keys: dict[str, str] = {}
    run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=tmp_path, code_hash="c", keys=keys)
    first = keys["demo"]
    con.execute("insert into src values (7, 'b')")
    assert run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=tmp_path, code_hash="c", keys=keys) == {
        "demo": "cached"
    }
    assert keys["demo"] == first
    con.execute("insert into src values (5, 'a')")
    assert run_analyses(con, [module], as_of=date(2026, 1, 1), cache_dir=tmp_path, code_hash="c", keys=keys) == {
        "demo": "ran"
    }
    assert len(calls) == 2 and con.execute("select total from result").fetchall() == [(6,)]


def test_what_an_analysis_reads_is_among_its_inputs():
    """READS names inputs, and its SQL reads only relations the analysis lists (so the schedule waits for them)."""
    from econ.db.views import relations_named

    con = duckdb.connect()
    narrowed = [m for m in analyses() if getattr(m, "READS", None)]
    assert {m.NAME for m in narrowed} >= {"model_catalog", "fit_markups", "markup_inversions"}
    for module in narrowed:
        for name, sql in module.READS.items():
            assert name in module.INPUTS, (module.NAME, name)
            assert relations_named(con, sql, with_ctes=False) <= set(module.INPUTS), (module.NAME, sql)


def test_a_new_snapshot_of_a_replayed_history_keeps_the_price_inferences(real_db, tmp_path):
    """fit_markups, markup_inversions and inferred_changes read the prices of the sources that are not replayed
    histories: a snapshot of llm-prices dated between the two compared dates (a price_snapshots row with a commit and
    a price row of that source) leaves their keys, so a refresh of one keeps their tables and the Inferences page,
    and the kept inferred_changes is the table the analysis computes again; a new hand-kept base price that day
    changes all three keys."""
    import shutil
    from datetime import timedelta

    from econ.analyses import fit_markups, inferred_changes, markup_inversions, price_changes
    from econ.analyses.runner import BuildContext, _Scenarios

    db = tmp_path / "econ.duckdb"
    shutil.copy(real_db, db)
    con = duckdb.connect(str(db))
    modules = (fit_markups, markup_inversions, inferred_changes)

    def keys() -> list[str]:
        return [input_fingerprint(con, m.INPUTS, None, m.READS) for m in modules]

    before, stored = keys(), con.sql("select * from inferred_changes order by all").pl()
    (start, end), *_ = con.sql(price_changes.COMPARED_SQL).fetchall()
    periods = con.sql(f"select from_date, to_date from ({inferred_changes.INFERENCE_PRICES_SQL})").pl()
    boundaries = set(periods["from_date"]) | set(periods["to_date"])
    day = start + timedelta(days=1)
    assert day < end and day not in boundaries  # the premise: the fits' prices in effect on day are those of start
    history = con.execute("select any_value(source) from price_snapshots where commit is not null").fetchone()[0]
    con.execute(
        f"insert into price_snapshots select * replace (date '{day}' as snapshot_date) from price_snapshots "
        f"where source = '{history}' limit 1"
    )
    row = f"select * replace (date '{day}' as from_date, input_usd_per_mtok * 0.5 as input_usd_per_mtok)"
    con.execute(f"insert into prices {row} from prices where source = '{history}' limit 1")
    assert keys() == before
    con.execute(f"set variable as_of = date '{con.execute('select as_of from build_info').fetchone()[0]}'")
    inferred_changes.run(BuildContext(con=con, as_of=None, _scenarios=_Scenarios(con)))
    assert con.sql("select * from inferred_changes order by all").pl().equals(stored)
    base = "source = 'hand' and variant = 'standard' and tier_min_prompt_tokens = 0"
    con.execute(f"insert into prices {row} from prices where {base} limit 1")
    assert all(now != was for now, was in zip(keys(), before, strict=True))


def test_declaring_every_analysis_imports_no_solver():
    """A build whose analyses all come from the cache (``econ build --force``, a refresh that moves only prices) reads
    every analysis's declarations and runs none of its fits: SciPy (~0.4 s of import) is imported only where a fit,
    a root or a quantile is computed. Fails if a module of the package imports it at the top."""
    code = (
        "import sys, econ.analyses as a, econ.build, econ.refresh, econ.cli; a.analyses(); "
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in ('scipy', 'altair')}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
