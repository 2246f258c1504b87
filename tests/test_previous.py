"""A build that starts from the previous database (econ.previous) writes what a build from an empty file writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from econ.build import build
from econ.db import content_fingerprint
from econ.fingerprint import code_fingerprint
from econ.paths import QUERIES_DIR
from econ.previous import KEYS_TABLE, PREFIX, VERSIONS_TABLE, copy_previous
from econ.uptodate import record_path
from tests.conftest import AS_OF, FIXTURE_DATA


def _previous(fixture_db: Path, folder: Path) -> Path:
    """A copy of the fixture database with its build record, as a build leaves them."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(fixture_db, folder / "econ.duckdb")
    shutil.copy(record_path(fixture_db), record_path(folder / "econ.duckdb"))
    return folder / "econ.duckdb"


def _changed_data(folder: Path) -> Path:
    """The fixture data with one hand-kept price cut (claude-opus-4-6 standard input 5 -> 4 USD/MTok)."""
    data = folder / "data"
    shutil.copytree(FIXTURE_DATA, data)
    prices = data / "prices.csv"
    lines = prices.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[1].startswith("anthropic,claude-opus-4-6,standard,0,") and ",5,25,0.5," in lines[1]
    lines[1] = lines[1].replace(",5,25,0.5,", ",4,25,0.5,", 1)
    prices.write_text("".join(lines), encoding="utf-8")
    return data


def _objects(con, db: str) -> dict[str, str]:
    return dict(
        con.execute(
            f"select table_name, 'table' from duckdb_tables() where database_name = '{db}' union all "
            f"select view_name, 'view' from duckdb_views() where database_name = '{db}' and not internal"
        ).fetchall()
    )


def differences(a: Path, b: Path) -> list[str]:
    """Every table and view of two databases compared exactly: names, kinds, columns and types, comments, and rows
    (as multisets: ``except all`` both ways, so a value that differs in the last bit is a difference)."""
    con = duckdb.connect()
    con.execute(f"attach '{a}' as a (read_only)")
    con.execute(f"attach '{b}' as b (read_only)")
    objects_a, objects_b = _objects(con, "a"), _objects(con, "b")
    out = [f"{name}: only in one" for name in sorted(set(objects_a) ^ set(objects_b))]
    comments = (
        "select table_name, column_name, data_type, comment from duckdb_columns() where database_name = '{}' "
        "order by all"
    )
    columns_a, columns_b = (set(con.execute(comments.format(x)).fetchall()) for x in ("a", "b"))
    if columns_a != columns_b:  # name the first rows that differ: a flaky difference is found by what it was
        out.append(
            "columns, types or column comments differ: "
            f"{sorted(columns_a - columns_b, key=str)[:3]} against {sorted(columns_b - columns_a, key=str)[:3]}"
        )
    described = "select table_name, comment from duckdb_tables() where database_name = '{}' order by all"
    if con.execute(described.format("a")).fetchall() != con.execute(described.format("b")).fetchall():
        out.append("table comments differ")
    for name in sorted(set(objects_a) & set(objects_b)):
        for x, y in (("a", "b"), ("b", "a")):
            (extra,) = con.execute(
                f'select count(*) from (select * from {x}."{name}" except all select * from {y}."{name}")'
            ).fetchall()[0]
            if extra:
                out.append(f"{name}: {extra} rows only in {x}")
    return out


@pytest.mark.slow
def test_a_build_from_the_previous_database_equals_one_from_an_empty_file_after_a_price_change(fixture_db, tmp_path):
    data = _changed_data(tmp_path)
    incremental = _previous(fixture_db, tmp_path / "incremental")
    kept = build(data_dir=data, db_path=incremental, cache_dir=None, reports_dir=None, as_of=AS_OF, force=True)
    statuses = set(kept.analyses.values())
    assert statuses == {"kept", "ran"}  # the price reaches some analyses, not all
    fresh = build(data_dir=data, db_path=tmp_path / "fresh" / "econ.duckdb", cache_dir=None, reports_dir=None,
                  as_of=AS_OF)  # fmt: skip
    assert set(fresh.analyses.values()) == {"ran"}
    assert differences(incremental, fresh.db_path) == []
    with duckdb.connect(str(incremental), read_only=True) as con:
        assert con.execute(f"select count(*) from duckdb_tables() where table_name like '{PREFIX}%'").fetchall() == [
            (0,)
        ]
        assert con.execute(f"select count(*) from {KEYS_TABLE}").fetchall() == [(len(kept.analyses),)]
    # and the comparison sees a changed price: the previous database differs from both
    assert any(d.startswith("prices:") for d in differences(fixture_db, fresh.db_path))


