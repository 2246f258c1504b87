"""Every input ends in a message: the probes of issue 27 (each was a traceback, a silent acceptance or a runaway),
with the exact message — file, line, key and the fix — and nothing written.

Hand-kept values beyond a floor or ceiling, a data folder whose snapshots are a file, price-map entries with a
runaway key or tier, econ sql statements and settings beyond what reading needs, a diff of a seller that sells
nothing, sweep specs that are pipes, devices, deep or huge, output that cannot be written.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from econ.cli import main

from .conftest import REPO

pytestmark = pytest.mark.slow


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def set_cell(path: Path, key: str, column: str, value: str | None) -> None:
    """Set ``column`` of the rows whose first cells are ``key`` (a tuple of the first cells); None drops the row."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    index = rows[0].index(column)
    kept = [rows[0]]
    for row in rows[1:]:
        if tuple(row[: len(key)]) == key:
            if value is None:
                continue
            row[index] = value
        kept.append(row)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(kept)
    path.write_text(out.getvalue(), encoding="utf-8")


def _snapshots_file(d: Path) -> None:
    (d / "snapshots").write_text("not a folder")


DATA_CASES = {
    "subnormal HBM bandwidth": (
        lambda d: set_cell(d / "hardware.csv", ("H100",), "hbm_bandwidth_tb_per_s", "1e-320"),
        'data/hardware.csv:2: column hbm_bandwidth_tb_per_s: "1e-320" is out of range — must be at least 0.001 TB/s: '
        "1 GB/s of memory bandwidth is ~800x below a TPU v5e's 819 GB/s",
    ),
    "scale-up link of a byte a second": (
        lambda d: set_cell(d / "hardware.csv", ("H100",), "scale_up_bandwidth_gb_per_s", "1e-9"),
        'data/hardware.csv:2: column scale_up_bandwidth_gb_per_s: "1e-9" is out of range — must be at least 0.001 '
        "GB/s: 1 MB/s per chip is ~10,000x below a 100 Gbit/s NIC",
    ),
    "a PUE that overflows the power": (
        lambda d: set_cell(d / "scenarios.csv", ("base", "pue_ratio"), "value", "1e308"),
        "data/scenarios.csv:23: column value: pue_ratio = 1e+308 ratio is out of range — must be at most 10000: a "
        "ratio of 10,000 is 250x the largest a scenario states (input/output tokens, ~40)",
    ),
    "a subnormal efficiency": (
        lambda d: set_cell(d / "scenarios.csv", ("base", "pretrain_mfu_frac"), "value", "1e-320"),
        'data/scenarios.csv:17: column value: "1e-320" is out of range — a non-zero value is at least 1e-30 (a typo?)',
    ),
    "no usd_per_chip_hour": (
        lambda d: set_cell(d / "scenarios.csv", ("base", "usd_per_chip_hour"), "value", None),
        "scenario 'base' has no assumption 'usd_per_chip_hour' — add a row 'base,usd_per_chip_hour,…' to "
        "data/scenarios.csv",
    ),
    "data/snapshots is a file": (
        _snapshots_file,
        "data/snapshots: is not a folder (econ keeps the imported price snapshots in this folder) — move it away "
        "(econ import creates the folder), or put the snapshot CSVs in a folder snapshots/",
    ),
}


@pytest.mark.parametrize("case", list(DATA_CASES))
def test_impossible_hand_kept_values_and_folders_are_refused(data_dir, capsys, case):
    edit, message = DATA_CASES[case]
    edit(data_dir)
    args = ["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache", "--as-of", "2026-11-30"]
    code, out, err = run(capsys, *args)
    assert (code, out) == (1, "") and "Traceback" not in err
    assert message in [line.removeprefix("Error: ") for line in err.splitlines()], err
    assert not Path("out.duckdb").exists()


# ---------------------------------------------------------------------------- price maps


