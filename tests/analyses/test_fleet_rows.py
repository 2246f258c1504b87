"""The plan as econ fleet prints it (econ.analyses.fleet_rows): what each row says, read from the shipped data's
DeepSeek plan and checked against what its layout and traffic imply."""

from __future__ import annotations

import json
import math

import duckdb
import pytest

from tests.analyses.helpers import run_cli
from tests.analyses.test_fleet_command import DEEPSEEK


def test_a_plan_says_how_much_communication_its_decode_step_waits_for(real_db, capsys):
    """DeepSeek's decode unit overlaps its EP dispatch and combine with another micro-batch's kernels (Day-6 post,
    layouts.overlap_comm): of its ~80 ms of communication per step (15.3 k sequences a unit) the step waits only for
    what exceeds its kernels and the collectives' latency (~8 ms of a ~87 ms step); the same model on
    one 8-GPU node without overlap waits for all its communication (the kernel path's own sum, near the roofline
    term), and the bound scenario for what exceeds max(compute, memory)."""
    code, out, err = run_cli(capsys, "--db", str(real_db), *DEEPSEEK, "--format", "json", "--as-of", "2026-11-30")
    plan = json.loads(out)
    assert (code, err) == (0, "")
    assert plan["decode_comm_time_s"] > 0.02 and plan["decode_comm_exposed_time_s"] < 0.2 * plan["decode_comm_time_s"]
    assert plan["decode_comm_exposed_time_s"] < 0.1 * plan["decode_step_time_s"]
    code, out, _ = run_cli(capsys, "--db", str(real_db), *DEEPSEEK[:-12], "--format", "json", "--as-of", "2026-11-30")
    serial = json.loads(out)
    assert code == 0 and serial["decode_comm_exposed_time_s"] == pytest.approx(serial["decode_comm_time_s"], rel=0.3)
    with duckdb.connect(str(real_db), read_only=True) as con:  # the bound: what exceeds max(compute, memory)
        rows = con.execute(
            "select decode_comm_exposed_time_s, greatest(decode_comm_time_s - greatest(decode_compute_time_s, "
            "decode_memory_time_s), 0) from fleet_plan where scenario = 'base' and decode_step_time_s is not null"
        ).fetchall()
    assert rows and all(got == pytest.approx(beyond, abs=1e-12) for got, beyond in rows)
    code, out, _ = run_cli(capsys, "--db", str(real_db), *DEEPSEEK, "--as-of", "2026-11-30")
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("decode communication "))
    assert lines[at + 1].startswith("decode communication waited for") and lines[at + 1].endswith(" ms")


def test_a_plan_says_how_busy_its_whole_replicas_are(real_db, capsys):
    """DeepSeek's prefill needs 25.5 units of 32 GPUs and gets 26, its decode 6.98 units of 144 and gets 7: the plan
    prints both, so the share of the gap to DeepSeek's 1,814 GPUs that is rounding up to whole replicas is on the
    page (whole = the ceiling of busy; here about 17 GPUs, 1% of the plan, and never a whole replica of a pool)."""
    code, out, err = run_cli(capsys, "--db", str(real_db), *DEEPSEEK, "--format", "json", "--as-of", "2026-11-30")
    plan = json.loads(out)
    assert (code, err) == (0, "")
    for pool in ("prefill", "decode"):
        busy, whole = plan[f"{pool}_replicas_needed"], plan[f"{pool}_replicas"]
        assert whole - 1 < busy <= whole == math.ceil(busy - 1e-9)
    idle = sum(
        (plan[f"{pool}_replicas"] - plan[f"{pool}_replicas_needed"]) * plan[f"{pool}_replica_chips"]
        for pool in ("prefill", "decode")
    )
    assert 0 < idle < plan["prefill_replica_chips"] + plan["decode_replica_chips"]
    code, out, _ = run_cli(capsys, "--db", str(real_db), *DEEPSEEK, "--as-of", "2026-11-30")
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("decode replicas "))
    assert lines[at + 1].startswith("  busy at this traffic") and lines[at + 1].endswith(" replicas")
