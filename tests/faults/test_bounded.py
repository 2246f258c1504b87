"""Every command stays bounded and stops when asked: a sweep's folder damaged in place, its driver killed or
interrupted, a build stopped by SIGTERM or Ctrl-C at each step or killed at a random moment — and never a path
outside the project touched.

Independent runs go in parallel (a thread per subprocess), so the module costs a few builds' time.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from econ.cli import main
from econ.sweep.run import sweep
from tests.sweep.conftest import SMALL, parquet_bytes, write_spec

from .conftest import BUILD, REFRESH, REPO, SOURCE_DATE_EPOCH, econ, leftovers, ok, signature, tree, workdir

pytestmark = pytest.mark.slow

TINY = """
[select]
models = ["Llama-3.1-70B"]
chips = ["H100"]
formats = ["fp8"]
[grid]
batch = { min = 1, max = 256, points = 5 }
context_tokens = { min = 1024, max = 8192, points = 2 }
"""
SLOW = (
    SMALL.replace("points = 4 }", "points = 400 }")
    .replace("count = 7", "count = 1000")
    .replace("per_partition = 3", "per_partition = 1")
)
"""The small sweep in 4,000 partitions of 0.01–0.2 s (a minute or more of work): it is still running, a worker
inside a partition, when the driver is stopped a second after its worker started. (With 28 partitions it once
finished first, the build having grown faster, and the signal met an interpreter already shutting down.)"""
ENV = {k: v for k, v in os.environ.items() if not k.startswith("ECON_FAULT")}
ENV |= {"PYTHONPATH": str(REPO), "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def parallel(*calls):
    """Run independent subprocess cases at once; their results in order (an exception fails the test)."""
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return [f.result() for f in [pool.submit(c) for c in calls]]


# ---------------------------------------------------------------------------- a sweep's folder


@pytest.fixture(scope="module")
def swept(fixture_db, tmp_path_factory):
    """A one-partition sweep, finished."""
    folder = tmp_path_factory.mktemp("swept")
    sweep(write_spec(folder, TINY), db_path=fixture_db, out_dir=folder / "out", workers=1)
    return folder


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ("{not json", "cannot be read (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        ("[1, 2]", "holds a JSON list, not the object econ writes"),
        ("", "cannot be read (Expecting value: line 1 column 1 (char 0))"),
    ],
    ids=["not-json", "a-list", "empty"],
)
def test_a_damaged_sweep_manifest_is_a_message(swept, fixture_db, tmp_path, capsys, damage, why):
    out = tmp_path / "out"
    shutil.copytree(swept / "out", out)
    (out / "manifest.json").write_text(damage)
    before = tree(out)
    code, stdout, err = run(capsys, "sweep", str(swept / "small.toml"), "--db", str(fixture_db), "--out", str(out))
    assert (code, stdout) == (1, "")
    assert err == (
        f"Error: the sweep manifest {out}/manifest.json {why}; econ cannot tell which spec, code and inputs its "
        f"partitions were made with — remove {out} to run the sweep again, or give --out another folder\n"
    )
    assert tree(out) == before


def test_log_lines_that_are_not_records_are_skipped_and_an_altered_partition_runs_again(swept, fixture_db, tmp_path):
    """A partition altered in place was reused (only its size was checked); non-object log lines were a traceback."""
    out = tmp_path / "out"
    shutil.copytree(swept / "out", out)
    log = out / "partitions.jsonl"
    log.write_text('[1]\n"text"\n{"partition": 3}\n' + log.read_text() + "not json\n")
    assert sweep(swept / "small.toml", db_path=fixture_db, out_dir=out, workers=1).skipped == 1
    part = next(out.glob("serving_frontier/**/part.parquet"))
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, other bytes
    part.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match=r"1 finished partition\(s\) of .* no longer match the SHA-256"):
        again = sweep(swept / "small.toml", db_path=fixture_db, out_dir=out, workers=1)
    assert (again.skipped, again.ran) == (0, 1)
    assert parquet_bytes(out) == parquet_bytes(swept / "out")


# ---------------------------------------------------------------------------- stopping a sweep


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(stat[1]) == pid and stat[0] != "Z":
                found.append(int(entry))
    return found


def _alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            out.append(pid)
    return out


def stop_sweep(fixture_db: Path, folder: Path, sig: int) -> tuple[int | None, str, float, list[int]]:
    """Start a sweep of one worker, send ``sig`` to the driver alone a second after the worker started; its exit
    code, stderr, the seconds it took to stop, and the worker processes still alive 2 s after the signal."""
    folder.mkdir(parents=True)
    spec = write_spec(folder, SLOW)
    command = [sys.executable, "-m", "econ", "sweep", str(spec), "--db", str(fixture_db), "--out", str(folder / "o")]
    proc = subprocess.Popen([*command, "--workers", "1", "--no-progress"], env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None and not workers:
            workers = [p for p in _children(proc.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
            time.sleep(0.05)
        time.sleep(1.0)  # the worker is importing or computing its first partition
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        stopped = time.monotonic() - sent
        while _alive(workers) and time.monotonic() - sent < 2.0:
            time.sleep(0.05)
        return proc.returncode, err, stopped, _alive(workers)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


DRIVER = "import time; from econ.sweep.backends import run_local; list(run_local(time.sleep, [600] * 4, workers=2))"


def kill_driver(folder: Path) -> tuple[int | None, list[int]]:
    """kill -9 a driver of two local workers (each in a 10-minute task); the workers alive 2 s later."""
    proc = subprocess.Popen([sys.executable, "-c", DRIVER], env=ENV, cwd=folder, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            workers = [p for p in _children(proc.pid) if "spawn_main" in Path(f"/proc/{p}/cmdline").read_text()]
            time.sleep(0.05)
        time.sleep(0.5)  # in their task
        proc.kill()
        proc.wait()
        sent = time.monotonic()
        while _alive(workers) and time.monotonic() - sent < 2.0:
            time.sleep(0.05)
        return proc.returncode, _alive(workers)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_workers_die_with_their_driver_and_ctrl_c_stops_a_sweep(fixture_db, tmp_path):
    """kill -9 of the sweep's driver left its workers sleeping (alive after 120 s); Ctrl-C waited for the running
    partitions to finish. Now the workers are gone within 2 s of the driver, and Ctrl-C (to the driver alone, as
    from another terminal) stops the sweep at once with exit 130."""
    killed, stopped = parallel(
        lambda: kill_driver(tmp_path),
        lambda: stop_sweep(fixture_db, tmp_path / "sweep", signal.SIGINT),
    )
    assert killed == (-9, [])
    code, err, seconds, alive = stopped
    assert (code, err, alive) == (130, "interrupted\n", [])
    assert seconds < 2.0, f"{seconds:.1f} s to stop"


# ---------------------------------------------------------------------------- stopping a build


SENTINEL = {"thesis.txt": b"the user's", ".reports.stage-1-0123abcd": b"named like econ's staging path"}


def outside(tmp_path: Path) -> Path:
    """Files beside the project that no run may touch (one named like a staging path of a dead run)."""
    folder = tmp_path / "outside"
    folder.mkdir(parents=True)
    for name, data in SENTINEL.items():
        (folder / name).write_bytes(data)
    return folder


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def interrupt_at(project, folder: Path, boundary: str, sig: int):
    root = workdir(project, folder)
    sentinel = outside(folder)
    trace = folder / "trace"
    env = {**ENV, "ECON_FAULT_TRACE": str(trace)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "econ", *BUILD], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while boundary not in (trace.read_text() if trace.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode(), signature(root), leftovers(root), files(sentinel)


def kill_at_random(project, folder: Path, seed: int, successor: str):
    """SIGKILL a build or a refresh at a random moment; then what a reading command and a rebuild leave."""
    root = workdir(project, folder, successor)
    sentinel = outside(folder)
    command = BUILD if successor == "new" else REFRESH
    proc = subprocess.Popen(
        [sys.executable, "-m", "econ", *command],
        cwd=root,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(random.Random(seed).uniform(0.5, 4.0))
    proc.kill()
    proc.wait()
    after_kill = ok(econ(root, "tables", "--db", "build/econ.duckdb"))
    state = signature(root)
    ok(econ(root, *command))
    return after_kill.stderr, state, signature(root), leftovers(root), files(sentinel) == SENTINEL


def test_stopped_or_killed_at_any_step_old_or_new_and_nothing_outside_touched(project, tmp_path):
    """1 in 15 SIGTERMs during a build gave a traceback (or DuckDB's 130): now the exit code of the signal at each
    step (build:loaded is test_kill's), the old state and nothing staged left; a signal during the commit lands
    after it (the new state, whole). A refresh killed at a random moment (snapshot, database and report move
    together) is all old or all new after the next reading command, and a rerun gives the new state. Files beside
    the project (one named like a dead run's staging path) stay as they were. The four runs go at once."""
    interrupted = [
        ("build:tables", signal.SIGINT),
        ("build:analyses", signal.SIGTERM),
        ("commit:journal", signal.SIGINT),
    ]
    *stopped, killed = parallel(
        *[lambda b=b, s=s: interrupt_at(project, tmp_path / b.replace(":", "-"), b, s) for b, s in interrupted],
        lambda: kill_at_random(project, tmp_path / "refresh", 27, "refreshed"),
    )
    old = replace(project.old_state, data=project.new_state.data)
    for (boundary, sig), (returncode, err, state, left, sentinel) in zip(interrupted, stopped):
        expected = (130, "interrupted\n") if sig == signal.SIGINT else (143, "")
        assert (returncode, err) == expected, (boundary, err)
        whole = project.new_state if boundary.startswith("commit:") else old
        assert state == whole and left == [] and sentinel == SENTINEL, boundary
    err, state, final, left, untouched = killed
    assert state in (project.old_state, project.refreshed_state), err
    assert final == project.refreshed_state and left == [] and untouched