def _entry() -> dict:
    return {"litellm_provider": "acme", "mode": "chat", "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


@pytest.mark.parametrize(
    ("key", "extra", "reason", "example"),
    [
        (
            "acme/" + "x" * 1_000_000,
            {},
            "name longer than 1,000 characters (model keys are at most ~150)",
            "acme/" + "x" * 75 + "… (1,000,005 characters)",
        ),
        (
            "acme/huge-tier",
            {"input_cost_per_token_above_99999999999999999k_tokens": 2e-6},
            "long-context tier above 1e+10 tokens (a 10-billion-token prompt is 1,000x the longest context offered "
            "(10M))",
            "acme/huge-tier",
        ),
    ],
    ids=["million-character-key", "tier-beyond-int64"],
)
def test_a_runaway_key_or_tier_is_a_counted_skip(data_dir, capsys, tmp_path, key, extra, reason, example):
    """Both were tracebacks (the csv module's field limit; polars refusing an int128 tier)."""
    path = tmp_path / "map.json"
    path.write_text(json.dumps({key: {**_entry(), **extra}, "acme/ok": _entry()}))
    code, out, err = run(capsys, "import", "litellm", str(path), "--data", "data", "--as-of", "2026-12-01")
    assert (code, err) == (0, ""), err
    assert f"skipped for {reason}: {example}" in out.splitlines()
    snapshot = (data_dir / "snapshots" / "litellm_2026-12-01.csv").read_text()
    assert "acme/ok" in snapshot and "x" * 100 not in snapshot and "huge-tier" not in snapshot


def test_a_map_of_nothing_importable_says_why(data_dir, capsys, tmp_path):
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"acme/" + "y" * 2000: _entry()}))
    code, out, err = run(capsys, "import", "litellm", str(path), "--data", "data")
    assert (code, out) == (1, "")
    assert err == (
        "Error: map.json: has no text-generation price among its 1 entries (1 skipped for name longer than 1,000 "
        f"characters (model keys are at most ~150): acme/{'y' * 75}… (2,005 characters)) — is this the right file "
        "for econ import litellm?\n"
    )


# ---------------------------------------------------------------------------- econ sql: only what reading needs

READING = (
    "econ sql runs only what reading needs: SELECT (with DESCRIBE, SHOW, SUMMARIZE), EXPLAIN, the PRAGMAs that show "
    "what the database holds, and SET of a variable, threads, memory_limit, timezone, calendar or the orderings"
)
SELECT_HINT = "run a SELECT; econ tables lists what you can query"
FUNCTION = "it changes settings, writes files or runs SQL of its own; " + READING


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("set extension_directory = '/tmp/x'", f"SET extension_directory is refused: {READING} — drop the SET; "),
        ("SET lock_configuration = false", f"SET lock_configuration is refused: {READING} — drop the SET; "),
        ("set threads = 100000", "SET threads = 100000 is refused: econ sql runs at most one thread per core ("),
        ("pragma threads = 100000", "SET threads = 100000 is refused"),
        ("set memory_limit = '100PB'", "SET memory_limit = 100PB is refused: econ sql uses at most this machine's"),
        (
            "call enable_logging(storage = 'file', storage_path = 'logs')",
            f"CALL enable_logging(…) is refused: {FUNCTION} — {SELECT_HINT}",
        ),
        (
            "select * from enable_logging(storage = 'file', storage_path = 'logs')",
            f"the table function enable_logging() is refused: {FUNCTION} — {SELECT_HINT}",
        ),
        ("select * from query('set threads = 7')", f"the table function query() is refused: {FUNCTION}"),
        # literals that a pattern of our own misread, hiding the call behind them (DuckDB's tokenizer reads them)
        ("select $a$'$a$ as s, * from enable_logging(level='trace') --'", "the table function enable_logging() is"),
        ("select E'\\'' as s, * from query('select 43 as y') --'", "the table function query() is refused"),
        ("select $a$'$a$ as s, * from query_table('prices') --' limit 1", "the table function query_table() is"),
        ("set variable x = (select count(*) from enable_logging())", "the table function enable_logging() is"),
        ("select 1; select * from checkpoint()", "the table function checkpoint() is refused"),
        ('select * from "force_checkpoint"()', "the table function force_checkpoint() is refused"),
        (
            "explain analyze select * from json_execute_serialized_sql('x')",
            "the table function json_execute_serialized_sql() is refused",
        ),
        ("explain (format json) select * from query('select 1')", "the table function query() is refused"),
        ("explain (analyze, format json) delete from prices", "write statements are refused: delete from prices"),
        ("begin", f"TRANSACTION (`begin`) is refused: {READING} — {SELECT_HINT}"),
        ("use memory", "`use memory` is refused: econ sql uses the database as it is opened; "),
        ("update extensions", "`update extensions` is refused: "),
        ("pragma enable_profiling", "PRAGMA enable_profiling is refused: econ sql runs the PRAGMAs that show"),
        ("pivot prices on provider using count(*)", "`pivot prices on` (a PIVOT without its columns) is refused"),
        ("delete from prices", "write statements are refused: delete from prices … — econ sql opens the database"),
    ],
)
def test_sql_refuses_what_reading_does_not_need(fixture_db, capsys, tmp_path, monkeypatch, query, message):
    monkeypatch.chdir(tmp_path)
    before = hashlib.sha256(fixture_db.read_bytes()).hexdigest()
    code, out, err = run(capsys, "sql", "--db", str(fixture_db), query)
    assert (code, out) == (1, "") and err.startswith(f"Error: {message}"), err
    assert hashlib.sha256(fixture_db.read_bytes()).hexdigest() == before
    assert not Path("logs").exists()


