"""econ refresh / econ diff on the real snapshots: known changes, idempotence, nothing lost on bad input."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import re
import shutil
import urllib.error
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from econ import refresh as refresh_module
from econ.cli import main
from econ.errors import DataError, EconError
from econ.fits.price_changes import default_dates
from econ.load.importers.common import read_json
from econ.refresh import detect_source, fetch, refresh
from tests.conftest import EXTERNAL, FIXTURE_DATA

TOKENCOST = EXTERNAL / "tokencost_model_prices_2025-09-01.json"
LITELLM = EXTERNAL / "litellm_model_prices.json"
AS_OF = date(2026, 11, 30)


def tree_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def run_refresh(data_dir, path, *, db=Path("out.duckdb"), cache=Path("cache"), **kw):
    return refresh(path, data_dir=data_dir, db_path=db, cache_dir=cache, reports_dir=None, build_as_of=AS_OF, **kw)


def test_detect_source():
    assert detect_source(read_json(LITELLM)) == "litellm"
    assert detect_source(read_json(EXTERNAL / "openrouter_models_2026-08-19.json")) == "openrouter"


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    """The fixture data refreshed with the tokencost copy (2025-09-01), then with the LiteLLM map (2026-11-20)."""
    root = tmp_path_factory.mktemp("refresh")
    shutil.copytree(FIXTURE_DATA, root / "data")
    kw = {"db": root / "out.duckdb", "cache": root / "cache"}
    first = run_refresh(root / "data", TOKENCOST, **kw)
    second = run_refresh(root / "data", LITELLM, as_of=date(2026, 11, 20), **kw)
    return root, kw, first, second


def test_refresh_reports_the_known_change(refreshed):
    _, kw, first, second = refreshed
    assert first.imported.status == "new" and first.diff is None  # the first snapshot: nothing to compare it with
    assert first.changes.height == 0 and first.implied.height == 0
    assert (second.diff.from_date, second.diff.to_date) == (date(2025, 9, 1), date(2026, 11, 20))
    row = second.changes.filter(
        model="gemini/gemini-2.5-pro", component="cache_read_usd_per_mtok", tier_min_prompt_tokens=0, variant="standard"
    )
    assert row.select("old_value", "new_value", "change_class").row(0) == (0.3125, 0.125, "price move down")


def test_a_diff_of_the_two_newest_snapshots_reads_what_the_build_stored_and_equals_the_computed_one(
    refreshed, monkeypatch
):
    """The build stores the changes between the two newest snapshots and what they imply (price_changes,
    inferred_changes); econ diff of those dates, and refresh's, read them rather than compute them again: row for
    row, in the same columns and order as the diff computed from the prices, which any other dates still get."""
    _, kw, _, _ = refreshed
    found = []
    stored_frames = refresh_module._stored
    monkeypatch.setattr(refresh_module, "_stored", lambda *a: found.append(stored_frames(*a)) or found[-1])
    stored = refresh_module.diff_database(kw["db"])
    monkeypatch.setattr(refresh_module, "_stored", lambda *a: found.append(None))
    computed = refresh_module.diff_database(kw["db"])
    assert found[0] is not None and len(found) == 2  # the first read the tables, the second computed
    assert stored.changes.height > 100 and stored.implied.height > 0
    assert stored.changes.equals(computed.changes) and stored.implied.equals(computed.implied)
    with duckdb.connect(str(kw["db"]), read_only=True) as con:
        compared = con.execute("select distinct from_date, to_date from price_changes").fetchall()
    assert compared == [(stored.from_date, stored.to_date)]


def test_refresh_and_diff_count_the_same_things(refreshed, capsys):
    """Issue 16: refresh printed "0 removed" where the econ diff right after said "1 removed". Refresh's changes are
    econ diff's between the snapshot before and the new one, and both print the same summary line."""
    _, kw, _, second = refreshed
    diff = refresh_module.diff_database(kw["db"], from_date=date(2025, 9, 1), to_date=date(2026, 11, 20))
    assert second.changes.equals(diff.changes) and second.implied.equals(diff.implied)
    assert second.counts == diff.counts and second.counts["models_removed"] > 0
    assert main(["diff", "--db", str(kw["db"])]) == 0
    summary = " ".join(capsys.readouterr().out.split("\n\n")[0].splitlines()[1:])  # the summary, however wrapped
    n = {c: second.changes.filter(change_class=c).height for c in ("price move up", "price move down")}
    assert f"({n['price move up']:,} up, {n['price move down']:,} down)" in summary
    removed_keys = second.changes.filter(change_class="removed").select("source", "provider", "model").n_unique()
    assert f"{removed_keys:,} removed keys" in summary and removed_keys > 0  # keys, not their variant x tier rows


