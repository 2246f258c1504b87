"""The replayed history of a price database that keeps its own history in git (genai-prices, llm-prices).

Every commit of the source that changed its data is a dated **snapshot**: the normalised rows of the data file(s) at
that commit (:data:`~econ.load.price_tables.DATED_SNAPSHOT`), dated by the commit's UTC date, with the commit id as
its source. The snapshots are kept as a **change log** of two CSV files per source in ``data/history/``:

* ``<source>_commits.csv`` (:data:`~econ.load.price_tables.HISTORY_COMMITS`): one row per snapshot, oldest first,
  numbered 0, 1, 2, … (``snapshot``), with the commit, its time, the file(s) read and their SHA-256;
* ``<source>_changes.csv`` (:data:`~econ.load.price_tables.HISTORY_CHANGES`): at each snapshot, every row of each
  price key (provider, model, variant, tier) whose rows differ from the snapshot before (``set``), and one ``drop``
  row per key that left. A key's rows hold from its ``set`` until its next change, so snapshot ``k`` is the newest
  change of every key at or before ``k`` (:func:`state_at`).

The encoding is canonical: snapshots are ordered by commit time, then commit id, whatever order they were added in,
and a snapshot is written from the rows alone, so replaying a history twice, or adding its snapshots in another
order, writes the same bytes (:func:`encode`). Adding the newest snapshot compares it with the newest state only
(:func:`append`); an older one re-encodes the whole history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from econ import paths
from econ.errors import SHOWN_PROBLEMS, DataError, Problem
from econ.load.price_tables import DATED_SNAPSHOT, HISTORY_CHANGES, HISTORY_COMMITS
from econ.load.spec import FILE, LINE, read_table, shift_in_key

HISTORY_DIR = paths.HISTORY_DIR
KEY = ["provider", "model", "variant", "tier_min_prompt_tokens"]
ROW_KEY = [*KEY, "declared_from_date"]
ROW_COLUMNS = DATED_SNAPSHOT.out_columns
VALUES = [c for c in ROW_COLUMNS if c not in ROW_KEY]
COMMIT_COLUMNS = HISTORY_COMMITS.out_columns
CHANGE_COLUMNS = HISTORY_CHANGES.out_columns


@dataclass(frozen=True)
class Snapshot:
    """One snapshot to add: its rows (:data:`DATED_SNAPSHOT` columns) and where they came from."""

    commit: str
    committed_at: datetime
    input_path: str
    input_sha256: str
    subject: str | None
    rows: pl.DataFrame

    @property
    def snapshot_date(self) -> date:
        return self.committed_at.astimezone(UTC).date()


@dataclass(frozen=True)
class Store:
    """A source's change log: its commits and changes frames (CSV columns, typed)."""

    commits: pl.DataFrame
    changes: pl.DataFrame

    @property
    def size(self) -> int:
        return self.commits.height


def store_paths(data_dir: Path, source: str) -> tuple[Path, Path]:
    """The commits and changes files of ``source``."""
    folder = Path(data_dir) / HISTORY_DIR
    return folder / f"{source}_commits.csv", folder / f"{source}_changes.csv"


def empty_store() -> Store:
    return Store(HISTORY_COMMITS.empty_frame(), HISTORY_CHANGES.empty_frame())


def read_store(data_dir: Path, source: str, *, staged: dict[Path, Path] | None = None) -> Store | None:
    """The checked store of ``source`` (None when it has none); every problem is a DataError naming file and line.

    ``staged`` maps a store file's final path to a staged copy holding its new content (``econ refresh``).
    """
    staged = staged or {}
    commits_path, changes_path = store_paths(data_dir, source)
    commits_src, changes_src = staged.get(commits_path, commits_path), staged.get(changes_path, changes_path)
    if not commits_src.exists() and not changes_src.exists():
        return None
    commits = read_table(commits_src, HISTORY_COMMITS, shown=commits_path)
    changes = read_table(changes_src, HISTORY_CHANGES, shown=changes_path)
    problems = _check_store(commits, changes)
    if problems:
        raise DataError(problems)
    return Store(commits.drop(FILE, LINE), changes.drop(FILE, LINE))


