"""``serving_curves``, ``serving_summary`` and ``serving_sparsity``: the serving roofline (lecture a–d).

- ``serving_curves``: every model × chip × number format over a batch × context grid (streamed), by
  :mod:`econ.physics.sweep` — the step functions of :mod:`econ.physics.roofline` on arrays;
- ``serving_summary``: per model × chip × format, B*₀, L*, latency and cost floors, what fits;
- ``serving_sparsity``: the balance batch at the lecture's round R = 300 by parameters, by experts and
  by the lecture's own figure (b.2).

Scenario fields read: ``usd_per_chip_hour``, ``decode_mfu_frac`` / ``decode_mbu_frac`` (decode steps),
``prefill_mfu_frac`` / ``prefill_mbu_frac`` (prefill passes), ``context_tokens`` and ``kv_cache_format``.
Every number is a roofline bound at those efficiencies: step times are lower bounds, throughputs
upper bounds, costs lower bounds.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.inputs import cases_for, models_at
from econ.analyses.serving_columns import CURVES, SPARSITY, SUMMARY
from econ.physics import memory, roofline
from econ.physics.model import kv_window_bytes
from econ.physics.sweep import CASE_COLUMNS, sweep_chunks
from econ.units import MEGA

NAME = "serving"
INPUTS = ("models", "model_derived", "hardware", "hardware_derived", "scenarios")
TABLES = (CURVES, SUMMARY, SPARSITY)

BATCH_GRID = 2.0 ** np.arange(0, 17)  # 1 … 65,536 sequences
CONTEXT_GRID = 2.0 ** np.arange(10, 21)  # 1,024 … 1,048,576 tokens
CONTEXT_8K, CONTEXT_128K = 8_192, 131_072
MAX_POINTS_PER_CHUNK = 500_000

LECTURE_R = 300.0
"""The lecture's round hardware ratio ("on most GPUs … around 300", b.1)."""

LECTURE_SPARSITY = {"deepseek-v3": (256, 32)}
"""What the lecture said per model (b.2): "I activate 32 out of 256 experts, so this would be 8 for DeepSeek"."""


def _arrays(frame: pl.DataFrame, names=CASE_COLUMNS) -> dict:
    return {k: frame[k].cast(pl.Float64).fill_null(np.nan).to_numpy() for k in names}


def curve_frames(
    case_frame: pl.DataFrame,
    s,
    *,
    batch=BATCH_GRID,
    context_tokens=CONTEXT_GRID,
    max_points: int = MAX_POINTS_PER_CHUNK,
):
    """Yield ``serving_curves`` chunks: the sweep of :mod:`econ.physics.sweep`, a few cases per frame."""
    case_frame = case_frame.filter(pl.col("kv_bytes_per_token").is_not_null())
    labels = case_frame.select("model", "chip", "number_format", "chips", "pipeline_stages")
    per_case = len(batch) * len(context_tokens)
    batch_col = np.repeat(np.asarray(batch, dtype=np.int64), len(context_tokens))
    context_col = np.tile(np.asarray(context_tokens, dtype=np.int64), len(batch))
    for index, out in sweep_chunks(
        _arrays(case_frame),
        batch,
        context_tokens,
        usd_per_chip_hour=s.usd_per_chip_hour,
        max_points=max_points,
        **efficiencies(s),
    ):
        keys = labels[np.repeat(index, per_case)].select(
            "model",
            "chip",
            "number_format",
            pl.col("chips").cast(pl.Int64).alias("replica_chips"),
            pl.col("pipeline_stages").cast(pl.Int64),
        )
        frame = keys.with_columns(
            pl.Series("batch_seqs", np.tile(batch_col, len(index))),
            pl.Series("context_tokens", np.tile(context_col, len(index))),
            *(pl.Series(k, v) for k, v in out.items()),
        )
        yield frame.with_columns(
            pl.when(pl.col("decode_compute_bound"))
            .then(pl.lit("compute"))
            .otherwise(pl.lit("memory"))
            .alias("decode_bound")
        )


def efficiencies(s) -> dict[str, float]:
    """The scenario's decode and prefill efficiencies as :func:`econ.physics.sweep.sweep` takes them."""
    return {
        "decode_mfu": s.decode_mfu_frac,
        "decode_mbu": s.decode_mbu_frac,
        "prefill_mfu": s.prefill_mfu_frac,
        "prefill_mbu": s.prefill_mbu_frac,
    }


def _finite(x):
    """inf -> NaN (null in the table) where no finite value exists."""
    return np.where(np.isinf(x), np.nan, x)


