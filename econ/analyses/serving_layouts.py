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

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_scenario import predictive
from econ.analyses.serving_layout_columns import FRONTIER, LAYOUTS
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


def evaluate(rows: pl.DataFrame, s, pool: str, batch: np.ndarray, group_base: int = 0) -> pl.DataFrame:
    """Every row (case × layout) at every batch of ``batch``: the pool's step terms, as a frame of the points that
    fit. Inputs broadcast as (rows, 1) against (1, batches); ``group`` numbers the model × chip × format cases."""
    t = traffic_mix(s)
    n, m = rows.height, len(batch)

    def col(values):
        return np.asarray(values, dtype=float)[:, None]

    model = {k: col(v) for k, v in inputs.model_arrays(rows).items()}
    chip = {k: col(v) for k, v in inputs.chip_arrays(rows, s.kv_cache_format).items()}
    layout = {k: rows[k].to_numpy()[:, None] for k in (*deployment.LAYOUT_KEYS, "overlap_comm") if k in rows.columns}
    run = inputs.settings(
        s, pool, col(rows["weight_bytes_per_param"].to_numpy()), rows["architecture"].to_numpy()[:, None]
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
    shape = (n, m)
    fits = (out["fits"] & np.isfinite(out["step_time_s"])).ravel()
    keep = np.flatnonzero(fits)
    index = keep // m

    def flat(x):
        return np.broadcast_to(np.asarray(x, dtype=float), shape).ravel()[keep]

    keys = rows.select(
        "model",
        "chip",
        "number_format",
        "layout",
        "replica_chips",
        "tensor_parallel",
        "attention_data_parallel",
        "pipeline_parallel",
        "expert_parallel",
    )[index]
    compute_bound = np.broadcast_to(out["compute_bound"], shape).ravel()[keep]
    comm_over_memory = flat(out["comm_time_s"]) > flat(out["memory_time_s"])
    bound = np.where(compute_bound, "compute", np.where(comm_over_memory, "communication", "memory"))
    speed = flat(out["tokens_per_s_per_user"]) if pool == "decode" else np.full(keep.size, np.nan)
    ttft = flat(out["ttft_s"]) if pool == "prefill" else np.full(keep.size, np.nan)
    return keys.with_columns(
        pl.lit(pool).alias("pool"),
        pl.Series("batch_per_replica", flat(b)),
        pl.Series("context_tokens", flat(context)),
        pl.Series("prompt_tokens", np.full(keep.size, prompt), nan_to_null=True),
        *(pl.Series(k, flat(out[k])) for k in TERMS),
        pl.Series("tokens_per_s_per_user", speed, nan_to_null=True),
        pl.Series("ttft_s", ttft, nan_to_null=True),
        pl.Series("bound", bound),
        pl.Series("fits", np.ones(keep.size, dtype=bool)),
        pl.Series("meets_target", np.broadcast_to(meets, shape).ravel()[keep]),
        pl.Series("_group", group_base + rows["_case"].to_numpy()[index]),
        pl.Series("_idealised", rows["idealised"].to_numpy()[index]),
    )


def marked(frame: pl.DataFrame) -> pl.DataFrame:
    """``cheapest_meeting_target`` per model × chip × format × pool (``_group``)."""
    eligible = frame["meets_target"].to_numpy() & ~frame["_idealised"].to_numpy()
    mark = layout_search.cheapest_meeting_target(frame["_group"].to_numpy(), frame["usd_per_mtok"].to_numpy(), eligible)
    return frame.with_columns(pl.Series("cheapest_meeting_target", mark))


def on_frontier(frame: pl.DataFrame) -> np.ndarray:
    """Decode points on their model × chip × format's frontier (idealised layouts and prefill points never are)."""
    eligible = (frame["pool"] == "decode").to_numpy() & ~frame["_idealised"].to_numpy()
    optimal = np.zeros(frame.height, dtype=bool)
    if eligible.any():
        optimal[eligible] = pareto_optimal(
            frame["_group"].to_numpy()[eligible],
            frame["tokens_per_s_per_user"].to_numpy()[eligible],
            frame["tokens_per_s_per_chip"].to_numpy()[eligible],
        )
    return optimal


def best_of_replica_size(frame: pl.DataFrame) -> np.ndarray:
    """The lowest-$/MTok grid layout of each model × chip × format × pool × replica size × batch."""
    grid = (frame["layout"] == "grid").to_numpy()
    keys = frame.select("_group", "replica_chips", "batch_per_replica").with_columns(
        pl.struct(pl.all()).rank("dense").alias("_cell")
    )["_cell"]
    return layout_search.cheapest_meeting_target(keys.to_numpy(), frame["usd_per_mtok"].to_numpy(), grid)


def thinned(frame: pl.DataFrame, batch: np.ndarray) -> pl.DataFrame:
    """The answers (cheapest meeting the target, frontier) and the chart grid: at every :data:`CHART_STRIDE`-th batch,
    the cheapest grid layout of each replica size and every named layout."""
    chart = frame["batch_per_replica"].is_in(list(batch[::CHART_STRIDE])).to_numpy()
    front, best = on_frontier(frame), best_of_replica_size(frame)
    named = (frame["layout"] != "grid").to_numpy()
    keep = frame["cheapest_meeting_target"].to_numpy() | front | (chart & (best | named))
    return frame.with_columns(pl.Series("on_frontier", front), pl.Series("best_of_replica_size", best)).filter(
        pl.Series(keep)
    )


def frontier(decode: pl.DataFrame, basis: str) -> pl.DataFrame:
    """The decode points on their model × chip × format's frontier of throughput per chip against speed per user."""
    decode = decode.with_columns(pl.lit(basis).alias("efficiency_basis"))
    if not decode.height:
        return FRONTIER.empty_frame()
    return (
        decode.filter(pl.Series(on_frontier(decode)))
        .select(FRONTIER.names)
        .sort("efficiency_basis", "model", "chip", "number_format", "tokens_per_s_per_user")
    )


def chunks(ctx, s, bound) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(serving_layouts rows, serving_frontier rows) a few cases at a time: rows at ``s``'s efficiencies, the
    frontier at those and at ``bound``'s (the roofline)."""
    formats = list(s.alternatives("weight_format"))
    cases = ctx.query(inputs.CASES_SQL).filter(pl.col("number_format").is_in(formats))
    named = ctx.query("select * from layouts order by layout")
    max_chips = int(s.max_replica_chips)
    cases = cases.with_columns(pl.int_range(pl.len()).alias("_case"))
    for start in range(0, cases.height, CASES_PER_CHUNK):
        part = cases.slice(start, CASES_PER_CHUNK)
        rows = inputs.layouts_for(part, named, "decode", max_chips)
        decode = marked(evaluate(rows, s, "decode", DECODE_BATCH))
        prefill = evaluate(
            inputs.layouts_for(part, named, "prefill", max_chips), s, "prefill", PREFILL_BATCH, cases.height
        )
        fronts = [frontier(decode, s.efficiency_basis)]
        if bound is not None:
            fronts.append(frontier(evaluate(rows, bound, "decode", DECODE_BATCH), bound.efficiency_basis))
        kept = pl.concat([thinned(decode, DECODE_BATCH), thinned(marked(prefill), PREFILL_BATCH)]).with_columns(
            pl.lit(s.efficiency_basis).alias("efficiency_basis")
        )
        yield kept.select(LAYOUTS.names), pl.concat(fronts)


def run(ctx) -> None:
    s, bound = predictive(ctx.scenarios_with_calibrated)
    frontiers = []

    def layouts():
        for rows, front in chunks(ctx, s, bound):
            frontiers.append(front)
            yield rows

    ctx.write(LAYOUTS, layouts())
    ctx.write(FRONTIER, pl.concat(frontiers) if frontiers else FRONTIER.empty_frame())
