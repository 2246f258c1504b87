"""The published throughput points (``measured_points``) as calibration points: which can be predicted, and the
steps behind their regimes.

Each row of ``measured_points`` is either excluded with its reason (the source's, or econ's: no architecture, no
chip, no stated token kind, a layout that does not fit) or turned into deployment terms at peak over a grid of
batches (:func:`points`), by its regime (:func:`econ.fits.calibration_throughput.predict_points`). Where a source
is silent econ assumes, and says so in ``assumed``: the KV cache in BF16, the math in the weights' format (BF16 on a
chip without that format), every data-parallel rank replicating attention and the non-expert weights, one pipeline
stage, a single-stream context of :data:`SINGLE_STREAM_CONTEXT_TOKENS`. Revisions of one document are one source
(:func:`document_of`).
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.fits import calibration as cal
from econ.formats import bytes_per_value, kv_scale
from econ.physics import deployment

DECODE_BATCH = np.geomspace(1.0, 131_072.0, 69)  # 2^(k/4): sequences per decode replica
PREFILL_PROMPTS = np.geomspace(1.0, 65_536.0, 33)  # 2^(k/2): prompts per prefill pass
SINGLE_STREAM_CONTEXT_TOKENS = 2048.0
"""Context of a batch-1 point whose source gives no lengths: at batch 1 the weights dominate the bytes read, so
the prediction moves by under 2% between 512 and 8,192 tokens for the models measured so (tested)."""

QUANTITY = {
    "offline": "output tokens/s per chip",
    "disaggregated": "output tokens/s per chip",
    "decode": "output tokens/s per chip",
    "prefill": "input tokens/s per chip",
    "single_stream": "output tokens/s per user",
}
TOKENS_NEEDED = {"offline": "output", "disaggregated": "output", "decode": "output", "prefill": "input"}
MODES = {"offline": "agg", "disaggregated": "disagg"}

POINTS_SQL = """
select p.*, h.architecture,
       d.peak_flop_per_s as format_peak_flop_per_s, b.peak_flop_per_s as bf16_peak_flop_per_s,
       f8.peak_flop_per_s as fp8_peak_flop_per_s,
       h.hbm_capacity_bytes, h.hbm_bandwidth_bytes_per_s, h.scale_up_domain_chips,
       h.scale_up_bandwidth_bytes_per_s, h.scale_out_bandwidth_bytes_per_s
