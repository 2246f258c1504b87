"""The partition function: one model × chip × format × draw block in, its Parquet files out (as bytes).

:func:`run_partition` takes a :class:`PartitionTask` (arrays only: the model, the chip in its format, the layouts,
the batch and context axes and the run settings of each draw of the block) and returns a
:class:`PartitionResult` holding each kept table as the bytes of a Parquet file. It reads no file, opens no
database, writes nothing and knows nothing of the backend that calls it (local processes or Ray tasks; an
import-linter contract keeps it so): the same task gives the same bytes wherever it runs.

The partition is evaluated in pieces of whole groups (one group = one draw × one context: every layout × batch),
at most :attr:`PartitionTask.max_points` points a piece, so a worker's memory is bounded by the spec's
``memory_per_worker_mb`` whatever the partition's size (:data:`BYTES_PER_POINT`). Per group it keeps

- ``serving_frontier``: the points no other layout and batch beats on both tokens/s per user and per chip
  (:func:`econ.physics.reductions.block_frontier`),
- ``serving_layouts`` with ``keep = argmin``: the cheapest point meeting the draw's speed target
  (:func:`econ.physics.reductions.block_argmin`); with ``keep = points``: every fitting point, the argmin marked.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from econ.physics import deployment
from econ.physics.reductions import block_argmin, block_frontier

BYTES_PER_POINT = {"answers": 400, "points": 800}
"""Peak bytes of a piece per point it evaluates: the step terms of :func:`econ.physics.deployment.decode_terms`,
their temporaries and the reductions ("answers": keep frontier and/or argmin; "points": every fitting point's
columns too). Measured with tracemalloc (~290 and ~530 B on the shipped data); ``tests/sweep/test_partition.py``
fails if a piece needs more."""


def bytes_per_point(keep) -> int:
    return BYTES_PER_POINT["points" if "points" in keep else "answers"]


PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 3, "use_dictionary": True, "write_statistics": True}

POINT_TERMS = deployment.STEP_TERMS
FRONTIER_TERMS = ("tokens_per_s_per_user", "tokens_per_s_per_chip", "usd_per_mtok", "step_time_s")
LAYOUT_COLUMNS = ("replica_chips", "tensor_parallel", "attention_data_parallel", "pipeline_parallel")


@dataclass(frozen=True)
class PartitionTask:
    """Everything one partition needs, as arrays (picklable; no database, no path).

    ``model``/``chip``: scalars keyed like ``deployment.MODEL_KEYS``/``CHIP_KEYS``; ``layouts``: arrays of length L
    keyed like ``deployment.LAYOUT_KEYS`` plus ``layout`` (names), ``replica_chips``, ``expert_parallel`` and
    ``idealised``; ``batch`` (B) and ``context_tokens`` (C) the axes; ``draws`` (D) the draw numbers of the block,
    ``settings`` the run settings of each (arrays of length D or scalars), ``kv_scale`` and
    ``speed_target_tokens_per_s`` per draw.
    """

    key: tuple[str, str, str, int]
    model: dict
    chip: dict
    layouts: dict
    batch: np.ndarray
    context_tokens: np.ndarray
    draws: np.ndarray
    settings: dict
    kv_scale: np.ndarray
    speed_target_tokens_per_s: np.ndarray
    keep: tuple[str, ...]
    max_points: int
    efficiency_basis: str = "bound"  # the scenario's (scenario.Scenario.efficiency_basis), written on every row

    @property
    def points(self) -> int:
        """Points the partition evaluates (layouts × batches × contexts × draws)."""
        return len(self.layouts["layout"]) * self.batch.size * self.context_tokens.size * self.draws.size


@dataclass(frozen=True)
class PartitionResult:
    """What a partition gives back: each kept table as Parquet bytes, its rows, and how the run went."""

    key: tuple[str, str, str, int]
    files: dict[str, bytes]
    rows: dict[str, int]
    points: int
    pieces: int
    seconds: float
    peak_rss_bytes: int
    worker: str = ""


def groups_per_piece(task: PartitionTask) -> int:
    """Draw × context groups evaluated together: as many as keep a piece within ``max_points`` (at least one)."""
    per_group = len(task.layouts["layout"]) * task.batch.size
    return max(1, task.max_points // max(per_group, 1))


def _bound(out: dict, shape, flat_index: np.ndarray) -> np.ndarray:
    """The largest term of the points at ``flat_index``: compute, memory or communication."""

    def at(name):
        return np.broadcast_to(out[name], shape).reshape(-1)[flat_index]

    comm = at("comm_time_s") > at("memory_time_s")
    return np.where(at("compute_bound"), "compute", np.where(comm, "communication", "memory"))


def _piece(task: PartitionTask, g0: int, g1: int) -> dict:
    """Evaluate groups ``g0:g1`` (group g = draw g // C, context g % C): the terms, shape (groups, L, B)."""
    n_context = task.context_tokens.size
    g = np.arange(g0, g1)
    d, c = g // n_context, g % n_context

    def per_group(values):
        values = np.asarray(values)
        return values[d][:, None, None] if values.ndim else values

    layout = {k: np.asarray(task.layouts[k])[None, :, None] for k in deployment.LAYOUT_KEYS}
    settings = {k: per_group(v) for k, v in task.settings.items()}
    out = deployment.decode_terms(
        task.model,
        task.chip,
        layout,
        task.batch[None, None, :],
        task.context_tokens[c][:, None, None],
        kv_scale=per_group(task.kv_scale),
        settings=settings,
    )
    shape = (g.size, len(task.layouts["layout"]), task.batch.size)
    valid = np.broadcast_to(out["fits"], shape) & np.isfinite(np.broadcast_to(out["step_time_s"], shape))
    eligible = valid & ~np.asarray(task.layouts["idealised"], dtype=bool)[None, :, None]
    meets = np.broadcast_to(out["tokens_per_s_per_user"], shape) >= per_group(task.speed_target_tokens_per_s)
    return {"out": out, "shape": shape, "d": d, "c": c, "valid": valid, "eligible": eligible, "meets": meets}


def _rows(task: PartitionTask, p: dict, flat_index: np.ndarray, columns: tuple[str, ...], *, points: bool) -> dict:
    """Columns of the points at ``flat_index`` of a piece (index into groups × layouts × batches)."""
    shape = p["shape"]
    per_group = shape[1] * shape[2]
    gi, rest = np.divmod(flat_index, per_group)
    li, bi = np.divmod(rest, shape[2])
    out = p["out"]

    def take(name):
        return np.broadcast_to(np.asarray(out[name], dtype=float), shape).reshape(-1)[flat_index]

    cols: dict = {"draw": task.draws[p["d"][gi]].astype(np.int64), "layout": np.asarray(task.layouts["layout"])[li]}
    for name in LAYOUT_COLUMNS:
        cols[name] = np.asarray(task.layouts[name], dtype=float)[li]
    if points:
        cols["expert_parallel"] = np.asarray(task.layouts["expert_parallel"], dtype=float)[li]
        cols["pool"] = np.full(flat_index.size, "decode")
    cols["batch_per_replica"] = task.batch[bi]
    cols["context_tokens"] = task.context_tokens[p["c"][gi]]
    for name in columns:
        cols[name] = take(name)
    cols["bound"] = _bound(out, shape, flat_index)
    cols["efficiency_basis"] = np.full(flat_index.size, task.efficiency_basis)
    return cols


def _frontier_mask(p: dict) -> np.ndarray:
    """The piece's frontier points, flat (computed once a piece, for both tables)."""
    if "frontier" not in p:
        groups = p["shape"][0]
        speed = np.broadcast_to(p["out"]["tokens_per_s_per_user"], p["shape"]).reshape(groups, -1)
        throughput = np.broadcast_to(p["out"]["tokens_per_s_per_chip"], p["shape"]).reshape(groups, -1)
        p["frontier"] = block_frontier(speed, throughput, p["eligible"].reshape(groups, -1)).reshape(-1)
    return p["frontier"]


def _frontier(task: PartitionTask, p: dict) -> dict:
    groups, n_layouts, n_batch = p["shape"]
    flat = np.flatnonzero(_frontier_mask(p))
    cols = _rows(task, p, flat, FRONTIER_TERMS, points=False)
    order = np.lexsort((cols["tokens_per_s_per_user"], p["c"][flat // (n_layouts * n_batch)], cols["draw"]))
    return {k: v[order] for k, v in cols.items()}


def _best_of_replica_size(task: PartitionTask, p: dict) -> np.ndarray:
    """Flat mask: per group × replica size × batch, the lowest-$/MTok fitting grid layout (first on ties), as the
    build's ``serving_layouts.best_of_replica_size`` column marks it. One vectorised argmin per replica size (a dozen
    or so)."""
    groups, n_layouts, n_batch = p["shape"]
    grid = np.asarray(task.layouts["layout"]) == "grid"
    cost = np.where(p["valid"] & grid[None, :, None], np.broadcast_to(p["out"]["usd_per_mtok"], p["shape"]), np.inf)
    mark = np.zeros(p["shape"], dtype=bool)
    replica = np.asarray(task.layouts["replica_chips"], dtype=float)
    g, b = np.meshgrid(np.arange(groups), np.arange(n_batch), indexing="ij")
    for size in np.unique(replica[grid]):
        members = np.flatnonzero(grid & (replica == size))
        sub = cost[:, members, :]
        best = np.argmin(sub, axis=1)
        found = np.isfinite(np.take_along_axis(sub, best[:, None, :], axis=1)[:, 0, :])
        mark[g[found], members[best[found]], b[found]] = True
    return mark.reshape(-1)


def _argmin_flat(p: dict) -> np.ndarray:
    groups = p["shape"][0]
    cost = np.broadcast_to(p["out"]["usd_per_mtok"], p["shape"]).reshape(groups, -1)
    best = block_argmin(cost, (p["eligible"] & p["meets"]).reshape(groups, -1))
    found = best >= 0
    return (np.flatnonzero(found) * cost.shape[1] + best[found]).astype(np.int64)


def _point_rows(task: PartitionTask, p: dict, *, only_argmin: bool) -> dict:
    cheapest = _argmin_flat(p)
    flat = cheapest if only_argmin else np.flatnonzero(p["valid"].reshape(-1))
    cols = _rows(task, p, flat, POINT_TERMS + ("tokens_per_s_per_user",), points=True)
    cols["prompt_tokens"] = np.full(flat.size, np.nan)
    cols["ttft_s"] = np.full(flat.size, np.nan)
    cols["fits"] = np.ones(flat.size, dtype=bool)
    cols["meets_target"] = p["meets"].reshape(-1)[flat]
    cols["cheapest_meeting_target"] = np.isin(flat, cheapest, assume_unique=True)
    cols["on_frontier"] = _frontier_mask(p)[flat]
    cols["best_of_replica_size"] = _best_of_replica_size(task, p)[flat]
    return cols


POINT_COLUMNS = (
    "draw",
    "pool",
    "layout",
    *LAYOUT_COLUMNS,
    "expert_parallel",
    "batch_per_replica",
    "context_tokens",
    "prompt_tokens",
    *POINT_TERMS,
    "tokens_per_s_per_user",
    "ttft_s",
    "bound",
    "fits",
    "efficiency_basis",
    "meets_target",
    "cheapest_meeting_target",
    "on_frontier",
    "best_of_replica_size",
)
FRONTIER_COLUMNS = (
    "draw",
    "layout",
    *LAYOUT_COLUMNS,
    "batch_per_replica",
    "context_tokens",
    *FRONTIER_TERMS,
    "bound",
    "efficiency_basis",
)
SCHEMAS = {
    "serving_layouts": POINT_COLUMNS,
    "serving_frontier": FRONTIER_COLUMNS,
}
"""Columns of each file, in order (``model``, ``chip``, ``number_format`` and ``draw_block`` come from the path)."""


def _arrow(cols: dict, names: tuple[str, ...]) -> pa.Table:
    arrays = []
    for name in names:
        values = cols[name]
        if values.dtype.kind in "US":
            arrays.append(pa.array(values.astype(object), type=pa.string()))
        elif values.dtype.kind == "f":
            arrays.append(pa.array(values, type=pa.float64(), from_pandas=True))  # NaN -> null
        else:
            arrays.append(pa.array(values))
    return pa.Table.from_arrays(arrays, names=list(names))


class _Writer:
    """One Parquet file in memory, written a row group at a time (a piece's rows are never kept after)."""

    def __init__(self, names: tuple[str, ...]):
        self.names, self.sink, self.writer, self.rows = names, pa.BufferOutputStream(), None, 0

    def write(self, cols: dict) -> None:
        table = _arrow(cols, self.names)
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.sink, table.schema, **PARQUET_OPTIONS)
        if table.num_rows or self.rows == 0:
            self.writer.write_table(table)
        self.rows += table.num_rows

    def close(self) -> bytes:
        self.writer.close()
        return self.sink.getvalue().to_pybytes()


def peak_rss_bytes() -> int:
    """This process's peak resident memory: ``VmHWM`` (Linux; fresh after exec, unlike ``ru_maxrss``, which a
    spawned worker inherits from its parent), else ``ru_maxrss``."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_partition(task: PartitionTask) -> PartitionResult:
    """Evaluate one partition piece by piece and return its kept tables as Parquet bytes (see the module docstring)."""
    start = time.perf_counter()
    tables = []
    if "frontier" in task.keep:
        tables.append("serving_frontier")
    if "points" in task.keep or "argmin" in task.keep:
        tables.append("serving_layouts")
    writers = {t: _Writer(SCHEMAS[t]) for t in tables}
    n_groups = task.draws.size * task.context_tokens.size
    step = groups_per_piece(task)
    pieces = 0
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for g0 in range(0, n_groups, step):
            p = _piece(task, g0, min(g0 + step, n_groups))
            if "serving_frontier" in writers:
                writers["serving_frontier"].write(_frontier(task, p))
            if "serving_layouts" in writers:
                writers["serving_layouts"].write(_point_rows(task, p, only_argmin="points" not in task.keep))
            pieces += 1
            del p
    files = {t: w.close() for t, w in writers.items()}
    return PartitionResult(
        key=task.key,
        files=files,
        rows={t: w.rows for t, w in writers.items()},
        points=task.points,
        pieces=pieces,
        seconds=time.perf_counter() - start,
        peak_rss_bytes=peak_rss_bytes(),
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
