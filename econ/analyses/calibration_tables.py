"""The calibration's result frames: runs and points with their held-out predictions, errors, bands, parameters."""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import calibration_runs as cr
from econ.analyses import launch_layouts
from econ.analyses.inputs import architecture_of
from econ.analyses.serving_runs import POOL_COLUMNS
from econ.engines import NAMES as ENGINE_NAMES
from econ.fits import calibration as cal
from econ.fits import calibration_cv as cv
from econ.fits.calibration_throughput import predict_points
from econ.fits.regimes import SLOT_WAIT, UNSTATED_WORKERS

UNITS = {
    "collective_latency_s": "s",
    "layer_overhead_s": "s",
    "sequence_overhead_s": "s",
    "step_overhead_s": "s",
    "ttft_overhead_s": "s",
    "ttft_stream_steps": "steps",
    "expert_imbalance_scale": "ratio",
    "queue_wait_frac": "ratio",
    "burst_wait_frac": "ratio",
    "speculation_speedup": "ratio",
}
MEANING = {
    "gemm_mfu_frac": "achieved share of peak FLOP/s of the dense (non-expert) GEMMs of a decode step alone",
    "prefill_gemm_mfu_frac": "achieved share of peak FLOP/s of the dense (non-expert) GEMMs of a prompt's tokens (a "
    "prefill pass, or a chunk carried by a decode step)",
    "expert_mfu_frac": "achieved share of peak FLOP/s of the routed experts' grouped GEMMs",
    "attention_mfu_frac": "achieved share of peak FLOP/s of attention",
    "hbm_bandwidth_frac": "achieved share of HBM bandwidth of the dense weights' and the KV cache's reads",
    "expert_hbm_bandwidth_frac": "achieved share of HBM bandwidth of the routed experts' weight reads (grouped GEMMs)",
    "link_bandwidth_frac": "achieved share of scale-up and scale-out link bandwidth",
    "collective_latency_s": "latency per collective hop (ring all-reduce: 2(N−1) hops; dispatch + combine: 2)",
    "layer_overhead_s": "fixed time per step of a GQA layer's 9 kernels (launches, small-kernel latency); a layer "
    "launching more counts more (model_derived.kernel_layers)",
    "sequence_overhead_s": "fixed time per sequence a rank schedules per step (batching, sampling, detokenisation)",
    "step_overhead_s": "fixed time per step (scheduling)",
    "expert_imbalance_scale": "busiest expert rank's excess over the mean, as a multiple of uniform routing's",
    "ttft_overhead_s": "fixed front-end time of a request's first token (request handling, KV hand-off)",
    "ttft_stream_steps": "decode steps of wait before the first token that the other TTFT terms miss (fitted)",
    "queue_wait_frac": "share of the closed-loop queueing wait (mean-value analysis) a request meets",
    "burst_wait_frac": "share of the opening burst's wait the first requests meet",
    "speculation_speedup": "TPOT speed-up of a launch that speculates (MTP) without stating draft length or acceptance",
}


def _layout(frame: pl.DataFrame, pool: str) -> pl.Expr:
    f = [
        pl.col(f"{pool}_{k}").cast(pl.Int64).cast(pl.String)
        for k in (
            "workers",
            "tensor_parallel",
            "attention_data_parallel",
            "pipeline_parallel",
            "expert_parallel",
            "expert_tensor_parallel",
        )
    ]
    return pl.format("{} x (tp {} x dp {} x pp {}), ep {} etp {}", *f)


def workers_unstated() -> pl.Expr:
    """A disaggregated run whose worker counts its row does not state and no one launch settles: assumed by rule
    (``workers_assumed``), or the median of the sets of pools several matching launches state
    (:data:`econ.analyses.launch_layouts.CHOICES`). Its errors are its own regime's (:func:`regimes`)."""
    return pl.col("workers_assumed").fill_null(False) | (pl.col(launch_layouts.CHOICES).fill_null(1.0) > 1.0)


