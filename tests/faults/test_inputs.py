"""Impossible, malformed or unbounded inputs: each ends in a clear message naming the place, exit 1, nothing written.

Hand-kept tables (physical ranges, consistency, references, invisible characters, huge cells, many bad cells,
a FIFO), price maps (nesting, size, devices, integers beyond a float, overflowing prices), environment
variables, and the commands' own arguments (econ fleet, econ diff).
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

from .conftest import REPO, econ

pytestmark = pytest.mark.slow


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def build(capsys) -> tuple[int, str]:
    code, _, err = run(capsys, "build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache")
    assert "Traceback" not in err
    return code, err


def set_cell(path: Path, key: str, column: str, value: str) -> None:
    """Set ``column`` of the row whose first cell is ``key`` (the file's other cells and lines stay as they were)."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    index = rows[0].index(column)
    for row in rows[1:]:
        if row[0] == key:
            row[index] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def add_row(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + line + "\n", encoding="utf-8")


CASES = {
    "1e308 TFLOP/s": (
        lambda d: set_cell(d / "hardware.csv", "H100", "peak_bf16_tflop_per_s", "1e308"),
        'data/hardware.csv:2: column peak_bf16_tflop_per_s: "1e308" is out of range — must be at most 1e+07 '
        "TFLOP/s: a chip peak of 1e19 FLOP/s is ~600x the dense FP4 peak of a B300 (1.5e16)",
    ),
    "decode_mbu_frac = 5": (
        lambda d: add_row(
            d / "scenarios.csv", "base,decode_mbu_frac,5,,fraction,,,,an impossible efficiency,https://x.org"
        ),
        "data/scenarios.csv:28: column value: decode_mbu_frac = 5 fraction is out of range — an efficiency (achieved "
        "over "
        "peak) must be in (0, 1]",
    ),
    "negative $/chip-hour (rental)": (
        lambda d: set_cell(d / "rental_prices.csv", "H100", "usd_per_chip_hour", "-2.99"),
        'data/rental_prices.csv:2: column usd_per_chip_hour: "-2.99" is out of range — must be greater than 0 '
        "USD/chip-hour",
    ),
    "negative $/chip-hour (scenario)": (
        lambda d: _scenario(d, "usd_per_chip_hour", "-2"),
        "data/scenarios.csv:2: column value: usd_per_chip_hour = -2 USD/GPU-hour is out of range — must be greater "
        "than 0 (a rate, price, count or size)",
    ),
    "zero tokens served": (
        lambda d: _scenario(d, "tokens_served_per_s", "0"),
        "data/scenarios.csv:3: column value: tokens_served_per_s = 0 tokens/s is out of range — must be greater than 0 "
        "(a rate, price, count or size)",
    ),
    "more full-attention layers than layers": (
        lambda d: set_cell(d / "models.csv", "Llama-3.1-70B", "num_full_attention_layers", "90"),
        "data/models.csv:3: column num_full_attention_layers: full-attention, sliding-window and linear-attention "
        "layers add up to more than num_layers — each layer has one kind; their counts add up to at most num_layers",
    ),
    "compressed attention without its layers": (
        lambda d: set_cell(d / "models.csv", "Llama-3.1-70B", "attention", "csa"),
        "data/models.csv:3: column num_csa_layers: compressed attention (csa) needs num_csa_layers, "
        "csa_compress_tokens, num_hca_layers, hca_compress_tokens, sliding_window_tokens, index_topk_tokens, "
        "index_num_heads, index_head_dim — fill them from the model's config.json (compress_ratios counted by ratio, "
        "sliding_window, index_*)",
    ),
    "more compressed layers than layers": (
        lambda d: set_cell(d / "models.csv", "Llama-3.1-70B", "num_csa_layers", "90"),
        "data/models.csv:3: column num_csa_layers: compressed sparse and heavily compressed layers add up to more than "
        "num_layers — count compress_ratios of config.json by ratio over the num_layers main layers (not the MTP "
        "layer)",
    ),
    "more KV heads than query heads": (
        lambda d: set_cell(d / "models.csv", "Llama-3.1-70B", "num_kv_heads", "80"),
        "data/models.csv:3: column num_kv_heads: more KV heads than query heads — KV heads are at most the query heads "
        "(equal for MHA, fewer for GQA/MQA)",
    ),
    "1e300 USD/MTok": (
        lambda d: set_cell(d / "prices.csv", "google", "input_usd_per_mtok", "1e300"),
        'data/prices.csv:4: column input_usd_per_mtok: "1e300" is out of range — must be at most 100000 USD/MTok: '
        "100,000 USD per million tokens is ~150x the dearest list price (~600)",
    ),
    "a price mapping that matches nothing": (
        lambda d: _deployment(d, "llama-70b-h100", "price_model", "gemini-3.1-pro-preveiw"),
        "data/deployments.csv:3: column price_model: the price mapping google / gemini-3.1-pro-preveiw matches no "
        "standard price in hand prices — did you mean price_model gemini-3.1-pro-preview?",
    ),
    "U+2028 in a model name": (
        lambda d: set_cell(d / "models.csv", "Llama-3.1-70B", "model", "Llama-3.1\u2028-70B"),
        "data/models.csv:3: column model: contains the invisible character U+2028 (LINE SEPARATOR) at position 10 — "
        "retype the value without it (it breaks lines in the report and in SQL output)",
    ),
    "a CSV cell over 128 KiB": (
        lambda d: set_cell(d / "prices.csv", "google", "notes", "n" * 140_000),
        "data/prices.csv:4: has a cell longer than 128 KiB — is a closing quote missing?",
    ),
}


def _scenario(d: Path, name: str, value: str) -> None:
    rows = list(csv.reader(io.StringIO((d / "scenarios.csv").read_text(encoding="utf-8"), newline="")))
    for row in rows[1:]:
        if row[0] == "base" and row[1] == name:
            row[2] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    (d / "scenarios.csv").write_text(out.getvalue(), encoding="utf-8")


def _deployment(d: Path, deployment: str, column: str, value: str) -> None:
    rows = list(csv.reader(io.StringIO((d / "deployments.csv").read_text(encoding="utf-8"), newline="")))
    index = rows[0].index(column)
    for row in rows[1:]:
        if row[1] == deployment:
            row[index] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    (d / "deployments.csv").write_text(out.getvalue(), encoding="utf-8")


@pytest.mark.parametrize("case", list(CASES))
def test_impossible_or_broken_hand_kept_values_are_refused_with_file_and_line(data_dir, capsys, case):
    edit, problem = CASES[case]
    edit(data_dir)
    code, err = build(capsys)
    assert code == 1 and problem in [line.removeprefix("Error: ") for line in err.splitlines()], err
    assert not Path("out.duckdb").exists()


def test_two_hundred_thousand_bad_cells_give_a_bounded_message(data_dir, capsys):
    header = "study,params,training_flop,loss_nats_per_token,source_url"
    lines = [header] + [f"s,x{i},y{i},2.0,https://x.org" for i in range(100_000)]
    (data_dir / "scaling_law_points.csv").write_text("\n".join(lines) + "\n")
    code, err = build(capsys)
    text = err.splitlines()
    assert code == 1 and text[0] == "Error: 200,000 problems in the input data:"
    assert len(text) == 52 and text[-1] == "… and 199,950 more (fix these and run again to see the rest)"
    assert len(err) < 20_000


def test_a_fifo_in_the_data_folder_is_refused_without_reading_it(data_dir, capsys):
    (data_dir / "prices.csv").unlink()
    os.mkfifo(data_dir / "prices.csv")  # no writer: opening it would block forever
    code, err = build(capsys)
    assert code == 1
    assert (
        "data/prices.csv: is not a regular file (a pipe, a device or a socket) — save a data table to a file first "
        "and give its path" in err
    )


# ---------------------------------------------------------------------------- price maps


def entry(**prices) -> dict:
    return {"litellm_provider": "acme", "mode": "chat", **prices}


def write_raw(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def snapshot_text(data_dir: Path) -> str:
    return "".join(p.read_text() for p in sorted((data_dir / "snapshots").glob("*.csv")))


def test_a_price_that_overflows_is_skipped_as_the_inputs_problem_and_never_becomes_inf(data_dir, capsys, tmp_path):
    """1.8e302 USD/token times 1e6 is inf: the entry is skipped with a counted reason and named; no inf is written."""
    path = tmp_path / "map.json"
    path.write_text(
        json.dumps(
            {
                "acme/huge": entry(input_cost_per_token=1.8e302, output_cost_per_token=1e-6),
                "acme/ok": entry(input_cost_per_token=1e-6, output_cost_per_token=2e-6),
            }
        )
    )
    code, out, err = run(capsys, "import", "litellm", str(path), "--data", "data", "--as-of", "2026-12-01")
    assert (code, err) == (0, "")
    reason = "price above 100000 USD/MTok (100,000 USD per million tokens is ~150x the dearest list price (~600))"
    assert f"skipped for {reason}: acme/huge" in out.splitlines()
    assert "inf" not in snapshot_text(data_dir) and "acme/ok" in snapshot_text(data_dir)


def test_integers_beyond_a_float_or_int64_in_a_price_map(data_dir, capsys, tmp_path):
    path = write_raw(
        tmp_path / "map.json",
        '{"acme/a": {"litellm_provider": "acme", "mode": "chat", "input_cost_per_token": 1' + "0" * 400 + ", "
        '"output_cost_per_token": 1e-6}, "acme/b": {"litellm_provider": "acme", "mode": "chat", '
        '"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "max_input_tokens": 1' + "0" * 30 + "}}",
    )
    code, out, err = run(capsys, "import", "litellm", str(path), "--data", "data", "--as-of", "2026-12-01")
    assert (code, err) == (0, "")
    assert "skipped for invalid price value: acme/a" in out.splitlines()
    assert "max_input_tokens (not a positive whole number)" in out  # acme/b imported without its impossible context


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda p: write_raw(p, '{"a":' * 100_000 + "1" + "}" * 100_000),
            "is nested more than 32 levels deep (price maps nest 4) — is this a price map? give LiteLLM's or "
            "OpenRouter's file",
        ),
        (
            lambda p: write_raw(p, "[" * 40 + "]" * 40),
            "is nested more than 32 levels deep (price maps nest 4)",
        ),
        (
            lambda p: (os.truncate(write_raw(p, ""), 65 * 2**20), p)[1],  # sparse: nothing is read
            "is larger than 64 MiB, the most econ reads for a price map — is this the right file?",
        ),
        (
            lambda p: (os.mkfifo(p), p)[1],
            "is not a regular file (a pipe, a device or a socket) — save a price map to a file first and give its path",
        ),
    ],
    ids=["100k-deep", "lists-40-deep", "65-MiB", "fifo"],
)
def test_price_maps_that_cannot_be_read_within_bounds(data_dir, capsys, tmp_path, make, message):
    path = make(tmp_path / "map.json")
    code, out, err = run(capsys, "import", "litellm", str(path), "--data", "data")
    assert (code, out) == (1, "") and message in err and "Traceback" not in err
    assert not (data_dir / "snapshots").exists()


