"""Fault injection: a project built once (old state) and its two successors (new data, a refresh), copied per case.

``project`` builds the fixture data set with the CLI (database, report, cache), then the same project
with one rental price changed (``new``) and with a LiteLLM snapshot refreshed in (``refreshed``). A case
copies the old outputs and their build record together with the successor's data and cache into a fresh folder
(:func:`workdir`), so the run it kills starts from the old database as a user's next build does (keeping the
analyses whose inputs did not change, restoring the others and the site from the cache: ~0.7 s) and the state after
it can be compared with the two known ones (:func:`signature`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from econ.files import staging_owner
from econ.uptodate import record_path
from tests.conftest import shared_folder

REPO = Path(__file__).resolve().parents[2]
FIXTURE_DATA = REPO / "tests" / "fixtures" / "data"
LITELLM_SLICE = REPO / "tests" / "fixtures" / "importers" / "litellm_slice.json"
AS_OF = "2026-11-30"
SNAPSHOT_DATE = "2026-11-20"
SOURCE_DATE_EPOCH = "1796083200"  # 2026-12-01: econ refresh builds for this date (its --as-of dates the snapshot)
BUILD = ["build", "--data", "data", "--db", "build/econ.duckdb", "--cache", "build/cache", "--reports", "reports"]
BUILD += ["--as-of", AS_OF]
REFRESH = ["refresh", str(LITELLM_SLICE), "--as-of", SNAPSHOT_DATE, "--data", "data", "--db", "build/econ.duckdb"]
REFRESH += ["--cache", "build/cache", "--reports", "reports"]
LEFTOVER = (".*.stage-*", ".*.old-*", "*.journal", "*.wal", "*.tmp")


def econ(cwd: Path, *args: str, env: dict | None = None, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    """``python -m econ ARGS`` in ``cwd`` (this checkout's econ, a fixed SOURCE_DATE_EPOCH, no fault injection
    unless ``env`` asks for it), output captured as text."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("ECON_FAULT")}
    full_env = {**inherited, "PYTHONPATH": str(REPO), "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "econ", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def tree(folder: Path) -> dict[str, str] | None:
    """{relative path: sha256} of every file under ``folder`` (None: no folder).

    A killed run's staging paths are not state (nothing reads them; the next writing run removes them, which
    :func:`leftovers` checks), so they are left out.
    """
    if not folder.is_dir():
        return None
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and staging_owner(p) is None
    }


def database(db: Path) -> str | None:
    """What the database says, independent of its bytes: every table's name and rows, and a few tables whole."""
    if not db.exists():
        return None
    with duckdb.connect(str(db), read_only=True) as con:
        names = [r[0] for r in con.execute("select table_name from duckdb_tables() order by 1").fetchall()]
        parts = {n: con.execute(f'select count(*) from "{n}"').fetchall()[0][0] for n in names}
        for table in ("rental_prices", "build_info", "price_snapshots", "fleet_plan"):
            if table in names:
                parts[table + "*"] = [
                    list(map(str, r)) for r in con.execute(f"select * from {table} order by all").fetchall()
                ]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class State:
    data: dict | None
    db: str | None
    reports: dict | None


def signature(root: Path) -> State:
    return State(tree(root / "data"), database(root / "build" / "econ.duckdb"), tree(root / "reports"))


def leftovers(root: Path) -> list[str]:
    """Staging paths, backups, journals, WALs and temporary files anywhere under ``root`` (lock files are fine)."""
    return sorted(str(p.relative_to(root)) for pattern in LEFTOVER for p in root.rglob(pattern))


@dataclass(frozen=True)
class Project:
    old: Path
    new: Path
    refreshed: Path
    old_state: State
    new_state: State
    refreshed_state: State


def _make_project(root: Path) -> None:
    old = root / "old"
    old.mkdir()
    shutil.copytree(FIXTURE_DATA, old / "data")
    ok(econ(old, *BUILD))
    new = root / "new"
    shutil.copytree(old, new)
    rental = new / "data" / "rental_prices.csv"
    rental.write_text(rental.read_text().replace("H100,Lambda,on_demand,2.99,", "H100,Lambda,on_demand,3.49,"))
    ok(econ(new, *BUILD))
    refreshed = root / "refreshed"
    shutil.copytree(old, refreshed)
    ok(econ(refreshed, *REFRESH))


@pytest.fixture(scope="session")
def project(tmp_path_factory) -> Project:
    """Three states of a small project (built, rebuilt with new data, refreshed), made once for all xdist workers and
    only ever copied (:func:`workdir`)."""
    root = shared_folder(tmp_path_factory, "faults-project", _make_project)
    old, new, refreshed = root / "old", root / "new", root / "refreshed"
    states = [signature(p) for p in (old, new, refreshed)]
    assert len({s.db for s in states}) == 3 and len({json.dumps(s.reports) for s in states}) == 3, "states must differ"
    assert states[0].data != states[2].data
    return Project(old, new, refreshed, *states)


def workdir(project: Project, tmp_path: Path, successor: str = "new") -> Path:
    """The old database (with its build record, as a user's project holds it) and report with the successor's cache,
    and the successor's data (``new``) or the old data (``refreshed``: the refresh brings the snapshot)."""
    source = project.new if successor == "new" else project.refreshed
    root = tmp_path / "work"
    root.mkdir(parents=True)
    shutil.copytree((source if successor == "new" else project.old) / "data", root / "data")
    (root / "build").mkdir()
    shutil.copy(project.old / "build" / "econ.duckdb", root / "build" / "econ.duckdb")
    shutil.copy(record_path(project.old / "build" / "econ.duckdb"), record_path(root / "build" / "econ.duckdb"))
    shutil.copytree(source / "build" / "cache", root / "build" / "cache")
    shutil.copytree(project.old / "reports", root / "reports")
    return root