def test_refresh_implies_what_the_rebuilt_database_infers(refreshed):
    """Second method: the changes analysis of the rebuild (inferred_changes, from the two newest snapshot dates of
    the whole prices table) lists the same implied quantities as refresh does."""
    root, kw, _, second = refreshed
    with duckdb.connect(str(kw["db"]), read_only=True) as con:
        stored = con.sql("select * exclude (from_date, to_date) from inferred_changes").pl()
    assert second.implied.height > 0
    assert second.implied.sort(second.implied.columns).equals(stored.sort(stored.columns))


def test_refreshing_the_same_snapshot_again_changes_nothing(refreshed):
    root, kw, _, _ = refreshed
    snapshot = root / "data" / "snapshots" / "litellm_2026-11-20.csv"
    before = snapshot.read_bytes()
    again = run_refresh(root / "data", LITELLM, as_of=date(2026, 11, 20), **kw)
    assert again.imported.status == "unchanged" and again.changes.height == 0 and again.implied.height == 0
    assert again.built is None  # the database is current: nothing is rebuilt
    assert snapshot.read_bytes() == before


def test_reimporting_a_shipped_snapshot_with_a_new_mtime_changes_no_file_and_no_table(
    refreshed, tmp_path, capsys, monkeypatch
):
    """Issue 16: re-importing the shipped LiteLLM map created litellm_2026-12-01.csv (dated by its mtime), identical
    in content to the 2026-11-20 snapshot. A copy of the file with a fresh mtime and no date in its name now adds
    nothing: data/, the database file and every table are as they were."""
    root, kw, _, _ = refreshed
    copy = tmp_path / "model_prices_and_context_window.json"
    shutil.copyfile(LITELLM, copy)  # modification time: now
    with duckdb.connect(str(kw["db"]), read_only=True) as con:
        tables = {t: con.sql(f"select * from {t} order by all").pl() for (t,) in con.sql("show tables").fetchall()}
    state = (tree_hash(root / "data"), hashlib.sha256(kw["db"].read_bytes()).hexdigest())
    args = ["refresh", str(copy), "--data", str(root / "data"), "--db", str(kw["db"]), "--cache", str(kw["cache"])]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(datetime(2026, 11, 30, tzinfo=UTC).timestamp())))
    assert main([*args, "--no-report"]) == 0  # the build date the database has: AS_OF
    out = capsys.readouterr()
    assert out.out.splitlines() == [
        "snapshot litellm_2026-11-20.csv: unchanged (5451 price rows, dated 2026-11-20 from the same content as "
        "litellm_2026-11-20.csv)",
        f"nothing new: {kw['db']} is current, nothing was rebuilt",
    ]
    assert out.err == ""  # no notice of a date from the modification time
    assert state == (tree_hash(root / "data"), hashlib.sha256(kw["db"].read_bytes()).hexdigest())
    with duckdb.connect(str(kw["db"]), read_only=True) as con:
        for name, frame in tables.items():
            assert con.sql(f"select * from {name} order by all").pl().equals(frame), name


