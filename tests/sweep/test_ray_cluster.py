"""``econ sweep --backend ray --ray-address HOST:PORT`` against a real Ray head node (``ray start --head``), which
since Ray 2.59 requires token authentication: the sweep finds the head's token and gives the bytes of a local run;
a wrong token is an error that says what Ray said and what to do, not a file-permission hint."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.sweep.conftest import parquet_bytes, write_spec

pytestmark = [
    pytest.mark.slow,
    # Ray and its dependencies deprecate things at import; these tests pin what econ does with a cluster.
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning"),
]
RAY = Path(sys.executable).parent / "ray"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def head():
    """A Ray head node on 127.0.0.1 with token authentication, its token in a private HOME (``~/.ray/auth_token``);
    stopped (its process group) at the end, so no other Ray on the machine is touched (``ray stop`` stops them all)."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'econ[ray]')")
    root = Path(tempfile.mkdtemp(prefix="econ-ray-", dir="/tmp"))  # Ray's socket paths must stay short
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {"HOME": str(root / "home")}
    port = free_port()
    argv = [str(RAY), "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=2"]
    argv += ["--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={root / 'ray'}"]
    # `ray start --head` turns token authentication on when a token exists, as after any local ray.init() of Ray >= 2.59
    generated = subprocess.run([str(RAY), "get-auth-token", "--generate"], env=env, capture_output=True, text=True)
    assert generated.returncode == 0, generated.stderr
    log = root / "ray-start.log"  # a file, not a pipe: a full pipe would block ray start
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    token = root / "home" / ".ray" / "auth_token"
    try:
        deadline = time.monotonic() + 90
        while not (token.exists() and _listening(port)):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start did not come up: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.25)
        yield f"127.0.0.1:{port}", env
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # --block: the head stops the processes it started
        try:  # Ray 2.60's `ray start --block` does not end on SIGTERM: the group's SIGKILL follows (it waited 30 s)
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def econ_sweep(spec: Path, db: Path, out: Path, address: str, env: dict) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "econ", "sweep", str(spec), "--db", str(db), "--out", str(out)]
    argv += ["--backend", "ray", "--ray-address", address, "--no-progress"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=180)


def test_a_sweep_on_a_token_cluster_gives_the_bytes_of_a_local_run(head, fixture_db, tmp_path):
    from econ.sweep.run import sweep

    address, env = head
    spec = write_spec(tmp_path)
    local = sweep(spec, db_path=fixture_db, out_dir=tmp_path / "local", workers=1)
    done = econ_sweep(spec, fixture_db, tmp_path / "cluster", address, env | {"PYTHONPATH": os.environ["PYTHONPATH"]})
    assert done.returncode == 0, done.stderr[-3000:]
    assert parquet_bytes(tmp_path / "cluster") == parquet_bytes(local.folder)


def test_a_wrong_token_says_what_ray_said_and_what_to_do(head, fixture_db, tmp_path):
    address, env = head
    env = env | {"PYTHONPATH": os.environ["PYTHONPATH"], "RAY_AUTH_TOKEN": "not-the-token"}
    env["RAY_gcs_server_port_wait_time_s"] = "2"  # Ray retries a refused connection for ~20 s by default
    done = econ_sweep(write_spec(tmp_path), fixture_db, tmp_path / "out", address, env)
    assert done.returncode == 1
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith(f"Error: cannot connect to the Ray cluster at {address}: ")
    assert "InvalidAuthToken: Authentication token is missing or incorrect" in error
    assert "RAY_AUTH_TOKEN=<ray get-auth-token on the head node>" in error and "permissions" not in error
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] != "complete" and not manifest.get("partitions")  # nothing ran: a rerun resumes
