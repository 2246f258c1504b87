"""Nothing of the user's is ever touched: outputs that name each other or a user's file, journals that name paths
outside econ's outputs or were written in another project (a copy), clean-up of look-alike names.

Each case checks the exact message and that every file under the test folder is byte-identical afterwards. No case
builds a database: the refusals come before anything is loaded, and the journals are made by the real
:class:`econ.journal.Transaction` in a subprocess killed at its commit point (``ECON_FAULT_AT=commit:journal``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from econ.cli import main
from econ.markers import CACHE_MARKER

from .conftest import REPO, tree

pytestmark = pytest.mark.slow

DISTINCT_HINT = (
    "give the data (--data), the database (--db), the report (--reports) and the cache (--cache) places of their own"
)
DB_HINT = "give --db a new file path (such as build/econ.duckdb) or a database econ built"
JOURNAL_HINT = (
    "econ writes its journals itself and acts only on its own outputs: if you did not expect it, delete "
    "build/.econ.duckdb.journal (the database and report are whole either way) and run econ build"
)


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def everything(root: Path) -> dict[str, str]:
    """Every file under ``root`` (staging paths included) with its SHA-256, and every link with its target."""
    files = tree(root) or {}
    hidden = {
        p.relative_to(root).as_posix(): p.read_bytes().hex()
        for p in root.rglob(".*")
        if p.is_file() and not p.is_symlink()
    }
    links = {p.relative_to(root).as_posix(): os.readlink(p) for p in root.rglob("*") if p.is_symlink()}
    return {**files, **hidden, **{f"link:{k}": v for k, v in links.items()}}


def make_database(path: Path, what: str, *, econ_built: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as con:
        table = "build_info" if econ_built else "notes"
        con.execute(f"create table {table} as select date '2026-11-30' as as_of, '{what}' as what")
    return path


# ---------------------------------------------------------------------------- outputs that are not ours


def _notes(root: Path) -> None:
    (root / "notes.txt").write_text("my notes", encoding="utf-8")


def _their_duckdb(root: Path) -> None:
    make_database(root / "theirs.duckdb", "their work", econ_built=False)


def _folder(root: Path) -> None:
    (root / "folder").mkdir()
    (root / "folder" / "a.txt").write_text("a", encoding="utf-8")


def _link(root: Path) -> None:
    make_database(root / "real.duckdb", "old")
    (root / "link.duckdb").symlink_to("real.duckdb")


def _users_cache(root: Path) -> None:
    (root / "mine").mkdir()
    (root / "mine" / "thesis.txt").write_text("work", encoding="utf-8")


def _nothing(root: Path) -> None:
    pass


def _linked_cache(root: Path) -> None:
    (root / "theirs").mkdir()
    (root / "theirs" / "notes.txt").write_text("theirs", encoding="utf-8")
    (root / "theirs" / "site").mkdir()
    (root / "cachelink").symlink_to("theirs")


OUTPUT_CASES = {
    "db-is-data": (
        _nothing,
        ["--db", "data"],
        "the data folder data (--data) and the database data (--db) overlap; econ keeps its inputs and outputs "
        f"apart — {DISTINCT_HINT}",
    ),
    "db-is-a-text-file": (
        _notes,
        ["--db", "notes.txt"],
        "the database notes.txt is a file econ did not write (it is not a DuckDB database); econ replaces its "
        f"database whole, so it will not use this one — {DB_HINT}",
    ),
    "db-is-their-duckdb": (
        _their_duckdb,
        ["--db", "theirs.duckdb"],
        "the database theirs.duckdb is a file econ did not write (it is a DuckDB database without econ's build_info "
        f"table); econ replaces its database whole, so it will not use this one — {DB_HINT}",
    ),
    "db-is-a-folder": (
        _folder,
        ["--db", "folder"],
        f"the database folder is a folder; econ writes the database as one file — {DB_HINT}",
    ),
    "db-is-a-link": (
        _link,
        ["--db", "link.duckdb"],
        f"the database link.duckdb is a symbolic link; econ replaces the database whole — {DB_HINT}",
    ),
    "cache-is-data": (
        _nothing,
        ["--cache", "data"],
        "the data folder data (--data) and the cache data (--cache) overlap; econ keeps its inputs and outputs "
        f"apart — {DISTINCT_HINT}",
    ),
    "cache-holds-data": (
        _nothing,
        ["--cache", "."],
        "the report folder reports (--reports) and the cache . (--cache) "
        "overlap; econ replaces the report folder whole — "
        f"{DISTINCT_HINT}",
    ),
    "cache-holds-the-database": (
        _nothing,
        ["--cache", "out"],
        "the database out/econ.duckdb (--db) and the cache out (--cache) overlap; econ keeps its inputs and outputs "
        f"apart — {DISTINCT_HINT}",
    ),
    "cache-of-users-files": (
        _users_cache,
        ["--cache", "mine"],
        "the cache folder mine holds files econ did not write (thesis.txt) and no .econ-cache marker; econ replaces "
        "the entries of its cache, so it will not use this one — give --cache a new or empty folder, or a cache "
        "folder econ wrote",
    ),
    "cache-is-a-link": (  # its entries were written into the folder it points to and a look-alike entry dropped
        _linked_cache,
        ["--cache", "cachelink"],
        "the cache folder cachelink is a symbolic link; econ drops and writes entries inside it — give --cache a "
        "folder of its own (not a link), or leave it out for build/cache/",
    ),
    "reports-is-the-cache": (
        _nothing,
        ["--reports", "cache"],
        f"the report folder cache (--reports) and the cache cache (--cache) "
        f"overlap; econ replaces the report folder whole — "
        f"{DISTINCT_HINT}",
    ),
}


@pytest.mark.parametrize("case", list(OUTPUT_CASES))
def test_outputs_that_name_each_other_or_a_users_file_are_refused(data_dir, capsys, case):
    make, flags, message = OUTPUT_CASES[case]
    root = data_dir.parent
    make(root)
    args = {"--data": "data", "--db": "out/econ.duckdb", "--cache": "cache", "--reports": "reports"}
    args.update(dict(zip(flags[::2], flags[1::2])))
    before = everything(root)
    code, out, err = run(capsys, "build", *[x for kv in args.items() for x in kv], "--as-of", "2026-11-30")
    assert (code, out, err) == (1, "", f"Error: {message}\n")
    assert everything(root) == before  # nothing written, nothing removed


def test_a_cache_econ_wrote_before_the_marker_is_adopted_and_only_its_entries_are_dropped(tmp_path):
    """A legacy cache (entry folders with a manifest) gets the marker; replacing an entry drops older entries of
    the same name, never a file or folder without a manifest."""
    from econ.cachefiles import begin_entry, commit_entry
    from econ.outputs import claim_cache_folder

    cache = tmp_path / "cache"
    old = cache / "serving" / "0123456789abcdef01234567"
    old.mkdir(parents=True)
    (old / "manifest.json").write_text('{"sha256": {}}')
    claim_cache_folder(cache)
    assert (cache / CACHE_MARKER).is_file()
    (cache / "serving" / "notes").mkdir()  # not an entry: no manifest
    (cache / "serving" / "notes" / "keep.txt").write_text("keep")
    staged = begin_entry(cache / "serving" / "fedcba9876543210fedcba98")
    (staged / "t.parquet").write_bytes(b"x")
    commit_entry(staged, cache / "serving" / "fedcba9876543210fedcba98")
    assert sorted(p.name for p in (cache / "serving").iterdir()) == ["fedcba9876543210fedcba98", "notes"]


# ---------------------------------------------------------------------------- journals

COMMIT = """
import shutil, sys
from pathlib import Path
from econ.journal import Transaction
from econ.lock import Locks
from econ.markers import write_report_marker

