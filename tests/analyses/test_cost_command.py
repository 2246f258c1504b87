"""econ cost against worked examples from the providers' own pricing pages (tests/fixtures/pricing_examples: each
row cites its page and quotes the rates and the billing rule), on the shipped data; then the listing of every seller,
workloads and the errors."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import polars as pl
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
    rows = json.loads(out)  # one holding schedule (DeepSeek's deepseek-chat and deepseek-reasoner: one V3.2 price)
    assert len(rows) >= 1 and [r["cost_usd"] for r in rows] == pytest.approx(
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


def test_tokens_given_twice_are_refused_saying_which(real_db, capsys):
    """Tokens per request beside a file of requests: refused, naming every flag that gives them."""
    argv = ("--db", str(real_db), "--model", "gpt-5.4", "--requests", "examples/requests.csv")
    code, _, err = run(capsys, *argv, "--input-tokens", "5")
    assert code == 1 and "--input-tokens and --requests both give the tokens" in err
    code, _, err = run(capsys, *argv, "--input-tokens", "5", "--output-tokens", "1")
    assert code == 1 and "--input-tokens, --output-tokens and --requests all give the tokens" in err


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


def readme_costs() -> dict[str, tuple[str, str]]:
    import re

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    found = re.findall(
        r"<!-- readme-cost: (\S+) -->\n```sh\n(econ cost .+?)\n```\n\n```text\n(.*?)\n```", text, flags=re.S
    )
    return {name: (command, out) for name, command, out in found}


@pytest.mark.parametrize("name", ["sonnet-4.5-beta", "sonnet-4.5"])
def test_the_readme_shows_what_its_cost_examples_print(real_db, capsys, monkeypatch, name):
    """Issue 25's check: the README's econ cost example prints Anthropic's real bill ($1.575 while the 1M beta ran; a
    refusal with its reason after), and no seller whose limit is below the prompt is ranked; the output is what econ
    cost prints on a build of the shipped data (rebuild and paste when the data change)."""
    import shlex

    command, shown = readme_costs()[name]
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "--db", str(real_db), *shlex.split(command)[2:])
    assert code == 0 and out.rstrip("\n") == shown
    if name == "sonnet-4.5-beta":
        assert "hand    anthropic  claude-sonnet-4-5                  200000     1.575" in out


def test_no_seller_below_the_prompt_is_ranked_and_all_lists_them(real_db, capsys):
    args = ["--db", str(real_db), "--model", "claude-sonnet-4.5", "--input-tokens", "250000", "--output-tokens", "2000"]
    args += ["--cached-input-tokens", "50000", "--format", "json"]
    code, out, _ = run(capsys, *args)
    rows = json.loads(out)
    assert code == 0 and rows and all(r["status"] == "billed" for r in rows)
    assert {r["provider"] for r in rows} >= {"openrouter", "bedrock"} and "anthropic" not in {
        r["provider"] for r in rows
    }
    assert all(r["refusal"] is None and (r["max_input_tokens"] or 300_000) >= 300_000 for r in rows)
    code, out, _ = run(capsys, *args, "--all")
    refused = [r for r in json.loads(out) if r["status"] == "refused"]
    assert any(r["provider"] == "anthropic" and "limit of 200000" in r["refusal"] for r in refused)
    assert all(r["cost_usd"] is None for r in refused)


def test_a_bill_after_the_databases_date_says_its_prices_are_not_a_forecast(real_db, capsys):
    """The database knows prices up to the date it was built for (build_info.as_of): a bill dated after it is billed
    at the prices known then, and says so; one on that date does not."""
    from tests.analyses.helpers import q

    built = q(real_db, "select as_of from build_info")["as_of"][0]
    args = ["--db", str(real_db), "--model", "gpt-5.4", "--input-tokens", "1000", "--output-tokens", "10"]
    said = f"prices after {built}, the date the database was built for, are the ones known then"
    code, out, _ = run(capsys, *args, "--as-of", (built + timedelta(days=1)).isoformat())
    assert code == 0 and said in " ".join(out.split())
    code, out, _ = run(capsys, *args, "--as-of", built.isoformat())
    assert code == 0 and "the date the database was built for" not in " ".join(out.split())
    code, out, err = run(capsys, *args, "--as-of", (built + timedelta(days=1)).isoformat(), "--format", "csv")
    assert code == 0 and f"note: {said}" in err and said not in out  # csv keeps stdout to its rows
    assert list(csv.DictReader(out.splitlines()))[0]["cost_usd"]


def test_a_bill_prints_its_dollars_without_floating_point_noise(real_db, capsys):
    """Bedrock's regional endpoints bill Claude Sonnet 4.5's long context at $6.60 / $24.75 per MTok (AWS Bedrock
    pricing: 10% over the global $6 / $22.50): 250,000 + 2,000 tokens cost 1.65 + 0.0495 = $1.6995, which binary
    floating point computes as 0.049499999999999995 and csv printed so."""
    args = ["--db", str(real_db), "--model", "claude-sonnet-4.5", "--input-tokens", "250000", "--output-tokens", "2000"]
    code, out, _ = run(capsys, *args, "--provider", "bedrock_converse", "--format", "csv")
    rows = [r for r in csv.DictReader(out.splitlines()) if r["model"].startswith("eu.")]
    assert code == 0 and len(rows) == 1
    assert (rows[0]["input_usd"], rows[0]["output_usd"], rows[0]["cost_usd"]) == ("1.65", "0.0495", "1.6995")


def test_a_sellers_key_bills_what_that_key_named_on_the_date(real_db, capsys):
    """deepseek-reasoner on 2026-01-01 was DeepSeek-V3.2 at 0.28/0.42 USD/MTok (prices.csv, DeepSeek's page):
    10,000 + 1,000 tokens cost $0.00322. Resolving the key to its canonical model first billed R1's $0.00769."""
    code, out, _ = run(
        capsys,
        "--db",
        str(real_db),
        *("--model", "deepseek-reasoner", "--provider", "deepseek", "--as-of", "2026-01-01"),
        *("--input-tokens", "10000", "--output-tokens", "1000", "--format", "json"),
    )
    (row,) = json.loads(out)
    assert code == 0 and row["cost_usd"] == pytest.approx(10_000 * 0.28e-6 + 1_000 * 0.42e-6)


@pytest.mark.parametrize(
    ("args", "usd"),
    [  # issue 25's reports, with the bill the sellers' pages give (data/billing_rules.csv quotes them)
        (("--model", "grok-4.3", "--provider", "xai", "--input-tokens", "200000", "--output-tokens", "1000"), 0.505),
        (
            ("--model", "deepseek-v4-pro", "--provider", "deepseek", "--input-tokens", "2000"),
            0.04422,
        ),
    ],
)
def test_the_issues_examples_bill_as_the_sellers_do(real_db, capsys, args, usd):
    extra = ("--cache-write-tokens", "30000", "--output-tokens", "500") if "deepseek-v4-pro" in args else ()
    code, out, _ = run(capsys, "--db", str(real_db), *args, *extra, "--format", "json")
    (row,) = json.loads(out)
    assert code == 0 and row["cost_usd"] == pytest.approx(usd) and row["price_row"].startswith("prices.csv:")


def test_a_time_of_day_prices_the_request_and_a_workload_gives_each_shape_its_time(real_db, capsys, tmp_path):
    base = ("--db", str(real_db), "--model", "deepseek-v4-pro", "--provider", "deepseek", "--format", "json")
    tokens = ("--input-tokens", "10000", "--output-tokens", "1000")
    peak = json.loads(run(capsys, *base, *tokens, "--at", "2026-12-01T02:00Z")[1])[0]  # Tuesday 10:00 in Beijing
    off = json.loads(run(capsys, *base, *tokens, "--at", "2026-12-01T12:00Z")[1])[0]  # 20:00
    assert peak["cost_usd"] == pytest.approx(0.01716) and off["cost_usd"] == pytest.approx(0.00858)
    workload = tmp_path / "requests.csv"
    workload.write_text("input_tokens,output_tokens,at,requests\n10000,1000,2026-12-01T02:00Z,3\n10000,1000,,1\n")
    (row,) = json.loads(run(capsys, *base, "--requests", str(workload))[1])
    assert row["cost_usd"] == pytest.approx(4 * 0.01716)  # the shape without a time pays the listed (peak) price
    workload.write_text("input_tokens,output_tokens,at\n10000,1000,2026-12-01 02:00\n")
    code, _, err = run(capsys, *base, "--requests", str(workload))
    assert code == 1 and "requests.csv:2: column at" in err and "2026-12-01T02:00Z" in err


def test_a_bad_time_says_why(real_db, capsys):
    args = ("--db", str(real_db), "--model", "gpt-5.4", "--input-tokens", "1", "--output-tokens", "1")
    code, _, err = run(capsys, *args, "--at", "tomorrow")
    assert code == 1 and "--at 'tomorrow' is not a time with a zone" in err
    code, _, err = run(capsys, *args, "--at", "2025-03-01")  # a day alone: its prices are --as-of's
    assert code == 1 and "give --as-of 2025-03-01" in err and "--at 2025-03-01T02:00Z" in err


def test_a_retired_model_says_so_whether_or_not_a_source_still_lists_it(real_db, capsys):
    """genai-prices' last snapshot (2026-08-21) still lists claude-sonnet-4-0, two months after Anthropic retired
    Claude Sonnet 4: that schedule is listed as refused, with the retirement rule as its reason, and nothing is billed;
    where no source lists it any more, the error names the retirement."""
    from econ.analyses.cost_command import cost_for, read_billing, single_request
    from econ.errors import EconError

    args = ("--db", str(real_db), "--model", "claude-sonnet-4", "--provider", "anthropic")
    code, out, _ = run(capsys, *args, "--input-tokens", "1", "--output-tokens", "1")
    assert code == 0 and "refused, retired (billing rule anthropic-sonnet-4-retired): anthropic" in out
    assert "no seller takes these requests" in out
    data = read_billing(real_db)
    maps = replace(data, history=data.history.filter(pl.col("source") != "genai_prices"))
    with pytest.raises(EconError, match="claude-sonnet-4 was retired by anthropic on 2026-06-15"):
        cost_for(real_db, model="claude-sonnet-4", provider="anthropic", requests=single_request(input_tokens=1,
                 output_tokens=1), data=maps)  # fmt: skip


def test_a_retired_model_the_seller_redirects_is_billed_as_its_target(real_db, capsys):
    args = ("--db", str(real_db), "--model", "grok-code-fast-1", "--provider", "xai", "--format", "json")
    (row,) = json.loads(run(capsys, *args, "--input-tokens", "10000", "--output-tokens", "1000")[1])
    assert row["cost_usd"] == pytest.approx(0.015) and "bills it as grok-4.3" in row["note"]
    before = json.loads(
        run(capsys, *args, "--input-tokens", "10000", "--output-tokens", "1000", "--as-of", "2026-03-01")[1]
    )
    assert before[0]["cost_usd"] == pytest.approx(10_000 * 0.2e-6 + 1_000 * 1.5e-6)  # its own price until retired


def test_a_workload_with_times_pays_each_requests_own_dates_prices(real_db, capsys, tmp_path):
    """OpenAI cut gpt-5.6-luna from $1/$6 to $0.20/$1.20 per MTok on 2026-07-30 (data/prices.csv rows 95 and 113, from
    simonw/llm-prices and PromptFuel): two requests before the cut and three after pay 2 x $0.016 + 3 x $0.0032 (the
    arithmetic of those list prices), whatever date the database was built for; --as-of prices every request alike."""
    workload = tmp_path / "requests.csv"
    workload.write_text(
        "input_tokens,output_tokens,at,requests\n10000,1000,2026-07-20T10:00Z,2\n10000,1000,2026-08-05T10:00Z,3\n"
    )
    base = ("--db", str(real_db), "--model", "gpt-5.6-luna", "--provider", "openai", "--requests", str(workload))
    code, out, _ = run(capsys, *base)
    assert code == 0 and "prices of each request's date, 2026-07-20 to 2026-08-05 (2 price periods)" in out
    (row,) = json.loads(run(capsys, *base, "--format", "json")[1])
    before, after = 10_000 * 1e-6 + 1_000 * 6e-6, 10_000 * 0.2e-6 + 1_000 * 1.2e-6
    assert row["cost_usd"] == pytest.approx(2 * before + 3 * after) and row["requests"] == 5
    assert "priced 2026-07-20 by prices.csv:95" in row["note"]
    code, out, _ = run(capsys, *base, "--as-of", "2026-08-01")
    assert "every request is priced as of 2026-08-01 (--as-of)" in out
    (row,) = json.loads(run(capsys, *base, "--as-of", "2026-08-01", "--format", "json")[1])
    assert row["cost_usd"] == pytest.approx(5 * after)


def test_a_seller_with_no_price_on_some_of_the_dates_cannot_bill_the_workload(real_db, capsys, tmp_path):
    """OpenRouter's first price of deepseek-v4-pro is from 2026-06-15 (DeepSeek's own from 2026-04-24): a workload with
    requests on 2026-05-01 and 2026-07-01 is billed by DeepSeek, and OpenRouter is refused with the dates it priced."""
    workload = tmp_path / "requests.csv"
    workload.write_text("input_tokens,output_tokens,at\n10000,1000,2026-05-01T10:00Z\n10000,1000,2026-07-01T10:00Z\n")
    args = ("--db", str(real_db), "--model", "deepseek-v4-pro", "--requests", str(workload), "--format", "json")
    rows = {r["provider"]: r for r in json.loads(run(capsys, *args, "--all")[1]) if r["status"] != "superseded"}
    assert rows["deepseek"]["status"] == "billed" and rows["deepseek"]["requests"] == 2
    assert rows["openrouter"]["status"] == "refused" and rows["openrouter"]["cost_usd"] is None
    assert rows["openrouter"]["refusal"] == "no price for 1 of the 2 requests (priced only 2026-07-01)"
    assert "openrouter" not in {r["provider"] for r in json.loads(run(capsys, *args)[1])}


def test_a_seller_that_sold_nothing_on_some_of_the_workloads_dates_is_an_error_naming_them(real_db, capsys, tmp_path):
    workload = tmp_path / "requests.csv"
    workload.write_text("input_tokens,output_tokens,at\n10000,1000,2026-05-10T10:00Z\n10000,1000,2026-07-01T10:00Z\n")
    args = ("--db", str(real_db), "--model", "deepseek-v4-pro", "--provider", "openrouter", "--requests", str(workload))
    code, _, err = run(capsys, *args)
    assert code == 1 and "sells no deepseek-v4-pro on 2026-05-10 (the workload's requests of 2026-05-10)" in err