def regimes(mode: pl.Expr, users: pl.Expr, assumed: pl.Expr, waits: pl.Expr, target: str) -> pl.Expr:
    """The regime of a run's TTFT or TPOT: batch_1 (one request in flight), agg, or the disaggregated pool that sets
    it (with ``_unstated_workers`` where the worker counts were assumed), with ``_slot_wait`` where the model has
    users wait for a decode slot (TTFT: ``calibration_runs.waits_for_slot``; TPOT: the workers are at their limit,
    ``calibration_runs.slot_limited``): their errors are their own, not the pool's."""
    pool = "disagg_prefill" if target == "ttft" else "disagg_decode"
    disagg = pl.when(assumed).then(pl.lit(f"{pool}{UNSTATED_WORKERS}")).otherwise(pl.lit(pool))
    base = pl.when(users <= 1).then(pl.lit("batch_1")).when(mode == "agg").then(pl.lit("agg")).otherwise(disagg)
    return pl.when(waits).then(pl.concat_str(base, pl.lit(SLOT_WAIT))).otherwise(base)


def _joined(cols) -> pl.Expr:
    return pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in cols], separator="|")


def _pool_columns(*degrees: str) -> list[str]:
    return [f"{pool}_{k}" for pool in ("prefill", "decode") for k in degrees]


def config_key() -> pl.Expr:
    head = [
        "architecture_group",
        "chip",
        "engine",
        "weight_format",
        "mode",
        "input_tokens",
        "output_tokens",
        "concurrency",
    ]
    return _joined(head + _pool_columns("tensor_parallel", "attention_data_parallel", "expert_parallel", "workers"))


REPLICATE_COLUMNS = (
    "engine",
    "architecture_group",
    "chip",
    "mode",
    "input_tokens",
    "output_tokens",
    "length_range_ratio",
    "concurrency",
    "weight_format",
    "expert_weight_format",
    "kv_used",
    "speculative_tokens",
    "acceptance_frac",
    "speculation_launched",
    "max_running_requests",
    "chunk_tokens",
    "adp_timeout_iters",
    "batch_wait_timeout_iters",
    "batch_wait_threshold_tokens",
    "decode_expert_balanced",
    *POOL_COLUMNS,
)
"""Everything econ reads of a run of ``inferencex_train`` (:func:`econ.analyses.calibration_runs.run_inputs`): the
engine, architecture (``model_derived.architecture_group``: a DeepSeek-R1 run stored as DeepSeek-V3 reads alike),
chip, mode, lengths (and how the client drew them), concurrency, formats (the KV cache's as used), speculation, the
launch's limits, chunk, prompt holds and expert balancer, each pool's degrees and workers. Runs that agree on all of
them are replicates: no model of these inputs can tell them apart."""


def replicate_key() -> pl.Expr:
    """:data:`REPLICATE_COLUMNS` and whether the workers are stated (:func:`workers_unstated`): a run read with the
    median of several launches' pools is no replicate of a run that states those pools (the raw file's columns keep
    them apart too)."""
    return pl.concat_str([_joined(REPLICATE_COLUMNS), workers_unstated().cast(pl.String)], separator="|")


def configuration_key() -> pl.Expr:
    """Everything of :data:`REPLICATE_COLUMNS` but the concurrency: the runs a prediction's measured neighbours are
    taken from (:mod:`econ.fits.neighbours`)."""
    return _joined(c for c in REPLICATE_COLUMNS if c != "concurrency")


def layout_key() -> pl.Expr:
    """Everything of :data:`REPLICATE_COLUMNS` but the concurrency and the lengths: the same system serving other
    prompts and outputs, whose runs correct a prediction where its own configuration has none (:mod:`econ.fits.
    neighbours`)."""
    return _joined(c for c in REPLICATE_COLUMNS if c not in ("concurrency", "input_tokens", "output_tokens"))


def neighbour_key(configuration: pl.Expr, regime: pl.Expr) -> pl.Expr:
    """The runs whose residuals correct a prediction of one target: the same configuration in the same regime of that
    target (:func:`regimes`). At more users a configuration may start to wait for a decode slot, a wait the model times
    apart and errs on apart: a residual does not carry across it (held out by random fold, TTFT of the runs corrected
    from one side 1.131x / 2.113x across regimes, 1.125x / 1.928x within)."""
    return pl.concat_str([configuration, regime], separator="|")


COPY_COLUMNS = ("architecture_group", "chip", "engine", "mode", "input_tokens", "output_tokens", "_ttft", "_tpot")
"""What two rows of ``inferencex_train`` share when one is a copy of the other's measurement: the architecture, chip,
engine, mode, lengths and both measured values to :data:`COPY_DIGITS` significant digits."""

