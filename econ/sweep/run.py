"""``econ sweep SPEC``: plan the sweep, skip the partitions already finished, run the rest, record each.

The driver reads the built database once (read-only), makes each partition's task as a worker frees up, writes
each result's Parquet files into the output folder as it arrives (:mod:`econ.sweep.store`) and reports progress
through a callback (the CLI draws the bar). One sweep at a time per output folder (a lock beside it).
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_scenario import all_scenarios
from econ.db import connect_read_only
from econ.errors import EconError
from econ.fingerprint import code_fingerprint
from econ.lock import Locks
from econ.machine import memory_bytes
from econ.sweep import backends
from econ.sweep.partition import PartitionResult, bytes_per_point, run_partition
from econ.sweep.plan import Plan, make_plan, partition_path, task_digest
from econ.sweep.spec import SweepSpec, read_spec
from econ.sweep.store import DRAWS, FILE_NAME, FORMAT_VERSION, Store


@dataclass(frozen=True)
class Progress:
    """Where a running sweep stands (what the progress bar shows)."""

    partitions_done: int
    partitions_total: int
    points_done: int
    points_total: int
    points_this_run: int
    elapsed_s: float


@dataclass
class SweepResult:
    """What a sweep did: partitions run and skipped, points, rows kept per table, time, the largest worker's peak."""

    folder: Path
    partitions: int
    skipped: int
    ran: int
    points: int
    points_run: int
    rows: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    peak_rss_bytes: int = 0
    worker_peaks: dict[str, int] = field(default_factory=dict)
    backend: str = "local"
    workers: int = 0


def load_plan(spec: SweepSpec, db_path: Path) -> Plan:
    """Read what the spec needs from the built database (read-only; it must be built by this code)."""
    with connect_read_only(db_path, current=True) as con:
        scenarios = all_scenarios(con)  # the CSV's and, once calibrated, ``calibrated``
        cases = pl.DataFrame(con.sql(inputs.CASES_SQL))
        named = pl.DataFrame(con.sql("select * from layouts order by layout"))
    return make_plan(spec, scenarios, cases, named)


def inputs_sha256(plan: Plan) -> str:
    """SHA-256 of what the database gave the plan (cases, layouts, draws): a rebuilt database with other data
    makes the finished partitions of an earlier run stale."""
    h = hashlib.sha256()
    for frame in (plan.cases, plan.layouts, plan.draws):
        h.update(frame.write_csv(float_precision=17).encode())
    return h.hexdigest()


def _record(result: PartitionResult, digest: str, files: dict) -> dict:
    return {
        "partition": partition_path(result.key),
        "digest": digest,
        "files": files,
        "rows": result.rows,
        "points": result.points,
        "pieces": result.pieces,
        "seconds": round(result.seconds, 6),
        "peak_rss_bytes": result.peak_rss_bytes,
        "worker": result.worker,
    }