def summary(case_frame: pl.DataFrame, s) -> pl.DataFrame:
    """``serving_summary``: one row per model × chip × format (vectorised over rows)."""
    a = _arrays(case_frame, (*CASE_COLUMNS, "num_routed_experts", "experts_per_token"))
    p, d_mfu, d_mbu = s.usd_per_chip_hour, s.decode_mfu_frac, s.decode_mbu_frac
    b_w, n_tot, n_act, kv = a["weight_bytes_per_param"], a["params_total"], a["params_active"], a["kv_bytes_per_token"]
    r = roofline.critical_batch_ratio(a["peak_flop_per_s"], a["hbm_bandwidth_bytes_per_s"], b_w)
    achieved = roofline.critical_batch_ratio(a["peak_flop_per_s"] * d_mfu, a["hbm_bandwidth_bytes_per_s"] * d_mbu, b_w)
    b0 = roofline.balance_batch(r, n_tot, n_act)
    l_star = roofline.critical_context_tokens(r, b_w, n_act, kv)
    floor = roofline.weight_read_time_s(
        n_tot, b_w, a["chips"], a["hbm_bandwidth_bytes_per_s"], mbu=d_mbu, pipeline_stages=a["pipeline_stages"]
    )

    def window(ctx):
        return kv_window_bytes(ctx, a["kv_window_bytes_per_sequence"], a["sliding_window_tokens"])

    def cost_floor(ctx):
        return MEGA * roofline.decode_cost_floor_usd_per_token(
            ctx,
            kv,
            n_act,
            a["peak_flop_per_s"],
            a["hbm_bandwidth_bytes_per_s"],
            p,
            mfu=d_mfu,
            mbu=d_mbu,
            kv_extra_bytes_per_sequence=window(ctx),
        )

    def fits(ctx):
        return memory.max_batch(a["chips"], a["hbm_capacity_bytes"], n_tot, b_w, ctx, kv, window(ctx))

    columns = {
        "balance_batch_seqs": b0,
        "balance_batch_experts_seqs": roofline.balance_batch(r, a["num_routed_experts"], a["experts_per_token"]),
        "balance_batch_achieved_seqs": roofline.balance_batch(achieved, n_tot, n_act),
        "critical_context_tokens": l_star,
        "critical_context_achieved_tokens": roofline.critical_context_tokens(achieved, b_w, n_act, kv),
        "balance_batch_at_8k_seqs": _finite(roofline.balance_batch_at_context(b0, CONTEXT_8K, l_star)),
        "balance_batch_at_128k_seqs": _finite(roofline.balance_batch_at_context(b0, CONTEXT_128K, l_star)),
        "latency_floor_s": floor,
        "max_tokens_per_s_per_sequence": roofline.tokens_per_s(1.0, floor),
        "cost_floor_at_8k_usd_per_mtok": cost_floor(CONTEXT_8K),
        "cost_floor_at_128k_usd_per_mtok": cost_floor(CONTEXT_128K),
        "prefill_cost_floor_usd_per_mtok": MEGA
        * roofline.prefill_cost_floor_usd_per_token(
            kv,
            n_act,
            a["peak_flop_per_s"],
            a["hbm_bandwidth_bytes_per_s"],
            p,
            mfu=s.prefill_mfu_frac,
            mbu=s.prefill_mbu_frac,
        ),
        "scenario_context_tokens": np.full(len(r), s.context_tokens),
        "cost_floor_at_scenario_context_usd_per_mtok": cost_floor(s.context_tokens),
        "max_batch_at_8k_seqs": fits(CONTEXT_8K),
        "max_batch_at_128k_seqs": fits(CONTEXT_128K),
        "replica_hbm_bytes": memory.replica_hbm_bytes(a["chips"], a["hbm_capacity_bytes"]),
    }
    base = case_frame.select(
        "model",
        "chip",
        "number_format",
        pl.col("chips").cast(pl.Int64).alias("replica_chips"),
        pl.col("pipeline_stages").cast(pl.Int64),
        (pl.col("pipeline_stages") == 1).alias("replica_within_scale_up"),
    )
    out = base.with_columns(*(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in columns.items()))
    return out.with_columns(
        *(
            pl.lit(float(getattr(s, k))).alias(k)
            for k in ("decode_mfu_frac", "decode_mbu_frac", "prefill_mfu_frac", "prefill_mbu_frac", "usd_per_chip_hour")
        ),
        pl.lit(s.kv_cache_format).alias("kv_cache_format"),
    )


def sparsity(models: pl.DataFrame) -> pl.DataFrame:
    """The balance batch at the lecture's R = 300, by parameters, by experts and by the lecture's own figure."""
    said = np.array([LECTURE_SPARSITY.get(m.lower(), (np.nan, np.nan)) for m in models["model"]], dtype=float)
    a = _arrays(models, ("params_total", "params_active", "num_routed_experts", "experts_per_token"))

    def f(name, values):
        return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)

    return models.select("model").with_columns(
        f("lecture_sparsity_ratio", said[:, 0] / said[:, 1]),
        f("balance_batch_param_r300_seqs", roofline.balance_batch(LECTURE_R, a["params_total"], a["params_active"])),
        f(
            "balance_batch_expert_r300_seqs",
            roofline.balance_batch(LECTURE_R, a["num_routed_experts"], a["experts_per_token"]),
        ),
        f("balance_batch_lecture_r300_seqs", roofline.balance_batch(LECTURE_R, said[:, 0], said[:, 1])),
    )


def run(ctx) -> None:
    s = ctx.scenario("base")
    models = models_at(ctx, s.kv_cache_format)
    case_frame = cases_for(models, ctx.query("select * from hardware_derived order by chip, format_order"))
    ctx.write(CURVES, curve_frames(case_frame, s))
    ctx.write(SUMMARY, summary(case_frame, s))
    ctx.write(SPARSITY, sparsity(models))