def test_an_unchanged_snapshot_still_rebuilds_a_stale_database(refreshed, tmp_path):
    """Nothing new to import, but a data file changed after the build (or another as-of date): refresh rebuilds."""
    root, kw, _, _ = refreshed
    data = tmp_path / "data"
    shutil.copytree(root / "data", data)
    db = tmp_path / "out.duckdb"
    shutil.copy2(kw["db"], db)
    again = run_refresh(data, LITELLM, as_of=date(2026, 11, 20), db=db, cache=kw["cache"])
    assert again.built is None
    (data / "scenarios.csv").touch()  # newer than the database
    again = run_refresh(data, LITELLM, as_of=date(2026, 11, 20), db=db, cache=kw["cache"])
    assert again.imported.status == "unchanged" and again.built is not None


def test_cli_refresh_of_a_missing_file_is_an_error(data_dir, capsys):
    code = main(
        ["refresh", "missing.json", "--source", "litellm", "--data", "data", "--db", "out.duckdb", "--no-report"]
    )
    assert (code, capsys.readouterr().err) == (
        1,
        "Error: missing.json: does not exist — check the path of the file to import\n",
    )
    assert not Path("out.duckdb").exists()


def test_truncated_file_leaves_data_database_and_reports_untouched(data_dir, tmp_path, capsys, monkeypatch):
    import econ.report.site as site

    def one_page_site(con, out_dir, *, as_of, **_):  # the real site takes ~5 s; only its bytes matter here
        out_dir.mkdir(parents=True)
        (out_dir / "index.html").write_text(f"prices as of {as_of}", encoding="utf-8")

    monkeypatch.setattr(site, "build_site", one_page_site)
    assert (
        main(
            [
                "build",
                "--data",
                "data",
                "--db",
                "out.duckdb",
                "--cache",
                "cache",
                "--reports",
                "reports",
                "--as-of",
                "2026-11-30",
            ]
        )
        == 0
    )
    capsys.readouterr()
    state = (
        tree_hash(data_dir),
        hashlib.sha256(Path("out.duckdb").read_bytes()).hexdigest(),
        tree_hash(Path("reports")),
    )
    truncated = tmp_path / "litellm_2026-12-01.json"
    truncated.write_bytes(LITELLM.read_bytes()[:200_000])
    code = main(
        ["refresh", str(truncated), "--data", "data", "--db", "out.duckdb", "--cache", "cache", "--reports", "reports"]
    )
    err = capsys.readouterr().err
    assert (
        code == 1
        and err.startswith("Error: litellm_2026-12-01.json:4838: column 9: invalid JSON")
        and "Traceback" not in err
    )
    assert state == (
        tree_hash(data_dir),
        hashlib.sha256(Path("out.duckdb").read_bytes()).hexdigest(),
        tree_hash(Path("reports")),
    )


def test_failed_rebuild_puts_the_snapshot_folder_back(data_dir, monkeypatch):
    def broken_build(txn, **kwargs):
        raise EconError("simulated build failure")

    monkeypatch.setattr(refresh_module, "stage_build", broken_build)
    before = tree_hash(data_dir)
    with pytest.raises(EconError, match="simulated"):
        run_refresh(data_dir, TOKENCOST)
    assert tree_hash(data_dir) == before


def test_wrong_shape_is_rejected_before_writing(data_dir, tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"data": "not a list"}')
    before = tree_hash(data_dir)
    with pytest.raises(DataError):
        run_refresh(data_dir, bad, source="openrouter")
    assert tree_hash(data_dir) == before


def test_fetch_offline_gives_a_clear_message(tmp_path, monkeypatch):
    def offline(url, timeout):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(refresh_module.urllib.request, "urlopen", offline)
    with pytest.raises(EconError) as e:
        fetch("openrouter", tmp_path, today=AS_OF)
    assert str(e.value) == (
        "cannot download https://openrouter.ai/api/v1/models: [Errno -3] Temporary failure in name "
        "resolution — are you offline? download it elsewhere and run: econ refresh FILE --source openrouter"
    )
    assert list(tmp_path.iterdir()) == []


