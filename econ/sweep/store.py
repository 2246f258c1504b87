"""The output folder of a sweep (I/O edge): marker, manifest, the log of finished partitions, Parquet by partition.

    OUT/
      .econ-sweep                         econ's marker: this folder is a sweep's output
      manifest.json                       spec, spec hash, code fingerprint, inputs hash, status; at the end every
                                          partition with its files, row counts and SHA-256
      partitions.jsonl                    one line per finished partition, appended and fsynced as each lands
      sweep_draws/draws.parquet           one row per draw: the value of every varied assumption
      serving_frontier/model=…/chip=…/number_format=…/draw_block=N/part.parquet
      serving_layouts/model=…/…/part.parquet        (keep = argmin or points)

Each Parquet file is written to a staging path beside it, fsynced and renamed into place, and only then is the
partition's line appended to ``partitions.jsonl``: a killed sweep leaves whole files and a log of those that
count, and the next run (same spec, same code, same inputs) skips them and removes the staging files dead runs
left. A folder that holds anything else and no marker is refused, as is a marked folder whose manifest names
another spec, code or inputs; nothing econ did not write is ever removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from econ.cachefiles import digest
from econ.errors import EconError, EconNotice
from econ.files import clean_stale, fsync_dir, read_json_bounded, shown_path, staging_path

MARKER = ".econ-sweep"
MARKER_TEXT = (
    "This folder is the output of an econ sweep (econ sweep SPEC --out this folder).\n"
    "econ writes only its manifest, partitions.jsonl and the Parquet files listed there; keep other files elsewhere.\n"
)
MANIFEST = "manifest.json"
LOG = "partitions.jsonl"
FILE_NAME = "part.parquet"
DRAWS = "sweep_draws"
FORMAT_VERSION = 1
CHECKED = ("spec_sha256", "code_fingerprint", "inputs_sha256")
MAX_MANIFEST_BYTES = 256 * 2**20


def _atomic_write(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = staging_path(target)
    try:
        with open(stage, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(stage, target)
    except BaseException:
        stage.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


@dataclass
class Store:
    """An opened output folder (the caller holds its lock)."""

    folder: Path
    header: dict

    @classmethod
    def open(cls, folder: Path, header: dict) -> Store:
        """Check ``folder`` and make it ours (see the module docstring); ``header`` is this run's manifest head."""
        folder = Path(folder)
        shown = shown_path(folder)
        hint = "give --out a new or empty folder, or the folder of this same sweep"
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise EconError(f"the sweep output {shown} is not a folder", hint)
        if folder.exists():
            entries = sorted(p.name for p in folder.iterdir())
            if entries and MARKER not in entries:
                listed = ", ".join(entries[:3]) + (", …" if len(entries) > 3 else "")
                raise EconError(f"{shown} holds files econ did not write ({listed}) and no {MARKER} marker", hint)
            if MARKER in entries and (folder / MANIFEST).is_file():
                old = _read_manifest(folder / MANIFEST)
                differ = [k for k in CHECKED if old.get(k) != header[k]]
                if differ:
                    what = {
                        "spec_sha256": "another spec",
                        "code_fingerprint": "another version of econ",
                        "inputs_sha256": "other inputs (the database was rebuilt from other data)",
                    }[differ[0]]
                    raise EconError(
                        f"{shown} holds a sweep made with {what}; its finished partitions would not match this one",
                        f"give --out another folder, or remove {shown} to start this sweep again",
                    )
        folder.mkdir(parents=True, exist_ok=True)
        store = cls(folder, header)
        if not (folder / MARKER).exists():
            _atomic_write(folder / MARKER, MARKER_TEXT.encode())
        store.clean()
        store.write_manifest({"status": "running"})
        return store

    def clean(self) -> None:
        """Remove the staging files that dead runs left anywhere in the folder."""
        for dirpath, _, _ in os.walk(self.folder):
            clean_stale(Path(dirpath))

    def write_manifest(self, extra: dict) -> None:
        _atomic_write(self.folder / MANIFEST, (json.dumps({**self.header, **extra}, indent=1) + "\n").encode())

    def finished(self) -> dict[str, dict]:
        """Partition path -> its record, for every logged partition whose files are all there with the SHA-256
        the log gives (a file altered, truncated or replaced in place makes its partition run again).

        A line that is not a record (cut short by a kill, or damaged) is ignored: its partition runs again."""
        log = self.folder / LOG
        if not log.exists():
            return {}
        done, damaged = {}, []
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                record = _record(line)
                if record is None:
                    continue
                if all(self._intact(f) for f in record["files"].values()):
                    done[record["partition"]] = record
                else:
                    damaged.append(record["partition"])
        damaged = sorted(set(damaged) - set(done))
        if damaged:
            warnings.warn(
                f"{len(damaged):,} finished partition(s) of {shown_path(self.folder)} no longer match the SHA-256 "
                f"their log gives (altered, truncated or removed: {damaged[0]}{', …' if len(damaged) > 1 else ''}); "
                "they run again",
                EconNotice,
                stacklevel=2,
            )
        return done

    def _intact(self, entry: dict) -> bool:
        path = self.folder / entry["path"]
        try:
            if not path.is_file() or path.is_symlink() or path.stat().st_size != entry["bytes"]:
                return False
            return digest(path) == entry["sha256"]
        except OSError:
            return False

    def write_table_file(self, relative: str, data: bytes) -> dict:
        _atomic_write(self.folder / relative, data)
        return {"path": relative, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}

    def log(self, record: dict) -> None:
        """Append a finished partition's line to ``partitions.jsonl`` and make it durable."""
        path = self.folder / LOG
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())