def _check_store(commits: pl.DataFrame, changes: pl.DataFrame) -> list[Problem]:
    """Snapshots numbered 0, 1, 2, … in commit-time order, each dated by its commit's UTC day, one row per commit;
    every change names a snapshot of the commits file."""
    problems = []
    ordered = (
        commits.sort(LINE)
        .with_row_index("_expected")
        .with_columns(
            pl.col("committed_at").shift(1).alias("_prev_at"),
            pl.col("committed_at").str.slice(0, 10).str.strptime(pl.Date, "%Y-%m-%d", strict=False).alias("_day"),
            pl.col("committed_at").str.contains(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$").alias("_stamp"),
            pl.len().over("commit").alias("_n"),
        )
    )
    checks = (
        (pl.col("snapshot") != pl.col("_expected"), "snapshot", "snapshots are not numbered 0, 1, 2, … down the file",
         "re-run econ history replay (the file is generated)"),
        (~pl.col("_stamp"), "committed_at", "is not a UTC time YYYY-MM-DDTHH:MM:SSZ", "write the commit time in UTC"),
        (pl.col("_prev_at") > pl.col("committed_at"), "committed_at", "is earlier than the snapshot before it",
         "snapshots are ordered by commit time"),
        (pl.col("_day") != pl.col("snapshot_date"), "snapshot_date", "is not the UTC date of committed_at",
         "a snapshot is dated by its commit's UTC day"),
        (pl.col("_n") > 1, "commit", "appears more than once", "keep one snapshot per commit"),
    )  # fmt: skip
    for mask, column, what, hint in checks:
        for row in ordered.filter(mask.fill_null(False)).iter_rows(named=True):
            problems.append(Problem(row[FILE], row[LINE], column, f"{row[column]} {what}", hint))
    problems += _check_counts(ordered, changes)
    known = commits["snapshot"].to_list()
    for row in changes.filter(~pl.col("snapshot").is_in(known)).head(SHOWN_PROBLEMS).iter_rows(named=True):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "snapshot",
                f"snapshot {row['snapshot']} is not in the commits file",
                "the two files of a history are written together; re-run econ history replay",
            )  # fmt: skip
        )
    return problems


def _check_counts(commits: pl.DataFrame, changes: pl.DataFrame) -> list[Problem]:
    """Each snapshot's ``rows`` is the number of rows its changes give (:func:`state_at`), so a changes file cut short
    or edited by hand does not load as a shorter history. All snapshots at once: a key's change at ``s`` replaces the
    rows it held (its change before) with its ``set`` rows (none for a ``drop``), so the count at ``k`` is the running
    sum of those differences over ``s <= k``."""
    per = (
        changes.group_by([*KEY, "snapshot"])
        .agg((pl.col("change") == "set").sum().cast(pl.Int64).alias("_n"))
        .sort([*KEY, "snapshot"], nulls_last=False)
        .with_columns((pl.col("_n") - shift_in_key("_n", KEY, 1).fill_null(0)).alias("_delta"))
    )
    counted = (
        commits.join(per.group_by("snapshot").agg(pl.col("_delta").sum()), on="snapshot", how="left")
        .sort("snapshot")
        .with_columns(pl.col("_delta").fill_null(0).cum_sum().alias("_counted"))
    )
    return [
        Problem(
            row[FILE],
            row[LINE],
            "rows",
            f"snapshot {row['snapshot']} says {row['rows']} rows; the changes file gives it {row['_counted']}",
            "the two files of a history are written together; re-run econ history replay (never edit them by hand)",
        )
        for row in counted.filter(pl.col("rows") != pl.col("_counted")).head(SHOWN_PROBLEMS).iter_rows(named=True)
    ]


def write_csv(frame: pl.DataFrame) -> bytes:
    """The canonical bytes of a store file (the columns in spec order, the rows in key order)."""
    return frame.write_csv(line_terminator="\n", date_format="%Y-%m-%d").encode("utf-8")


def encode(snapshots: list[Snapshot]) -> Store:
    """The canonical store of ``snapshots`` (any order; one snapshot per commit, the last given wins)."""
    unique = {s.commit: s for s in snapshots}
    ordered = sorted(unique.values(), key=lambda s: (_utc(s.committed_at), s.commit))
    commits = _commit_rows(ordered, start=0)
    if not ordered:
        return Store(commits, HISTORY_CHANGES.empty_frame())
    states = pl.concat(
        [_rows(s.rows).with_columns(pl.lit(i, pl.Int64).alias("snapshot")) for i, s in enumerate(ordered)],
        how="vertical_relaxed",
    )
    return Store(commits, deltas(states, last=len(ordered) - 1))


def append(store: Store, snapshot: Snapshot) -> tuple[Store, str]:
    """``store`` with ``snapshot`` added and the status: ``new``, or ``unchanged`` when its commit (or, for an imported
    file, its content) is already there. The newest snapshot is compared with the newest state only; an older one
    re-encodes the history."""
    imported = snapshot.commit.startswith("sha256:")
    known = store.commits["commit"].to_list()
    if snapshot.commit in known or (imported and snapshot.input_sha256 in store.commits["input_sha256"].to_list()):
        return store, "unchanged"
    newest = store.commits.tail(1)
    order = (stamp(snapshot.committed_at), snapshot.commit)
    if store.size and order < (newest["committed_at"][0], newest["commit"][0]):
        return encode([*snapshots_of(store), snapshot]), "new"
    n = store.size
    state = state_at(store, n - 1).with_columns(pl.lit(n - 1, pl.Int64).alias("snapshot")) if n else None
    new = _rows(snapshot.rows).with_columns(pl.lit(n, pl.Int64).alias("snapshot"))
    both = new if state is None else pl.concat([state, new], how="vertical_relaxed")
    delta = deltas(both, last=n).filter(pl.col("snapshot") == n)
    commits = pl.concat([store.commits, _commit_rows([snapshot], start=n)], how="vertical_relaxed")
    changes = pl.concat([store.changes, delta], how="vertical_relaxed")
    return Store(commits, changes), "new"