def test_fetch_writes_the_file_with_timeout(tmp_path, monkeypatch):
    seen = {}

    def fake(url, timeout):
        seen.update(url=url, timeout=timeout)
        return io.BytesIO(b'{"data": []}')

    monkeypatch.setattr(refresh_module.urllib.request, "urlopen", fake)
    path = fetch("litellm", tmp_path, today=AS_OF)
    assert path == tmp_path / "litellm_2026-11-30.json" and path.read_bytes() == b'{"data": []}'
    assert seen == {"url": refresh_module.FETCH_URLS["litellm"], "timeout": 30.0}


@pytest.mark.parametrize(
    ("dates", "given", "expected"),
    [
        (
            [date(2025, 9, 1), date(2026, 8, 19), date(2026, 11, 20)],
            (None, None),
            (date(2026, 8, 19), date(2026, 11, 20)),
        ),
        ([date(2025, 9, 1), date(2026, 11, 20)], (None, date(2026, 1, 1)), (date(2025, 9, 1), date(2026, 1, 1))),
        ([date(2025, 9, 1)], (date(2024, 1, 1), None), (date(2024, 1, 1), date(2025, 9, 1))),
    ],
)
def test_default_dates(dates, given, expected):
    assert default_dates(dates, *given) == expected


def test_default_dates_errors():
    with pytest.raises(EconError, match="there is no snapshot before 2025-09-01"):
        default_dates([date(2025, 9, 1)], None, None)
    with pytest.raises(EconError, match="is not before"):
        default_dates([], date(2026, 1, 2), date(2026, 1, 1))


