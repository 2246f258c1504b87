"""``econ history replay SOURCE --repo DIR``: a price database's git history becomes its dated snapshots (I/O edge).

The repository is a local clone (bare or not) of pydantic/genai-prices or simonw/llm-prices; git reads it, nothing
is downloaded. Each commit whose data differs from the commit before (the bytes the importer reads, :data:`INPUTS`)
becomes a snapshot: its data normalised by the source's importer, checked with the dated snapshot spec, dated by
the commit's UTC date and named by the commit id. A commit whose data cannot be read (llm-prices has two commits
with invalid JSON, each fixed a minute later) is skipped and listed. The snapshots are written as the source's change
log in ``data/history/`` (:mod:`econ.load.history`), replacing the one there: the history is the repository's, so
replaying it again writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from econ.errors import DataError, EconError
from econ.files import staging_path
from econ.load.history import Snapshot, Store, encode, store_paths, write_csv
from econ.load.importers import genai_prices, llm_prices
from econ.load.importers.common import Normalised, parse_json
from econ.load.price_tables import DATED_SNAPSHOT, HISTORY_REPOSITORIES, HISTORY_SOURCES
from econ.load.spec import read_table
from econ.lock import Locks

INPUTS = {
    "genai_prices": ("prices/new_data/v2/data.json", "prices/data.json"),
    "llm_prices": ("data", "index.html"),
}
"""What each source's importer reads, in order of preference at a commit: genai-prices' v2 feed once it exists (v1
froze on 2026-07-25), else ``prices/data.json``; llm-prices' ``data/*.json`` once they exist (2025-10-10), else the
``presets`` object of ``index.html``."""


@dataclass
class Replayed:
    """What a replay read: the snapshots (oldest first) and the commits it skipped, with the reason."""

    snapshots: list[Snapshot]
    commits_read: int
    skipped: list[tuple[str, str]] = field(default_factory=list)


def replay(source: str, repo: Path) -> Replayed:
    """Every snapshot of ``source``'s history in the git repository ``repo`` (see the module docstring)."""
    if source not in HISTORY_SOURCES:
        raise EconError(f"no history to replay for {source!r}", f"use one of: {', '.join(HISTORY_SOURCES)}")
    git = _Git(Path(repo))
    try:
        commits = git.log(INPUTS[source])
        snapshots, skipped, previous = [], [], None
        with tempfile.TemporaryDirectory() as tmp:
            for commit, when, subject in commits:
                data = _input(git, source, commit)
                if data is None or data[1] == previous:
                    continue  # the data did not change (a page-only commit of llm-prices)
                path, raw, files = data
                previous = raw
                try:
                    normalised = _normalise(source, files)
                except DataError as e:
                    problem = e.problems[0]
                    skipped.append((commit, f"{problem.file}: {problem.what}"))
                    continue
                rows = _checked(normalised, Path(tmp) / "snapshot.csv", f"{source} at {commit[:12]}")
                digest = hashlib.sha256(raw).hexdigest()
                snapshots.append(Snapshot(commit, when, path, digest, subject, rows))
    finally:
        git.close()
    return Replayed(snapshots, len(commits), skipped)


def history_store(source: str, repo: Path) -> tuple[Store, Replayed]:
    """:func:`replay` encoded as the source's store (:func:`econ.load.history.encode`), and the replay."""
    replayed = replay(source, repo)
    return encode(replayed.snapshots), replayed


@dataclass
class Written:
    """What ``econ history replay`` wrote: the replay, the store and the bytes of its two files."""

    replayed: Replayed
    store: Store
    files: dict[Path, int]
    status: str


def replay_into(source: str, repo: Path, *, data_dir: Path, wait: bool = False) -> Written:
    """Replay ``source``'s history from ``repo`` and write it to ``data_dir/history/`` (both files atomically, under
    the data folder's lock); ``status`` is ``unchanged`` when the files already hold it."""
    store, replayed = history_store(source, Path(repo))
    if not replayed.snapshots:
        raise EconError(
            f"no commit of {repo} changed {source}'s data ({' or '.join(INPUTS[source])})",
            f"is this a clone of {HISTORY_REPOSITORIES[source]}?",
        )
    if not Path(data_dir).is_dir():
        raise EconError(f"no data folder at {data_dir}", "run econ from the project folder or pass --data")
    texts = dict(zip(store_paths(data_dir, source), (write_csv(store.commits), write_csv(store.changes))))
    status = "unchanged"
    with Locks(command="econ history replay") as locks:
        locks.acquire([Path(data_dir)], wait=wait)
        locks.remove_inherited()  # what a killed import, refresh or replay staged in data/
        for target, text in texts.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() and target.read_bytes() == text:
                continue
            status = "new"
            tmp = staging_path(target)
            locks.record(tmp, output=Path(data_dir))
            try:
                tmp.write_bytes(text)
                os.replace(tmp, target)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
    return Written(replayed, store, {t: len(b) for t, b in texts.items()}, status)


