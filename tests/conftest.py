"""Shared fixtures: a copy of the tiny fixture data set, and a database built from it."""

from __future__ import annotations

import compileall
import fcntl
import os
import shutil
import signal
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from hypothesis import settings

import econ  # noqa: F401  (before anything loads NumPy: econ sets its BLAS threads)
from tests.guard import budget
from tests.guard.outside import install

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_DATA = FIXTURES / "data"
REPO = Path(__file__).resolve().parent.parent
EXTERNAL = FIXTURES / "external"
REFERENCE = FIXTURES / "reference"
AS_OF = date(2026, 11, 30)

# The property tests draw the same examples on every run, so a red suite comes from a change, not from a seed (CI on a
# fresh machine must pass or fail the same way every day). ECON_HYPOTHESIS_EXPLORE=1 draws new examples each run, to
# look for counterexamples on purpose; a new one becomes an @example of its test.
settings.register_profile("econ", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("explore" if os.environ.get("ECON_HYPOTHESIS_EXPLORE") == "1" else "econ")


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    """A writable copy of tests/fixtures/data at ./data, with the working directory at its parent.

    Error messages name files relative to the working directory, so tests can pin
    ``data/prices.csv:5: …`` exactly.
    """
    target = tmp_path / "data"
    shutil.copytree(FIXTURE_DATA, target)
    monkeypatch.chdir(tmp_path)
    return target


def shared_folder(tmp_path_factory, name: str, make: Callable[[Path], object]) -> Path:
    """A folder ``make`` fills once per test run, whichever pytest-xdist worker asks first: the others wait for it
    (a lock in the run's shared temporary folder) and read it. Whatever is in it must only be read or copied."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with (root / f"shared-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


def _build_into(data_dir: Path) -> Callable[[Path], object]:
    def make(folder: Path) -> None:
        from econ.build import build

        build(data_dir=data_dir, db_path=folder / "econ.duckdb", cache_dir=None, reports_dir=None, as_of=AS_OF)

    return make


@pytest.fixture(scope="session")
def fixture_db(tmp_path_factory) -> Path:
    """The fixture data set built once into a database (no report, no cache), shared by the xdist workers."""
    return shared_folder(tmp_path_factory, "fixture-db", _build_into(FIXTURE_DATA)) / "econ.duckdb"


@pytest.fixture(scope="session")
def real_db(tmp_path_factory) -> Path:
    """The shipped data/ built once into a database with every analysis (no report, no cache), shared by the xdist
    workers (it takes ~15 s to build)."""
    return shared_folder(tmp_path_factory, "real-db", _build_into(REPO / "data")) / "econ.duckdb"


# ---------------------------------------------------------------------------- nothing outside the repository

OUTSIDE: list[str] = []


def pytest_configure(config):
    """Record every read beside the checkout, here and in every Python subprocess (tests/guard/sitecustomize.py)."""
    # Commands size their tables to the terminal: pin the width a pipe gets (pytest-xdist's workers inherit the
    # controller's COLUMNS), so what a test reads does not depend on who runs it or how.
    os.environ["COLUMNS"] = "100"
    # Long commands draw their progress on stderr; tests that pin stderr (errors, notices) read it without.
    # tests/test_progress.py turns it back on.
    os.environ["ECON_PROGRESS"] = "off"
    # A suite started in the background by a script (`pytest &` without job control) inherits Ctrl-C ignored, and so
    # would every econ it starts: the tests that press Ctrl-C would time out. Take Ctrl-C back; an exec resets it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    log = Path(config.rootpath) / ".pytest-outside-reads.log"
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) starts the log afresh
        log.unlink(missing_ok=True)
        # The tests start hundreds of Python processes (econ commands, builds). A shell with PYTHONDONTWRITEBYTECODE
        # set has each of them compile econ's ~270 modules again (~0.35 s of a 1.5 s build from the cache); Python
        # still reads a compiled module it finds, so compile them once here, as a user's first run does (__pycache__
        # is ignored by git).
        for package in (REPO / "econ", Path(__file__).parent / "guard"):
            compileall.compile_dir(package, quiet=1)
    os.environ["ECON_TEST_OUTSIDE_LOG"] = str(log)
    os.environ["ECON_TEST_REPO"] = str(REPO)
    guard = str(Path(__file__).parent / "guard")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (guard, os.environ.get("PYTHONPATH")) if p)
    install(str(REPO), OUTSIDE.append)


def pytest_sessionfinish(session, exitstatus):
    """Fail the run if any test, build or report read a path beside the repository, or if the slowest tests grew
    past the budget of ``pyproject.toml`` (``tests/guard/budget.py``). A pytest-xdist worker hands its reads to the
    controller through the log; the controller judges."""
    log = Path(os.environ["ECON_TEST_OUTSIDE_LOG"])
    if hasattr(session.config, "workerinput"):
        if OUTSIDE:
            with log.open("a", encoding="utf-8") as f:
                f.write("".join(f"{p}\n" for p in OUTSIDE))
        return
    found = sorted(set(OUTSIDE) | (set(log.read_text(encoding="utf-8").split()) if log.exists() else set()))
    log.unlink(missing_ok=True)
    writer = session.config.get_terminal_writer()
    if found:
        writer.line(
            "\nReads outside the repository (a user's clone has nothing beside it): " + ", ".join(found[:20]), red=True
        )
        session.exitstatus = 1
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or session.config.getoption("collectonly"):
        return
    # "" holds the setup and teardown reports of passing tests (a session fixture's build, a cluster's shutdown)
    reports = [r for key in ("passed", "failed", "error", "skipped", "") for r in reporter.stats.get(key, [])]
    problems = budget.over_budget(budget.seconds_per_test(reports), budget.read_budget(REPO / "pyproject.toml"))
    if problems:
        writer.line("\nOver the test-time budget ([tool.econ.test-budget] in pyproject.toml):", red=True)
        for problem in problems:
            writer.line(f"  {problem}", red=True)
        session.exitstatus = 1