root, new_db = Path(sys.argv[1]), Path(sys.argv[2])
db, reports, data = root / "build" / "econ.duckdb", root / "reports", root / "data"
price_files = [data / name for name in sys.argv[3:]]  # data/snapshots/... or data/history/...
with Locks(command="test commit") as locks:
    locks.acquire([db, reports] + ([data] if price_files else []))
    txn = Transaction(db, locks=locks)
    for target in price_files:
        txn.stage(target, kind="snapshot", output=data).write_text("new")
    shutil.copy(new_db, txn.stage(db, kind="database", companions=(".wal",)))
    staged = txn.stage(reports, kind="reports")
    staged.mkdir()
    (staged / "index.html").write_text("new")
    write_report_marker(staged)
    txn.commit()
"""


def project(root: Path) -> Path:
    """An old database and report (what a build left) under ``root``."""
    make_database(root / "build" / "econ.duckdb", "old")
    (root / "reports").mkdir(parents=True)
    (root / "reports" / "index.html").write_text("old")
    (root / "reports" / ".econ-report").write_text("econ")
    return root


def interrupted_commit(root: Path, tmp_path: Path, *price_files: str) -> Path:
    """``root`` with a commit of a new database and report (and ``price_files`` of data/, each to hold ``new``)
    killed right after its journal was written."""
    new_db = make_database(tmp_path / "new.duckdb", "new")
    env = {**os.environ, "PYTHONPATH": str(REPO), "ECON_FAULT_AT": "commit:journal"}
    killed = subprocess.run(
        [sys.executable, "-c", COMMIT, str(root), str(new_db), *price_files], env=env, capture_output=True
    )
    assert killed.returncode == -9, killed.stderr
    assert (root / "build" / ".econ.duckdb.journal").is_file()
    return root


def what(db: Path) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select what from build_info").fetchone()[0]


def test_a_copied_project_never_finishes_the_originals_commit(tmp_path, capsys, monkeypatch):
    """The journal travels with a copy of the project: a command in the copy refuses it (neither folder changes);
    the original finishes its own commit."""
    original = interrupted_commit(project(tmp_path / "original"), tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy, symlinks=True)
    before = {"original": everything(original), "copy": everything(copy)}
    monkeypatch.chdir(copy)
    code, out, err = run(capsys, "tables", "--db", "build/econ.duckdb")
    assert (code, out) == (1, "")
    assert err == (
        f"Error: the journal build/.econ.duckdb.journal of an interrupted run was written in {original / 'build'}, "
        "not here (this project is a copy of that one, or the journal was copied): a commit is finished only in the "
        f"project where it was made; econ did not act on it and touched no file — {JOURNAL_HINT}\n"
    )
    assert {"original": everything(original), "copy": everything(copy)} == before
    monkeypatch.chdir(original)
    code, out, err = run(capsys, "tables", "--db", "build/econ.duckdb", "--format", "csv")
    assert code == 0 and err.startswith("notice: finished the commit of an interrupted run (pid ")
    assert what(original / "build" / "econ.duckdb") == "new"
    assert (original / "reports" / "index.html").read_text() == "new"
    assert what(copy / "build" / "econ.duckdb") == "old" and (copy / "build" / ".econ.duckdb.journal").exists()


def test_a_moved_project_finishes_its_own_commit(tmp_path, capsys, monkeypatch):
    """Paths are relative and the project is the same folder (its inode) after a rename: the commit is finished."""
    original = interrupted_commit(project(tmp_path / "original"), tmp_path)
    moved = tmp_path / "moved"
    original.rename(moved)
    monkeypatch.chdir(moved)
    code, _, err = run(capsys, "tables", "--db", "build/econ.duckdb", "--format", "csv")
    assert code == 0 and err.startswith("notice: finished the commit of an interrupted run (pid ")
    assert what(moved / "build" / "econ.duckdb") == "new" and (moved / "reports" / "index.html").read_text() == "new"


def test_a_refresh_of_a_replayed_history_killed_at_its_commit_is_finished(tmp_path, capsys, monkeypatch):
    """econ refresh of a genai-prices or llm-prices file moves the history's two files in with the database: the
    journal names them as price files (kind snapshot) of data/history/, and the next command finishes the commit."""
    root = project(tmp_path / "p")
    history = root / "data" / "history"
    history.mkdir(parents=True)
    names = ["llm_prices_commits.csv", "llm_prices_changes.csv"]
    for name in names:
        (history / name).write_text("old")
    interrupted_commit(root, tmp_path, *(f"history/{n}" for n in names))
    monkeypatch.chdir(root)
    code, _, err = run(capsys, "tables", "--db", "build/econ.duckdb", "--format", "csv")
    assert code == 0 and err.startswith("notice: finished the commit of an interrupted run (pid "), err
    assert [(history / n).read_text() for n in names] == ["new", "new"]
    assert what(root / "build" / "econ.duckdb") == "new"
    assert sorted(p.name for p in history.iterdir()) == sorted(names)  # no staging or backup copy left


def _identity(folder: Path) -> dict:
    st = os.stat(folder)
    return {"folder": str(folder), "device": st.st_dev, "inode": st.st_ino}


def _journal(root: Path, body: dict) -> None:
    (root / "build" / ".econ.duckdb.journal").write_text(json.dumps(body), encoding="utf-8")


def victims(root: Path) -> None:
    (root / "victim").mkdir()
    (root / "victim" / "a.txt").write_text("a: the user's", encoding="utf-8")
    (root / "victim" / "b.txt").write_text("b: the user's", encoding="utf-8")


JOURNAL_CASES = {
    "user-files-v2": (
        lambda root: {
            "version": 2,
            "project": _identity(root / "build"),
            "moves": [
                {"kind": "reports", "staged": "../victim/a.txt", "target": "../victim/b.txt", "backup": "../victim/c"}
            ],
        },
        "names {root}/victim/a.txt as the staged copy of {root}/victim/b.txt: that is not an output econ writes "
        "for build/econ.duckdb",
    ),
    "user-files-v1": (
        lambda root: {
            "version": 1,
            "moves": [
                {
                    "staged": str(root / "build" / ".econ.duckdb.stage-1-00000000"),
                    "target": str(root / "build" / "econ.duckdb"),
                    "backup": str(root / "build" / ".econ.duckdb.old-1-00000000"),
                },
                {"staged": str(root / "victim" / "a.txt"), "target": str(root / "victim" / "b.txt"), "backup": "x"},
            ],
            "locks": [str(root / "victim" / "b.txt")],
        },
        "names {root}/victim/a.txt as the staged copy of {root}/victim/b.txt: that is not an output econ writes "
        "for build/econ.duckdb",
    ),
    "their-folder-as-a-report": (
        lambda root: {
            "version": 2,
            "project": _identity(root / "build"),
            "moves": [
                {
                    "kind": "reports",
                    "staged": "../.victim.stage-1-0123abcd",
                    "target": "../victim",
                    "backup": "../.victim.old-1-0123abcd",
                }
            ],
        },
        "names {root}/victim, which is not a report folder econ wrote: that is not an output econ writes for "
        "build/econ.duckdb",
    ),
    "another-database": (
        lambda root: {
            "version": 2,
            "project": _identity(root / "build"),
            "moves": [
                {
                    "kind": "database",
                    "staged": "../victim/.b.txt.stage-1-0123abcd",
                    "target": "../victim/b.txt",
                    "backup": "../victim/.b.txt.old-1-0123abcd",
                }
            ],
        },
        "names {root}/victim/b.txt as the database (its database is {root}/build/econ.duckdb): that is not an output "
        "econ writes for build/econ.duckdb",
    ),
    "a-users-file-in-history": (
        lambda root: {
            "version": 2,
            "project": _identity(root / "build"),
            "moves": [
                {
                    "kind": "snapshot",
                    "staged": "../data/history/.notes.txt.stage-1-0123abcd",
                    "target": "../data/history/notes.txt",
                    "backup": "../data/history/.notes.txt.old-1-0123abcd",
                }
            ],
        },
        "names {root}/data/history/notes.txt as a price snapshot: that is not an output econ writes for "
        "build/econ.duckdb",
    ),
    "v1-of-another-project": (
        lambda root: {
            "version": 1,
            "moves": [
                {"staged": "/elsewhere/build/.x.stage-1-0", "target": "/elsewhere/build/econ.duckdb", "backup": "/b"}
            ],
        },
        "was written for the database in /elsewhere/build, not for this one (a copied project?)",
    ),
    "not-a-journal": (lambda root: [1, 2, 3], "is not a journal econ wrote (no list of moves)"),
}


@pytest.mark.parametrize("case", list(JOURNAL_CASES))
def test_a_journal_naming_what_is_not_econs_is_refused_and_nothing_is_touched(tmp_path, capsys, monkeypatch, case):
    """Even a command that only reads (econ tables) used to obey it: victim/b.txt was replaced by victim/a.txt."""
    body, message = JOURNAL_CASES[case]
    root = project(tmp_path / "p")
    victims(root)
    _journal(root, body(root))
    before = everything(root)
    monkeypatch.chdir(root)
    code, out, err = run(capsys, "tables", "--db", "build/econ.duckdb")
    assert (code, out) == (1, "")
    assert err == (
        f"Error: the journal build/.econ.duckdb.journal of an interrupted run {message.format(root=root)}; econ did "
        f"not act on it and touched no file — {JOURNAL_HINT}\n"
    )
    assert everything(root) == before


def test_a_journal_naming_a_users_file_as_a_lock_never_writes_it(tmp_path, capsys, monkeypatch):
    """The locks a recovery takes come from the outputs it finishes, not from the journal's list."""
    original = interrupted_commit(project(tmp_path / "p"), tmp_path)
    victims(original)
    journal = original / "build" / ".econ.duckdb.journal"
    body = json.loads(journal.read_text())
    body["locks"] = ["../victim/b.txt", str(original / "victim" / "a.txt")]
    journal.write_text(json.dumps(body))
    monkeypatch.chdir(original)
    code, _, err = run(capsys, "tables", "--db", "build/econ.duckdb", "--format", "csv")
    assert code == 0 and err.startswith("notice: finished the commit")
    assert (original / "victim" / "a.txt").read_text() == "a: the user's"
    assert (original / "victim" / "b.txt").read_text() == "b: the user's"


