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
from econ.load.csv_text import display_path
from econ.load.history import Store, read_store, store_paths
from econ.load.history_periods import history_periods
from econ.load.parsed_cache import read_cached
from econ.load.references import check_references
from econ.load.spec import FILE, LINE, check_refs, starts_key
from econ.load.tables import FILE_SOURCES, HISTORY_SOURCES, INPUT_TABLES, PRICE_SNAPSHOT, PRICES
from econ.paths import SNAPSHOT_DIR, SNAPSHOT_NAME
from econ.price_values import PRICE_KEY, PRICE_VALUE_COLUMNS


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
    staged = {folder / Path(p).name for p in pending or {} if Path(p).parent.name == SNAPSHOT_DIR}
    for path in sorted(set(present) | staged):
        m = SNAPSHOT_NAME.match(path.name)
        ok = m is not None and m["source"] in FILE_SOURCES
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


def load_all(
    data_dir: Path, *, pending: dict[Path, Path] | None = None, cache_dir: Path | None = None, salt: str = ""
) -> dict[str, pl.DataFrame]:
    """Read, check and convert every table of ``data_dir``; union prices (what the inputs imply is the analyses').

    ``pending`` maps a snapshot's final path to a staged file holding its new content (``econ refresh``
    stages the snapshot and moves it in with the database): it is read as if it were in place. ``cache_dir``: each
    file's checked frame is kept there by its bytes and ``salt`` (the code and library versions) and read back when
    they recur (:mod:`econ.load.parsed_cache`); None parses every file.
    """
    data_dir = Path(data_dir)
    staged = {Path(data_dir) / Path(k).parent.name / Path(k).name: Path(v) for k, v in (pending or {}).items()}
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
            frames[name] = read_cached(path, spec, cache_dir=cache_dir, salt=salt)
        except DataError as e:
            problems += e.problems
    snapshots = []
    histories: dict[str, Store] = {}
    for source in HISTORY_SOURCES:
        try:
            store = read_store(data_dir, source, staged=staged)
        except DataError as e:
            problems += e.problems
            continue
        if store is not None and store.size:
            histories[source] = store
    try:
        for source, when, path in list_snapshots(data_dir, pending=pending):
            extra = {"source": source, "snapshot_date": when}
            try:
                snapshots.append(
                    read_cached(
                        staged.get(path, path), PRICE_SNAPSHOT, cache_dir=cache_dir, salt=salt, extra=extra, shown=path
                    )
                )
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
    frames["prices"] = union_prices(frames["prices"], snapshots, histories)
    frames["price_match_rules"] = match_rules(histories)
    frames["price_snapshots"] = snapshot_index(snapshots, histories, data_dir)
    return {name: frame.drop([c for c in (FILE, LINE) if c in frame.columns]) for name, frame in frames.items()}


def union_prices(
    hand: pl.DataFrame, snapshots: list[pl.DataFrame], histories: dict[str, Store] | None = None
) -> pl.DataFrame:
    """Hand-kept rows, snapshot rows with from/to dates derived from snapshot order, and the periods of each
    replayed history (:func:`econ.load.history_periods.history_periods`).

    A snapshot row holds from its snapshot's date until the next snapshot of the same source
    (exclusive), or stays open if it is in the newest one. Consecutive snapshots with the
    same values for a key merge into one period; a key missing from a later snapshot ends
    at that snapshot's date (the entry was removed).
    """
    columns = [
        "source",
        *PRICES.out_columns[:6],
        *PRICES.out_columns[6:],
        "source_key",
        "snapshot_date",
        "source_line",
        "source_commit",
        "last_commit",
        "declared",
    ]
    hand = hand.with_columns(
        pl.lit("hand").alias("source"),
        pl.lit(None, pl.String).alias("source_key"),
        pl.lit(None, pl.Date).alias("snapshot_date"),
        pl.col(LINE).cast(pl.Int64).alias("source_line"),
        pl.lit(None, pl.String).alias("source_commit"),
        pl.lit(None, pl.String).alias("last_commit"),
        pl.lit(True).alias("declared"),
    )
    parts = [hand.select(columns)]
    if snapshots:
        parts.append(_snapshot_periods(snapshots).select(columns))
    for source, store in sorted((histories or {}).items()):
        periods = history_periods(store, source).with_columns(
            pl.lit(None, pl.String).alias("notes"), pl.lit(None, pl.Int64).alias("source_line")
        )
        parts.append(periods.select(columns))
    return pl.concat(parts, how="vertical_relaxed").sort(PRICE_KEY + ["from_date"])


