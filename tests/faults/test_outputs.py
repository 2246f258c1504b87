"""Outputs never clobber what is not ours; a dead writer's WAL, stale staging paths, a damaged database, a full disk."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from econ.cli import main
from econ.outputs import MARKER, MARKER_TEXT

from .conftest import BUILD, econ, leftovers, ok, signature, tree, workdir

pytestmark = pytest.mark.slow

REFUSED_HINT = "give --reports a new or empty folder, or a report folder econ wrote"
DISTINCT_HINT = (
    "give the data (--data), the database (--db), the report (--reports) and the cache (--cache) places of their own"
)


def run(capsys, *args) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err


def build_args(reports: str, *extra: str) -> list[str]:
    return ["build", "--data", "data", "--db", "out/econ.duckdb", "--cache", "cache", "--reports", reports, *extra]


def test_a_report_folder_with_a_users_files_is_refused_and_kept(data_dir, capsys):
    docs = Path("docs")
    docs.mkdir()
    (docs / "thesis.txt").write_text("work")
    code, err = run(capsys, *build_args("docs"))
    assert (code, err) == (
        1,
        "Error: the report folder docs holds files econ did not write (thesis.txt) and no .econ-report marker; "
        f"econ replaces its report folder whole, so it will not use this one — {REFUSED_HINT}\n",
    )
    assert (docs / "thesis.txt").read_text() == "work" and not Path("out/econ.duckdb").exists()


def test_econ_report_refuses_it_too(fixture_db, data_dir, capsys):
    docs = Path("docs")
    docs.mkdir()
    (docs / "a.txt").write_text("a")
    (docs / "b.txt").write_text("b")
    db = shutil.copy(fixture_db, "econ.duckdb")  # econ report locks its database: the shared one stays the workers'
    code, err = run(capsys, "report", "--db", str(db), "--reports", "docs", "--cache", "cache")
    assert code == 1 and err.startswith("Error: the report folder docs holds files econ did not write (a.txt, b.txt)")
    assert sorted(p.name for p in docs.iterdir()) == ["a.txt", "b.txt"] and (docs / "a.txt").read_text() == "a"


@pytest.mark.parametrize(
    ("make", "reports", "message"),
    [
        (
            lambda: Path("notes.txt").write_text("mine"),
            "notes.txt",
            f"Error: the report folder notes.txt is a file, not a folder; econ will not replace it — {REFUSED_HINT}\n",
        ),
        (
            lambda: (Path("real").mkdir(), Path("link").symlink_to("real")),
            "link",
            f"Error: the report folder link is a symbolic link; econ replaces it whole — {REFUSED_HINT}\n",
        ),
        (
            lambda: None,
            ".",
            "Error: the report folder . (--reports) and the data folder data (--data) "
            "overlap; econ replaces the report folder "
            f"whole — {DISTINCT_HINT}\n",
        ),
        (
            lambda: None,
            "data",
            "Error: the report folder data (--reports) and the data folder data (--data) "
            "overlap; econ replaces the report folder "
            f"whole — {DISTINCT_HINT}\n",
        ),
        (
            lambda: None,
            "out",
            "Error: the report folder out (--reports) and the database out/econ.duckdb (--db) "
            "overlap; econ replaces the report "
            f"folder whole — {DISTINCT_HINT}\n",
        ),
    ],
    ids=["regular-file", "symlink", "dot", "data", "database-folder"],
)
def test_report_targets_that_are_not_ours(data_dir, capsys, make, reports, message):
    make()
    before = tree(Path("."))
    assert run(capsys, *build_args(reports)) == (1, message)
    assert tree(Path(".")) == before  # nothing written, nothing removed


def test_the_database_may_not_live_in_the_data_folder(data_dir, capsys):
    code, err = run(capsys, "build", "--data", "data", "--db", "data/econ.duckdb", "--no-report", "--cache", "cache")
    assert (code, err) == (1, f"Error: the database data/econ.duckdb is in the data folder data — {DISTINCT_HINT}\n")


def small_site(con, out_dir, *, as_of, **_):
    out_dir.mkdir(parents=True)
    (out_dir / "index.html").write_text(f"<p>{as_of}</p>", encoding="utf-8")


@pytest.mark.parametrize("kind", ["empty", "marked", "older-econ"])
def test_an_empty_or_econ_report_folder_is_replaced(fixture_db, data_dir, capsys, monkeypatch, kind):
    import econ.report.site as site

    monkeypatch.setattr(site, "build_site", small_site)
    target = Path("site")
    target.mkdir()
    if kind == "marked":
        (target / MARKER).write_text(MARKER_TEXT)
        (target / "old.html").write_text("old")
    elif kind == "older-econ":  # written before the marker existed: index.html and econ's page script
        (target / "assets").mkdir()
        (target / "assets" / "econ.js").write_text("/* econ report: render inline Vega-Lite specs */")
        (target / "index.html").write_text("old")
    db = shutil.copy(fixture_db, "econ.duckdb")  # econ report locks its database: the shared one stays the workers'
    code, err = run(capsys, "report", "--db", str(db), "--reports", "site", "--cache", "cache")
    assert (code, err) == (0, "")
    assert sorted(p.name for p in target.iterdir()) == [MARKER, "index.html"]


def test_a_dead_writers_wal_never_makes_the_database_unreadable(project, tmp_path):
    """A DuckDB session that wrote to the database and died leaves a .wal: the rebuild sets it aside with the old
    file; sql, tables and report work afterwards."""
    root = workdir(project, tmp_path)
    db = root / "build" / "econ.duckdb"
    writer = (
        "import duckdb, os; con = duckdb.connect(os.environ['DB']); con.execute(\"set checkpoint_threshold = '1TB'\"); "
        "con.execute('create table scribble as select 1 as x'); os.kill(os.getpid(), 9)"
    )
    subprocess.run([sys.executable, "-c", writer], env={**os.environ, "DB": str(db)}, check=False)
    assert (root / "build" / "econ.duckdb.wal").exists()
    ok(econ(root, *BUILD))
    assert not (root / "build" / "econ.duckdb.wal").exists() and leftovers(root) == []
    assert signature(root) == project.new_state
    ok(econ(root, "sql", "--db", "build/econ.duckdb", "select count(*) from build_info"))
    ok(econ(root, "report", "--db", "build/econ.duckdb", "--reports", "reports", "--cache", "build/cache"))


def test_a_stray_wal_gets_a_hint_that_works(project, tmp_path):
    root = workdir(project, tmp_path)
    other = tmp_path / "other.duckdb"
    writer = (
        "import duckdb, os; con = duckdb.connect(os.environ['DB']); con.execute(\"set checkpoint_threshold = '1TB'\"); "
        "con.execute('create table t as select 1 as x'); os.kill(os.getpid(), 9)"
    )
    subprocess.run([sys.executable, "-c", writer], env={**os.environ, "DB": str(other)}, check=False)
    shutil.copy(tmp_path / "other.duckdb.wal", root / "build" / "econ.duckdb.wal")  # a log of another file
    failed = econ(root, "tables", "--db", "build/econ.duckdb")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert failed.stderr.startswith("Error: cannot open build/econ.duckdb: IO Error: Failure while replaying WAL file")
    assert "WAL does not match database file" in failed.stderr
    assert "econ.duckdb.wal was left by a process that wrote the file and died; econ build sets it aside" in (
        failed.stderr
    )
    ok(econ(root, *BUILD))
    ok(econ(root, "tables", "--db", "build/econ.duckdb"))
    assert signature(root) == project.new_state and leftovers(root) == []


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_staging_paths_a_killed_run_recorded_are_removed_and_look_alikes_kept(project, tmp_path):
    """Clean-up removes what a run recorded in its lock before making it, never a file for its name alone: a user's
    files named like econ's staging paths (a dead pid, the old fixed names) stay."""
    root = workdir(project, tmp_path)
    killed = econ(root, *BUILD, env={"ECON_FAULT_AT": "build:report"})
    assert killed.returncode == -9
    staged = leftovers(root)
    assert len(set(staged)) == 3 and all(".stage-" in p for p in staged), staged  # the database, its WAL, the report
    pid = dead_pid()
    look_alikes = [
        f"build/.econ.duckdb.stage-{pid}-0123abcd",
        f"build/.econ.duckdb.tmp-{pid}",  # the fixed names of econ before the record
        f".reports.old-{pid}/index.html",
        f".reports.{pid}.tmp",
    ]
    for name in look_alikes:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"the user's" * 100)
    ok(econ(root, *BUILD))
    assert signature(root) == project.new_state
    assert [p for p in leftovers(root) if str(pid) not in p] == []  # what the killed run staged is gone
    assert all((root / name).read_bytes() == b"the user's" * 100 for name in look_alikes)