def test_dev_zero_is_refused(data_dir, capsys):
    code, _, err = run(capsys, "import", "litellm", "/dev/zero", "--data", "data")
    assert code == 1 and err.startswith("Error: /dev/zero: is not a regular file (a pipe, a device or a socket)")


# ---------------------------------------------------------------------------- environment and arguments


@pytest.mark.parametrize("value", ["tomorrow", "99999999999999999999", "-5", "1.5"])
def test_a_bad_source_date_epoch_is_an_error_before_anything_is_imported(tmp_path, value):
    """numpy reads SOURCE_DATE_EPOCH when scipy imports it (int() of it, or gmtime of it): econ checks it first."""
    result = econ(
        tmp_path,
        "build",
        "--data",
        str(REPO / "tests" / "fixtures" / "data"),
        "--db",
        "x.duckdb",
        "--no-report",
        "--cache",
        "c",
        env={"SOURCE_DATE_EPOCH": value},
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"Error: SOURCE_DATE_EPOCH={value!r} is not a Unix time — set it to whole seconds")
    assert not (tmp_path / "x.duckdb").exists()


def test_fleet_replica_chips_beyond_any_cluster(fixture_db, capsys):
    args = ["fleet", "--db", str(fixture_db), "--model", "DeepSeek-V3", "--chip", "B200", "--tokens-per-s", "5e7"]
    code, out, err = run(capsys, *args, "--decode-chips", "1e20")
    assert (code, out) == (1, "")
    assert err.startswith("Error: --decode-chips must be between 1 and 1e+07 (got 1e+20)")