def _snapshot_periods(snapshots: list[pl.DataFrame]) -> pl.DataFrame:
    """The periods of the dated snapshot files (one full price map per file)."""
    snap = pl.concat(snapshots, how="diagonal_relaxed").with_columns(pl.col(LINE).cast(pl.Int64).alias("source_line"))
    dates = (
        snap.select("source", "snapshot_date")
        .unique()
        .sort("source", "snapshot_date")
        .with_columns(pl.col("snapshot_date").shift(-1).over("source").alias("_next_snapshot"))
    )
    key = PRICE_KEY
    snap = (  # sorted by key: shift(1) on a row that does not start its key is the key's previous snapshot
        snap.join(dates, on=["source", "snapshot_date"], how="left")
        .sort([*key, "snapshot_date"])
        .with_columns(pl.when(~starts_key(key)).then(pl.col("_next_snapshot").shift(1)).alias("_prev_to"))
    )
    same_as_previous = (
        pl.all_horizontal([pl.col(c).eq_missing(pl.col(c).shift(1)) for c in PRICE_VALUE_COLUMNS])
        & pl.col("_prev_to").eq_missing(pl.col("snapshot_date"))
        & pl.col("_prev_to").is_not_null()
    )  # a period's number counts up the whole frame: the periods of a key are those of a window over the key
    snap = snap.with_columns((~same_as_previous).cast(pl.Int32).cum_sum().alias("_period"))
    periods = snap.group_by([*key, "_period"], maintain_order=True).agg(
        pl.col("snapshot_date").min().alias("from_date"),
        pl.col("_next_snapshot").last().alias("to_date"),
        pl.all().exclude("snapshot_date", "_next_snapshot", "_prev_to").last(),
        pl.col("snapshot_date").max().alias("snapshot_date"),
    )
    return periods.with_columns(
        pl.lit(None, pl.String).alias("notes"),
        pl.lit(None, pl.String).alias("source_commit"),
        pl.lit(None, pl.String).alias("last_commit"),
        pl.lit(False).alias("declared"),
    )


def match_rules(histories: dict[str, Store]) -> pl.DataFrame:
    """The newest match rule of every history key that has one (genai-prices names the ids an entry prices)."""
    frames = [
        store.changes.filter(pl.col("match_rule").is_not_null())
        .sort("snapshot")
        .group_by("provider", "model", maintain_order=True)
        .agg(pl.col("match_rule").last(), pl.col("snapshot").last())
        .select(pl.lit(source).alias("source"), "provider", "model", "match_rule")
        for source, store in sorted(histories.items())
    ]
    schema = {"source": pl.String, "provider": pl.String, "model": pl.String, "match_rule": pl.String}
    return pl.concat(frames) if frames else pl.DataFrame(schema=schema)


