"""Load every input table from a data folder: validate, convert units, union prices.

``load_all(data_dir)`` returns ``{table name: polars frame}`` ready for the database, or
raises one :class:`DataError` listing every problem in every file.
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import polars as pl

from econ.errors import DataError, Problem
from econ.load.references import check_references
from econ.load.spec import FILE, LINE, check_refs, display_path, read_table
from econ.load.tables import INPUT_TABLES, PRICE_SNAPSHOT, PRICES, SOURCES
from econ.paths import SNAPSHOT_DIR, SNAPSHOT_NAME

PRICE_VALUE_COLUMNS = [
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_write_12h_usd_per_mtok",
    "cache_storage_usd_per_mtok_hour",
    "max_input_tokens",
    "speed_ratio",
]
PRICE_KEY = ["source", "provider", "model", "variant", "tier_min_prompt_tokens"]


def snapshot_path(data_dir: Path, source: str, as_of: date) -> Path:
    """Where the import of ``source`` dated ``as_of`` is kept."""
    return Path(data_dir) / SNAPSHOT_DIR / f"{source}_{as_of.isoformat()}.csv"


def snapshot_folder_problem(data_dir: Path) -> Problem | None:
    """The problem of a ``snapshots`` path that is not a folder (a file, a link to nowhere), else None."""
    folder = Path(data_dir) / SNAPSHOT_DIR
    if not os.path.lexists(folder) or (folder.is_dir() and not folder.is_symlink()):
        return None
    return Problem(
        display_path(folder),
        None,
        None,
        "is not a folder (econ keeps the imported price snapshots in this folder)",
        f"move it away (econ import creates the folder), or put the snapshot CSVs in a folder {SNAPSHOT_DIR}/",
    )


def list_snapshots(data_dir: Path, *, pending: dict[Path, Path] | None = None) -> list[tuple[str, date, Path]]:
    """(source, date, path) of every snapshot file, oldest first; bad names raise DataError.

    ``pending`` adds snapshots that are staged but not yet in place (final path -> staged file).
    """
    folder = Path(data_dir) / SNAPSHOT_DIR
    found, problems = [], []
    problem = snapshot_folder_problem(data_dir)
    if problem is not None:
        raise DataError([problem])
    present = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    for path in sorted(set(present) | {folder / Path(p).name for p in pending or {}}):
        m = SNAPSHOT_NAME.match(path.name)
        ok = m is not None and m["source"] in SOURCES and m["source"] != "hand"
        try:
            when = date.fromisoformat(m["date"]) if ok else None
        except ValueError:
            ok = False
        if not ok:
            problems.append(
                Problem(
                    display_path(path),
                    None,
                    None,
                    "is not a snapshot name",
                    "snapshots are named <litellm|openrouter>_<YYYY-MM-DD>.csv; re-import with econ import",
                )
            )
            continue
        found.append((m["source"], when, path))
    if problems:
        raise DataError(problems)
    return sorted(found, key=lambda t: (t[1], t[0]))


def load_all(data_dir: Path, *, pending: dict[Path, Path] | None = None) -> dict[str, pl.DataFrame]:
    """Read, check and convert every table of ``data_dir``; union prices (what the inputs imply is the analyses').

    ``pending`` maps a snapshot's final path to a staged file holding its new content (``econ refresh``
    stages the snapshot and moves it in with the database): it is read as if it were in place.
    """
    data_dir = Path(data_dir)
    staged = {Path(data_dir) / SNAPSHOT_DIR / Path(k).name: Path(v) for k, v in (pending or {}).items()}
    frames: dict[str, pl.DataFrame] = {}
    problems: list[Problem] = []
    for name, spec in INPUT_TABLES.items():
        path = data_dir / f"{name}.csv"
        if not path.exists():
            problems.append(
                Problem(
                    display_path(path),
                    None,
                    None,
                    "is missing",
                    f"create it with the columns of data/README.md ({spec.grain})",
                )
            )
            continue
        try:
            frames[name] = read_table(path, spec)
        except DataError as e:
            problems += e.problems
    snapshots = []
    try:
        for source, when, path in list_snapshots(data_dir, pending=pending):
            extra = {"source": source, "snapshot_date": when}
            try:
                snapshots.append(read_table(staged.get(path, path), PRICE_SNAPSHOT, extra=extra, shown=path))
            except DataError as e:
                problems += e.problems
    except DataError as e:
        problems += e.problems
    for name, spec in INPUT_TABLES.items():
        if name in frames:
            problems += check_refs(frames[name], spec, frames)
    problems += check_references(frames, snapshots)
    if problems:
        raise DataError(problems)
    frames["prices"] = union_prices(frames["prices"], snapshots)
    frames["price_snapshots"] = snapshot_index(snapshots)
    return {name: frame.drop([c for c in (FILE, LINE) if c in frame.columns]) for name, frame in frames.items()}


def union_prices(hand: pl.DataFrame, snapshots: list[pl.DataFrame]) -> pl.DataFrame:
    """Hand-kept rows plus snapshot rows, with from/to dates derived from snapshot order.

    A snapshot row holds from its snapshot's date until the next snapshot of the same source
    (exclusive), or stays open if it is in the newest one. Consecutive snapshots with the
    same values for a key merge into one period; a key missing from a later snapshot ends
    at that snapshot's date (the entry was removed).
    """
    columns = ["source", *PRICES.out_columns[:6], *PRICES.out_columns[6:], "source_key", "snapshot_date", "source_line"]
    hand = hand.with_columns(
        pl.lit("hand").alias("source"),
        pl.lit(None, pl.String).alias("source_key"),
        pl.lit(None, pl.Date).alias("snapshot_date"),
        pl.col(LINE).cast(pl.Int64).alias("source_line"),
    )
    if not snapshots:
        return hand.select(columns).sort(PRICE_KEY + ["from_date"])
    snap = pl.concat(snapshots, how="diagonal_relaxed").with_columns(pl.col(LINE).cast(pl.Int64).alias("source_line"))
    dates = (
        snap.select("source", "snapshot_date")
        .unique()
        .sort("source", "snapshot_date")
        .with_columns(pl.col("snapshot_date").shift(-1).over("source").alias("_next_snapshot"))
    )
    key = PRICE_KEY
    snap = (
        snap.join(dates, on=["source", "snapshot_date"], how="left")
        .sort([*key, "snapshot_date"])
        .with_columns(pl.col("_next_snapshot").shift(1).over(key).alias("_prev_to"))
    )
    same_as_previous = (
        pl.all_horizontal([pl.col(c).eq_missing(pl.col(c).shift(1).over(key)) for c in PRICE_VALUE_COLUMNS])
        & pl.col("_prev_to").eq_missing(pl.col("snapshot_date"))
        & pl.col("_prev_to").is_not_null()
    )
    snap = snap.with_columns((~same_as_previous).cast(pl.Int32).cum_sum().over(key).alias("_period"))
    periods = snap.group_by([*key, "_period"], maintain_order=True).agg(
        pl.col("snapshot_date").min().alias("from_date"),
        pl.col("_next_snapshot").last().alias("to_date"),
        pl.all().exclude("snapshot_date", "_next_snapshot", "_prev_to").last(),
        pl.col("snapshot_date").max().alias("snapshot_date"),
    )
    snap_rows = periods.with_columns(pl.lit(None, pl.String).alias("notes")).select(columns)
    return pl.concat([hand.select(columns), snap_rows], how="vertical_relaxed").sort(PRICE_KEY + ["from_date"])


def snapshot_index(snapshots: list[pl.DataFrame]) -> pl.DataFrame:
    """One row per imported snapshot: source, date, rows, file."""
    schema = {"source": pl.String, "snapshot_date": pl.Date, "rows": pl.Int64, "file": pl.String}
    rows = [(s["source"][0], s["snapshot_date"][0], s.height, Path(s[FILE][0]).name) for s in snapshots if s.height]
    return pl.DataFrame(rows, schema=schema, orient="row").sort("source", "snapshot_date")


DERIVED_COMMENTS = {
    "prices": {
        "source": "Where the row comes from: hand (data/prices.csv), litellm or openrouter (data/snapshots/)",
        "from_date": "First day the price applies (inclusive); for imports, the snapshot it first appeared in",
        "to_date": "First day the price no longer applies (exclusive; null = current); for imports, the next "
        "snapshot that changed or dropped it",
        "source_key": "Entry key in the imported price map (null for hand-kept rows)",
        "snapshot_date": "Newest snapshot that carried this price (null for hand-kept rows)",
        "source_line": "Line of the row in its file: data/prices.csv for hand-kept rows, the newest snapshot that "
        "carried it for imports",
        "notes": "Caveats (hand-kept rows)",
    },
    "price_snapshots": {
        "source": "Price map the snapshot was imported from (litellm, openrouter)",
        "snapshot_date": "Date of the snapshot (from --as-of, the file name or its modification date)",
        "rows": "Price rows in the snapshot [rows]",
        "file": "Snapshot file name in data/snapshots/",
    },
}
"""Comments for columns the loader adds (the spec columns carry their own)."""


def column_comments(table: str) -> dict[str, str]:
    """Description [unit] of every column of a loaded input table."""
    spec = INPUT_TABLES.get(table)
    comments = {c.out_name: c.comment for c in spec.columns} if spec else {}
    return comments | DERIVED_COMMENTS.get(table, {})


def table_description(table: str) -> str:
    """Description and grain of a loaded input table, as stored in the database."""
    if table == "prices":
        return (
            "API prices: hand-kept first-party rows (data/prices.csv) and imported LiteLLM/OpenRouter snapshots "
            "(data/snapshots/), with effective periods. Grain: one row per source x provider x model x variant x "
            "context tier x effective period."
        )
    if table == "price_snapshots":
        return "Imported price-map snapshots (data/snapshots/). Grain: one row per source x snapshot date."
    spec = INPUT_TABLES[table]
    return f"{spec.description}. Grain: {spec.grain}."