BLOCK = 262_144  # DuckDB's block size; blocks start after a 12,288-byte header and each carries a checksum
HEADER = 12_288


@pytest.mark.parametrize("region", [(0.2, 0.5), (0.0, 1.0)], ids=["data-blocks", "every-block"])
def test_a_database_with_corrupt_blocks_is_an_error_and_the_report_stays(project, tmp_path, region):
    """Bytes changed inside blocks (their checksums no longer match): every command that reads says the file is
    damaged (at open when the catalog's blocks are hit, at the first read otherwise), exit 1, no traceback, and
    econ report keeps the previous report."""
    root = workdir(project, tmp_path)
    db = root / "build" / "econ.duckdb"
    size = db.stat().st_size
    with open(db, "r+b") as f:
        for block in range(int(size * region[0]) // BLOCK, int(size * region[1]) // BLOCK):
            f.seek(HEADER + block * BLOCK + 100)
            f.write(b"\xde\xad" * 8)
    before = tree(root / "reports")
    for command in (
        ["report", "--db", "build/econ.duckdb", "--reports", "reports", "--cache", "build/cache"],
        ["tables", "--db", "build/econ.duckdb"],
    ):
        result = econ(root, *command)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith("Error: cannot ") and "Corrupt database file" in result.stderr
        assert result.stderr.rstrip().endswith("the file is damaged; run econ build to write a new one")
    assert tree(root / "reports") == before and leftovers(root) == []
    ok(econ(root, *BUILD))  # and a build writes a new, readable file
    assert signature(root) == project.new_state


def limited(limit_bytes: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return apply


@pytest.mark.parametrize("limit", [1_000_000, 3_000_000])
def test_a_file_size_limit_while_writing_the_database(project, tmp_path, limit):
    """``ulimit -f`` (RLIMIT_FSIZE) makes writes fail with EFBIG, as a full disk does with ENOSPC: a clear error,
    exit 1, the old database and report byte-identical, nothing staged left. (1 MB stops the WAL, 3 MB the
    checkpoint.)"""
    root = workdir(project, tmp_path)
    before = signature(root)
    result = econ(root, *BUILD, preexec_fn=limited(limit))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("Error: cannot write the database build/econ.duckdb: ")
    assert "File too large" in result.stderr and result.stderr.rstrip().endswith("nothing was replaced")
    assert signature(root) == before and leftovers(root) == []


def test_a_full_cache_disk_is_a_notice_and_the_build_goes_on(project, tmp_path):
    """The cache on a 64 KiB tmpfs: every store fails with ENOSPC; the build still succeeds with one notice."""
    root = workdir(project, tmp_path)
    cache = root / "tiny-cache"
    cache.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(cache)], capture_output=True)
    if mounted.returncode:
        pytest.skip(
            f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}); the file-size limit test covers it"
        )
    try:
        args = [*BUILD[: BUILD.index("--cache")], "--cache", "tiny-cache", *BUILD[BUILD.index("--cache") + 2 :]]
        result = ok(econ(root, *args, "--no-report"))
        assert "notice: the cache tiny-cache cannot be written (No space left on device); going on without caching" in (
            result.stderr.splitlines()
        )
        assert signature(root).db == project.new_state.db
    finally:
        subprocess.run(["umount", str(cache)], check=False)


