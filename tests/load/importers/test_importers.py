"""``import_file`` and ``econ import``: dated snapshot files, idempotence, bad files rejected before anything is
written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import duckdb
import pytest

from econ.cli import main
from econ.errors import DataError, EconError, EconNotice
from econ.load.importers import import_file, snapshot_date

REPO = Path(__file__).resolve().parents[3]
EXTERNAL = REPO / "tests" / "fixtures" / "external"
FIXTURES = REPO / "tests" / "fixtures"
LITELLM_SLICE = FIXTURES / "importers" / "litellm_slice.json"
OPENROUTER_SLICE = FIXTURES / "importers" / "openrouter_slice.json"
REAL = {
    ("litellm", "2026-11-20"): EXTERNAL / "litellm_model_prices.json",
    ("litellm", "2025-09-01"): EXTERNAL / "tokencost_model_prices_2025-09-01.json",
    ("openrouter", "2026-08-19"): EXTERNAL / "openrouter_models_2026-08-19.json",
}


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    """An empty data folder at ./data, the working directory at its parent (errors name files relative to it)."""
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def written(work: Path) -> list[str]:
    folder = work / "data" / "snapshots"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ---------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    "name, as_of, expected",
    [
        ("openrouter_models_2026-08-19.json", None, (date(2026, 8, 19), "the file name")),
        ("tokencost_model_prices_2025-09-01.json", None, (date(2025, 9, 1), "the file name")),
        ("prices_2025-13-45_2025-02-03.json", None, (date(2025, 2, 3), "the file name")),
        ("model_prices.json", date(2026, 1, 2), (date(2026, 1, 2), "--as-of")),
    ],
)
def test_snapshot_date(tmp_path, name, as_of, expected):
    path = tmp_path / name
    path.write_text("{}", encoding="utf-8")
    stamp = time.mktime((2024, 5, 6, 12, 0, 0, 0, 0, -1))
    os.utime(path, (stamp, stamp))
    assert snapshot_date(path, as_of) == expected


@pytest.mark.parametrize(
    "name, as_of, expected, notice",
    [
        (
            "tokencost_model_prices_2025-09-01.json",
            date(2026, 1, 2),
            (date(2025, 9, 1), "the file name"),
            "tokencost_model_prices_2025-09-01.json carries its date 2025-09-01 in its name; --as-of 2026-01-02 is "
            "not used (rename the file to date it otherwise)",
        ),
        (
            "model_prices.json",
            None,
            (date(2024, 5, 6), "the file's modification date"),
            "model_prices.json carries no date (none in its name): dated 2024-05-06 from its modification time; pass "
            "--as-of DATE with the day it was published if that is not it",
        ),
    ],
)
def test_snapshot_date_with_a_notice(tmp_path, name, as_of, expected, notice):
    """The file's own date wins over --as-of, and a date from the modification time is announced."""
    path = tmp_path / name
    path.write_text("{}", encoding="utf-8")
    stamp = time.mktime((2024, 5, 6, 12, 0, 0, 0, 0, -1))
    os.utime(path, (stamp, stamp))
    with pytest.warns(EconNotice) as seen:
        assert snapshot_date(path, as_of) == expected
    assert [str(w.message) for w in seen] == [notice]


# ---------------------------------------------------------------------------- writing


def test_import_writes_a_dated_snapshot(work):
    result = import_file("litellm", LITELLM_SLICE, data_dir=work / "data", as_of=date(2026, 11, 20))
    assert result.path == work / "data" / "snapshots" / "litellm_2026-11-20.csv"
    assert (result.entries, result.imported_entries, result.rows, result.status) == (15, 9, 32, "new")
    assert (result.as_of, result.date_from) == (date(2026, 11, 20), "--as-of")
    assert result.imported_entries + sum(result.skipped.values()) == result.entries
    assert written(work) == ["litellm_2026-11-20.csv"]
    header = result.path.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("provider,model,variant,tier_min_prompt_tokens,input_usd_per_mtok,")


def test_reimport_is_byte_identical_and_touches_nothing(work):
    first = import_file("openrouter", OPENROUTER_SLICE, data_dir=work / "data", as_of=date(2026, 8, 19))
    content, mtime = first.path.read_bytes(), first.path.stat().st_mtime_ns
    time.sleep(0.01)
    again = import_file("openrouter", OPENROUTER_SLICE, data_dir=work / "data", as_of=date(2026, 8, 19))
    assert again.status == "unchanged"
    assert again.path.read_bytes() == content and again.path.stat().st_mtime_ns == mtime
    # a fresh import elsewhere gives the same bytes (deterministic order and formatting)
    (work / "other").mkdir()
    other = import_file("openrouter", OPENROUTER_SLICE, data_dir=work / "other", as_of=date(2026, 8, 19))
    assert other.path.read_bytes() == content


