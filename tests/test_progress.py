"""Long commands say what they are doing: a bar on a terminal from the first second, one line per stage when piped,
nothing with --quiet, and a closing summary of what was written, where, how long it took and what to run next."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

import pytest

from econ.cli import main
from econ.cli.progress import Progress
from econ.errors import EconError
from econ.progress import reporting, step
from tests.conftest import AS_OF, FIXTURE_DATA, REPO


@pytest.fixture(autouse=True)
def _progress_on(monkeypatch):
    monkeypatch.setenv("ECON_PROGRESS", "auto")  # tests/conftest.py turns it off for the rest of the suite


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_steps_reach_only_an_installed_reporter():
    seen = []
    step("analyses", "serving", 0, 2)  # no reporter: nothing happens
    with reporting(lambda *a: seen.append(a)):
        step("analyses", "serving", 0, 2)
    step("analyses", "fleet_plan", 1, 2)
    assert seen == [("analyses", "serving", 0, 2)]


def test_piped_progress_is_a_line_per_stage_with_its_count_and_time():
    out = io.StringIO()
    progress = Progress("econ build", stream=out)
    for i, name in enumerate(("a", "b", "c")):
        progress("analyses", name, i, 3)
    progress("report", "index", 0, 1)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("econ build: ran the analyses (3 items) in ") and lines[0].endswith(" s")
    assert lines[1].startswith("econ build: drew the report in ")
    assert [name for name, _ in progress.slowest("analyses")] and len(progress.slowest("analyses", 2)) == 2


def test_a_stage_an_error_stops_is_said_to_have_stopped_not_finished():
    """Piped, a bad data file used to print 'checked and loaded the data in 0.1 s' and then its error."""
    out = io.StringIO()
    progress = Progress("econ build", stream=out)
    with pytest.raises(EconError):
        try:
            progress("analyses", "a", 0, 2)
            progress("analyses", "calibration", 1, 2)
            raise EconError("data/hardware.csv:3: column peak_bf16_flop_per_s: …", "fix it")
        finally:
            progress.close()
    (line,) = out.getvalue().splitlines()
    assert line.startswith("econ build: stopped during analyses (calibration) after ") and "ran the" not in line


def test_a_terminal_gets_a_bar_from_the_start_naming_stage_item_count_and_eta():
    out = Terminal()
    progress = Progress("econ build", stream=out)
    assert "econ build: starting" in out.getvalue()  # drawn when made, before any work or import
    progress("analyses", "serving_layouts", 7, 27)
    drawn = out.getvalue().split("\r")[-1]
    assert "econ build: analyses serving_layouts" in drawn and "7/27" in drawn and "<" in drawn  # elapsed<remaining
    progress.close()


@pytest.mark.parametrize(("quiet", "mode"), [(True, "auto"), (False, "off")])
def test_quiet_or_progress_off_draws_nothing(monkeypatch, quiet, mode):
    monkeypatch.setenv("ECON_PROGRESS", mode)
    out = Terminal()
    progress = Progress("econ build", quiet=quiet, stream=out)
    progress("analyses", "serving", 0, 1)
    progress.close()
    assert out.getvalue() == ""


def test_lines_and_bar_can_be_forced_and_anything_else_is_an_error(monkeypatch):
    monkeypatch.setenv("ECON_PROGRESS", "lines")
    out = Terminal()
    Progress("econ build", stream=out).close()
    assert out.getvalue() == ""  # no stage began: no line, and no bar on this terminal
    monkeypatch.setenv("ECON_PROGRESS", "bar")
    piped = io.StringIO()
    Progress("econ build", stream=piped).close()
    assert "econ build: starting" in piped.getvalue()
    monkeypatch.setenv("ECON_PROGRESS", "loud")
    with pytest.raises(EconError, match="ECON_PROGRESS='loud' is not auto, bar, lines or off"):
        Progress("econ build")


def test_build_ends_with_what_it_wrote_where_how_long_and_what_next(tmp_path, capsys):
    db = tmp_path / "econ.duckdb"
    args = ["build", "--data", str(FIXTURE_DATA), "--db", str(db), "--no-report", "--cache", str(tmp_path / "c")]
    assert main([*args, "--as-of", AS_OF.isoformat()]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith(f"wrote {db} (") and " tables, " in lines[0] and " MB) in " in lines[0]
    assert lines[1].startswith("analyses: ") and " ran" in lines[1] and "slowest: " in lines[1]
    assert lines[2] == f'next: econ tables --db {db}  (then econ describe NAME, or econ sql "select ...")'
    assert "econ build: ran the analyses (" in err and "econ build: moved the new outputs into place in" in err
    assert main([*args, "--as-of", AS_OF.isoformat(), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


@pytest.mark.slow
def test_a_build_on_a_terminal_shows_progress_within_the_first_second(tmp_path):
    """Measured on a pseudo-terminal: the time from starting ``econ build`` to its first byte of progress."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a terminal 120 columns wide
    argv = [sys.executable, "-m", "econ", "build", "--data", str(FIXTURE_DATA), "--no-report"]
    argv += ["--db", str(tmp_path / "e.duckdb"), "--cache", str(tmp_path / "c"), "--as-of", AS_OF.isoformat()]
    started = time.perf_counter()
    env = {**os.environ, "ECON_PROGRESS": "auto"}
    proc = subprocess.Popen(
        argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower
    )
    os.close(follower)
    try:
        ready, _, _ = select.select([leader], [], [], 10)
        first_s = time.perf_counter() - started
        assert ready and b"econ build" in os.read(leader, 4096)
        assert first_s < 1.0, f"first progress after {first_s:.2f} s"
    finally:
        proc.wait(timeout=120)
        os.close(leader)
    assert proc.returncode == 0