def test_diff_between_dates_without_snapshots_warns(fixture_db, capsys):
    code, out, err = run(capsys, "diff", "--db", str(fixture_db), "--from", "2026-01-01", "--to", "2026-02-01")
    assert code == 0 and "0 price moves (0 up, 0 down), 0 new and 0 removed keys" in out
    assert err == (
        "notice: no snapshot is dated after 2026-01-01 up to 2026-02-01 (snapshots: none), so no imported price can "
        "have changed between them; only hand-kept prices are compared\n"
    )


# ---------------------------------------------------------------------------- econ sql


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (";", "Error: the query has no statement (only comments or semicolons) — pass a SELECT statement\n"),
        (
            "-- only a comment",
            "Error: the query has no statement (only comments or semicolons) — pass a SELECT statement\n",
        ),
        (
            "copy (select 1 as x) to 'data/prices.csv'",
            'Error: file access is refused: Permission Error: Cannot access file "data/prices.csv" - file system '
            "operations are disabled by configuration — econ sql reads and writes nothing but the database; write "
            "results with --format csv > file.csv, or pass --allow-files to let this query read or write files\n",
        ),
        (
            "select * from read_text('/etc/shadow')",
            'Error: file access is refused: Permission Error: Cannot access file "/etc/shadow" - file system '
            "operations are disabled by configuration — econ sql reads and writes nothing but the database; write "
            "results with --format csv > file.csv, or pass --allow-files to let this query read or write files\n",
        ),
    ],
    ids=["semicolon", "comment", "copy-to-input", "read-text"],
)
def test_sql_that_is_empty_or_touches_files(fixture_db, data_dir, capsys, query, message):
    before = hashlib.sha256((data_dir / "prices.csv").read_bytes()).hexdigest()
    assert run(capsys, "sql", "--db", str(fixture_db), query) == (1, "", message)
    assert hashlib.sha256((data_dir / "prices.csv").read_bytes()).hexdigest() == before