def _tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def test_reimport_with_another_as_of_says_the_date_is_not_used(work):
    folder = work / "data" / "snapshots"
    folder.mkdir()
    shutil.copy2(REPO / "data" / "snapshots" / "litellm_2026-11-20.csv", folder)
    copy = work / "model_prices_and_context_window.json"
    shutil.copyfile(REAL[("litellm", "2026-11-20")], copy)
    with pytest.warns(EconNotice) as seen:
        result = import_file("litellm", copy, data_dir=work / "data", as_of=date(2026, 12, 1))
    assert (result.status, result.as_of) == ("unchanged", date(2026, 11, 20))
    assert [str(w.message) for w in seen] == [
        "--as-of 2026-12-01 is not used: data/snapshots/litellm_2026-11-20.csv holds the same rows (rename that "
        "file to date the snapshot otherwise)"
    ]


def test_reimport_of_a_shipped_snapshot_under_a_new_date_writes_nothing(work):
    """Issue 16: the shipped LiteLLM map, copied (new modification time, no date in its name), is the
    2026-11-20 snapshot already in data/: no litellm_2026-12-01.csv, no notice about the mtime date."""
    folder = work / "data" / "snapshots"
    folder.mkdir()
    shutil.copy2(REPO / "data" / "snapshots" / "litellm_2026-11-20.csv", folder)
    copy = work / "model_prices_and_context_window.json"
    shutil.copyfile(REAL[("litellm", "2026-11-20")], copy)  # a fresh mtime: today
    before = _tree(folder)
    result = import_file("litellm", copy, data_dir=work / "data")  # a notice would fail the test (warnings: error)
    assert (result.status, result.path, result.as_of) == (
        "unchanged",
        folder / "litellm_2026-11-20.csv",
        date(2026, 11, 20),
    )
    assert result.date_from == "the same content as litellm_2026-11-20.csv"
    assert _tree(folder) == before


def test_reimport_matches_a_snapshot_whose_rows_are_in_another_order(work):
    """A snapshot written by another econ version (other row order) with the same cells is the same content."""
    folder = work / "data" / "snapshots"
    folder.mkdir()
    lines = (REPO / "data" / "snapshots" / "openrouter_2026-08-19.csv").read_text(encoding="utf-8").splitlines()
    (folder / "openrouter_2026-08-01.csv").write_text("\n".join([lines[0], *reversed(lines[1:])]) + "\n")
    result = import_file("openrouter", REAL[("openrouter", "2026-08-19")], data_dir=work / "data")
    assert (result.status, result.as_of) == ("unchanged", date(2026, 8, 1))
    assert written(work) == ["openrouter_2026-08-01.csv"]
    changed = [lines[0], *reversed(lines[1:])]
    changed[1] = changed[1].replace(",", ",9", 1)  # one cell differs: a new snapshot under the file's own date
    (folder / "openrouter_2026-08-01.csv").write_text("\n".join(changed) + "\n")
    result = import_file("openrouter", REAL[("openrouter", "2026-08-19")], data_dir=work / "data")
    assert (result.status, result.as_of) == ("new", date(2026, 8, 19))


def test_changed_map_replaces_the_snapshot_of_that_date(work):
    import_file("litellm", LITELLM_SLICE, data_dir=work / "data", as_of=date(2026, 11, 20))
    changed = json.loads(LITELLM_SLICE.read_text(encoding="utf-8"))
    changed["claude-opus-4-6"]["input_cost_per_token"] = 4e-06
    path = work / "changed.json"
    path.write_text(json.dumps(changed), encoding="utf-8")
    result = import_file("litellm", path, data_dir=work / "data", as_of=date(2026, 11, 20))
    assert result.status == "replaced"
    assert "anthropic,claude-opus-4-6,standard,0,4.0,25.0," in result.path.read_text(encoding="utf-8")
    assert written(work) == ["litellm_2026-11-20.csv"]  # no temporary file left behind


# ---------------------------------------------------------------------------- bad files: nothing is written