from measured_points as p
left join hardware as h using (chip)
left join hardware_derived as d on d.chip = p.chip and d.number_format = coalesce(p.compute_format, p.weight_format)
left join hardware_derived as b on b.chip = p.chip and b.number_format = 'bf16'
left join hardware_derived as f8 on f8.chip = p.chip and f8.number_format = 'fp8'
order by p.point_id
"""

REVISION = re.compile(r"^(?P<base>.+)-v\d+(\.\d+)*$")


def document_of(sources: list[str]) -> list[str]:
    """The document each source id belongs to: a source whose id is another source's id plus a version suffix
    (``trtllm-perf-overview-v1.0`` beside ``trtllm-perf-overview``) is a revision of it; every other id is its
    own document (``mlperf-inference-v6.0`` and ``-v5.1`` are different rounds, not revisions of one page)."""
    known = set(sources)
    out = []
    for s in sources:
        m = REVISION.match(s)
        out.append(m["base"] if m and m["base"] in known else s)
    return out


def reasons(p: pl.DataFrame, models: set[str]) -> pl.Series:
    """Why each point cannot be predicted (null: it can)."""
    needed = pl.col("regime").replace_strict(TOKENS_NEEDED, default=None)
    has_lengths = pl.col("input_tokens").is_not_null() & pl.col("output_tokens").is_not_null()
    reason = (
        pl.when(pl.col("exclusion_reason").is_not_null())
        .then(pl.col("exclusion_reason"))
        .when(~pl.col("regime").is_in(list(QUANTITY)))
        .then(pl.lit("a latency-bounded MLPerf scenario: econ predicts no percentile latencies"))
        .when(pl.col("arch_model").is_null() | ~pl.col("arch_model").is_in(list(models)))
        .then(pl.lit("model not in data/models.csv with a modelled cache"))
        .when(pl.col("architecture").is_null())
        .then(pl.format("chip {} not in data/hardware.csv", pl.col("chip")))
        .when(pl.col("weight_format").is_null())
        .then(pl.lit("weight format not stated"))
        .when(pl.col("scale_up_bandwidth_bytes_per_s").is_null() | pl.col("scale_out_bandwidth_bytes_per_s").is_null())
        .then(
            pl.format(
                "data/hardware.csv has no scale_up_bandwidth_gb_per_s or scale_out_bandwidth_gbit_per_s for {}",
                pl.col("chip"),
            )
        )
        .when(needed.is_not_null() & (pl.col("tokens_kind").is_null() | (pl.col("tokens_kind") != needed)))
        .then(pl.format("the value counts {} tokens, the regime predicts {}", pl.col("tokens_kind"), needed))
        .when(pl.col("regime").is_in(["offline", "disaggregated"]) & ~has_lengths)
        .then(pl.lit("input and output lengths not both stated"))
        .when((pl.col("regime") == "prefill") & pl.col("input_tokens").is_null())
        .then(pl.lit("prompt length not stated"))
        .when((pl.col("regime") == "decode") & pl.col("context_tokens").is_null() & pl.col("input_tokens").is_null())
        .then(pl.lit("decode context not stated"))
        .when(pl.col("decode_replica_chips").is_null() & (pl.col("regime") != "prefill"))
        .then(pl.lit("decode layout not stated"))
        .when(
            pl.col("prefill_replica_chips").is_null() & pl.col("regime").is_in(["prefill", "offline", "disaggregated"])
        )
        .then(pl.lit("prefill layout not stated"))
        .otherwise(None)
    )
    return p.select(reason.alias("reason"))["reason"]


def assumed(p: pl.DataFrame) -> pl.Series:
    parts = [
        pl.when(pl.col("kv_cache_format").is_null()).then(pl.lit("KV cache BF16")),
        pl.when(pl.col("format_peak_flop_per_s").is_null()).then(
            pl.format("math at the BF16 peak ({} has no {} peak)", pl.col("chip"), pl.col("weight_format"))
        ),
        pl.when(
            (pl.col("regime") == "single_stream")
            & pl.col("context_tokens").is_null()
            & pl.col("input_tokens").is_null()
        ).then(pl.lit(f"context {SINGLE_STREAM_CONTEXT_TOKENS:,.0f} tokens")),
    ]
    text = pl.concat_str(
        [pl.lit("replicated attention per data-parallel rank, one stage"), *parts], separator="; ", ignore_nulls=True
    )
    return p.select(text.alias("assumed"))["assumed"]


def _layout(p: pl.DataFrame, pool: str) -> dict:
    chips = p[f"{pool}_replica_chips"].cast(pl.Float64).fill_null(1.0).to_numpy()
    tp = p[f"{pool}_tensor_parallel"].cast(pl.Float64).fill_null(1.0).to_numpy()
    ones = np.ones((p.height, 1))
    flag = np.ones((p.height, 1), dtype=bool)
    overlap = p["overlap_comm"].cast(pl.Float64).fill_null(0.0).to_numpy()
    balanced = p["expert_balanced"].cast(pl.Float64).fill_null(0.0).to_numpy()
    return {
        "tensor_parallel": tp[:, None],
        "attention_data_parallel": (chips / tp)[:, None],
        "pipeline_parallel": ones,
        "replicate_attention": flag,
        "replicate_shared_experts": flag,
        "replicate_dense": flag,
        "replicate_embeddings": flag,
        "redundant_expert_slots": 0.0 * ones,
        "overlap_comm": overlap[:, None],  # the source's micro-batch overlap (measured_points)
        "expert_balanced": balanced[:, None],  # the source's expert load balancer (measured_points)
    }


def _f(p: pl.DataFrame, name: str) -> np.ndarray:
    return p[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def _grid_step(out: dict, shape) -> cal.Step:
    step = cal.Step.from_terms(out)
    return cal.Step(**{k: np.broadcast_to(getattr(step, k), shape) for k in cal.Step.__dataclass_fields__})


def points(p: pl.DataFrame, models: pl.DataFrame, reserve: float) -> cal.Points:
    """The :class:`~econ.fits.calibration.Points` of the included points ``p`` (:data:`POINTS_SQL` rows) and
    their models: deployment terms at peak over the batch grid (a stated batch or pass is its own grid)."""
    m = p.select("arch_model").join(models, left_on="arch_model", right_on="model", how="left")
    model = {k: v[:, None] for k, v in inputs.model_arrays(m).items()}
    kv = p["kv_cache_format"].fill_null("bf16").to_list()
    fp8 = _f(p, "fp8_peak_flop_per_s")
    chip = {
        "peak_flop_per_s": np.where(
            np.isnan(_f(p, "format_peak_flop_per_s")), _f(p, "bf16_peak_flop_per_s"), _f(p, "format_peak_flop_per_s")
        ),
        "attention_peak_flop_per_s": np.where(
            (np.array(kv) == "fp8") & ~np.isnan(fp8), fp8, _f(p, "bf16_peak_flop_per_s")
        ),
        **{
            k: _f(p, k)
            for k in (
                "hbm_capacity_bytes",
                "hbm_bandwidth_bytes_per_s",
                "scale_up_domain_chips",
                "scale_up_bandwidth_bytes_per_s",
                "scale_out_bandwidth_bytes_per_s",
            )
        },
    }
    chip = {k: v[:, None] for k, v in chip.items()}
    b_w = np.array([bytes_per_value(f) for f in p["weight_format"].to_list()])[:, None]
    scale = np.array([kv_scale(f) for f in kv])[:, None]
    run = {"weight_bytes_per_param": b_w, "dispatch_bytes": np.where(b_w < 2.0, 1.0, 2.0)}
    isl, osl, ctx = _f(p, "input_tokens"), _f(p, "output_tokens"), _f(p, "context_tokens")
    regime = p["regime"].to_numpy()
    context = np.where(
        ~np.isnan(ctx), ctx, np.where(np.isnan(isl), SINGLE_STREAM_CONTEXT_TOKENS, isl + np.nan_to_num(osl) / 2.0)
    )
    stated_b = _f(p, "batch_per_replica")
    batch = np.where(np.isnan(stated_b)[:, None], DECODE_BATCH[None, :], stated_b[:, None])
    batch = np.where((regime == "single_stream")[:, None], 1.0, batch)
    d_layout = _layout(p, "decode")
    d_out = deployment.decode_terms(model, chip, d_layout, batch, context[:, None], kv_scale=scale, settings=run)
    stated_pass = _f(p, "prefill_tokens_per_pass")
    prompt = np.where(np.isnan(isl), 1.0, isl)
    prompts = np.where(np.isnan(stated_pass)[:, None], PREFILL_PROMPTS[None, :], (stated_pass / prompt)[:, None])
    p_layout = _layout(p, "prefill")
    p_out = deployment.prefill_terms(model, chip, p_layout, prompts, prompt[:, None], kv_scale=scale, settings=run)
    d_shape = np.broadcast_shapes(np.shape(d_out["step_time_s"]), np.shape(batch))
    p_shape = np.broadcast_shapes(np.shape(p_out["step_time_s"]), np.shape(prompts))
    capacity = chip["hbm_capacity_bytes"] * (1.0 - reserve)
    chips = _f(p, "chips_measured")
    share = _f(p, "decode_chips_measured") / chips
    measured = _f(p, "measured_value") / np.where(regime == "single_stream", 1.0, _f(p, "value_chips"))

    def limit(name):
        x = _f(p, name)
        return np.where(np.isnan(x), np.inf, x)[:, None]

    return cal.Points(
        regime=regime,
        decode=_grid_step(d_out, d_shape),
        prefill=_grid_step(p_out, p_shape),
        decode_tokens=np.broadcast_to(batch, d_shape).astype(float),
        prefill_tokens=np.broadcast_to(prompts * prompt[:, None], p_shape).astype(float),
        decode_fits=np.broadcast_to(d_out["memory_per_chip_bytes"] <= capacity, d_shape),
        prefill_fits=np.broadcast_to(p_out["memory_per_chip_bytes"] <= capacity, p_shape),
        decode_chips=d_layout["tensor_parallel"] * d_layout["attention_data_parallel"],
        prefill_chips=p_layout["tensor_parallel"] * p_layout["attention_data_parallel"],
        decode_limit_s=limit("tpot_limit_s"),
        prefill_limit_s=limit("ttft_limit_s"),
        input_tokens=np.where(np.isnan(isl), 0.0, isl),
        output_tokens=np.where(np.isnan(osl), 0.0, osl),
        decode_share=np.where(np.isnan(share), 1.0, share),
        log_measured=np.log(measured),
    )


def take(pts: cal.Points, keep: np.ndarray) -> cal.Points:
    """The points of ``keep`` (a boolean mask)."""

    def sub(x):
        return x.take(keep) if isinstance(x, cal.Step) else np.asarray(x)[keep]

    return cal.Points(**{k: sub(getattr(pts, k)) for k in cal.Points.__dataclass_fields__})
