"""Snapshots join prices with periods derived from snapshot order; snapshot names are checked."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from econ.build import build
from econ.errors import DataError
from econ.load.loader import load_all

HEADER = (
    "provider,model,variant,tier_min_prompt_tokens,input_usd_per_mtok,output_usd_per_mtok,cache_read_usd_per_mtok,"
    "cache_write_5m_usd_per_mtok,cache_write_1h_usd_per_mtok,cache_storage_usd_per_mtok_hour,max_input_tokens,"
    "speed_ratio,hugging_face_id,source_url,source_key"
)


def snap(data_dir, name, *rows):
    folder = data_dir / "snapshots"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("\n".join([HEADER, *rows]) + "\n")


def row(model, inp, out, cache=""):
    return f"gemini,{model},standard,0,{inp},{out},{cache},,,,1000000,,,https://ai.google.dev/pricing,{model}"


@pytest.fixture
def history(data_dir):
    snap(data_dir, "litellm_2025-09-01.csv", row("kept", 1, 5), row("changed", 1.25, 10, 0.3125), row("dropped", 3, 9))
    snap(data_dir, "litellm_2026-03-01.csv", row("kept", 1, 5), row("changed", 1.25, 10, 0.3125), row("added", 2, 8))
    snap(data_dir, "litellm_2026-11-20.csv", row("kept", 1, 5), row("changed", 1.25, 10, 0.125), row("added", 2, 8))
    return data_dir


def periods(frames, model):
    p = frames["prices"].filter(source="litellm", model=model).sort("from_date")
    return list(zip(p["from_date"], p["to_date"], p["cache_read_usd_per_mtok"]))


def test_periods_from_snapshot_order(history):
    frames = load_all(history)
    assert periods(frames, "kept") == [(date(2025, 9, 1), None, None)]
    assert periods(frames, "changed") == [
        (date(2025, 9, 1), date(2026, 11, 20), 0.3125),
        (date(2026, 11, 20), None, 0.125),
    ]
    assert periods(frames, "dropped") == [(date(2025, 9, 1), date(2026, 3, 1), None)]
    assert periods(frames, "added") == [(date(2026, 3, 1), None, None)]
    assert frames["prices"].filter(source="hand").height == 4


def test_price_history_and_current(history, tmp_path):
    db = tmp_path / "h.duckdb"
    build(data_dir=history, db_path=db, cache_dir=None, as_of=date(2026, 11, 30))
    with duckdb.connect(str(db), read_only=True) as con:
        change = con.execute(
            "select prev_cache_read_usd_per_mtok, cache_read_usd_per_mtok, cache_read_change_frac from price_history "
            "where model = 'changed' and period_number = 2"
        ).fetchone()
        current = con.execute("select model from price_current where source = 'litellm' order by model").fetchall()
    assert change == (0.3125, 0.125, pytest.approx(-0.6))
    assert [m for (m,) in current] == ["added", "changed", "kept"]


@pytest.mark.parametrize(
    "name", ["litellm-2026-11-20.csv", "hand_2026-01-01.csv", "litellm_2026-02-30.csv", "prices.csv"]
)
def test_bad_snapshot_names(data_dir, name):
    snap(data_dir, name, row("x", 1, 2))
    with pytest.raises(DataError) as e:
        load_all(data_dir)
    assert str(e.value) == (
        f"data/snapshots/{name}: is not a snapshot name — snapshots are named "
        "<litellm|openrouter>_<YYYY-MM-DD>.csv; re-import with econ import"
    )


def test_snapshot_rows_are_validated(data_dir):
    snap(data_dir, "openrouter_2026-08-19.csv", row("x", -1, 2))
    with pytest.raises(
        DataError, match=r'data/snapshots/openrouter_2026-08-19.csv:2: column input_usd_per_mtok: "-1" is out of range'
    ):
        load_all(data_dir)