def _input(git: _Git, source: str, commit: str) -> tuple[str, bytes, list[tuple[str, bytes]]] | None:
    """(what was read, the bytes that identify it, the files) at ``commit``: the first input of :data:`INPUTS` that
    exists there. llm-prices' vendor files are identified by their names and bytes together."""
    first, second = INPUTS[source]
    if source == "genai_prices":
        for path in (first, second):
            raw = git.blob(commit, path)
            if raw is not None:
                return path, raw, [(path, raw)]
        return None
    names = sorted(n for n in git.tree(commit, first) if n.endswith(".json"))
    if names:
        files = [(f"{first}/{n}", git.blob(commit, f"{first}/{n}") or b"") for n in names]
        return f"{first}/*.json", b"".join(p.encode() + b"\x00" + raw + b"\x00" for p, raw in files), files
    page = git.blob(commit, second)
    if page is None:
        return None
    presets = llm_prices.legacy_presets(page.decode("utf-8", errors="replace"))
    if not presets:
        return None
    raw = json.dumps(presets, sort_keys=True, ensure_ascii=False).encode()
    return f"{second} (presets)", raw, [(second, raw)]


def _normalise(source: str, files: list[tuple[str, bytes]]) -> Normalised:
    """The normalised rows of one commit's files (a DataError when one cannot be parsed)."""
    parsed = [parse_json(raw, path) for path, raw in files]
    if source == "genai_prices":
        return genai_prices.normalise(parsed[0])
    return llm_prices.normalise(parsed[0] if files[0][0] == INPUTS[source][1] else parsed)


def _checked(normalised: Normalised, scratch: Path, shown: str):
    """The rows, checked with the dated snapshot spec (a bug of the importer, not of the data, if they fail)."""
    scratch.write_bytes(normalised.frame.write_csv(line_terminator="\n").encode())
    try:
        read_table(scratch, DATED_SNAPSHOT, shown=Path(shown))
    except DataError as e:
        raise EconError(
            f"the replay of {shown} gave rows that fail the snapshot checks: {e.problems[0]}",
            "please report it to econ with the commit",
        ) from None
    return normalised.frame


class _Git:
    """Reads commits, trees and blobs of one repository (one ``git cat-file --batch`` process for the blobs)."""

    def __init__(self, repo: Path):
        if not repo.exists():
            raise EconError(f"no repository at {repo}", "clone it first: git clone --bare <url> DIR")
        self.repo = repo
        self.batch = None

    def _run(self, *args: str) -> str:
        try:
            done = subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True, check=True)
        except FileNotFoundError:
            raise EconError("git is not installed", "install git to replay a repository's history") from None
        except subprocess.CalledProcessError as e:
            message = e.stderr.decode("utf-8", errors="replace").strip().splitlines()
            raise EconError(
                f"git cannot read {self.repo}: {message[-1] if message else e}", "give a clone of the repository"
            ) from None
        return done.stdout.decode("utf-8", errors="replace")

    def log(self, paths) -> list[tuple[str, datetime, str]]:
        """(commit, committer time, subject) of every commit touching ``paths``, oldest first."""
        out = self._run("log", "--reverse", "--format=%H%x00%cI%x00%s", "--", *paths)
        rows = [line.split("\x00") for line in out.splitlines() if line]
        return [(c, datetime.fromisoformat(t), s) for c, t, s in rows]

    def tree(self, commit: str, path: str) -> list[str]:
        out = self._run("ls-tree", "--name-only", commit, f"{path}/")
        return [line.rsplit("/", 1)[-1] for line in out.splitlines() if line]

    def blob(self, commit: str, path: str) -> bytes | None:
        if self.batch is None:
            self.batch = subprocess.Popen(
                ["git", "-C", str(self.repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        self.batch.stdin.write(f"{commit}:{path}\n".encode())
        self.batch.stdin.flush()
        header = self.batch.stdout.readline().split()
        if len(header) < 3 or header[-1] == b"missing":
            return None
        size = int(header[2])
        body = self.batch.stdout.read(size)
        self.batch.stdout.read(1)  # the newline after the object
        return body

    def close(self) -> None:
        if self.batch is not None:
            self.batch.stdin.close()
            self.batch.wait()
            self.batch.stdout.close()
            self.batch = None