def test_a_changed_view_file_makes_the_views_again(fixture_db, tmp_path):
    """The views come back from the previous database only when no queries/*.sql file changed: a new header on one
    file is the view's comment in the rebuilt database (every analysis kept)."""
    queries = tmp_path / "queries"
    shutil.copytree(QUERIES_DIR, queries)
    view = queries / "calibration_seen.sql"
    view.write_text(
        "-- Seen models and chips, said another way.\n" + view.read_text(encoding="utf-8"), encoding="utf-8"
    )
    previous = _previous(fixture_db, tmp_path / "prev")
    rebuilt = build(data_dir=FIXTURE_DATA, db_path=previous, queries_dir=queries, cache_dir=None, reports_dir=None,
                    as_of=AS_OF, force=True)  # fmt: skip
    assert set(rebuilt.analyses.values()) == {"kept"}
    with duckdb.connect(str(previous), read_only=True) as con:
        (said,) = con.execute("select comment from duckdb_views() where view_name = 'calibration_seen'").fetchall()[0]
        assert said.startswith("Seen models and chips, said another way. The models and chips")
        assert {r[0] for r in con.execute("select view_name from duckdb_views() where not internal").fetchall()} == {
            f.stem for f in queries.glob("*.sql")
        }


def test_the_recorded_input_fingerprints_are_what_the_tables_hold(fixture_db):
    """Previous.keep_input trusts build_versions instead of hashing the previous table again: each recorded fingerprint
    (of the frame the build loaded) must be what hashing the written table gives."""
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        recorded = dict(con.execute(f"select relation, version from {VERSIONS_TABLE} where kind = 'input'").fetchall())
        assert {"prices", "models", "hardware", "inferencex_train"} <= set(recorded)
        assert recorded == {name: content_fingerprint(con, name) for name in recorded}


def test_the_previous_database_is_used_only_when_it_is_what_its_build_wrote(fixture_db, tmp_path):
    previous = _previous(fixture_db, tmp_path / "prev")
    staged = tmp_path / "prev" / ".staged.duckdb"
    code = code_fingerprint()
    assert copy_previous(previous, staged, code_hash=code)
    assert staged.read_bytes() == previous.read_bytes()
    staged.unlink()
    assert not copy_previous(previous, staged, code_hash="other code")  # built by other code
    assert not staged.exists()
    Path(f"{previous}.wal").write_bytes(b"")  # written to after the build
    assert not copy_previous(previous, staged, code_hash=code)
    Path(f"{previous}.wal").unlink()
    with duckdb.connect(str(previous)) as con:  # edited in the DuckDB CLI: its bytes no longer match the record
        con.execute("update prices set input_usd_per_mtok = 0")
    assert not copy_previous(previous, staged, code_hash=code)
    assert not staged.exists()
    record_path(previous).unlink()
    assert not copy_previous(previous, staged, code_hash=code)


def test_a_build_that_fails_after_starting_from_the_copy_leaves_the_previous_database(
    fixture_db, tmp_path, monkeypatch
):
    previous = _previous(fixture_db, tmp_path / "prev")
    before = previous.read_bytes()

    def fail(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr("econ.build.create_views", fail)  # after the copy is opened and its tables set aside
    with pytest.raises(RuntimeError, match="injected"):
        build(data_dir=FIXTURE_DATA, db_path=previous, cache_dir=None, reports_dir=None, as_of=AS_OF, force=True)
    assert previous.read_bytes() == before
    assert sorted(p.name for p in previous.parent.iterdir() if not p.name.endswith(".lock")) == [
        ".econ.duckdb.built",
        "econ.duckdb",
    ]


def test_a_library_upgrade_reruns_every_analysis_instead_of_keeping_its_tables(fixture_db, tmp_path, monkeypatch):
    """The same code, data and date with another numpy (say): the previous results came from other numerics, so none
    is kept (an analysis's key holds the library versions, as the build's own key does)."""
    previous = _previous(fixture_db, tmp_path / "prev")
    same = build(data_dir=FIXTURE_DATA, db_path=previous, cache_dir=None, reports_dir=None, as_of=AS_OF, force=True)
    assert set(same.analyses.values()) == {"kept"}
    monkeypatch.setattr("econ.build.library_versions", lambda: "numpy=99.0")
    upgraded = build(data_dir=FIXTURE_DATA, db_path=previous, cache_dir=None, reports_dir=None, as_of=AS_OF, force=True)
    assert set(upgraded.analyses.values()) == {"ran"}
