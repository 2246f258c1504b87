"""econ cost against worked examples from the providers' own pricing pages (tests/fixtures/pricing_examples: each
row cites its page and quotes the rates and the billing rule), on the shipped data; then the listing of every seller,
workloads and the errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from econ.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pricing_examples" / "examples.csv"
ROWS = list(csv.DictReader(EXAMPLES.read_text(encoding="utf-8").splitlines()))


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["cost", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_examples_cover_every_billing_rule():
    ids = {r["example_id"] for r in ROWS}
    assert len(ids) >= 10
    assert {"ANT-01", "ANT-03", "GOO-02", "OAI-02", "ALI-04"} <= ids  # long-context tier bills the whole request
    assert {"ANT-05", "ANT-06", "ANT-07", "ANT-08", "GOO-05", "OAI-08"} <= ids  # 5m and 1h writes, reads, batch


@pytest.mark.parametrize("example", ROWS, ids=[r["example_id"] for r in ROWS])
def test_econ_cost_reproduces_the_worked_example(real_db, capsys, example):
    """The hand-kept (first-party) row of the provider, billed as the page says (source_url, quote in the CSV)."""
    args = ["--db", str(real_db), "--model", example["model"], "--provider", example["provider"], "--source", "hand"]
    args += ["--variant", example["variant"], "--as-of", example["as_of"], "--format", "json"]
    args += ["--input-tokens", example["input_tokens"], "--output-tokens", example["output_tokens"]]
    args += [
        "--cached-input-tokens",
        example["cached_input_tokens"],
        "--cache-write-tokens",
        example["cache_write_tokens"],
    ]
    if example["cache_ttl"]:
        args += ["--cache-ttl", example["cache_ttl"]]
    if float(example["cache_storage_hours"] or 0):
        args += ["--cache-storage-hours", example["cache_storage_hours"]]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    rows = json.loads(out)  # DeepSeek's deepseek-chat and deepseek-reasoner both served V3.2 at one price
    assert [r["cost_usd"] for r in rows] == pytest.approx(
        [float(example["expected_usd"])] * len(rows), rel=1e-9, abs=1e-12
    )


def test_without_a_provider_every_seller_is_listed_cheapest_first_and_free_rows_left_out(real_db, capsys):
    args = ["--db", str(real_db), "--model", "gpt-oss-120b", "--input-tokens", "10000", "--output-tokens", "1000"]
    code, out, _ = run(capsys, *args, "--format", "json")
    rows = json.loads(out)
    costs = [r["cost_usd"] for r in rows]
    assert code == 0 and len(rows) >= 30 and costs == sorted(costs)
    # the cheapest: 0.03 in / 0.17 out per MTok (wandb and OpenRouter in the shipped maps)
    assert costs[0] == pytest.approx((10_000 * 0.03 + 1_000 * 0.17) / 1e6)
    code, out, _ = run(capsys, *args, "--model", "deepseek-v3.1")  # the same flags, another model
    assert code == 0 and "free or placeholder price" in out  # ollama's $0 local rows


def test_a_workload_file_prints_totals(real_db, capsys, tmp_path):
    workload = tmp_path / "requests.csv"
    workload.write_text("input_tokens,output_tokens,cached_input_tokens,requests\n1000,200,5000,1000\n250000,500,,10\n")
    code, out, _ = run(
        capsys,
        *("--db", str(real_db), "--model", "gpt-5.4", "--provider", "openai", "--source", "hand"),
        *("--requests", str(workload), "--format", "json"),
    )
    (row,) = json.loads(out)
    # 1,000 x (1,000 x 2.50 + 5,000 x 0.25 + 200 x 15) + 10 x (250,000 x 2.50 + 500 x 15), per million: base tier
    assert code == 0 and row["requests"] == 1010
    assert row["cost_usd"] == pytest.approx(6.75 + 6.325) and row["usd_per_request"] == pytest.approx(13.075 / 1010)


def test_a_bad_workload_names_file_line_and_column(real_db, capsys, tmp_path):
    workload = tmp_path / "requests.csv"
    workload.write_text("input_tokens,output_tokens\n1000,-5\n")
    code, _, err = run(capsys, "--db", str(real_db), "--model", "gpt-5.4", "--requests", str(workload))
    assert code == 1 and "requests.csv:2: column output_tokens" in err and "must be at least 0" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ("--model", "gpt-5.44"),
            "unknown model 'gpt-5.44' (no canonical model, models.model or price key of that name) "
            "— did you mean gpt-5.4,",
        ),
        (("--model", "gpt-5.4", "--provider", "opena1"), "opena1 sells no gpt-5.4"),
        (("--model", "gpt-5.4", "--variant", "fast"), "no fast price of gpt-5.4"),
    ],
)
def test_errors_say_what_exists(real_db, capsys, extra, message):
    code, _, err = run(capsys, "--db", str(real_db), "--input-tokens", "1", "--output-tokens", "1", *extra)
    assert code == 1 and message in err