@pytest.mark.parametrize(
    "query",
    [
        "describe prices",
        "show tables",
        "summarize models",
        "explain select * from models",
        "explain (format json) select * from models",
        "explain (analyze, format json) select count(*) from models",
        "pragma table_info('models')",
        "set threads = 1; select current_setting('threads') as t",
        "set variable chip = 'H100'; select count(*) from hardware where chip = getvariable('chip')",
        "select * from duckdb_settings() where name = 'threads'",
        "select 'enable_logging(' as text_not_a_call",
        "pivot models on attention in ('mla', 'gqa') using count(*)",
        "call pragma_table_info('models')",
    ],
)
def test_sql_still_reads(fixture_db, capsys, query):
    code, out, err = run(capsys, "sql", "--db", str(fixture_db), query, "--format", "csv")
    assert (code, err) == (0, "") and out.strip()


def test_output_that_cannot_be_written_is_a_failure(fixture_db):
    """stdout on a full device (/dev/full): exit 1 and a message, never 0."""
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "econ", "sql", "--db", str(fixture_db), "select * from range(100000)"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=60,
        )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: No space left on device while writing the output")


# ---------------------------------------------------------------------------- diff


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--provider", "nobody"], "unknown provider 'nobody' (no price row of that seller) — sellers are anthropic, "),
        (["--provider", "googel"], "unknown provider 'googel' (no price row of that seller) — did you mean google?"),
    ],
)
def test_diff_of_a_seller_that_sells_nothing_says_so(fixture_db, capsys, flags, message):
    """An empty diff of a misspelt seller looked like "nothing changed"."""
    code, out, err = run(capsys, "diff", "--db", str(fixture_db), "--from", "2025-01-01", "--to", "2026-11-30", *flags)
    assert (code, out) == (1, "") and f"Error: {message}" in err, err


# ---------------------------------------------------------------------------- sweep specs


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            _fifo,
            "{path}: is not a regular file (a pipe, a device or a socket) — save a sweep spec to a file first and "
            "give its path",
        ),
        (
            lambda p: Path("/dev/zero"),
            "/dev/zero: is not a regular file (a pipe, a device or a socket) — save a sweep spec to a file first and "
            "give its path",
        ),
        (
            lambda p: (p.write_text("a = " + "[" * 100_000 + "]" * 100_000), p)[1],
            "{path}: is nested deeper than econ reads (a sweep spec nests 3 levels: a table, a key, an axis) — is "
            "this the right file? see docs/sweeps.md for the spec",
        ),
        (
            lambda p: (os.truncate(p.write_text("") or p, 2 * 2**20), p)[1],
            "{path}: is larger than 1 MiB, the most econ reads for a sweep spec — is this the right file?",
        ),
        (
            lambda p: (p.write_text("[draws]\ncount = 10000000\n"), p)[1],
            "{path}:2: draws.count: 10000000 is not a whole number from 1 to 1,000,000 — give one",
        ),
    ],
    ids=["fifo", "dev-zero", "100000-deep", "2-MiB", "ten-million-draws"],
)
def test_sweep_specs_that_cannot_be_read_within_bounds(tmp_path, capsys, make, message):
    """The FIFO waited forever, /dev/zero read until memory ran out, the nesting was a RecursionError."""
    path = make(tmp_path / "spec.toml")
    code, out, err = run(capsys, "sweep", str(path), "--db", str(tmp_path / "none.duckdb"), "--no-progress")
    assert (code, out, err) == (1, "", f"Error: {message.format(path=path)}\n")


def test_a_sweep_beyond_its_bound_is_refused_at_once_with_its_size(fixture_db, tmp_path, capsys):
    """~1e12 points planned for 90 s at 2 GB before: now refused before the draws are made."""
    spec = tmp_path / "huge.toml"
    spec.write_text(
        '[select]\nlayouts = "all"\n[grid]\nbatch = { min = 1, max = 16384, points = 10000 }\n'
        "context_tokens = { min = 1024, max = 131072, points = 10000 }\n[draws]\ncount = 1000000\n"
    )
    code, out, err = run(capsys, "sweep", str(spec), "--db", str(fixture_db), "--out", str(tmp_path / "o"))
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: {spec}: the sweep is ") and "more than the 1e+11 points econ sweep runs — " in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--workers", "100000"], "--workers 100000 is more than the {cores} cores of this machine"),
        (["--out", "/"], "/ is the root folder; econ writes each output in a folder of its own — give a file or"),
    ],
)
def test_sweep_settings_that_multiply_resources_or_name_the_root(fixture_db, tmp_path, capsys, flags, message):
    from econ.machine import cores

    spec = tmp_path / "s.toml"
    spec.write_text('[select]\nmodels = ["Llama-3.1-70B"]\nchips = ["H100"]\n')
    code, out, err = run(capsys, "sweep", str(spec), "--db", str(fixture_db), "--no-progress", *flags)
    assert (code, out) == (1, "") and err.startswith(f"Error: {message.format(cores=cores())}"), err