COPY_DIGITS = 12
"""Significant digits two measured times share when they are one measurement: the file writes them with 15-17 (one
source file ends ``…52949756`` where the other ends ``…5294976``), and no two runs agree to 12."""


def count_once(configs: pl.DataFrame) -> pl.DataFrame:
    """``configs`` with a reason on every row that repeats an earlier row's measurement (:data:`COPY_COLUMNS`), so that
    the fit, the cross-validation and the errors count each measurement once.

    702 of ``inferencex_train``'s 3,366 rows copy another row: the same run in two of its source files
    (``2026-03-25.csv`` and ``2026-04-06.csv``), and DeepSeek-R1 runs again in InferenceX's database dump
    (``db-dump/2026-04-27``) stored as ``deepseek-ai/DeepSeek-V3`` (their ids say ``dsr1_``), often with the worker
    counts the first copy left blank. A copy fitted beside its original weighs one measurement twice, and held out in
    another random fold than its original it is predicted by a fit that saw it. Two measured times that agree to
    :data:`COPY_DIGITS` significant digits are one measurement (every such pair also agrees on the concurrency,
    format and engine version, which the rule does not read); the copy kept is the one econ knows most about: its
    workers stated or launched (else assumed), then its launch's expert balancer and decode batch limit
    (:mod:`econ.analyses.launch_layouts`), then the first in the file. Rows that already have a reason are left
    alone."""
    c = configs.with_row_index("_i").with_columns(
        pl.col("measured_ttft_s").cast(pl.Float64).round_sig_figs(COPY_DIGITS).alias("_ttft"),
        pl.col("measured_tpot_s").cast(pl.Float64).round_sig_figs(COPY_DIGITS).alias("_tpot"),
    )
    measured = pl.col("measured_ttft_s").is_not_null() & pl.col("measured_tpot_s").is_not_null()
    candidates = c.filter(pl.col("reason").is_null() & measured)
    known = (  # what econ knows of a copy: its workers (stated or launched), its launch's balancer and batch limit
        pl.col("workers_assumed").fill_null(True),
        pl.col("decode_expert_balanced").fill_null(0.0) <= 0.0,
        pl.col("launch_max_running").is_null(),
    )
    candidates = candidates.sort(*known, "_i")
    kept = (pl.col("run_id").first().alias("_kept_run_id"), pl.col("_i").first().alias("_kept_i"))
    first = candidates.group_by(COPY_COLUMNS, maintain_order=True).agg(*kept)
    copies = candidates.join(first, on=COPY_COLUMNS).filter(pl.col("_i") != pl.col("_kept_i"))
    reason = pl.format("the same measurement as run {} (identical TTFT and TPOT): counted once", "_kept_run_id")
    c = c.join(copies.select("_i", reason.alias("_copy")), on="_i", how="left")
    c = c.with_columns(pl.coalesce("reason", "_copy").alias("reason"))
    return c.sort("_i").drop("_i", "_copy", "_ttft", "_tpot")


