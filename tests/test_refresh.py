"""econ refresh / econ diff on the real snapshots: known changes, idempotence, nothing lost on bad input."""

from __future__ import annotations

import hashlib
import io
import urllib.error
from datetime import date
from pathlib import Path

import pytest

from econ import refresh as refresh_module
from econ.cli import main
from econ.errors import DataError, EconError
from econ.diff import default_dates
from econ.refresh import detect_source, fetch, refresh

from tests.conftest import EXTERNAL

TOKENCOST = EXTERNAL / "tokencost_model_prices_2025-09-01.json"
LITELLM = EXTERNAL / "litellm_model_prices.json"
AS_OF = date(2026, 11, 30)


def tree_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


def run_refresh(data_dir, path, **kw):
    return refresh(path, data_dir=data_dir, db_path=Path("out.duckdb"), cache_dir=Path("cache"), reports_dir=None,
                   build_as_of=AS_OF, **kw)


def test_detect_source():
    assert detect_source(LITELLM) == "litellm"
    assert detect_source(EXTERNAL / "openrouter_models_2026-08-19.json") == "openrouter"


def test_refresh_reports_the_known_change_and_is_idempotent(data_dir):
    first = run_refresh(data_dir, TOKENCOST)
    assert first.imported.status == "new" and first.changes.filter(change="added").height > 1000
    second = run_refresh(data_dir, LITELLM, as_of=date(2026, 11, 20))
    row = second.changes.filter(model="gemini/gemini-2.5-pro", component="cache_read_usd_per_mtok",
                                tier_min_prompt_tokens=0, variant="standard")
    assert row.select("old_value", "new_value").row(0) == (0.3125, 0.125)
    assert not second.changes.filter(source="hand").height  # only the refreshed source is compared
    snapshot = data_dir / "snapshots" / "litellm_2026-11-20.csv"
    before = snapshot.read_bytes()
    third = run_refresh(data_dir, LITELLM, as_of=date(2026, 11, 20))
    assert third.imported.status == "unchanged" and third.changes.height == 0
    assert set(third.built.analyses.values()) <= {"cached"}
    assert snapshot.read_bytes() == before


def test_truncated_file_leaves_data_database_and_reports_untouched(data_dir, tmp_path, capsys):
    assert main(["build", "--data", "data", "--db", "out.duckdb", "--cache", "cache", "--reports", "reports",
                 "--as-of", "2026-11-30"]) == 0
    capsys.readouterr()
    state = (tree_hash(data_dir), hashlib.sha256(Path("out.duckdb").read_bytes()).hexdigest(), tree_hash(Path("reports")))
    truncated = tmp_path / "litellm_2026-12-01.json"
    truncated.write_bytes(LITELLM.read_bytes()[:200_000])
    code = main(["refresh", str(truncated), "--data", "data", "--db", "out.duckdb", "--cache", "cache", "--reports", "reports"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("Error: litellm_2026-12-01.json:4838: column 9: invalid JSON") and "Traceback" not in err
    assert state == (tree_hash(data_dir), hashlib.sha256(Path("out.duckdb").read_bytes()).hexdigest(), tree_hash(Path("reports")))


def test_failed_rebuild_puts_the_snapshot_folder_back(data_dir, monkeypatch):
    def broken_build(**kwargs):
        raise EconError("simulated build failure")

    monkeypatch.setattr(refresh_module, "build", broken_build)
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
    assert str(e.value) == ("cannot download https://openrouter.ai/api/v1/models: [Errno -3] Temporary failure in name "
                            "resolution — are you offline? download it elsewhere and run: econ refresh FILE --source openrouter")
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


@pytest.mark.parametrize(("dates", "given", "expected"), [
    ([date(2025, 9, 1), date(2026, 8, 19), date(2026, 11, 20)], (None, None), (date(2026, 8, 19), date(2026, 11, 20))),
    ([date(2025, 9, 1), date(2026, 11, 20)], (None, date(2026, 1, 1)), (date(2025, 9, 1), date(2026, 1, 1))),
    ([date(2025, 9, 1)], (date(2024, 1, 1), None), (date(2024, 1, 1), date(2025, 9, 1))),
])
def test_default_dates(dates, given, expected):
    assert default_dates(dates, *given) == expected


def test_default_dates_errors():
    with pytest.raises(EconError, match="there is no snapshot before 2025-09-01"):
        default_dates([date(2025, 9, 1)], None, None)
    with pytest.raises(EconError, match="is not before"):
        default_dates([], date(2026, 1, 2), date(2026, 1, 1))


def test_cli_diff_between_real_snapshots(data_dir, capsys):
    run_refresh(data_dir, TOKENCOST)
    run_refresh(data_dir, LITELLM, as_of=date(2026, 11, 20))
    assert main(["diff", "--db", "out.duckdb", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("change,source,provider,model,variant,tier_min_prompt_tokens,component,old_value,new_value,"
                        "change_frac")
    assert "changed,litellm,gemini,gemini/gemini-2.5-pro,standard,0,cache_read_usd_per_mtok,0.3125,0.125,-0.6" in lines