def test_cli_diff_between_real_snapshots(refreshed, capsys):
    _, kw, _, second = refreshed
    assert main(["diff", "--db", str(kw["db"]), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "change,source,provider,model,variant,tier_min_prompt_tokens,component,old_value,new_value,change_frac,"
        "window_from_date,window_to_date,window_from_commit,window_to_commit,exact,canonical_model,counterpart_model,"
        "change_class,fix_reason"
    )
    assert (  # the snapshot dates of its source: the old value last seen in 2025-09-01's, the new first in the next
        "changed,litellm,gemini,gemini/gemini-2.5-pro,standard,0,cache_read_usd_per_mtok,0.3125,0.125,-0.6,"
        "2025-09-01,2026-11-20,,,False,gemini-2.5-pro,,price move down,"
    ) in lines


def test_cli_diff_json_is_one_document_each(refreshed, capsys):
    _, kw, _, _ = refreshed
    assert main(["diff", "--db", str(kw["db"]), "--format", "json"]) == 0
    changes = json.loads(capsys.readouterr().out)
    assert main(["diff", "--db", str(kw["db"]), "--format", "json", "--implied"]) == 0
    implied = json.loads(capsys.readouterr().out)
    assert {"change", "component", "old_value"} <= set(changes[0]) and len(changes) > 100
    assert {"quantity", "detail", "old_value", "new_value"} <= set(implied[0]) and len(implied) > 0


def test_cli_diff_on_a_database_from_an_older_econ(refreshed, tmp_path, capsys, monkeypatch):
    _, kw, _, _ = refreshed
    older = tmp_path / "old.duckdb"
    with duckdb.connect(str(older)) as con:
        con.execute("create table prices as select 1 as x")  # no build_info at all
    monkeypatch.setattr("econ.db.code_fingerprint", lambda: "other code")  # built before a code change
    for db in (older, kw["db"]):
        assert main(["diff", "--db", str(db)]) == 1
        assert capsys.readouterr().err == (
            f"Error: {db} was built by another version of econ — run econ build to rebuild it with this one\n"
        )


def diff_csv(db, *args) -> list[dict]:
    import csv

    from econ.cli import main as run

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert run(["diff", "--db", str(db), "--format", "csv", *args]) == 0
    return list(csv.DictReader(io.StringIO(buf.getvalue())))


def test_cli_diff_classifies_the_known_cases(refreshed):
    """The issue's cases in the real snapshots: jais-30b's 3,200 -> 3.2 is a suspected upstream data fix (it was a
    -99.9% "price move"), cerebras/llama3.1-70b became cerebras/llama-3.1-70b (a renamed key, not a removal and an
    addition), gemini-2.5-pro's cache read is a price move down. Largest moves come first."""
    _, kw, _, _ = refreshed
    rows = diff_csv(kw["db"])
    by = {
        (r["model"], r["component"]): r
        for r in rows
        if r["variant"] == "standard" and r["tier_min_prompt_tokens"] == "0"
    }
    assert by[("azure_ai/jais-30b-chat", "input_usd_per_mtok")]["change_class"] == "suspected data fix"
    renamed = by[("cerebras/llama3.1-70b", "input_usd_per_mtok")]
    assert (renamed["change_class"], renamed["counterpart_model"]) == ("renamed key", "cerebras/llama-3.1-70b")
    assert by[("gemini/gemini-2.5-pro", "cache_read_usd_per_mtok")]["change_class"] == "price move down"
    moves = [r for r in rows if r["change_class"].startswith("price move") and r["old_value"] and r["new_value"]]
    sizes = [round(abs(math.log10(float(r["new_value"]) / float(r["old_value"]))), 9) for r in moves]
    assert len(moves) > 100 and sizes == sorted(sizes, reverse=True)


def test_cli_diff_filters_and_top(refreshed):
    _, kw, _, _ = refreshed
    every = diff_csv(kw["db"])
    gemini = diff_csv(kw["db"], "--provider", "gemini")
    assert gemini and {r["provider"] for r in gemini} == {"gemini"}
    assert len(gemini) == sum(r["provider"] == "gemini" for r in every)
    oss = diff_csv(kw["db"], "--model", "GPT-OSS-120B")  # canonical_model in any spelling
    assert len(oss) > 10 and {r["canonical_model"] for r in oss} == {"gpt-oss-120b"}
    assert len(oss) == sum(r["canonical_model"] == "gpt-oss-120b" for r in every)
    assert diff_csv(kw["db"], "--top", "3") == every[:3]


@pytest.mark.parametrize("width", [80, 120])
def test_cli_diff_fits_the_terminal(refreshed, capsys, monkeypatch, width):
    """Issue 16: 6,237 lines up to 224 characters. Now a summary first, then lists of --top rows (default 20), every
    line within the terminal's width."""
    _, kw, _, second = refreshed
    monkeypatch.setenv("COLUMNS", str(width))
    for args in ([], ["--implied"], ["--top", "5", "--model", "gpt-oss-120b"], ["--implied", "--provider", "openai"]):
        assert main(["diff", "--db", str(kw["db"]), *args]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert max(len(line) for line in lines) <= width, args
        # the summary, the providers' table and seven sections of at most --top (20) rows, where a key too wide for
        # 80 columns continues on the next line (issue 26): under 2 x 8 x (20 + 4) lines
        assert len(lines) < 2 * 8 * (20 + 4), args
    assert main(["diff", "--db", str(kw["db"])]) == 0
    out = capsys.readouterr().out
    n_up = second.changes.filter(change_class="price move up").height
    assert f"({n_up:,} up," in " ".join(out.split("\n\n")[0].splitlines())
    assert (
        "\nlargest price moves (litellm, 2025-09-01…2026-11-20) (20 of " in out
        and "\nsuspected upstream data fixes" in out
    )


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_cli_diff_implied_in_every_format(refreshed, capsys, fmt):
    """--implied was silently ignored in table and markdown; every format now lists the inferred quantities that
    moved, the same ones (the largest first, --top of them)."""
    _, kw, _, second = refreshed
    assert main(["diff", "--db", str(kw["db"]), "--implied", "--format", fmt, "--top", "5"]) == 0
    out = capsys.readouterr().out
    first = second.implied.sort((pl.col("change_frac") + 1).abs().log10().abs(), descending=True, nulls_last=True).row(
        0, named=True
    )
    if fmt == "json":
        shown = json.loads(out)
        assert len(shown) == 5 and shown[0]["quantity"] == first["quantity"] and shown[0]["model"] == first["model"]
    elif fmt == "csv":
        lines = out.splitlines()
        assert len(lines) == 6 and lines[0].startswith("source,provider,model,variant,detail,quantity,old_value")
        assert first["quantity"] in lines[1] and first["model"] in lines[1]
    else:
        assert f"{second.implied.height:,} inferred quantities moved" in out and "(5 of " in out
        assert first["quantity"] in out and "largest price moves" not in out
        if fmt == "markdown":
            assert "| quantity |" in out


def test_cli_refresh_prints_what_econ_diff_prints(refreshed, tmp_path, capsys, monkeypatch):
    """The refresh of a changed map (one price cut, one key gone) prints the summary and lists that econ diff prints
    between the snapshot before and the new one, line for line."""
    root, kw, _, _ = refreshed
    data, db = tmp_path / "data", tmp_path / "out.duckdb"
    shutil.copytree(root / "data", data)
    shutil.copy2(kw["db"], db)
    entries = json.loads(LITELLM.read_text(encoding="utf-8"))
    entries["claude-opus-4-6"]["input_cost_per_token"] = 4e-06
    del entries["gpt-4o-mini"]
    changed = tmp_path / "litellm_2026-12-01.json"
    changed.write_text(json.dumps(entries), encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "100")
    args = ["--data", str(data), "--db", str(db), "--cache", str(kw["cache"]), "--no-report"]
    assert main(["refresh", str(changed), *args]) == 0
    out = capsys.readouterr().out
    head, _, shown = out.partition("price changes from 2026-11-20 to 2026-12-01 (econ diff --from 2026-11-20 --to ")
    assert shown, out
    assert main(["diff", "--db", str(db)]) == 0
    diffed = capsys.readouterr().out
    assert diffed.startswith("price changes from 2026-11-20 to 2026-12-01\n")
    assert shown.split("\n", 1)[1] == diffed.split("\n", 1)[1]
    summary = " ".join(diffed.split("\n\n")[0].splitlines()[1:])
    # the cut is LiteLLM's alone: the hand-kept page, genai-prices and llm-prices still say $5 over the new period, so
    # the change log (and with it diff and refresh) calls it a suspected upstream data fix, with that reason
    assert "0 price moves" in summary and "1 suspected upstream data fixes" in summary and " removed keys" in summary
    assert re.search(r"claude-opus-4-6 +input +5 +4 +-20 +contradicted\n", diffed), diffed


def test_cli_diff_of_an_unknown_model_says_so(refreshed, capsys):
    _, kw, _, _ = refreshed
    assert main(["diff", "--db", str(kw["db"]), "--model", "gpt-oss-120"]) == 1
    assert capsys.readouterr().err == (
        "Error: unknown model 'gpt-oss-120' (no canonical model, models.model or price key of that name) — did you "
        "mean gpt-oss-120b, gpt-oss-120b-turbo, gpt-oss-120b-ultra, gpt-oss-20b?\n"
    )


def test_a_diff_window_without_snapshots_names_the_ones_around_it_not_all():
    """With the replayed histories there are 153 snapshot dates: the notice listed every one on one line; it now says
    how many, their span, and the nearest on each side of the window."""
    from econ.refresh import _around

    dates = [date(2024, 10, 17), date(2026, 8, 21), date(2026, 11, 20), date(2025, 1, 2)]
    assert _around(dates, date(2026, 9, 10), date(2026, 9, 12)) == (
        "4 snapshots from 2024-10-17 to 2026-11-20; the last before is 2026-08-21 and the next after is 2026-11-20"
    )
    assert _around(dates, date(2020, 1, 1), date(2020, 2, 1)).endswith("; the next after is 2024-10-17")
    assert _around([], date(2020, 1, 1), date(2020, 2, 1)) == "snapshots: none"
