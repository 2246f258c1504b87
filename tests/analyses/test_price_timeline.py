"""The price history on the shipped data: coverage, first-party changes against the commits that show them, conflicts
and the precedence rule, econ cost and econ diff at any date."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import duckdb
import pytest

from econ.cli import main

EXPECTED = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "first_party_changes.csv"


@pytest.fixture(scope="module")
def con(real_db):
    with duckdb.connect(str(real_db), read_only=True) as c:
        yield c


def test_at_least_500_canonical_models_have_a_dated_price_history(con):
    n = con.sql(
        "select count(distinct canonical_model) from price_history where source in ('genai_prices', 'llm_prices')"
    ).fetchall()[0][0]
    assert n >= 500, n
    first, snapshots = con.sql("select min(snapshot_date), count(*) from price_snapshots").fetchall()[0]
    assert first == date(2024, 10, 17) and snapshots >= 265


def test_first_party_changes_are_dated_to_the_window_of_the_commits_that_show_them(con):
    """Each expected change was read from the raw files at its two commits (plain JSON, not econ's importers): the
    old price at the last commit that had it, the new one at the first that has it. The table must date it to exactly
    that window, the tightest the source allows (consecutive snapshots), or to the day the source names."""
    expected = list(csv.DictReader(EXPECTED.read_text(encoding="utf-8").splitlines()))
    assert len(expected) >= 30
    moves = {
        (r["provider"], r["canonical_model"], r["tier_min_prompt_tokens"], r["old_usd_per_mtok"]) for r in expected
    }
    assert len(moves) >= 30
    rows = con.sql(
        "select source, provider, canonical_model, variant, tier_min_prompt_tokens, component, old_usd_per_mtok, "
        "new_usd_per_mtok, window_from_date, window_to_date, exact, window_from_commit, window_to_commit "
        "from first_party_price_changes"
    ).fetchall()
    table = {(r[0], r[1], r[2], r[3], r[4], r[5], r[6]): r[7:] for r in rows}
    between = (
        "select count(*) from prices p join first_party_price_changes f using (source, provider, model, variant, "
        "tier_min_prompt_tokens) where f.source = ? and f.canonical_model = ? and f.component = ? "
        "and f.tier_min_prompt_tokens = ? and f.old_usd_per_mtok = ? "
        "and p.snapshot_date > f.window_from_date and p.from_date < f.window_to_date"
    )
    for e in expected:
        key = (e["source"], e["provider"], e["canonical_model"], e["variant"], int(e["tier_min_prompt_tokens"]),
               e["component"], float(e["old_usd_per_mtok"]))  # fmt: skip
        new, start, end, exact, from_commit, to_commit = table[key]
        assert new == pytest.approx(float(e["new_usd_per_mtok"])), key
        assert (start.isoformat(), end.isoformat(), str(exact)) == (
            e["window_from_date"], e["window_to_date"], e["exact"]
        ), key  # fmt: skip
        assert (from_commit or "", to_commit) == (e["window_from_commit"], e["window_to_commit"]), key
        if not exact:  # the tightest window: no snapshot of the source saw the key's price inside it
            params = [key[0], key[2], key[5], key[4], key[6]]
            assert con.execute(between, params).fetchall()[0][0] == 0, key


def test_the_gpt_5_6_luna_cut_in_llm_prices(con):
    row = con.sql(
        "select window_from_date, window_to_date, window_from_commit, window_to_commit from first_party_price_changes "
        "where source = 'llm_prices' and canonical_model = 'gpt-5.6-luna' and component = 'input' "
        "and tier_min_prompt_tokens = 0"
    ).fetchall()[0]
    assert row == (
        date(2026, 7, 24),
        date(2026, 7, 30),
        "014a62da459805dcea25aaa644cf7a90ec9e4000",  # gemini-3.6-flash and gemini-3.5-flash-lite
        "b163763f7dd81344478b3cd0b75aac8fc994c902",  # Price drops for GPT-5.6 Luna and Terra
    )


def test_the_sources_disagree_and_the_precedence_rule_decides(con):
    """simonw's llm-prices restored o3's launch price ($10 / $40) when it moved to data files on 2025-10-10; OpenAI had
    cut it to $2 / $8 on 2025-06-10, which genai-prices and LiteLLM show: a listed conflict, the newer evidence at $2
    prevails, and the move is classified as a data fix the other sources contradict."""
    rows = con.sql(
        "select source, input_usd_per_mtok, other_source, other_input_usd_per_mtok from price_conflicts "
        "where provider = 'openai' and canonical_model = 'o3' and tier_min_prompt_tokens = 0 and to_date is null"
    ).fetchall()
    assert any(r[1] == 2.0 and r[2:] == ("llm_prices", 10.0) for r in rows), rows
    cls = con.sql(
        "select change_class, contradicted from price_change_log where source = 'llm_prices' and model = 'o3' "
        "and component = 'input' and change_date = date '2025-10-10'"
    ).fetchall()[0]
    assert cls == ("suspected data fix", True)


def test_econ_cost_as_of_any_date_since_the_first_snapshot(real_db, capsys):
    """Claude 3.5 Haiku before and after Anthropic's cut of 2024-12-05 ($1 / $5 to $0.80 / $4): 100k in, 10k out."""
    for day, usd in (("2024-12-01", "0.15"), ("2024-12-06", "0.12")):
        args = ["--input-tokens", "100000", "--output-tokens", "10000", "--as-of", day, "--format", "csv"]
        assert (
            main(["cost", "--db", str(real_db), "--model", "claude-3.5-haiku", "--provider", "anthropic", *args]) == 0
        )
        out = capsys.readouterr().out.splitlines()
        assert out[1].split(",")[5] == usd, (day, out)
    assert main(["cost", "--db", str(real_db), "--model", "claude-3.5-haiku", "--input-tokens", "1",
                 "--output-tokens", "1", "--as-of", "2024-06-01"]) == 1  # fmt: skip
    assert "the price history starts on 2024-10-17" in capsys.readouterr().err


def test_econ_diff_says_each_change_s_window(real_db, capsys):
    assert main(["diff", "--db", str(real_db), "--from", "2026-07-20", "--to", "2026-08-10", "--provider", "openai",
                 "--model", "gpt-5.6-luna", "--format", "csv"]) == 0  # fmt: skip
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    luna = {(r["source"], r["component"], r["tier_min_prompt_tokens"]): r for r in rows if r["change"] == "changed"}
    simonw = luna[("llm_prices", "input_usd_per_mtok", "0")]
    assert (simonw["window_from_date"], simonw["window_to_date"], simonw["window_to_commit"][:8]) == (
        "2026-07-24",
        "2026-07-30",
        "b163763f",
    )
    hand = luna[("hand", "input_usd_per_mtok", "0")]
    assert (hand["window_from_date"], hand["window_to_date"], hand["exact"]) == ("2026-07-30", "2026-07-30", "True")


def test_the_inferences_read_the_current_prices_without_the_replayed_histories(con):
    """A new commit of genai-prices or llm-prices changes no inference: the fits read inference_prices."""
    con.execute("set variable as_of = date '2026-11-30'")
    by_source = dict(con.execute("select source, count(*) from price_current group by all").fetchall())
    inferred = dict(con.execute("select source, count(*) from inference_prices group by all").fetchall())
    assert set(by_source) == {"hand", "litellm", "openrouter", "genai_prices", "llm_prices"}
    assert inferred == {s: n for s, n in by_source.items() if s not in ("genai_prices", "llm_prices")}


def test_econ_diff_calls_litellms_stale_gpt_35_turbo_a_data_fix_as_the_change_log_does(con, real_db, capsys):
    """LiteLLM's 2025-09-01 map priced openai's gpt-3.5-turbo at $1.50/$2 (the -0301 model's price); its 2026-11-20 map
    has $0.50/$1.50, the -0125 price OpenAI's alias has charged since 2024, which genai-prices has shown since
    2025-07-04. So the step is LiteLLM fixing stale data, not OpenAI cutting in November 2026: econ diff says so, with
    the reason, as price_change_log does."""
    genai = con.sql(
        "select input_usd_per_mtok, output_usd_per_mtok from price_history where source = 'genai_prices' and "
        "provider = 'openai' and model = 'gpt-3.5-turbo' and from_date = date '2025-07-04' and to_date is null"
    )
    assert genai.fetchall() == [(0.5, 1.5)]
    args = ["--from", "2026-08-19", "--to", "2026-11-20", "--provider", "openai", "--model", "gpt-3.5-turbo"]
    assert main(["diff", "--db", str(real_db), *args, "--format", "csv"]) == 0
    rows = [r for r in csv.DictReader(capsys.readouterr().out.splitlines()) if r["change"] == "changed"]
    assert sorted(
        (r["component"], r["old_value"], r["new_value"], r["change_class"], r["fix_reason"]) for r in rows
    ) == [
        ("input_usd_per_mtok", "1.5", "0.5", "suspected data fix", "contradicted"),
        ("output_usd_per_mtok", "2.0", "1.5", "suspected data fix", "contradicted"),
    ]
    assert main(["diff", "--db", str(real_db), *args]) == 0
    out = capsys.readouterr().out
    assert "0 price moves" in out and "2 suspected upstream data fixes" in out and "contradicted by the other" in out


def test_price_changes_and_the_change_log_agree_on_every_step(con):
    """The What-changed page's table (price_changes, the two newest snapshots) and price_change_log: no step of a key
    that one calls a suspected data fix and the other a price move (53 such rows before they shared one rule)."""
    disagree = con.sql(
        """
        select c.source, c.model, c.component, c.change_class, l.change_class
        from price_changes c join price_change_log l
          on (c.source, c.provider, c.model, c.variant, c.tier_min_prompt_tokens)
           = (l.source, l.provider, l.model, l.variant, l.tier_min_prompt_tokens)
         and c.component = l.component || '_usd_per_mtok' and l.change_date > c.from_date and l.change_date <= c.to_date
        where c.change = 'changed'
          and (c.change_class = 'suspected data fix') <> (l.change_class = 'suspected data fix')
        """
    ).fetchall()
    assert disagree == []
    reasons = dict(
        con.sql(
            "select fix_reason, count(*) from price_changes where change_class = 'suspected data fix' group by all"
        ).fetchall()
    )
    assert reasons.get("contradicted", 0) > 0 and None not in reasons