def deltas(states: pl.DataFrame, *, last: int) -> pl.DataFrame:
    """The change rows of consecutive snapshots 0..``last`` given as full states (``snapshot`` + row columns).

    A key whose rows at ``k`` differ in any column from its rows at ``k - 1`` (or that was absent) gets all its rows
    as ``set``; a key present at ``k - 1`` and absent at ``k`` gets one ``drop`` row.
    """
    cur = states.select("snapshot", *ROW_COLUMNS)
    prev = cur.with_columns(pl.col("snapshot") + 1).filter(pl.col("snapshot") <= last)
    joined = cur.with_columns(pl.lit(True).alias("_cur")).join(
        prev.with_columns(pl.lit(True).alias("_prev")),
        on=["snapshot", *ROW_KEY],
        how="full",
        coalesce=True,
        nulls_equal=True,
        suffix="_p",
    )
    differs = pl.col("_cur").is_null() | pl.col("_prev").is_null()
    for c in VALUES:
        differs = differs | ~pl.col(c).eq_missing(pl.col(f"{c}_p"))
    changed = joined.filter(differs).select("snapshot", *KEY).unique()
    present = cur.select("snapshot", *KEY).unique()
    sets = cur.join(changed, on=["snapshot", *KEY], how="semi", nulls_equal=True).with_columns(
        pl.lit("set").alias("change")
    )
    drops = changed.join(present, on=["snapshot", *KEY], how="anti", nulls_equal=True).with_columns(
        pl.lit("drop").alias("change")
    )
    out = pl.concat([sets, drops], how="diagonal_relaxed")
    return out.select(CHANGE_COLUMNS).sort("snapshot", *ROW_KEY, nulls_last=False)


def state_at(store: Store, snapshot: int) -> pl.DataFrame:
    """The rows of snapshot ``snapshot`` (row columns, key order)."""
    upto = store.changes.filter(pl.col("snapshot") <= snapshot)
    newest = upto.group_by(KEY).agg(pl.col("snapshot").max())
    rows = upto.join(newest, on=[*KEY, "snapshot"], how="semi", nulls_equal=True).filter(pl.col("change") == "set")
    return rows.select(ROW_COLUMNS).sort(ROW_KEY, nulls_last=False)


def snapshots_of(store: Store) -> list[Snapshot]:
    """Every snapshot of ``store`` with its full rows (to re-encode the history with one more)."""
    out = []
    for row in store.commits.iter_rows(named=True):
        out.append(
            Snapshot(
                row["commit"],
                datetime.fromisoformat(row["committed_at"].replace("Z", "+00:00")),
                row["input_path"],
                row["input_sha256"],
                row["subject"],
                state_at(store, row["snapshot"]),
            )
        )
    return out


def snapshot_bytes(store: Store, snapshot: int) -> bytes:
    """Snapshot ``snapshot`` as a CSV (the canonical form a replay is compared by)."""
    return write_csv(state_at(store, snapshot))


def _rows(frame: pl.DataFrame) -> pl.DataFrame:
    """A snapshot's rows in row-column order and types (a file snapshot without the dated columns gets them blank)."""
    missing = [c for c in ROW_COLUMNS if c not in frame.columns]
    typed = frame.with_columns(
        pl.lit(None, pl.Date if c.endswith("_date") else pl.String).alias(c) for c in missing
    ).select(ROW_COLUMNS)
    empty = DATED_SNAPSHOT.empty_frame()
    return typed.cast({c: empty.schema[c] for c in ROW_COLUMNS})


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(microsecond=0)


def stamp(moment: datetime) -> str:
    """A commit time as the store writes it (UTC, seconds)."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def _commit_rows(snapshots: list[Snapshot], *, start: int) -> pl.DataFrame:
    rows = [
        (
            start + i,
            s.commit,
            stamp(s.committed_at),
            s.snapshot_date,
            s.rows.height,
            s.input_path,
            s.input_sha256,
            s.subject,
        )
        for i, s in enumerate(snapshots)
    ]
    schema = HISTORY_COMMITS.empty_frame().schema
    return pl.DataFrame(rows, schema=schema, orient="row")