def test_a_cache_folder_that_cannot_be_written_is_one_notice(project, tmp_path):
    """A cache path that is a file (or a read-only folder: root ignores permissions, so it is tested as a file)."""
    root = workdir(project, tmp_path)
    (root / "ro-cache").write_text("not a folder")
    args = [*BUILD[: BUILD.index("--cache")], "--cache", "ro-cache", *BUILD[BUILD.index("--cache") + 2 :]]
    result = ok(econ(root, *args, "--no-report"))
    notices = [line for line in result.stderr.splitlines() if line.startswith("notice: ")]
    assert notices == ["notice: the cache ro-cache cannot be written (Not a directory); going on without caching"]
    assert signature(root).db == project.new_state.db


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder; the file-as-cache case covers it")
def test_a_read_only_cache_folder_is_one_notice(project, tmp_path):
    root = workdir(project, tmp_path)
    (root / "ro-cache").mkdir()
    (root / "ro-cache").chmod(0o555)
    args = [*BUILD[: BUILD.index("--cache")], "--cache", "ro-cache", *BUILD[BUILD.index("--cache") + 2 :]]
    result = ok(econ(root, *args, "--no-report"))
    assert "notice: the cache ro-cache cannot be written (Permission denied); going on without caching" in (
        result.stderr.splitlines()
    )
