"""kill -9 at every step boundary of econ build and econ refresh: the state is old or new, never mixed.

Each case copies the project's old outputs (``workdir``), runs the command with ``ECON_FAULT_AT`` set to
one boundary (the process SIGKILLs itself there), lets the next econ command (``econ tables``, which only
reads) finish or undo the commit, and compares data/, the database and the report with the old and the
new state: a kill before the journal is written must leave the old state, one after it the new state.
Then a normal run must succeed and leave no staging path, backup, journal or WAL behind.

``ECON_FAULT_REPEATS`` (default 1) sets how often each boundary is killed: the first kill is followed by the
rebuild, a repeat only by the check (a boundary is a fixed point in the run, so a repeat kills the same state again;
the random-moment kills below are the ones whose timing varies).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from .conftest import BUILD, REFRESH, REPO, econ, leftovers, ok, signature, workdir

pytestmark = pytest.mark.slow

REPEATS = int(os.environ.get("ECON_FAULT_REPEATS", "1"))
BUILD_BOUNDARIES = [
    "build:loaded",
    "build:tables",
    "build:analyses",
    "build:report",
    "build:database",
    "commit:journal",
    "commit:econ.duckdb:aside",
    "commit:econ.duckdb:in",
    "commit:reports:aside",
    "commit:reports:in",
    "commit:moved",
    "commit:cleaned",
]
SNAPSHOT = "litellm_2026-11-20.csv"
REFRESH_BOUNDARIES = [
    "refresh:snapshot",
    *BUILD_BOUNDARIES[:5],
    "commit:journal",
    f"commit:{SNAPSHOT}:aside",
    f"commit:{SNAPSHOT}:in",
    *BUILD_BOUNDARIES[6:],
]


def test_the_boundaries_are_the_ones_a_run_passes(project, tmp_path):
    """The lists above are every boundary a build and a refresh pass, in order (a new step must be added here)."""
    for command, successor, expected in (
        (BUILD, "new", BUILD_BOUNDARIES),
        (REFRESH, "refreshed", REFRESH_BOUNDARIES),
    ):
        root = workdir(project, tmp_path / successor, successor)
        trace = tmp_path / f"{successor}.trace"
        ok(econ(root, *command, env={"ECON_FAULT_TRACE": str(trace)}))
        assert trace.read_text().split() == expected


def kill_and_check(project, tmp_path, command, successor, boundary, *, rebuild: bool) -> None:
    root = workdir(project, tmp_path, successor)
    new_state = project.new_state if successor == "new" else project.refreshed_state
    killed = econ(root, *command, env={"ECON_FAULT_AT": boundary})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    after = ok(econ(root, "tables", "--db", "build/econ.duckdb"))
    expected = project.old_state if not boundary.startswith("commit:") else new_state
    if successor == "new":  # a build does not write data/: it holds the new data whatever happens
        expected = replace(expected, data=new_state.data)
    assert signature(root) == expected, f"killed at {boundary}: {after.stderr}"
    if boundary.startswith("commit:") and boundary != "commit:cleaned":
        assert after.stderr.startswith("notice: finished the commit of an interrupted run"), after.stderr
    if rebuild:  # the next writing run succeeds and removes what the killed one left
        ok(econ(root, *command))
        assert signature(root) == new_state
        assert leftovers(root) == []


@pytest.mark.parametrize("repeat", range(REPEATS))
@pytest.mark.parametrize("boundary", BUILD_BOUNDARIES)
def test_kill_build_at_every_boundary(project, tmp_path, boundary, repeat):
    kill_and_check(project, tmp_path, BUILD, "new", boundary, rebuild=repeat == 0)


@pytest.mark.parametrize("repeat", range(REPEATS))
@pytest.mark.parametrize("boundary", REFRESH_BOUNDARIES)
def test_kill_refresh_at_every_boundary(project, tmp_path, boundary, repeat):
    kill_and_check(project, tmp_path, REFRESH, "refreshed", boundary, rebuild=repeat == 0)


@pytest.mark.parametrize("seed", range(4))
def test_kill_build_at_a_random_moment(project, tmp_path, seed):
    """Between boundaries too (inside DuckDB's writes, the cache restore, a rename): old or new after recovery."""
    root = workdir(project, tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "econ", *BUILD],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(random.Random(seed).uniform(0.3, 1.2))
    proc.kill()
    proc.wait()
    ok(econ(root, "tables", "--db", "build/econ.duckdb"))
    assert signature(root) in (replace(project.old_state, data=project.new_state.data), project.new_state)
    ok(econ(root, *BUILD))
    assert signature(root) == project.new_state and leftovers(root) == []


def interrupt_after(root, boundary: str, sig: int) -> subprocess.CompletedProcess:
    """Run a build and send ``sig`` once it has passed ``boundary`` (read from its fault trace)."""
    trace = root / "trace"
    env = {**os.environ, "PYTHONPATH": str(REPO), "ECON_FAULT_TRACE": str(trace)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "econ", *BUILD], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while boundary not in (trace.read_text() if trace.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    trace.unlink()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out.decode(), err.decode())


@pytest.mark.parametrize(("sig", "code", "message"), [(signal.SIGINT, 130, "interrupted\n"), (signal.SIGTERM, 143, "")])
def test_ctrl_c_or_sigterm_during_a_build_leaves_the_old_state_and_nothing_staged(
    project, tmp_path, sig, code, message
):
    root = workdir(project, tmp_path)
    result = interrupt_after(root, "build:loaded", sig)
    assert (result.returncode, result.stderr) == (code, message)
    assert signature(root) == replace(project.old_state, data=project.new_state.data)
    assert leftovers(root) == []  # the interrupted run removed what it had staged
