"""Replaying a price database's git history: a slice of both real histories, committed again into a scratch repository
with their dates and messages, replayed twice."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from econ.errors import EconError
from econ.load.history import snapshot_bytes, write_csv
from econ.load.history_periods import history_periods
from econ.load.replay import history_store, replay_into

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SLICES = FIXTURES / "history"
PRESETS = FIXTURES / "importers" / "llm_prices_presets_6d3a320.js"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str, when: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "econ", "GIT_AUTHOR_EMAIL": "econ@example.org",
           "GIT_COMMITTER_NAME": "econ", "GIT_COMMITTER_EMAIL": "econ@example.org"}  # fmt: skip
    if when:
        env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def commit(repo: Path, files: dict[str, str | None], when: str, subject: str) -> None:
    for path, text in files.items():
        target = repo / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", subject, when=when)


def slices(source: str) -> list[tuple[str, str, dict[str, str]]]:
    """(commit time, subject, {path: text}) of the vendored slice of ``source``, in commit order."""
    out: dict[str, tuple[str, str, dict[str, str]]] = {}
    with open(SLICES / "slices.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["source"] == source:
                entry = out.setdefault(row["commit"], (row["committed_at"], row["subject"], {}))
                entry[2][row["path"]] = (SLICES / row["file"]).read_text(encoding="utf-8")
    return list(out.values())


def llm_prices_repo(root: Path) -> Path:
    """The page with its presets (2025-10-06), the data files of four commits around the luna/terra cut, a page-only
    commit, and a commit with invalid JSON fixed a minute later."""
    repo = root / "llm-prices"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {"index.html": PRESETS.read_text(encoding="utf-8")}, "2025-10-06T12:37:13-07:00", "gpt-5-pro")
    first, *rest = slices("llm_prices")
    commit(repo, {**first[2], "index.html": "<script>fetch('current-v1.json')</script>"}, first[0], first[1])
    commit(repo, {"index.html": "<script>fetch('current-v1.json') // sort</script>"}, "2026-07-09T10:00:00Z", "UI")
    for when, subject, files in rest:
        commit(repo, files, when, subject)
    good = (repo / "data" / "openai.json").read_text(encoding="utf-8")
    commit(repo, {"data/openai.json": good[:-40]}, "2026-07-31T10:00:00Z", "Broken JSON")  # a cut file
    commit(repo, {"data/openai.json": good}, "2026-07-31T10:01:00Z", "Fix invalid JSON")
    return repo


def genai_prices_repo(root: Path) -> Path:
    repo = root / "genai-prices"
    repo.mkdir()
    git(repo, "init", "-q")
    for when, subject, files in slices("genai_prices"):
        commit(repo, files, when, subject)
    return repo


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    root = tmp_path_factory.mktemp("repos")
    return {"llm_prices": llm_prices_repo(root), "genai_prices": genai_prices_repo(root)}


@pytest.mark.parametrize("source", ["llm_prices", "genai_prices"])
def test_replaying_twice_gives_byte_identical_snapshots(repos, tmp_path, source):
    first, replayed = history_store(source, repos[source])
    again, _ = history_store(source, repos[source])
    assert (write_csv(first.commits), write_csv(first.changes)) == (write_csv(again.commits), write_csv(again.changes))
    snapshots = [snapshot_bytes(first, i) for i in range(first.size)]
    assert snapshots == [snapshot_bytes(again, i) for i in range(again.size)]
    rebuilt = (llm_prices_repo if source == "llm_prices" else genai_prices_repo)(tmp_path)  # the same history again
    third, _ = history_store(source, rebuilt)
    assert write_csv(third.changes) == write_csv(first.changes)


def test_each_commit_that_changed_the_data_is_a_snapshot(repos):
    store, replayed = history_store("llm_prices", repos["llm_prices"])
    subjects = store.commits["subject"].to_list()
    assert subjects == [
        "gpt-5-pro",  # the page's presets
        "Prices for GPT-5.6 Sol/Terra/Luna",  # the first data files (the page no longer holds prices)
        "gemini-3.6-flash and gemini-3.5-flash-lite",
        "Price drops for GPT-5.6 Luna and Terra",
        "Add missing long context prices, history for luna/terra",
        "Fix invalid JSON",
    ]  # the page-only commit changed no data; the broken one is skipped and said
    assert replayed.commits_read == 8 and [reason for _, reason in replayed.skipped] == [
        "data/openai.json: invalid JSON (Unterminated string starting at)"
    ]
    assert store.commits["snapshot_date"].to_list()[1:4] == [date(2026, 6, 26), date(2026, 7, 24), date(2026, 7, 30)]
    assert store.commits["input_path"].to_list()[:2] == ["index.html (presets)", "data/*.json"]


def test_the_luna_cut_is_dated_to_its_commit_s_window(repos):
    """The llm-prices commit "Price drops for GPT-5.6 Luna and Terra" (2026-07-30) first shows $0.20 / $1.20; the one
    before (2026-07-24) last showed $1 / $6: the window, and the commit that first showed the new price."""
    store, _ = history_store("llm_prices", repos["llm_prices"])
    ids = dict(zip(store.commits["subject"], store.commits["commit"]))
    luna = history_periods(store, "llm_prices").filter(
        (pl.col("model") == "gpt-5.6-luna") & (pl.col("tier_min_prompt_tokens") == 0)
    )
    assert luna.select("from_date", "to_date", "input_usd_per_mtok", "snapshot_date", "source_commit").rows() == [
        (date(2026, 6, 26), date(2026, 7, 30), 1.0, date(2026, 7, 24), ids["Prices for GPT-5.6 Sol/Terra/Luna"]),
        (date(2026, 7, 30), None, 0.2, date(2026, 7, 31), ids["Price drops for GPT-5.6 Luna and Terra"]),
    ]


def test_genai_prices_v2_feed_is_read_once_it_exists(repos):
    store, _ = history_store("genai_prices", repos["genai_prices"])
    assert store.commits["input_path"].to_list() == ["prices/data.json"] * 2 + ["prices/new_data/v2/data.json"]
    opus = history_periods(store, "genai_prices").filter(pl.col("model") == "claude-opus-4-6")
    # the long-context premium ended on 2026-03-13, a date the source gives inside the window 2026-03-09…2026-03-17
    tier = opus.filter(pl.col("tier_min_prompt_tokens") == 200000)
    assert tier.select("from_date", "to_date").rows() == [(date(2026, 3, 9), date(2026, 3, 13))]


def test_replay_writes_the_history_to_the_data_folder(repos, tmp_path):
    (tmp_path / "data").mkdir()
    written = replay_into("genai_prices", repos["genai_prices"], data_dir=tmp_path / "data")
    assert written.status == "new" and sorted(p.name for p in written.files) == [
        "genai_prices_changes.csv",
        "genai_prices_commits.csv",
    ]
    assert replay_into("genai_prices", repos["genai_prices"], data_dir=tmp_path / "data").status == "unchanged"


def test_a_folder_that_is_not_the_repository_is_an_error(tmp_path):
    with pytest.raises(EconError, match="git cannot read"):
        history_store("genai_prices", tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    commit(other, {"README.md": "hello"}, "2026-01-01T00:00:00Z", "init")
    with pytest.raises(EconError, match="no commit of .* changed genai_prices's data"):
        replay_into("genai_prices", other, data_dir=tmp_path)


def test_econ_history_replay_says_what_it_wrote(repos, tmp_path, capsys):
    from econ.cli import main

    (tmp_path / "data").mkdir()
    assert (
        main(["history", "replay", "llm_prices", "--repo", str(repos["llm_prices"]), "--data", str(tmp_path / "data")])
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("replayed 6 snapshots of llm_prices from 8 commits of ")
    assert "llm_prices_changes.csv: " in out and "skipped " in out and "invalid JSON" in out
