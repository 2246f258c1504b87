"""A page whose reads did not change is reused from the cache; the site equals one drawn afresh (econ.report.reuse)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from econ.report.reuse import Recorder
from econ.report.site import build_site
from tests.report.conftest import AS_OF


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_site_that_reuses_unchanged_pages_equals_a_fresh_one(built_db, tmp_path):
    db = tmp_path / "econ.duckdb"
    shutil.copy(built_db, db)
    cache = tmp_path / "cache"
    with duckdb.connect(str(db)) as con:
        con.execute(f"set variable as_of = date '{AS_OF.isoformat()}'")
        first = build_site(con, tmp_path / "first", as_of=AS_OF, cache_dir=cache)
        assert first.reused == []
        # a result only the training page shows changes (a fitted exponent)
        con.execute("update scaling_law_fits set alpha_exponent = alpha_exponent * 1.5")
        second = build_site(con, tmp_path / "second", as_of=AS_OF, cache_dir=cache)
        fresh = build_site(con, tmp_path / "fresh", as_of=AS_OF)
        assert "training" not in second.reused and "serving" in second.reused and "sources" not in second.reused
        assert _files(tmp_path / "second") == _files(tmp_path / "fresh")
        assert _files(tmp_path / "first")["training.html"] != _files(tmp_path / "fresh")["training.html"]
        # a damaged entry is drawn again, not copied
        (body,) = (cache / "pages" / "serving").glob("*/body.html")
        body.write_text("damaged", encoding="utf-8")
        third = build_site(con, tmp_path / "third", as_of=AS_OF, cache_dir=cache)
        assert "serving" not in third.reused and "prices" in third.reused
        assert _files(tmp_path / "third") == _files(tmp_path / "fresh")
    assert fresh.reused == []


def test_the_recorder_names_what_a_query_reads(built_db):
    with duckdb.connect(str(built_db), read_only=True) as con:
        recorder = Recorder(con)
        recorder.sql(
            "with a as (select * from prices) select * from a join providers using (provider) where 1 = ?", params=[1]
        )
        recorder.execute("select count(*) from models")
        assert recorder.reads() == {"a", "prices", "providers", "models"}
        recorder.sql("select * from duckdb_tables()")
        assert recorder.reads() == {"*"}  # the catalog: the page reads everything
        assert not hasattr(recorder, "table")  # only sql and execute: nothing reads past it
