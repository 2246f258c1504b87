"""Every relation an analysis reads is among its INPUTS (directly, or through a view over them): INPUTS decide when
it may start (econ.analyses.runner) and key its cache and the incremental build, so a relation read but not declared
lets a change to it keep a stale result (markup_inversions read ``prices`` undeclared until session 33)."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from econ.analyses import analyses
from econ.analyses.runner import BuildContext, _Scenarios
from econ.db.views import relations_named


class Recording:
    """A connection that keeps the SQL it is asked to run (every other attribute is the connection's)."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self._con, self.queries = con, []

    def __getattr__(self, name):
        return getattr(self._con, name)

    def sql(self, query, *args, **kwargs):
        self.queries.append(query)
        return self._con.sql(query, *args, **kwargs)

    def execute(self, query, *args, **kwargs):
        self.queries.append(query)
        return self._con.execute(query, *args, **kwargs)

    def query(self, query, *args, **kwargs):
        self.queries.append(query)
        return self._con.query(query, *args, **kwargs)

    def table(self, name):
        self.queries.append(f"select * from {name}")
        return self._con.table(name)


@pytest.fixture(scope="module")
def database(fixture_db, tmp_path_factory):
    """A copy of the fixture build (every table and view in place), for the analyses to run again."""
    path = tmp_path_factory.mktemp("inputs") / "econ.duckdb"
    shutil.copy(fixture_db, path)
    con = duckdb.connect(str(path))
    yield con
    con.close()


def test_every_relation_an_analysis_reads_is_declared(database):
    con = database
    as_of = con.execute("select as_of from build_info").fetchall()[0][0]
    views = dict(con.execute("select view_name, sql from duckdb_views() where not internal").fetchall())
    ours = {name for (name,) in con.execute("select table_name from duckdb_tables() where not internal").fetchall()}
    ours |= set(views)  # the database's own relations (a catalog query's information_schema.tables is none)
    scenarios = _Scenarios(con)

    def covered(name: str, inputs: set[str], seen: frozenset = frozenset()) -> bool:
        if name in inputs:
            return True
        if name not in views or name in seen:
            return False
        under = relations_named(con, views[name], with_ctes=False)
        return under is not None and all(covered(u, inputs, seen | {name}) for u in under)

    undeclared = {}
    for module in analyses():
        recording = Recording(con)
        module.run(BuildContext(con=recording, as_of=as_of, _scenarios=scenarios))
        written = {t.name for t in module.TABLES}
        read = set()
        for query in recording.queries:
            names = relations_named(con, query, with_ctes=False)
            read |= names or set()
        missing = sorted(n for n in (read & ours) - written if not covered(n, set(module.INPUTS)))
        if missing:
            undeclared[module.NAME] = missing
    assert undeclared == {}