def _truncated(work: Path) -> Path:
    """The slice cut off after line 115 (``"supports_web_search": true,`` of claude-opus-4-6) and 2 spaces of line
    116."""
    text = LITELLM_SLICE.read_text(encoding="utf-8")
    path = work / "model_prices.json"
    path.write_text(text[: text.index('"claude-opus-4-6"') + 60], encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "source, make, message",
    [
        (
            "litellm",
            lambda w: _truncated(w),
            "model_prices.json:116: column 3: invalid JSON (Expecting property name enclosed in double quotes) — is "
            "the file complete? "
            "download it again",
        ),
        (
            "litellm",
            lambda w: _write(w, "x.json", b'{"a": {"input_cost_per_token": 1e-06}\n "b": {}}'),
            "x.json:2: column 2: invalid JSON (Expecting ',' delimiter) — is the file complete? download it again",
        ),
        (
            "litellm",
            lambda w: _write(w, "x.json", b""),
            "x.json: the file is empty — is the file complete? download it again",
        ),
        (
            "litellm",
            lambda w: _write(w, "x.json", '{"gpt-x": {"mode": "chat"}}'.encode("latin-1") + b'\n{"\xff": 1}'),
            "x.json:2: is not valid UTF-8 (byte 0xff) — JSON files are UTF-8; download the file again or save it as "
            "UTF-8",
        ),
        (
            "litellm",
            lambda w: _write(w, "x.json", b"[1, 2]"),
            "x.json: is not a LiteLLM price map (expected a JSON object of model entries, found a list) — give "
            "LiteLLM's "
            "model_prices_and_context_window.json",
        ),
        (
            "litellm",
            lambda w: OPENROUTER_SLICE,
            f'{OPENROUTER_SLICE}: is not a LiteLLM price map (it has a "data" list, like an OpenRouter '
            "/api/v1/models response) — "
            "import it with: econ import openrouter FILE",
        ),
        (
            "openrouter",
            lambda w: LITELLM_SLICE,
            f'{LITELLM_SLICE}: is not an OpenRouter models response (expected {{"data": [...]}}, found an object '
            'without a "data" '
            "list) — this looks like a LiteLLM price map; import it with: econ import litellm FILE",
        ),
        (
            "openrouter",
            lambda w: _write(w, "x.json", b'"models"'),
            'x.json: is not an OpenRouter models response (expected {"data": [...]}, found a string) — give the '
            "saved response of "
            "GET https://openrouter.ai/api/v1/models",
        ),
        (
            "litellm",
            lambda w: _write(w, "x.json", b'{"sample_spec": {}, "e": {"mode": "embedding", "litellm_provider": "a"}}'),
            "x.json: has no text-generation price among its 2 entries (1 skipped for not a model entry; 1 skipped "
            "for mode embedding is not text generation) — is this the right file for econ import litellm?",
        ),
        (
            "openrouter",
            lambda w: _write(w, "x.json", b'{"data": []}'),
            "x.json: has no text-generation price among its 0 entries — is this the right file for econ import "
            "openrouter?",
        ),
        (
            "litellm",
            lambda w: w / "missing.json",
            "missing.json: does not exist — check the path of the file to import",
        ),
    ],
)
def test_bad_file_is_rejected_before_anything_is_written(work, source, make, message):
    path = make(work)
    with pytest.raises(DataError) as e:
        import_file(source, path, data_dir=work / "data", as_of=date(2026, 11, 20))
    assert str(e.value) == message
    assert written(work) == []


def _write(work: Path, name: str, content: bytes) -> Path:
    (work / name).write_bytes(content)
    return work / name