def test_sql_file_in_latin1(fixture_db, capsys, tmp_path):
    path = tmp_path / "q.sql"
    path.write_bytes("select 'Zürich' as city".encode("latin-1"))
    code, out, err = run(capsys, "sql", "--db", str(fixture_db), "-f", str(path))
    assert (code, out, err) == (
        1,
        "",
        f"Error: {path} is not UTF-8 text (byte 0xfc on line 1) — save the file as UTF-8\n",
    )


def test_sql_streams_a_large_result_in_bounded_memory(fixture_db, tmp_path):
    """2 M rows as CSV: the peak RSS stays far below what holding the rows takes (fetchall of 10 M such rows peaked
    at 2.76 GB, streaming them at 0.12-0.16 GB)."""
    probe = (
        "import resource, subprocess, sys; "
        "r = subprocess.run([sys.executable, '-m', 'econ', 'sql', '--db', sys.argv[1], '--format', 'csv', "
        "'select i, i * 0.5 as x, concat(\\'row \\', i) as s from range(2000000) t(i)'], stdout=subprocess.PIPE); "
        "print(r.returncode, r.stdout.count(b'\\n'), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(fixture_db)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    code, lines, peak_mb = map(int, result.stdout.split())
    assert (code, lines) == (0, 2_000_001)
    assert peak_mb < 300, f"peak RSS {peak_mb} MB"


@pytest.mark.parametrize(
    "query",
    [
        "select sum(hash(i)) from range(100000000000) t(i)",  # one long aggregate
        "select i, hash(i) from range(10000000000) t(i) order by 2 limit 3",  # a sort
        "select * from range(100000000000)",  # a streamed result, fetched batch by batch
    ],
    ids=["aggregate", "sort", "stream"],
)
def test_ctrl_c_stops_a_long_query(fixture_db, query):
    """SIGINT 1.5 s into a query that would run for minutes: exit 130 at once (without the watcher thread of
    econ.sql, 5 of 30 such Ctrl-Cs were lost and the query ran on)."""
    import signal
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "econ", "sql", "--db", str(fixture_db), query, "--format", "csv"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        time.sleep(1.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        assert (proc.returncode, err) == (130, "interrupted\n")
        assert time.monotonic() - sent < 5
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