def test_a_lock_file_naming_a_folder_never_removes_it(tmp_path):
    """Clean-up removes what a dead run recorded, and only paths with econ's staging or backup names: a lock file
    edited to say 'staged data' used to make the next run delete the data folder."""
    from econ.lock import Locks, lock_path

    project = tmp_path / "p"
    (project / "data").mkdir(parents=True)
    (project / "data" / "prices.csv").write_text("the user's", encoding="utf-8")
    staged = project / ".e.duckdb.stage-1-0123abcd"
    staged.write_text("a dead run's", encoding="utf-8")
    lock_path(project / "e.duckdb").write_text(
        "pid 1 started 0 by econ build\nstaged data\nstaged .e.duckdb.stage-1-0123abcd\n", encoding="utf-8"
    )
    with Locks(command="test") as locks:
        locks.acquire([project / "e.duckdb"])
        removed = locks.remove_inherited()
    assert removed == [staged] and (project / "data" / "prices.csv").read_text() == "the user's"


def test_an_import_never_undoes_a_refresh_killed_after_its_commit_point(tmp_path, capsys, monkeypatch):
    """A refresh killed after its journal was written has committed; an econ import that took the data folder's lock
    next removed the refresh's staged snapshot, and the next command undid the refresh ('had vanished'). Now the
    import refuses until the commit is finished, and then runs."""
    root = project(tmp_path / "p")
    (root / "data" / "snapshots").mkdir(parents=True)
    interrupted_commit(root, tmp_path, "snapshots/openrouter_2026-12-05.csv")
    staged = [p for p in (root / "data" / "snapshots").iterdir() if p.name.startswith(".")]
    assert len(staged) == 1
    monkeypatch.chdir(root)
    example = REPO / "examples" / "openrouter_models_2026-12-01.json"
    code, _, err = run(capsys, "import", "openrouter", str(example), "--data", "data")
    assert code == 1 and err.startswith("Error: an interrupted commit is not finished (its journal "), err
    assert staged[0].exists()
    code, _, err = run(capsys, "tables", "--db", "build/econ.duckdb", "--format", "csv")
    assert code == 0 and err.startswith("notice: finished the commit of an interrupted run (pid ")
    assert (root / "data" / "snapshots" / "openrouter_2026-12-05.csv").read_text() == "new"
    code, _, err = run(capsys, "import", "openrouter", str(example), "--data", "data")
    assert code == 0, err