def test_truncated_real_file_names_the_last_line(work):
    """A download cut off mid-file: the error names the line where the text stops (counted independently)."""
    raw = (EXTERNAL / "litellm_model_prices.json").read_bytes()
    cut = raw[: len(raw) // 2]
    path = work / "model_prices_and_context_window.json"
    path.write_bytes(cut)
    with pytest.raises(DataError) as e:
        import_file("litellm", path, data_dir=work / "data")
    last_line = cut.count(b"\n") + 1
    assert str(e.value).startswith(f"model_prices_and_context_window.json:{last_line}: column ")
    assert str(e.value).endswith("— is the file complete? download it again")
    assert written(work) == []


def test_existing_snapshot_survives_a_bad_reimport(work):
    good = import_file("litellm", LITELLM_SLICE, data_dir=work / "data", as_of=date(2026, 11, 20))
    before = good.path.read_bytes()
    with pytest.raises(DataError):
        import_file("litellm", _truncated(work), data_dir=work / "data", as_of=date(2026, 11, 20))
    assert good.path.read_bytes() == before
    assert written(work) == ["litellm_2026-11-20.csv"]


def test_missing_data_folder(work):
    with pytest.raises(
        EconError, match=r"^no data folder at nowhere — run econ from the project folder or pass --data$"
    ):
        import_file("litellm", LITELLM_SLICE, data_dir=work / "nowhere")


# ---------------------------------------------------------------------------- the real files


@pytest.mark.parametrize("key", list(REAL), ids=lambda k: f"{k[0]}_{k[1]}")
def test_shipped_snapshots_are_the_importer_output(work, key):
    """data/snapshots/ holds exactly what importing the files in tests/fixtures/external gives."""
    source, when = key
    result = import_file(source, REAL[key], data_dir=work / "data", as_of=date.fromisoformat(when))
    shipped = REPO / "data" / "snapshots" / f"{source}_{when}.csv"
    assert result.path.read_bytes() == shipped.read_bytes()


def test_litellm_import_is_fast(work):
    """Target (issue 2): the LiteLLM import takes under 2 s on a 2-core machine (it takes ~0.2 s)."""
    started = time.perf_counter()
    result = import_file("litellm", REAL[("litellm", "2026-11-20")], data_dir=work / "data", as_of=date(2026, 11, 20))
    elapsed = time.perf_counter() - started
    assert result.rows == 5451
    assert elapsed < 2.0


# ---------------------------------------------------------------------------- the command


def test_cli_import_prints_counts_per_reason(work, capsys):
    code = main(["import", "litellm", str(LITELLM_SLICE), "--data", "data", "--as-of", "2026-11-20"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "imported 9 of 15 litellm entries as 32 price rows -> data/snapshots/litellm_2026-11-20.csv "
        "(new; dated 2026-11-20 from --as-of)"
    )
    assert "mode embedding is not text generation" in out and "alias of another entry (no prices of its own)" in out
    assert "price keys not imported (by family): search / grounding 6," in out
    assert "rows left out: duplicate row (same provider, model, variant, tier; kept the first) 1" in out
    code = main(["import", "litellm", str(LITELLM_SLICE), "--data", "data", "--as-of", "2026-11-20"])
    assert code == 0 and "(unchanged; dated 2026-11-20 from --as-of)" in capsys.readouterr().out


def test_cli_bad_file_is_an_error_without_traceback(work, capsys):
    path = _truncated(work)
    code = main(["import", "litellm", str(path), "--data", "data"])
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        "Error: model_prices.json:116: column 3: invalid JSON (Expecting property name enclosed in double quotes) — "
        "is the file complete? download it again\n"
    )
    assert written(work) == []


@pytest.mark.slow
def test_end_to_end_import_then_build_gives_price_history(tmp_path):
    """``python -m econ import`` twice, ``econ build``: gemini-2.5-pro's cache read goes 0.3125 -> 0.125 $/MTok."""
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / "data", data)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def econ(*args):
        done = subprocess.run(
            [sys.executable, "-m", "econ", *args], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = econ("import", "litellm", str(REAL[("litellm", "2025-09-01")]), "--data", "data")
    assert out.startswith(
        "imported 1350 of 1701 litellm entries as 1481 price rows -> data/snapshots/litellm_2025-09-01.csv "
        "(new; dated 2025-09-01 from the file name)"
    )
    econ("import", "litellm", str(REAL[("litellm", "2026-11-20")]), "--data", "data", "--as-of", "2026-11-20")
    econ("build", "--data", "data", "--db", "e.duckdb", "--no-report", "--cache", "cache")
    with duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select cast(from_date as varchar), cast(to_date as varchar), cache_read_usd_per_mtok from prices "
            "where model = 'gemini/gemini-2.5-pro' and source = 'litellm' and variant = 'standard' "
            "and tier_min_prompt_tokens = 0 order by from_date"
        ).fetchall()
    assert rows == [("2025-09-01", "2026-11-20", 0.3125), ("2026-11-20", None, 0.125)]


def test_cli_unwritable_snapshot_folder_is_an_error_without_traceback(work, capsys):
    (work / "data" / "snapshots").write_text("a file where the snapshot folder should be")
    code = main(["import", "litellm", str(LITELLM_SLICE), "--data", "data", "--as-of", "2026-11-20"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err == (
        "Error: data/snapshots: is not a folder (econ keeps the imported price snapshots in this folder) — move it "
        "away (econ import creates the folder), or put the snapshot CSVs in a folder snapshots/\n"
    )