def fold_labels(
    c: pl.DataFrame, points: pl.DataFrame, groups: dict[str, str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per basis: (each run's group label, each point's): the model's architecture group (a model and its re-releases
    or fine-tunes, ``groups``: arch_model -> model_derived.architecture_group, are left out together: DeepSeek-V3
    with DeepSeek-R1), the chip, the source (a run's campaign, :data:`econ.analyses.serving_runs.SOURCES`; a
    point's document), a random fold of distinct configurations."""
    random_r = cv.random_groups(c.select(config_key().alias("k"))["k"].to_numpy())
    random_p = cv.random_groups(points["point_id"].to_numpy(), seed=1)
    arch = architecture_of(groups).alias("g")
    return {
        "model_out": (c.select(arch)["g"].to_numpy(), points.select(arch)["g"].to_numpy()),
        "chip_out": (c["chip"].to_numpy(), points["chip"].to_numpy()),
        "source_out": (c["source"].to_numpy().astype(object), points["document"].to_numpy()),
        "random_out": (
            np.array([f"fold{k}" for k in random_r], dtype=object),
            np.array([f"fold{k}" for k in random_p], dtype=object),
        ),
    }


PREFILL_USED = ("prefill_attention_data_parallel", "prefill_expert_tensor_parallel", "prefill_expert_parallel")
"""The prefill layout's degrees as the steps used them (:func:`econ.analyses.assumed_workers.assume` cuts a
prefill worker larger than any stated one on the chip)."""


def runs_frame(configs, c, extra, pred, held, bounds, bases) -> pl.DataFrame:
    """``calibration_runs``: every run, the included ones with their predictions and the held-out ratios of ``bases``
    (:data:`econ.analyses.calibration_neighbours.HELD_BASES`)."""
    users, assumed, mode = pl.col("concurrency"), workers_unstated(), pl.col("mode")
    inc = c.with_columns(
        configuration_key().alias("configuration_key"),  # of the stated columns, as a prediction's row states them
        layout_key().alias("layout_key"),
        pl.Series("system_chips", extra["system_chips"]),
        pl.Series(
            "prefill_worker_chips", np.where(c["mode"].to_numpy() == "agg", np.nan, extra["prefill_chips"])
        ).fill_nan(None),
        pl.Series("decode_workers", extra["decode_workers"]),  # with those the KV caches need to hold every user
        pl.Series("decode_running_per_worker", extra["decode_batch_per_worker"]),
        pl.Series("_waits", cr.waits_for_slot(extra)),
        pl.Series("_limited", cr.slot_limited(extra)),
        cr.wait_notes(extra),
        pl.Series("bound_ttft_s", bounds[0]),
        pl.Series("bound_tpot_s", bounds[1]),
        pl.Series("predicted_ttft_s", np.exp(pred["ttft"])),
        pl.Series("predicted_tpot_s", np.exp(pred["tpot"])),
        *(
            pl.Series(f"{b}{a}_{t}_ratio", np.exp(held[b][f"{t}{a}"]))
            for a in ("", cv.ANY_ENGINE)
            for b in bases
            for t in ("ttft", "tpot")
        ),
        pl.lit(True).alias("included"),
    ).select(
        "run_id",
        replicate_key().alias("replicate_key"),
        "configuration_key",
        "layout_key",
        "system_chips",
        "prefill_worker_chips",
        *PREFILL_USED,
        "decode_running_per_worker",
        "_wait_note",
        "_waits",
        "_limited",
        "bound_ttft_s",
        "bound_tpot_s",
        "predicted_ttft_s",
        "predicted_tpot_s",
        "decode_workers",
        "prefill_workers",
        *(f"{b}{a}_{t}_ratio" for a in ("", cv.ANY_ENGINE) for b in bases for t in ("ttft", "tpot")),
        "included",
    )
    out = configs.drop("decode_workers", "prefill_workers").join(inc, on="run_id", how="left", suffix="_used")
    out = out.with_columns(pl.coalesce(f"{k}_used", k).alias(k) for k in PREFILL_USED).drop(
        f"{k}_used" for k in PREFILL_USED
    )
    out = out.with_columns(
        pl.col("decode_workers").fill_null(1.0),
        pl.col("prefill_workers").fill_null(1.0),
        pl.col("included").fill_null(False),
        cr.with_note(pl.col("notes"), pl.col("_wait_note")).alias("notes"),
        pl.col("_waits").fill_null(False),
        pl.col("_limited").fill_null(False),
    ).drop("_wait_note")
    return out.with_columns(
        _layout(out, "decode").alias("decode_layout"),
        pl.when(mode == "disagg").then(_layout(out, "prefill")).alias("prefill_layout"),
        regimes(mode, users, assumed, pl.col("_waits"), "ttft").alias("regime_ttft"),
        regimes(mode, users, assumed, pl.col("_limited"), "tpot").alias("regime_tpot"),
    ).drop("_waits", "_limited")


def points_frame(p, fitted, pts, z, problem, held) -> pl.DataFrame:
    """``calibration_points``: every published point, the included ones with their predictions."""
    u = cal.coordinates(z, problem.levels, problem.point_codes, pts.n)
    predicted = predict_points(cal.values(u), pts)
    bound = predict_points(cal.ideal_parameters(pts.n), pts)
    measured = np.exp(pts.log_measured)
    rows = np.arange(pts.n)
    regime = pl.col("regime")
    inc = fitted.select("point_id").with_columns(
        pl.Series("measured_value_per", measured),
        pl.Series("bound_value", bound["value"]),
        pl.Series("calibrated_value", predicted["value"]),
        pl.Series("cv_value", np.exp(held["source_out"]["points"]) * measured),
        pl.Series("model_out_over_measured_ratio", np.exp(held["model_out"]["points"])),
        pl.Series("chip_out_over_measured_ratio", np.exp(held["chip_out"]["points"])),
        pl.Series("decode_batch_per_replica", pts.decode_tokens[rows, predicted["decode_pick"]]),
        pl.Series("prefill_tokens_per_pass", pts.prefill_tokens[rows, predicted["prefill_pick"]]),
        pl.Series("limit_met", predicted["limit_met"]),
        pl.lit(True).alias("included"),
    )
    frame = p.join(inc, on="point_id", how="left").with_columns(pl.col("included").fill_null(False))
    quantity = {
        "offline": "output tokens/s per chip",
        "disaggregated": "output tokens/s per chip",
        "decode": "output tokens/s per chip",
        "prefill": "input tokens/s per chip",
        "single_stream": "output tokens/s per user",
    }
    frame = frame.with_columns(
        regime.replace_strict(quantity, default=None).alias("measured_quantity"),
        pl.when(pl.col("included"))
        .then(pl.col("measured_value_per"))
        .otherwise(
            pl.col("measured_value") / pl.when(regime == "single_stream").then(1).otherwise(pl.col("value_chips"))
        )
        .alias("measured_value"),
        pl.when(regime == "prefill")
        .then(None)
        .otherwise(pl.col("decode_batch_per_replica"))
        .alias("decode_batch_per_replica"),
        pl.when(regime.is_in(["prefill", "offline", "disaggregated"]))
        .then(pl.col("prefill_tokens_per_pass"))
        .alias("prefill_tokens_per_pass"),
        pl.col("_reason").alias("exclusion_reason"),
        pl.coalesce("context_tokens", pl.col("input_tokens") + pl.col("output_tokens").fill_null(0) / 2).alias(
            "decode_context_tokens"
        ),
    )
    return frame.with_columns(
        (pl.col("bound_value") / pl.col("measured_value")).alias("bound_over_measured_ratio"),
        (pl.col("calibrated_value") / pl.col("measured_value")).alias("calibrated_over_measured_ratio"),
        (pl.col("cv_value") / pl.col("measured_value")).alias("cv_over_measured_ratio"),
    )


def parameters(
    result, levels, runs: pl.DataFrame, points: pl.DataFrame, arch: dict[str, str], attention: dict[str, str]
) -> pl.DataFrame:
    """``calibration_parameters`` from the fit's natural rows, each with the rows that inform it (``arch``: chip ->
    hardware.architecture; ``attention``: model -> model_derived.attention)."""
    inc_r, inc_p = runs.filter(pl.col("included")), points.filter(pl.col("included"))
    rows = []
    for r in cal.natural(result, levels):
        kind, group = r["group_kind"], r["group"]
        if kind == "engine":
            engine_p = pl.col("engine").str.to_lowercase().replace(ENGINE_NAMES)
            rr, pp = inc_r.filter(pl.col("engine") == group), inc_p.filter(engine_p == group)
        elif kind == "architecture":
            chips = [c for c, a in arch.items() if a == group]
            rr, pp = inc_r.filter(pl.col("chip").is_in(chips)), inc_p.filter(pl.col("architecture") == group)
        elif kind == "attention":
            models = [m for m, a in attention.items() if a == group]
            rr, pp = inc_r.filter(pl.col("arch_model").is_in(models)), inc_p.filter(pl.col("arch_model").is_in(models))
        elif kind == "serving":
            engine, mode = group.split("/")
            rr = inc_r.filter((pl.col("engine") == engine) & (pl.col("mode") == mode))
            regime = "offline" if mode == "agg" else "disaggregated"
            pp = inc_p.filter(
                (pl.col("regime") == regime) & (pl.col("engine").str.to_lowercase().replace(ENGINE_NAMES) == engine)
            )
        else:
            rr, pp = inc_r, inc_p
        sources = pp["document"].n_unique() if pp.height else 0
        rows.append(
            {
                **r,
                "family": group if kind == "architecture" else ("" if kind == "" else None),
                "unit": UNITS.get(r["parameter"], "fraction"),
                "status": result.status,
                "interval_kind": result.interval_kind,
                "n_points": rr.height + pp.height,
                "informed_by": f"{rr.height} InferenceX runs, {pp.height} published points from {sources} sources",
                "meaning": MEANING[r["parameter"]] + (f" ({kind} {group})" if kind else ""),
            }
        )
    return pl.DataFrame(rows)
