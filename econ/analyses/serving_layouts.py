"""``serving_layouts`` and ``serving_frontier``: the layout search of every model × chip × format, per pool.

The grid of :func:`econ.physics.layout_search.layout_grid` plus the named ``layouts`` of each pool, evaluated by
:func:`econ.physics.deployment.decode_terms` (at the traffic mix's mean decode context) and
:func:`~econ.physics.deployment.prefill_terms` (the mix's mean prompt, the cached share read, the rest
computed), a few model × chip × format cases at a time, in the formats the scenario's ``weight_format`` lists, on
log-spaced batches (decode 1 … 16,384, prefill 1 … 64 in powers of two). Each chunk computes its answers from the
whole grid and keeps only them plus a thinned grid for charts: ``cheapest_meeting_target`` (per model × chip ×
format × pool, the lowest $/MTok among the points that meet the scenario's per-user speed (decode) or time to
first token (prefill)), the decode points of ``serving_frontier`` (those no other point of the same model × chip ×
format beats on both speed per user and throughput per chip), and at every other batch (:data:`CHART_STRIDE`) the
cheapest grid layout of each replica size and every named layout. Points whose weights and cache do not fit are
never stored; the whole grid of any case is one ``econ sweep`` with ``keep = ["points"]`` away. Idealised named
layouts (``layouts.idealised``: the lecture's everything-split rack) are stored to compare but never chosen and not
on the frontier. Times are at scenario ``calibrated``'s efficiencies (what real systems achieve, per architecture
family); the frontier is also given at the roofline bound (scenario ``base``, every efficiency 1), labelled by
``efficiency_basis``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_scenario import predictive
from econ.analyses.serving_layout_columns import FRONTIER, KEYS, LAYOUTS
from econ.analyses.traffic import traffic_mix
from econ.physics import deployment, layout_search
from econ.physics.layout_search import pareto_optimal

NAME = "serving_layouts"
INPUTS = ("model_derived", "hardware", "hardware_derived", "layouts", "scenarios", "calibration_parameters")
TABLES = (LAYOUTS, FRONTIER)

DECODE_BATCH = 2.0 ** np.arange(0, 15)  # 1 … 16,384 sequences per replica
PREFILL_BATCH = 2.0 ** np.arange(0, 7)  # 1 … 64 prompts per pass
CASES_PER_CHUNK = 256
CHART_STRIDE = 2
"""The thinned grid keeps every other batch of the log-spaced grid (decode 1, 4, 16 … 16,384; prefill 1, 4, 16, 64)."""
TERMS = deployment.STEP_TERMS
ROW_KEYS = (*(c.name for c in KEYS if c.name != "pool"), "expert_parallel")
"""What a stored point keeps of its case and layout row (the pool is the pass's own)."""


@dataclass
class Points:
    """The fitting points of every row (case × layout) at every batch of a pool, as the step terms' arrays: the
    answers are chosen on a few flat columns, and a frame is built only for the points kept (:meth:`frame`)."""

    rows: pl.DataFrame
    pool: str
    shape: tuple[int, int]
    out: dict
    batch: np.ndarray
    context: np.ndarray
    prompt: float
    meets: np.ndarray
    keep: np.ndarray  # flat indices (row × batch) of the points that fit
    group_base: int

    def flat(self, x, at: np.ndarray | None = None, dtype=float) -> np.ndarray:
        """``x`` broadcast over rows × batches, at the fitting points (or those of them at positions ``at``)."""
        x = np.asarray(x, dtype=dtype)
        if x.shape == self.shape:
            return x.ravel()[self.keep if at is None else self.keep[at]]
        x = np.broadcast_to(x, self.shape)  # a value per row or per batch: read it there, not over the whole grid
        return x[self.index, self.batch_index] if at is None else x[self.index[at], self.batch_index[at]]

    @cached_property
    def index(self) -> np.ndarray:
        """Each fitting point's row."""
        return self.keep // self.shape[1]

    @cached_property
    def batch_index(self) -> np.ndarray:
        """Each fitting point's place on the batch axis."""
        return self.keep % self.shape[1]

    def row_values(self, name: str) -> np.ndarray:
        """Column ``name`` of each fitting point's row."""
        return self.rows[name].to_numpy()[self.index]

    def on_grid(self) -> np.ndarray:
        """Whether each fitting point's layout is the grid's (not a named one): compared on the rows, not as ~150,000
        Python strings."""
        return (self.rows["layout"] == "grid").fill_null(False).to_numpy()[self.index]

    def row_codes(self, name: str) -> np.ndarray:
        """Column ``name`` of each fitting point's row as codes (its place among the rows' distinct values)."""
        return np.unique(self.rows[name].to_numpy(), return_inverse=True)[1].reshape(-1)[self.index]

    def group(self) -> np.ndarray:
        return self.group_base + self.row_values("_case")

    def frame(self, at: np.ndarray | None = None) -> pl.DataFrame:
        """The fitting points (or those at positions ``at``) as a frame: keys, step terms, targets, ``_group``."""
        index = self.index if at is None else self.index[at]
        out, size, decode = self.out, index.size, self.pool == "decode"

        def flat(x):
            return self.flat(x, at)

        keys = self.rows.select(*ROW_KEYS)[index]
        compute_bound = self.flat(out["compute_bound"], at, bool)
        comm_over_memory = flat(out["comm_time_s"]) > flat(out["memory_time_s"])
        bound = inputs.bound_series("bound", compute_bound, comm_over_memory)
        speed = flat(out["tokens_per_s_per_user"]) if decode else np.full(size, np.nan)
        ttft = flat(out["ttft_s"]) if not decode else np.full(size, np.nan)
        return keys.with_columns(
            pl.lit(self.pool).alias("pool"),
            pl.Series("batch_per_replica", flat(self.batch)),
            pl.Series("context_tokens", flat(self.context)),
            pl.Series("prompt_tokens", np.full(size, self.prompt), nan_to_null=True),
            *(pl.Series(k, flat(out[k])) for k in TERMS),
            pl.Series("tokens_per_s_per_user", speed, nan_to_null=True),
            pl.Series("ttft_s", ttft, nan_to_null=True),
            bound,
            pl.Series("fits", np.ones(size, dtype=bool)),
            pl.Series("meets_target", self.flat(self.meets, at, bool)),
            pl.Series("_group", self.group_base + self.rows["_case"].to_numpy()[index]),
            pl.Series("_idealised", self.rows["idealised"].to_numpy()[index]),
        )


def points(rows: pl.DataFrame, s, pool: str, batch: np.ndarray, group_base: int = 0) -> Points:
    """Every row (case × layout) at every batch of ``batch``: the pool's step terms and which points fit. Inputs
    broadcast as (rows, 1) against (1, batches); ``group`` numbers the model × chip × format cases."""
    t = traffic_mix(s)
    n, m = rows.height, len(batch)

    def col(values):
        return np.asarray(values, dtype=float)[:, None]

    model = {k: col(v) for k, v in inputs.model_arrays(rows).items()}
    chip = {k: col(v) for k, v in inputs.chip_arrays(rows, s.kv_cache_format).items()}
    layout = {k: rows[k].to_numpy()[:, None] for k in (*deployment.LAYOUT_KEYS, "overlap_comm") if k in rows.columns}
    run = inputs.settings(
        s,
        pool,
        col(rows["weight_bytes_per_param"].to_numpy()),
        rows["architecture"].to_numpy()[:, None],
        rows["attention"].to_numpy()[:, None],
    )
    scale = inputs.cache_scale(s)
    b = np.asarray(batch, dtype=float)[None, :]
    if pool == "decode":
        context = np.full((1, 1), t.decode_context_tokens)
        out = deployment.decode_terms(model, chip, layout, b, context, kv_scale=scale, settings=run)
        meets = out["tokens_per_s_per_user"] >= s.user_speed_target_tokens_per_s
        prompt = np.nan
    else:
        cached = t.mean_prompt_tokens * s.prompt_cache_hit_frac
        prompt = t.mean_prompt_tokens - cached
        context = np.full((1, 1), t.mean_prompt_tokens)
        out = deployment.prefill_terms(model, chip, layout, b, prompt, cached, kv_scale=scale, settings=run)
        meets = out["ttft_s"] <= s.ttft_target_s
    keep = np.flatnonzero((out["fits"] & np.isfinite(out["step_time_s"])).ravel())
    return Points(rows, pool, (n, m), out, b, context, prompt, meets, keep, group_base)


def evaluate(rows: pl.DataFrame, s, pool: str, batch: np.ndarray, group_base: int = 0) -> pl.DataFrame:
    """Every fitting point of :func:`points`, as a frame."""
    return points(rows, s, pool, batch, group_base).frame()


def _frontier_mask(eligible, group, speed, throughput) -> np.ndarray:
    optimal = np.zeros(eligible.size, dtype=bool)
    if eligible.any():
        optimal[eligible] = pareto_optimal(group[eligible], speed[eligible], throughput[eligible])
    return optimal


def _points_on_frontier(p: Points) -> np.ndarray:
    if p.pool != "decode":
        return np.zeros(p.keep.size, dtype=bool)
    speed, throughput = p.flat(p.out["tokens_per_s_per_user"]), p.flat(p.out["tokens_per_s_per_chip"])
    return _frontier_mask(~p.row_values("idealised"), p.group(), speed, throughput)


def _points_best_of_replica_size(p: Points, group: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """The lowest-$/MTok grid layout of each model × chip × format × pool × replica size × batch among :class:`Points`
    (``serving_layouts.best_of_replica_size``; their batch numbered by its place in the grid)."""
    return _cheapest_per_cell(group, p.row_codes("replica_chips"), p.batch_index, cost, p.on_grid())


def _cheapest_per_cell(group, size, batch, cost, grid) -> np.ndarray:
    """The cheapest grid point of each cell group × replica size × batch, the cells numbered from the three codes (non-
    negative integers) in one integer."""
    if not group.size:
        return np.zeros(0, dtype=bool)
    group = group.astype(np.int64) - group.min()  # numbered from 0: the cells stay few enough for a scatter
    cell = (group * (size.max() + 1) + size) * (batch.max() + 1) + batch
    return layout_search.cheapest_meeting_target(cell, cost, grid)


def thinned(p: Points, basis: str, front: np.ndarray) -> pl.DataFrame:
    """The answers (cheapest meeting the target, frontier) and the chart grid: at every :data:`CHART_STRIDE`-th batch,
    the cheapest grid layout of each replica size and every named layout."""
    group, cost = p.group(), p.flat(p.out["usd_per_mtok"])
    meets = p.flat(p.meets, dtype=bool)
    cheapest = layout_search.cheapest_meeting_target(group, cost, meets & ~p.row_values("idealised"))
    best = _points_best_of_replica_size(p, group, cost)
    chart = np.isin(p.flat(p.batch), p.batch[0, ::CHART_STRIDE])
    named = ~p.on_grid()
    at = np.flatnonzero(cheapest | front | (chart & (best | named)))
    return p.frame(at).with_columns(
        pl.Series("cheapest_meeting_target", cheapest[at]),
        pl.Series("on_frontier", front[at]),
        pl.Series("best_of_replica_size", best[at]),
        pl.lit(basis).alias("efficiency_basis"),
    )


def frontier(p: Points, basis: str, front: np.ndarray) -> pl.DataFrame:
    """The decode points on their model × chip × format's frontier of throughput per chip against speed per user."""
    if not p.keep.size:
        return FRONTIER.empty_frame()
    return (
        p.frame(np.flatnonzero(front))
        .with_columns(pl.lit(basis).alias("efficiency_basis"))
        .select(FRONTIER.names)
        .sort("efficiency_basis", "model", "chip", "number_format", "tokens_per_s_per_user")
    )


def chunks(ctx, s, bound) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(serving_layouts rows, serving_frontier rows) a few cases at a time: rows at ``s``'s efficiencies, the
    frontier at those and at ``bound``'s (the roofline); a model's re-releases get copies of its rows
    (:func:`~econ.analyses.deployment_inputs.one_per_architecture`)."""
    formats = list(s.alternatives("weight_format"))
    cases, computed_as = inputs.one_per_architecture(
        ctx.query(inputs.CASES_SQL).filter(pl.col("number_format").is_in(formats))
    )
    named = ctx.query("select * from layouts order by layout")
    max_chips = int(s.max_replica_chips)
    cases = cases.with_columns(pl.int_range(pl.len()).alias("_case"))
    for start in range(0, cases.height, CASES_PER_CHUNK):
        part = cases.slice(start, CASES_PER_CHUNK)
        rows = inputs.layouts_for(part, named, "decode", max_chips)
        decode = points(rows, s, "decode", DECODE_BATCH)
        prefill = points(
            inputs.layouts_for(part, named, "prefill", max_chips), s, "prefill", PREFILL_BATCH, cases.height
        )
        front = _points_on_frontier(decode)
        fronts = [frontier(decode, s.efficiency_basis, front)]
        if bound is not None:
            roofline = points(rows, bound, "decode", DECODE_BATCH)
            fronts.append(frontier(roofline, bound.efficiency_basis, _points_on_frontier(roofline)))
        kept = pl.concat(
            [
                thinned(decode, s.efficiency_basis, front),
                thinned(prefill, s.efficiency_basis, _points_on_frontier(prefill)),
            ]
        )
        yield (
            inputs.with_twins(kept.select(LAYOUTS.names), computed_as),
            inputs.with_twins(pl.concat(fronts), computed_as),
        )


def run(ctx) -> None:
    s, bound = predictive(ctx.scenarios_with_calibrated)
    frontiers = []

    def layouts():
        for rows, front in chunks(ctx, s, bound):
            frontiers.append(front)
            yield rows

    ctx.write(LAYOUTS, layouts())
    ctx.write(FRONTIER, pl.concat(frontiers) if frontiers else FRONTIER.empty_frame())