def snapshot_index(
    snapshots: list[pl.DataFrame], histories: dict[str, Store] | None = None, data_dir: Path | None = None
) -> pl.DataFrame:
    """One row per snapshot: source, date, rows, file, and for a replayed history the commit and its subject."""
    schema = {
        "source": pl.String,
        "snapshot_date": pl.Date,
        "rows": pl.Int64,
        "file": pl.String,
        "commit": pl.String,
        "committed_at": pl.String,
        "subject": pl.String,
        "input_path": pl.String,
    }
    rows = [
        (s["source"][0], s["snapshot_date"][0], s.height, Path(s[FILE][0]).name, None, None, None, None)
        for s in snapshots
        if s.height
    ]
    frames = [pl.DataFrame(rows, schema=schema, orient="row")]
    for source, store in sorted((histories or {}).items()):
        changes_file = store_paths(data_dir or Path("data"), source)[1].name
        frames.append(
            store.commits.select(
                pl.lit(source).alias("source"),
                "snapshot_date",
                "rows",
                pl.lit(changes_file).alias("file"),
                "commit",
                "committed_at",
                "subject",
                "input_path",
            )
        )
    return pl.concat(frames, how="vertical_relaxed").sort("source", "snapshot_date", "committed_at", nulls_last=False)


DERIVED_COMMENTS = {
    "prices": {
        "source": "Where the row comes from: hand (data/prices.csv), litellm or openrouter (data/snapshots/), "
        "genai_prices or llm_prices (the replayed histories in data/history/)",
        "from_date": "First day the price applies (inclusive); for imports, the snapshot it first appeared in",
        "to_date": "First day the price no longer applies (exclusive; null = current); for imports, the next "
        "snapshot that changed or dropped it",
        "source_key": "Entry key in the imported price map (null for hand-kept rows)",
        "snapshot_date": "Newest snapshot that carried this price (null for hand-kept rows): the old end of the window "
        "in which a change to the next period happened",
        "source_line": "Line of the row in its file: data/prices.csv for hand-kept rows, the newest snapshot that "
        "carried it for imports (null for the replayed histories: their commits name the rows)",
        "source_commit": "Commit of the source repository whose snapshot first showed this price (replayed "
        "histories; null otherwise)",
        "last_commit": "Commit whose snapshot (on snapshot_date) last showed this price (replayed histories)",
        "declared": "from_date is the source's own date for the price (a hand-kept row, or a dated price in a "
        "replayed history), not the first snapshot that showed it",
        "notes": "Caveats (hand-kept rows)",
    },
    "price_match_rules": {
        "source": "Price database of the rule (genai_prices)",
        "provider": "Seller (prices.provider)",
        "model": "The entry's model id (prices.model)",
        "match_rule": "The newest rule naming the model ids the entry prices (compact JSON: equals, starts_with, "
        "ends_with, contains, regex, or, and; on the lower-cased id)",
    },
    "price_snapshots": {
        "source": "Price map the snapshot was imported from (litellm, openrouter) or the price database whose "
        "history it is (genai_prices, llm_prices)",
        "snapshot_date": "Date of the snapshot (from --as-of, the file name or its modification date; a commit's UTC "
        "date)",
        "rows": "Price rows in the snapshot [rows]",
        "file": "Snapshot file name in data/snapshots/, or the history's change log in data/history/",
        "commit": "Commit of the source repository (replayed histories), or sha256:<digest> of an imported file",
        "committed_at": "Commit time, UTC (replayed histories)",
        "subject": "First line of the commit message (replayed histories)",
        "input_path": "The source file(s) the snapshot was read from (replayed histories: genai-prices moved from "
        "prices/data.json to its v2 feed on 2026-07-30)",
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
            "API prices: hand-kept first-party rows (data/prices.csv), imported LiteLLM/OpenRouter snapshots "
            "(data/snapshots/) and the replayed genai-prices/llm-prices histories (data/history/), with effective "
            "periods. Grain: one row per source x provider x model x variant x "
            "context tier x effective period."
        )
    if table == "price_match_rules":
        return (
            "genai-prices' match rules: which model ids each entry prices (resolved to price keys in "
            "price_key_matches). Grain: one row per source x provider x model."
        )
    if table == "price_snapshots":
        return (
            "Price snapshots: imported price maps (data/snapshots/) and every commit of a replayed history "
            "(data/history/). Grain: one row per source x snapshot (snapshot date; commit for a history)."
        )
    spec = INPUT_TABLES[table]
    return f"{spec.description}. Grain: {spec.grain}."