def sweep(
    spec_path: Path,
    *,
    db_path: Path,
    out_dir: Path | None = None,
    backend: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    wait: bool = False,
    progress: Callable[[Progress], None] | None = None,
    max_partitions: int | None = None,
) -> SweepResult:
    """Run the sweep of ``spec_path`` into ``out_dir`` (default ``build/sweeps/<spec stem>`` beside the database).

    ``max_partitions`` stops after that many partitions have run (a partial sweep, resumed by the next call).
    """
    start = time.perf_counter()
    spec = read_spec(spec_path)
    out_dir = Path(out_dir) if out_dir is not None else Path(db_path).parent / "sweeps" / Path(spec_path).stem
    run = backends.runner(backend, workers=workers, address=ray_address)
    at_once = workers or backends.default_workers()
    if backend == "local" and at_once * spec.memory_per_worker_mb * 1e6 > memory_bytes():
        raise EconError(
            f"{spec_path}: limits.memory_per_worker_mb = {spec.memory_per_worker_mb:g} for {at_once} workers is more "
            f"than this machine's memory ({memory_bytes() / 1e9:.3g} GB)",
            f"give at most {memory_bytes() / 1e6 / at_once:,.0f}, or fewer --workers",
        )
    plan = load_plan(spec, db_path)
    header = {
        "format_version": FORMAT_VERSION,
        "spec": spec.canonical(),
        "spec_sha256": spec.sha256(),
        "code_fingerprint": code_fingerprint(),
        "inputs_sha256": inputs_sha256(plan),
        "partitions_planned": plan.partitions,
        "points_planned": plan.points(),
        "max_points_per_piece": plan.max_points,
        "piece_memory_bytes_max": plan.max_points * bytes_per_point(spec.keep),
        "tables": tables_kept(spec),
    }
    with Locks(command="econ sweep") as locks:
        locks.acquire([out_dir], wait=wait)
        store = Store.open(out_dir, header)
        draws_file = store.write_table_file(f"{DRAWS}/draws.parquet", _parquet(plan.draws))
        finished = store.finished()
        digests: dict[str, str] = {}
        totals = {"points_done": 0, "partitions_done": 0, "points_run": 0, "skipped": 0, "ran": 0, "peak": 0}
        points_total = plan.points()
        peaks: dict[str, int] = {}

        def pending():
            launched = 0
            for task in plan.tasks():
                path = partition_path(task.key)
                digest = task_digest(task)
                old = finished.get(path)
                if old is not None and old["digest"] == digest:
                    totals["points_done"] += old["points"]
                    totals["partitions_done"] += 1
                    totals["skipped"] += 1
                    continue
                if max_partitions is not None and launched >= max_partitions:
                    return
                digests[path] = digest
                launched += 1
                yield task

        for result in run(run_partition, pending()):
            path = partition_path(result.key)
            files = {t: store.write_table_file(f"{t}/{path}/{FILE_NAME}", data) for t, data in result.files.items()}
            store.log(_record(result, digests.pop(path), files))
            totals["points_done"] += result.points
            totals["partitions_done"] += 1
            totals["points_run"] += result.points
            totals["ran"] += 1
            totals["peak"] = max(totals["peak"], result.peak_rss_bytes)
            peaks[result.worker] = max(peaks.get(result.worker, 0), result.peak_rss_bytes)
            if progress is not None:
                progress(
                    Progress(
                        partitions_done=totals["partitions_done"],
                        partitions_total=plan.partitions,
                        points_done=totals["points_done"],
                        points_total=points_total,
                        points_this_run=totals["points_run"],
                        elapsed_s=time.perf_counter() - start,
                    )
                )
        done = store.finished()
        complete = len(done) == plan.partitions
        rows = _sum_rows(done.values())
        store.write_manifest(
            {
                "status": "complete" if complete else "partial",
                "draws_file": draws_file,
                "partitions_done": len(done),
                "rows": rows,
                "partitions": [done[p] for p in sorted(done)],
            }
        )
    return SweepResult(
        folder=out_dir,
        partitions=plan.partitions,
        skipped=totals["skipped"],
        ran=totals["ran"],
        points=points_total,
        points_run=totals["points_run"],
        rows=rows,
        elapsed_s=time.perf_counter() - start,
        peak_rss_bytes=totals["peak"],
        worker_peaks=peaks,
        backend=backend,
        workers=workers or backends.default_workers(),
    )


def tables_kept(spec: SweepSpec) -> list[str]:
    """The tables a sweep writes: ``serving_frontier`` (keep frontier), ``serving_layouts`` (keep argmin or points)."""
    return (["serving_frontier"] if "frontier" in spec.keep else []) + (
        ["serving_layouts"] if {"points", "argmin"} & set(spec.keep) else []
    )


def _sum_rows(records) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        for table, n in r["rows"].items():
            out[table] = out.get(table, 0) + n
    return out


def _parquet(frame: pl.DataFrame) -> bytes:
    sink = io.BytesIO()
    frame.write_parquet(sink, compression="zstd", statistics=True)
    return sink.getvalue()
