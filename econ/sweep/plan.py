"""A spec resolved against the built database: the draws, and one :class:`PartitionTask` per partition.

A partition is one model × chip × number format × draw block. Its task carries the model's ``model_derived`` row,
the chip in that format (``hardware_derived``), the layouts of its chip's scale-up domain (the search grid and/or
the named ``layouts`` of the decode pool, :func:`econ.analyses.deployment_inputs.layouts_for`), the batch and
context axes (:func:`econ.physics.reductions.log_grid`) and the run settings of each draw of the block.

Draw 0 holds the scenario's values; draws 1…n−1 vary the spec's ``vary`` assumptions over the scenario's low/high
ranges (:func:`econ.fits.propagate.draw`: log-uniform over a range wider than 3×, else uniform; the KV-cache format
uniformly over its alternatives; ``speculative_tokens`` rounded to whole tokens). All draws are made once, from the
seed, before any partition runs, so a draw's values do not depend on the draw block it falls in.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import quote

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.scenario import EFFICIENCY_FIELDS, Scenario
from econ.errors import EconError
from econ.fits.propagate import draw as monte_carlo
from econ.formats import kv_scale
from econ.physics import deployment
from econ.physics.reductions import log_grid
from econ.sweep.partition import PartitionTask, bytes_per_point
from econ.sweep.spec import VARIABLE, SweepSpec

MAX_POINTS = 10**11
"""The largest sweep econ plans: 10^11 points is 100x the 10^9-point benchmark (233 s on two cores), checked before
the draws are made, so a runaway spec is refused at once instead of planned for minutes."""
WHOLE = ("speculative_tokens",)
"""Assumptions that take whole values: a drawn value is rounded."""


@dataclass(frozen=True)
class Plan:
    """The resolved sweep: its draws (one row per draw), the cases and how to make each partition's task."""

    spec: SweepSpec
    scenario: Scenario
    draws: pl.DataFrame
    cases: pl.DataFrame
    layouts: pl.DataFrame
    batch: np.ndarray
    context_tokens: np.ndarray
    max_points: int

    _arrays: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        """Everything per case as numpy once (a task is then a few slices, not a query of the frames)."""
        by_case = {k[0]: frame for k, frame in self.layouts.partition_by("_case", as_dict=True).items()}
        self._arrays.update(
            model=inputs.model_arrays(self.cases),
            chip=inputs.chip_arrays(self.cases),
            key=list(zip(self.cases["model"], self.cases["chip"], self.cases["number_format"])),
            b_w=self.cases["weight_bytes_per_param"].cast(pl.Float64).to_numpy(),
            architecture=self.cases["architecture"].to_list(),
            attention=self.cases["attention"].to_list(),
            layouts={case: _layout_arrays(frame) for case, frame in by_case.items()},
            draws={c: self.draws[c].to_numpy() for c in self.draws.columns},
        )

    @property
    def blocks(self) -> int:
        return -(-self.draws.height // self.spec.draws_per_partition)

    @property
    def partitions(self) -> int:
        return self.cases.height * self.blocks

    def points(self) -> int:
        """Points of the whole sweep."""
        return self.layouts.height * self.batch.size * self.context_tokens.size * self.draws.height

    def tasks(self) -> Iterator[PartitionTask]:
        """Every partition's task, in the sweep's order (case by case, draw block by draw block)."""
        for case in range(self.cases.height):
            for block in range(self.blocks):
                yield self.task(case, block)

    def task(self, case: int, block: int) -> PartitionTask:
        a = self._arrays
        per = self.spec.draws_per_partition
        draws = {k: v[block * per : (block + 1) * per] for k, v in a["draws"].items()}
        model = {k: float(v[case]) for k, v in a["model"].items()}
        chip = {k: float(v[case]) for k, v in a["chip"].items()}
        drawn = {n: draws[n] for n in VARIABLE if n in draws and n != "kv_cache_format"}
        varied = set(drawn) & set(EFFICIENCY_FIELDS)
        if varied:  # a drawn efficiency applies to every family and kind alike; the others keep each group's value
            for by_group in ("efficiencies_by_architecture", "efficiencies_by_attention"):
                groups = getattr(self.scenario, by_group)
                drawn[by_group] = {g: {f: v for f, v in fs.items() if f not in varied} for g, fs in groups.items()}
        scenario = dataclasses.replace(self.scenario, **drawn)  # arrays in the fields: one settings dict per block
        settings = {
            k: (np.asarray(v, dtype=float) if np.ndim(v) else float(v))
            for k, v in inputs.settings(
                scenario, "decode", float(a["b_w"][case]), a["architecture"][case], a["attention"][case]
            ).items()
        }
        model_name, chip_name, fmt = a["key"][case]
        layouts = a["layouts"][case]
        return PartitionTask(
            key=(str(model_name), str(chip_name), str(fmt), block),
            model=model,
            chip=chip,
            layouts=layouts,
            batch=self.batch,
            context_tokens=self.context_tokens,
            draws=draws["draw"].astype(np.int64),
            settings=settings,
            kv_scale=draws["kv_scale"],
            speed_target_tokens_per_s=draws["user_speed_target_tokens_per_s"],
            keep=self.spec.keep,
            max_points=self.max_points,
            efficiency_basis=self.scenario.efficiency_basis,
        )


def _layout_arrays(frame: pl.DataFrame) -> dict:
    out = {k: frame[k].to_numpy() for k in deployment.LAYOUT_KEYS}
    out.update(
        layout=frame["layout"].to_numpy().astype(str),
        replica_chips=frame["replica_chips"].to_numpy(),
        expert_parallel=frame["expert_parallel"].to_numpy(),
        idealised=frame["idealised"].to_numpy(),
    )
    return out


def partition_path(key: tuple[str, str, str, int]) -> str:
    """The Hive path of a partition below a table's folder (values percent-encoded; DuckDB decodes them)."""
    model, chip, fmt, block = key
    parts = (("model", model), ("chip", chip), ("number_format", fmt))
    return "/".join(f"{name}={quote(value, safe='')}" for name, value in parts) + f"/draw_block={block}"


def task_digest(task: PartitionTask) -> str:
    """SHA-256 of everything a task holds (what its output depends on besides the code)."""
    h = hashlib.sha256()

    def feed(value, name=""):
        h.update(name.encode() + b"\0")
        if isinstance(value, dict):
            for k in sorted(value):
                feed(value[k], f"{name}.{k}")
        elif isinstance(value, tuple | list):
            for i, v in enumerate(value):
                feed(v, f"{name}[{i}]")
        elif isinstance(value, np.ndarray):
            h.update(f"{value.dtype.str}{value.shape}".encode())
            h.update(
                value.astype(str).tobytes() if value.dtype.kind in "OUS" else np.ascontiguousarray(value).tobytes()
            )
        else:
            h.update(repr(value).encode())

    feed({f.name: getattr(task, f.name) for f in dataclasses.fields(task)})
    return h.hexdigest()


def make_draws(spec: SweepSpec, s: Scenario) -> pl.DataFrame:
    """One row per draw: its number, the value of every varied assumption, the KV scale and the speed target."""
    vary = spec.vary if spec.vary is not None else tuple(n for n in VARIABLE if _varies(s, n))
    numeric = [n for n in vary if n != "kv_cache_format"]
    n = spec.draws
    columns: dict = {"draw": np.arange(n, dtype=np.int64)}
    ranges = {name: s.range(name) for name in numeric}
    formats = s.alternatives("kv_cache_format")
    if "kv_cache_format" in vary:
        ranges["kv_cache_format_u"] = (0.0, 1.0)
    mc = monte_carlo(ranges, n - 1, seed=spec.seed) if n > 1 else {k: np.zeros(0) for k in ranges}
    for name in numeric:
        values = np.concatenate([[float(getattr(s, name))], mc[name]])
        columns[name] = np.round(values) if name in WHOLE else values
    if "kv_cache_format" in vary:
        index = np.minimum((mc["kv_cache_format_u"] * len(formats)).astype(int), len(formats) - 1)
        chosen = np.concatenate([[s.kv_cache_format], np.asarray(formats, dtype=object)[index]])
    else:
        chosen = np.full(n, s.kv_cache_format, dtype=object)
    columns["kv_cache_format"] = chosen.astype(str)
    columns["kv_scale"] = np.array([kv_scale(f) for f in chosen])
    if "user_speed_target_tokens_per_s" not in columns:
        columns["user_speed_target_tokens_per_s"] = np.full(n, s.user_speed_target_tokens_per_s)
    return pl.DataFrame(columns)


def _varies(s: Scenario, name: str) -> bool:
    if name == "kv_cache_format":
        return len(s.alternatives(name)) > 1
    low, high = s.range(name)
    return low < high


def _pick(frame: pl.DataFrame, column: str, wanted, what: str, spec: SweepSpec, key: str) -> pl.DataFrame:
    if wanted is None:
        return frame
    known = set(frame[column].to_list())
    missing = [w for w in wanted if w not in known]
    if missing:
        shown = ", ".join(sorted(known)[:12]) + (", …" if len(known) > 12 else "")
        raise EconError(
            f"{spec.path}: select.{key}: {missing[0]!r} is not a {what} the database can sweep",
            f"use one of {shown}",
        )
    return frame.filter(pl.col(column).is_in(list(wanted)))


def make_plan(spec: SweepSpec, scenarios: dict[str, Scenario], cases: pl.DataFrame, named: pl.DataFrame) -> Plan:
    """Resolve ``spec`` against the database's scenarios, its sweepable cases (``deployment_inputs.CASES_SQL``)
    and its named layouts."""
    if spec.scenario not in scenarios:
        raise EconError(
            f"{spec.path}: scenario {spec.scenario!r} is not in the database",
            f"use one of {', '.join(sorted(scenarios))}",
        )
    s = scenarios[spec.scenario]
    formats = spec.formats if spec.formats is not None else s.alternatives("weight_format")
    cases = _pick(cases, "model", spec.models, "model", spec, "models")
    cases = _pick(cases, "chip", spec.chips, "chip", spec, "chips")
    if spec.formats is not None:
        cases = _pick(cases, "number_format", spec.formats, "number format", spec, "formats")
    cases = cases.filter(pl.col("number_format").is_in(list(formats)))
    if not cases.height:
        raise EconError(
            f"{spec.path}: no model × chip × format is left to sweep",
            "the chips have no peak in the formats chosen: widen select.formats or select.chips",
        )
    cases = cases.sort("model", "chip", "format_order").with_columns(pl.int_range(pl.len()).alias("_case"))
    max_chips = spec.max_replica_chips or int(s.max_replica_chips)
    rows = inputs.layouts_for(cases, named, "decode", max_chips)
    if spec.layouts == "grid":
        rows = rows.filter(pl.col("layout") == "grid")
    elif spec.layouts == "named":
        rows = rows.filter(pl.col("layout") != "grid")
    rows = rows.sort("_case", "layout", "replica_chips", "tensor_parallel", "pipeline_parallel")
    have = set(rows["_case"].to_list())
    if len(have) < cases.height:
        lost = cases.filter(~pl.col("_case").is_in(list(have)))
        raise EconError(
            f"{spec.path}: {lost['model'][0]} on {lost['chip'][0]} has no {spec.layouts} layout",
            'use select.layouts = "grid" or "all"',
        )
    batch = log_grid(spec.batch.min, spec.batch.max, spec.batch.points)
    context = log_grid(spec.context_tokens.min, spec.context_tokens.max, spec.context_tokens.points)
    points = rows.height * batch.size * context.size * spec.draws
    if points > MAX_POINTS:
        raise EconError(
            f"{spec.path}: the sweep is {points:.3g} points ({rows.height:,} layouts × {batch.size} batches × "
            f"{context.size} contexts × {spec.draws:,} draws), more than the {MAX_POINTS:.0e} points econ sweep runs",
            "give fewer draws (draws.count), grid points or layouts (select.layouts, max_replica_chips), or split it "
            "into sweeps of fewer models or chips",
        )
    per_point = bytes_per_point(spec.keep)
    max_points = max(1, int(spec.memory_per_worker_mb * 1e6 // per_point))
    widest = int(rows.group_by("_case").len()["len"].max()) * batch.size
    if widest > max_points:
        raise EconError(
            f"{spec.path}: one draw × context of a partition is {widest:,} layouts × batches, more than "
            f"limits.memory_per_worker_mb = {spec.memory_per_worker_mb:g} holds ({max_points:,} points)",
            f"raise limits.memory_per_worker_mb to {widest * per_point / 1e6:.0f} or give grid.batch fewer points",
        )
    return Plan(spec, s, make_draws(spec, s), cases, rows, batch, context, max_points)
