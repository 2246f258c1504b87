"""The replayed history's change log: snapshots in, the same snapshots out, in any order, byte for byte."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from econ.errors import DataError
from econ.load import history as h
from econ.load.loader import load_all
from econ.load.price_tables import DATED_SNAPSHOT

REPO = Path(__file__).resolve().parents[2]
HISTORY = REPO / "data" / "history"


def rows(*items) -> pl.DataFrame:
    """Snapshot rows from (model, tier, input, output, declared_from, declared_to) tuples (seller ``acme``)."""
    records = [
        {
            "provider": "acme",
            "model": m,
            "variant": "standard",
            "tier_min_prompt_tokens": tier,
            "input_usd_per_mtok": i,
            "output_usd_per_mtok": o,
            "source_url": "https://example.org/prices",
            "source_key": m,
            "declared_from_date": f,
            "declared_to_date": t,
        }
        for m, tier, i, o, f, t in items
    ]
    frame = pl.DataFrame(records, schema_overrides={"declared_from_date": pl.Date, "declared_to_date": pl.Date})
    return h._rows(frame)


def snap(commit: str, day: str, frame: pl.DataFrame, hour: int = 12) -> h.Snapshot:
    when = datetime.fromisoformat(f"{day}T{hour:02d}:00:00").replace(tzinfo=UTC)
    return h.Snapshot(commit * 40, when, "data.json", hashlib.sha256(commit.encode()).hexdigest(), commit, frame)


SNAPSHOTS = [
    snap("a", "2026-01-01", rows(("m1", 0, 1.0, 2.0, None, None), ("m2", 0, 3.0, 4.0, None, None))),
    snap("b", "2026-01-05", rows(("m1", 0, 1.0, 2.0, None, None), ("m2", 0, 3.0, 4.0, None, None))),  # no change
    snap("c", "2026-01-09", rows(("m1", 0, 0.5, 1.0, None, None), ("m3", 0, 9.0, 9.0, None, None))),  # cut, drop, new
    snap(
        "d",
        "2026-02-01",
        rows(
            ("m1", 0, 0.5, 1.0, None, date(2026, 3, 1)),
            ("m1", 0, 0.4, 0.8, date(2026, 3, 1), None),
            ("m1", 200000, 1.0, 2.0, None, None),
            ("m3", 0, 9.0, 9.0, None, None),
        ),
    ),  # fmt: skip
]


def test_a_snapshot_is_its_rows_again():
    store = h.encode(SNAPSHOTS)
    assert store.commits["snapshot"].to_list() == [0, 1, 2, 3]
    for i, s in enumerate(SNAPSHOTS):
        assert h.state_at(store, i).equals(h._rows(s.rows).sort(h.ROW_KEY, nulls_last=False))
    assert store.changes.filter(pl.col("snapshot") == 1).height == 0  # an unchanged snapshot is a commit, no rows
    assert store.changes.filter(pl.col("change") == "drop")[["snapshot", "model"]].rows() == [(2, "m2")]


def test_only_the_keys_that_changed_are_stored():
    store = h.encode(SNAPSHOTS)
    full = sum(s.rows.height for s in SNAPSHOTS)
    assert (store.changes.height, full) == (8, 10)  # a: 2 sets; b: none; c: 2 sets and a drop; d: 3 rows of m1
    d = store.changes.filter(pl.col("snapshot") == 3)  # m1's base rows and the new tier; m3 unchanged
    assert sorted(set(zip(d["model"], d["tier_min_prompt_tokens"]))) == [("m1", 0), ("m1", 200000)]


@pytest.mark.parametrize("order", [[3, 2, 1, 0], [1, 3, 0, 2], [0, 1, 2, 3]])
def test_any_order_of_adding_writes_the_same_bytes(order):
    expected = (h.write_csv(h.encode(SNAPSHOTS).commits), h.write_csv(h.encode(SNAPSHOTS).changes))
    store = h.empty_store()
    for i in order:
        store, status = h.append(store, SNAPSHOTS[i])
        assert status == "new"
    assert (h.write_csv(store.commits), h.write_csv(store.changes)) == expected
    assert h.append(store, SNAPSHOTS[2]) == (store, "unchanged")


def test_the_store_files_are_checked(tmp_path):
    store = h.encode(SNAPSHOTS)
    commits, changes = h.store_paths(tmp_path, "genai_prices")
    commits.parent.mkdir()
    commits.write_bytes(h.write_csv(store.commits))
    changes.write_bytes(h.write_csv(store.changes))
    assert h.read_store(tmp_path, "genai_prices").changes.equals(store.changes)
    bad = h.write_csv(store.commits).decode().replace("\n2,", "\n7,").replace("2026-01-09T12", "2025-01-09T12")
    commits.write_text(bad)
    with pytest.raises(DataError) as e:
        h.read_store(tmp_path, "genai_prices")
    text = str(e.value)
    assert "genai_prices_commits.csv:4: column snapshot: 7 snapshots are not numbered 0, 1, 2, … down the file" in text
    assert "column committed_at: 2025-01-09T12:00:00Z is earlier than the snapshot before it" in text
    assert "column snapshot_date: 2026-01-09 is not the UTC date of committed_at" in text
    assert "genai_prices_changes.csv" in text and "snapshot 2 is not in the commits file" in text


def test_vendored_histories_are_listed_with_their_sha256():
    text = (HISTORY / "README.md").read_text(encoding="utf-8")
    listed = dict((n, d) for d, n in re.findall(r"^\s+([0-9a-f]{64})  (\S+)$", text, re.M))
    assert set(listed) == {p.name for p in HISTORY.glob("*.csv")}
    for name, digest in listed.items():
        assert hashlib.sha256((HISTORY / name).read_bytes()).hexdigest() == digest, name


def test_vendored_histories_load_as_checked_dated_snapshots():
    """Every vendored snapshot passes the dated snapshot spec's cell checks through the store spec (read_store), and
    the newest of each history is a valid dated snapshot."""
    for source in ("genai_prices", "llm_prices"):
        store = h.read_store(REPO / "data", source)
        assert store.size > 50
        newest = h.state_at(store, store.size - 1)
        assert newest.columns == DATED_SNAPSHOT.out_columns and newest.height == store.commits["rows"][-1]


def test_out_of_order_import_gives_the_same_prices(data_dir):
    """Two snapshots of a history imported newest first give the prices of the same two imported oldest first."""
    from econ.load.importers import import_file

    fixtures = REPO / "tests" / "fixtures" / "importers"
    older = data_dir.parent / "older.json"
    text = (fixtures / "genai_prices_slice.json").read_text()
    older.write_text(text.replace('"input_mtok": 1.25', '"input_mtok": 2'))
    prices = []
    for order in ((older, fixtures / "genai_prices_slice.json"), (fixtures / "genai_prices_slice.json", older)):
        for f in (data_dir / "history").glob("*") if (data_dir / "history").exists() else []:
            f.unlink()
        for path in order:
            when = date(2026, 8, 1) if path == older else date(2026, 8, 22)
            import_file("genai_prices", path, data_dir=data_dir, as_of=when)
        prices.append(load_all(data_dir)["prices"].filter(pl.col("source") == "genai_prices"))
    assert prices[0].equals(prices[1])
    grok = prices[0].filter(pl.col("model") == "grok-4.3")
    assert grok[["from_date", "to_date", "input_usd_per_mtok"]].rows() == [
        (date(2026, 8, 1), date(2026, 8, 22), 2.0),
        (date(2026, 8, 22), None, 1.25),
    ]


def test_a_changes_file_cut_short_does_not_load_as_a_shorter_history(tmp_path):
    """Each snapshot's row count (commits file) must be what its changes give: the last row of the vendored history
    removed, or a snapshot's count edited, is an error naming the snapshot."""
    store = h.encode(SNAPSHOTS)
    commits, changes = h.store_paths(tmp_path, "genai_prices")
    commits.parent.mkdir()
    commits.write_bytes(h.write_csv(store.commits))
    lines = h.write_csv(store.changes).decode().splitlines(keepends=True)
    changes.write_text("".join(lines[:-1]))  # snapshot 3 loses one of m1's rows
    with pytest.raises(DataError, match="genai_prices_commits.csv:5: column rows: snapshot 3 says 4 rows; the changes "
                       "file gives it 3"):  # fmt: skip
        h.read_store(tmp_path, "genai_prices")
    changes.write_bytes(h.write_csv(store.changes))
    commits.write_text(h.write_csv(store.commits).decode().replace(",2,data.json", ",3,data.json", 1))
    with pytest.raises(DataError, match="snapshot 0 says 3 rows; the changes file gives it 2"):
        h.read_store(tmp_path, "genai_prices")
