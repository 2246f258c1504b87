"""Parallel runs: every run exits 0 or with a clear "busy" message, and the final database and report are whole."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from .conftest import BUILD, REPO, SOURCE_DATE_EPOCH, econ, leftovers, ok, signature, workdir

pytestmark = pytest.mark.slow


def parallel(root, n: int, *extra: str) -> list[subprocess.CompletedProcess]:
    """Start ``n`` builds at once (each waits on a shared pipe, so they really overlap) and collect them."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "econ", *BUILD, *extra],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(n)
    ]
    done = [(p, *p.communicate(timeout=300)) for p in procs]
    return [subprocess.CompletedProcess(p.args, p.returncode, out, err) for p, out, err in done]


@pytest.mark.parametrize("n", [2, 5])
def test_parallel_builds_one_wins_the_others_are_busy(project, tmp_path, n):
    root = workdir(project, tmp_path)
    results = parallel(root, n)
    codes = [r.returncode for r in results]
    assert set(codes) <= {0, 1} and 0 in codes, [r.stderr for r in results]
    for r in results:
        assert "Traceback" not in r.stderr
        if r.returncode == 1:
            # the holder is named once it has written the lock file; a run that meets a lock file not written yet
            # says "another econ run" (as the --wait test below allows)
            assert r.stderr.startswith("Error: busy: ")
            assert re.search(r"is being written by (econ build \(pid \d+\)|another econ run)", r.stderr)
            assert r.stderr.rstrip().endswith("or pass --wait to queue behind it")
    assert signature(root) == project.new_state and leftovers(root) == []
    ok(econ(root, "sql", "--db", "build/econ.duckdb", "select count(*) from fleet_plan"))


@pytest.mark.parametrize("n", [2, 5])
def test_parallel_builds_with_wait_all_succeed_one_after_another(project, tmp_path, n):
    root = workdir(project, tmp_path)
    results = parallel(root, n, "--wait")
    assert [r.returncode for r in results] == [0] * n, [r.stderr for r in results]
    waited = [r for r in results if r.stderr]
    # the holder is named once it has written the lock file; a run that meets a lock file not written yet says
    # "another econ run"
    assert all(
        re.match(r"notice: waiting for (econ build \(pid \d+\)|another econ run) to finish", r.stderr) for r in waited
    )
    assert len(waited) >= 1  # they overlapped: at least one had to wait
    assert signature(root) == project.new_state and leftovers(root) == []


def test_a_build_and_a_report_at_once(project, tmp_path):
    """Different commands on the same outputs share the locks: whichever goes first, the other waits, and the
    report that stays is the new database's."""
    root = workdir(project, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO), "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    build = subprocess.Popen(
        [sys.executable, "-m", "econ", *BUILD, "--wait"], cwd=root, env=env, stderr=subprocess.PIPE, text=True
    )
    report = econ(
        root, "report", "--db", "build/econ.duckdb", "--reports", "reports", "--cache", "build/cache", "--wait"
    )
    _, build_err = build.communicate(timeout=300)
    assert build.returncode == 0 and report.returncode == 0, (build_err, report.stderr)
    assert signature(root) == project.new_state and leftovers(root) == []