def _read_manifest(path: Path) -> dict:
    """The manifest of an earlier run, or an :class:`EconError` saying it is damaged."""
    shown = shown_path(path)
    try:
        body = read_json_bounded(path, max_bytes=MAX_MANIFEST_BYTES)
    except (OSError, ValueError) as e:
        why = f"cannot be read ({str(e).splitlines()[0][:120]})"
    else:
        if isinstance(body, dict):
            return body
        kind = {"list": "list", "str": "string", "int": "number", "float": "number", "bool": "boolean"}
        why = f"holds a JSON {kind.get(type(body).__name__, 'null')}, not the object econ writes"
    folder = shown_path(path.parent)
    raise EconError(
        f"the sweep manifest {shown} {why}; econ cannot tell which spec, code and inputs its partitions were made with",
        f"remove {folder} to run the sweep again, or give --out another folder",
    )


_RECORD_KEYS = {"partition": str, "digest": str, "files": dict, "rows": dict, "points": int}


def _record(line: str) -> dict | None:
    """A finished partition's record from one line of ``partitions.jsonl``; None for anything else."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or not all(isinstance(record.get(k), t) for k, t in _RECORD_KEYS.items()):
        return None
    for entry in record["files"].values():
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("path"), str)
            and isinstance(entry.get("bytes"), int)
            and isinstance(entry.get("sha256"), str)
            and ".." not in Path(entry["path"]).parts
            and not Path(entry["path"]).is_absolute()
        ):
            return None
    return record


def views_sql(folder: Path) -> list[tuple[str, str]]:
    """(view name, SELECT) of every table a sweep folder holds: the Hive-partitioned Parquet, with the partition
    columns ``model``, ``chip``, ``number_format`` (text) and ``draw_block`` (integer) from the paths.

    The names are those of the built database (``serving_frontier``, ``serving_layouts``), so the same SQL runs
    on either; ``sweep_draws`` has the draws, ``sweep_partitions`` the finished partitions.
    """
    folder = Path(folder)
    if not (folder / MARKER).is_file():
        raise EconError(
            f"{shown_path(folder)} is not a sweep output (no {MARKER} marker)", "give the --out folder of econ sweep"
        )

    def lit(path: Path) -> str:
        return "'" + str(path).replace("'", "''") + "'"

    types = "{'model': 'VARCHAR', 'chip': 'VARCHAR', 'number_format': 'VARCHAR', 'draw_block': 'BIGINT'}"
    out = []
    for table in ("serving_frontier", "serving_layouts"):
        if any((folder / table).glob(f"*/*/*/*/{FILE_NAME}")):
            pattern = folder / table / "*" / "*" / "*" / "*" / FILE_NAME
            out.append(
                (
                    table,
                    "select model, chip, number_format, draw_block, "
                    "* exclude (model, chip, number_format, draw_block) "
                    f"from read_parquet({lit(pattern)}, hive_partitioning = true, hive_types = {types})",
                )
            )
    if (folder / DRAWS / "draws.parquet").is_file():
        out.append(("sweep_draws", f"select * from read_parquet({lit(folder / DRAWS / 'draws.parquet')})"))
    if (folder / LOG).is_file():
        out.append(
            (
                "sweep_partitions",
                f"select partition, points, rows, seconds, peak_rss_bytes, worker from read_json({lit(folder / LOG)}, "
                "format = 'newline_delimited', ignore_errors = true)",
            )
        )
    return out
