"""econ build: atomic, readable by the DuckDB CLI 1.5, comments on every column, a summary."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest

from econ.cli import main
from econ.db import STORAGE_VERSION
from econ.errors import ReportError

INPUT_TABLES = ["hardware", "memory_tiers", "models", "prices", "rental_prices", "scenarios"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(capsys, *extra) -> tuple[int, str, str]:
    code = main(
        [
            "build",
            "--data",
            "data",
            "--db",
            "out.duckdb",
            "--no-report",
            "--cache",
            "cache",
            "--as-of",
            "2026-11-30",
            *extra,
        ]
    )
    out = capsys.readouterr()
    return code, out.out, out.err


def test_build_prints_summary(data_dir, capsys):
    code, out, err = build(capsys)
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("wrote out.duckdb (") and " tables, " in first and first.endswith(" s")
    with duckdb.connect("out.duckdb", read_only=True) as con:  # the counts it prints are the database's
        tables = con.execute("select count(*) from duckdb_tables()").fetchone()[0]
        views = con.execute("select count(*) from duckdb_views() where not internal").fetchone()[0]
    assert f"({tables} tables, {views} views, " in first
    assert out.splitlines()[-1].startswith("next: econ tables --db out.duckdb")


def test_failed_build_leaves_previous_database_byte_identical(data_dir, capsys):
    assert build(capsys)[0] == 0
    before = sha(Path("out.duckdb"))
    prices = data_dir / "prices.csv"
    prices.write_text(prices.read_text().replace(",25,", ",2S,"))
    code, _, err = build(capsys)
    assert code == 1 and "is not a number" in err
    assert sha(Path("out.duckdb")) == before
    # nothing staged is left; the lock file stays (removing it could let two runs in), and so does the record of the
    # previous build, which still describes the database that is there
    left = sorted(p.name for p in Path(".").iterdir() if "out.duckdb" in p.name)
    assert left == [".out.duckdb.built", ".out.duckdb.lock", "out.duckdb"]


def test_failure_after_loading_also_leaves_database_intact(data_dir, capsys, tmp_path):
    """A view that does not compile fails the build after the tables were written: nothing is replaced."""
    assert build(capsys)[0] == 0
    before = sha(Path("out.duckdb"))
    queries = tmp_path / "queries"
    shutil.copytree(Path(__file__).resolve().parent.parent / "queries", queries)
    (queries / "broken.sql").write_text("select no_such_column from prices")
    from econ.build import build as build_fn
    from econ.errors import EconError

    with pytest.raises(EconError, match="broken.sql: view broken does not compile"):
        build_fn(data_dir=data_dir, db_path=Path("out.duckdb"), queries_dir=queries, cache_dir=None)
    assert sha(Path("out.duckdb")) == before


def test_every_column_has_a_comment(fixture_db):
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        missing = con.execute(
            "select table_name, column_name from duckdb_columns() where table_name in "
            f"({', '.join(repr(t) for t in INPUT_TABLES)}) and (comment is null or comment = '')"
        ).fetchall()
        unit = con.execute(
            "select comment from duckdb_columns() where table_name = 'hardware' and column_name = "
            "'hbm_bandwidth_bytes_per_s'"
        ).fetchone()[0]
        table_comment = con.execute("select comment from duckdb_tables() where table_name = 'models'").fetchone()[0]
    assert missing == []
    assert unit == "HBM bandwidth per chip [bytes/s]"
    assert "Grain: one row per open-weight model architecture" in table_comment


def test_units_are_converted_once(fixture_db):
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        row = con.execute(
            "select peak_bf16_flop_per_s, hbm_capacity_bytes, hbm_bandwidth_bytes_per_s, "
            "scale_out_bandwidth_bytes_per_s "
            "from hardware where chip = 'H100'"
        ).fetchone()
        params = con.execute("select params_total, pretrain_tokens from models where model = 'DeepSeek-V3'").fetchone()
    assert row == pytest.approx((989.4e12, 80e9, 3.35e12, 400e9 / 8))
    assert params == pytest.approx((671e9, 14.8e12))


def duckdb_cli() -> str | None:
    beside = Path(sys.executable).parent / "duckdb"
    return str(beside) if beside.exists() else shutil.which("duckdb")


@pytest.mark.skipif(
    duckdb_cli() is None, reason="the duckdb CLI (pip install duckdb-cli, in the test extras) is not installed"
)
def test_standalone_duckdb_cli_opens_the_database(fixture_db):
    cli = duckdb_cli()
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
    out = subprocess.run(
        [
            cli,
            "-readonly",
            "-csv",
            str(fixture_db),
            "-c",
            "select count(*) as n from models; select critical_batch_ratio from hardware_derived "
            "where chip = 'TPU-v5e' and number_format = 'bf16'",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines[:2] == ["n", "3"]
    assert float(lines[3]) == pytest.approx(197e12 / 0.819e12)
    # The file is written in econ.db.STORAGE_VERSION's format, which the test extra's CLI must be able to read.
    assert version.startswith(STORAGE_VERSION.rsplit(".", 1)[0]), (version, STORAGE_VERSION)


def small_site(calls: list):
    """A stand-in for econ.report.site.build_site: one page showing a value of the database (the real site takes ~5
    s)."""

    def build_site(con, out_dir, *, as_of, **_):
        calls.append(as_of)
        usd = con.execute("select max(usd_per_chip_hour) from rental_prices").fetchone()[0]
        out_dir.mkdir(parents=True)
        (out_dir / "index.html").write_text(f"<p>{as_of}: up to {usd} USD/chip-hour</p>", encoding="utf-8")

    return build_site


def test_unchanged_rebuild_reuses_the_stored_report(data_dir, capsys, monkeypatch):
    """Same inputs, code and date: the site is copied from build/cache/site, byte-identical; new data redraws it."""
    import econ.report.site as site

    calls = []
    monkeypatch.setattr(site, "build_site", small_site(calls))
    args = [
        "build",
        "--data",
        "data",
        "--db",
        "out.duckdb",
        "--cache",
        "cache",
        "--reports",
        "reports",
        "--as-of",
        "2026-11-30",
    ]
    assert main(args) == 0 and len(calls) == 1
    index = Path("reports/index.html")
    assert index.read_text(encoding="utf-8") == "<p>2026-11-30: up to 2.99 USD/chip-hour</p>"
    index.write_text("edited", encoding="utf-8")  # the next build must replace it with the stored copy
    assert main(args) == 0 and len(calls) == 1
    assert index.read_text(encoding="utf-8") == "<p>2026-11-30: up to 2.99 USD/chip-hour</p>"
    rental = data_dir / "rental_prices.csv"  # new data (read by the fleet analysis only, so the rebuild is quick)
    rental.write_text(rental.read_text().replace("H100,Lambda,on_demand,2.99,", "H100,Lambda,on_demand,3.49,"))
    assert main(args) == 0 and len(calls) == 2
    assert index.read_text(encoding="utf-8") == "<p>2026-11-30: up to 3.49 USD/chip-hour</p>"
    capsys.readouterr()


def test_edited_view_redraws_the_report(data_dir, tmp_path, monkeypatch):
    """A page can show a view: a changed queries/*.sql must not restore the site drawn from the old one."""
    import econ.report.site as site
    from econ.build import build as build_fn

    calls = []
    monkeypatch.setattr(site, "build_site", small_site(calls))
    queries = tmp_path / "queries"
    shutil.copytree(Path(__file__).resolve().parent.parent / "queries", queries)
    kw = {
        "data_dir": data_dir,
        "db_path": Path("out.duckdb"),
        "queries_dir": queries,
        "cache_dir": Path("cache"),
        "reports_dir": Path("reports"),
        "as_of": date(2026, 11, 30),
    }
    build_fn(**kw)
    build_fn(**kw)
    assert len(calls) == 1
    view = queries / "io_price_ratio.sql"
    view.write_text(view.read_text().replace("where p.input_usd_per_mtok > 0", "where p.input_usd_per_mtok > 1"))
    build_fn(**kw)
    assert len(calls) == 2


def test_failed_report_leaves_no_staged_folder_and_the_old_report(data_dir, capsys, monkeypatch):
    import econ.report.site as site

    args = [
        "build",
        "--data",
        "data",
        "--db",
        "out.duckdb",
        "--cache",
        "cache",
        "--reports",
        "reports",
        "--as-of",
        "2026-11-30",
    ]
    monkeypatch.setattr(site, "build_site", small_site([]))
    assert main(args) == 0
    before = sha(Path("out.duckdb")), Path("reports/index.html").read_bytes()

    def broken(con, out_dir, *, as_of, **_):
        (out_dir / "assets").mkdir(parents=True)
        raise ReportError("simulated report failure")

    monkeypatch.setattr(site, "build_site", broken)
    shutil.rmtree("cache/site")  # nothing stored to restore: the site is drawn again
    assert main([*args, "--force"]) == 1 and capsys.readouterr().err == "Error: simulated report failure\n"
    assert (sha(Path("out.duckdb")), Path("reports/index.html").read_bytes()) == before
    assert sorted(p.name for p in Path(".").iterdir() if p.name.startswith("reports")) == ["reports"]


def test_database_folder_that_cannot_be_made(data_dir, capsys):
    Path("blocker").write_text("a file, not a folder")
    code = main(["build", "--data", "data", "--db", "blocker/out.duckdb", "--no-report", "--cache", "cache"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.startswith("Error: cannot write blocker/out.duckdb: its lock file blocker/.out.duckdb.lock cannot be ")
    assert err.endswith("— check that the folder exists and is writable, or pass another --db, --reports or --data\n")


def test_a_rebuild_with_nothing_changed_rebuilds_nothing_until_an_input_or_output_changes(data_dir, capsys):
    """As make judges, by content: the same code, date, data/, queries/ and libraries, and the database and report
    byte for byte as that build wrote them, give 'nothing changed'; a changed data file, an edited report page or
    --force build again."""
    args = ["build", "--data", "data", "--db", "out.duckdb", "--cache", "cache", "--reports", "reports"]
    args += ["--as-of", "2026-11-30"]
    assert main(args) == 0 and capsys.readouterr().out.startswith("wrote out.duckdb")
    before = sha(Path("out.duckdb"))
    assert main(args) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("nothing changed since out.duckdb and reports/index.html were written")
        and sha(Path("out.duckdb")) == before
    )
    Path("reports/index.html").write_text("edited", encoding="utf-8")
    assert main(args) == 0 and capsys.readouterr().out.startswith("wrote out.duckdb")
    assert Path("reports/index.html").read_text(encoding="utf-8") != "edited"
    assert main([*args, "--force"]) == 0 and capsys.readouterr().out.startswith("wrote out.duckdb")
    (data_dir / "scenarios.csv").write_text((data_dir / "scenarios.csv").read_text() + "\n")
    assert main(args) == 0 and capsys.readouterr().out.startswith("wrote out.duckdb")
    assert main([*args, "--as-of", "2026-12-01"]) == 0 and capsys.readouterr().out.startswith("wrote out.duckdb")
    # a write to the database leaves its bytes alone until a checkpoint: the write-ahead log beside it says so
    assert main(args) == 0 and capsys.readouterr().out.startswith("wrote out.duckdb")
    assert main(args) == 0 and capsys.readouterr().out.startswith("nothing changed")
    built = sha(Path("out.duckdb"))
    edit = (  # a DuckDB session that wrote and died before a checkpoint, as the DuckDB CLI killed would
        "import duckdb, os; c = duckdb.connect('out.duckdb'); c.execute(\"set checkpoint_threshold = '1GB'\"); "
        "c.execute('create table hand_edit as select 42 as x'); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", edit], check=True)
    assert Path("out.duckdb.wal").exists() and sha(Path("out.duckdb")) == built  # the file alone looks untouched
    assert main(args) == 0 and capsys.readouterr().out.startswith("wrote out.duckdb")
