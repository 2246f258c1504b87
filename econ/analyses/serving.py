"""Serving economics (lecture a–d, g, h): the roofline sweep and the tables that explain it.

Reads ``models``, ``hardware``, ``memory_tiers``, ``price_current`` and the scenario, and writes

- ``serving_curves``: every model × chip × number format over a batch × context grid (streamed);
- ``serving_summary``: per model × chip × format, B*₀, L*, latency and cost floors, what fits;
- ``serving_sparsity``: sparsity by parameters and by experts, and the lecture's DeepSeek "8";
- ``network_ratios``: scale-up vs scale-out time of a pipeline stage per MoE model × chip;
- ``attention_crossover``: attention vs weight FLOPs per token and the crossover context;
- ``memory_tier_costs``: cost of holding a token's KV for a time in each tier, or recomputing it;
- ``fast_mode_identity``: price multiple × speed multiple = batch multiple of every fast variant.

Scenario assumptions read: ``gpu_usd_per_hour`` (required), ``serving_chip`` (memory tiers,
attention), and optionally ``prefill_mfu`` / ``decode_mbu`` (default 1: the pure roofline; the
serving tables apply them to every compute / memory term and say so), ``context_tokens``
(summary's cost floor at the scenario context), ``kv_cache_format`` (default bf16: the
``models.kv_bytes_per_token`` convention) and ``weight_format`` (the format of the recompute
forward pass in ``memory_tier_costs``; default bf16). The sweep covers every number format a
chip has a peak for, with weights stored in the format of the math.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.scenario import load_scenario
from econ.analyses.serving_tables import (
    attention_table,
    fast_mode_table,
    memory_tier_table,
    network_table,
    sparsity_table,
)
from econ.errors import EconError
from econ.physics import memory, roofline
from econ.physics.hardware import FORMATS, PEAK_COLUMN, bytes_per_value, drain_time_s
from econ.physics.model import kv_window_bytes
from econ.physics.sweep import CASE_COLUMNS, sweep_chunks
from econ.units import BYTES_PER_VALUE, MEGA

NAME = "serving"
INPUTS = ("models", "hardware", "memory_tiers", "scenarios", "price_current")

BATCH_GRID = 2.0 ** np.arange(0, 17)  # 1 … 65,536 sequences
CONTEXT_GRID = 2.0 ** np.arange(10, 21)  # 1,024 … 1,048,576 tokens
CONTEXT_8K, CONTEXT_128K = 8_192, 131_072
MAX_POINTS_PER_CHUNK = 500_000


def cases(models: pl.DataFrame, hardware: pl.DataFrame) -> pl.DataFrame:
    """Every model × chip × number format the chip has a peak for, with the replica (rule: memory.replica_chips)."""
    formats = pl.DataFrame(
        {
            "number_format": list(FORMATS),
            "weight_bytes_per_param": [bytes_per_value(f) for f in FORMATS],
            "format_order": list(range(len(FORMATS))),
        }
    )
    peak = pl.lit(None, dtype=pl.Float64)
    for fmt in FORMATS:
        peak = pl.when(pl.col("number_format") == fmt).then(pl.col(PEAK_COLUMN[fmt]).cast(pl.Float64)).otherwise(peak)
    hw = (
        hardware.join(formats, how="cross")
        .with_columns(peak.alias("peak_flop_per_s"))
        .filter(pl.col("peak_flop_per_s").is_not_null())
        .with_columns(pl.col("scale_up_domain_chips").fill_null(1).cast(pl.Float64))
    )
    frame = (
        models.join(hw, how="cross")
        .sort("model", "chip", "format_order")
        .with_columns(
            pl.col("kv_window_bytes_per_sequence").fill_null(0.0).cast(pl.Float64),
            pl.col("sliding_window_tokens").cast(pl.Float64),
        )
    )
    chips, stages = memory.replica_chips(
        frame["params_total"].to_numpy(),
        frame["weight_bytes_per_param"].to_numpy(),
        frame["hbm_capacity_bytes"].to_numpy(),
        frame["scale_up_domain_chips"].to_numpy(),
    )
    return frame.with_columns(pl.Series("chips", chips), pl.Series("pipeline_stages", stages))


def _arrays(frame: pl.DataFrame) -> dict:
    return {k: frame[k].cast(pl.Float64).fill_null(np.nan).to_numpy() for k in CASE_COLUMNS}


def curve_frames(
    case_frame: pl.DataFrame,
    *,
    usd_per_chip_hour: float,
    mfu: float,
    mbu: float,
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
        usd_per_chip_hour=usd_per_chip_hour,
        mfu=mfu,
        mbu=mbu,
        max_points=max_points,
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


CURVE_COLUMNS = {
    "model": "Model (models.model)",
    "chip": "Accelerator (hardware.chip)",
    "number_format": "Format of the math (F = the chip's dense peak in it); weights stored in the same format",
    "replica_chips": "Chips per replica G: smallest power of two <= scale-up domain whose HBM holds the weights, "
    "else whole domains [chips]",
    "pipeline_stages": "Pipeline stages P (scale-up domains per replica; 1 inside one domain)",
    "batch_seqs": "Decode batch B, and prompts per prefill pass [sequences]",
    "context_tokens": "Context L: cached tokens per sequence for decode, prompt length for prefill [tokens]",
    "decode_compute_time_s": "2*B*N_act/(G*F*mfu) [s]",
    "decode_memory_time_s": "(P*N_tot*b_w + B*(L*b_kv + window KV))/(G*W*mbu), KV at the scenario's kv_cache_format "
    "[s]",
    "decode_step_time_s": "Decode step, lower bound max(compute, memory) (lecture t_step) [s]",
    "decode_upper_bound_time_s": "Decode step, upper bound compute + memory (no overlap) [s]",
    "decode_compute_bound": "True where compute time >= memory time",
    "decode_bound": "compute or memory: which term sets the lower bound",
    "decode_tokens_per_s": "Output tokens per second of one replica = B / step [tokens/s]",
    "output_usd_per_mtok": "Decode cost = step*G*p/B at the scenario's gpu_usd_per_hour [USD/MTok]",
    "prefill_step_time_s": "Prefill of B prompts of L tokens in one pass, lower bound max(2*B*L*N_act/(G*F*mfu), "
    "memory) [s]",
    "prefill_compute_bound": "True where the prefill pass is compute-bound",
    "input_usd_per_mtok": "Prefill cost = prefill step*G*p/(B*L) [USD/MTok]",
    "memory_required_bytes": "Weights + B*(L*b_kv + window KV) [bytes]",
    "fits_in_memory": "Weights + KV <= G * HBM capacity",
}


def _finite(x):
    """inf -> NaN (null in the table) where no finite value exists."""
    return np.where(np.isinf(x), np.nan, x)


def summary(
    case_frame: pl.DataFrame, *, usd_per_chip_hour: float, mfu: float, mbu: float, scenario_context_tokens: float | None
) -> pl.DataFrame:
    """``serving_summary``: one row per model × chip × format (vectorised over rows)."""
    a = {
        k: case_frame[k].cast(pl.Float64).fill_null(np.nan).to_numpy()
        for k in (*CASE_COLUMNS, "scale_up_domain_chips", "num_routed_experts", "experts_per_token")
    }
    r = roofline.critical_batch_ratio(a["peak_flop_per_s"], a["hbm_bandwidth_bytes_per_s"], a["weight_bytes_per_param"])
    b0 = roofline.balance_batch(r, a["params_total"], a["params_active"])
    l_star = roofline.critical_context_tokens(
        r, a["weight_bytes_per_param"], a["params_active"], a["kv_bytes_per_token"]
    )
    achieved = r * mfu / mbu  # R at the achieved FLOP/s and bandwidth: where serving_curves turn compute-bound
    floor = roofline.weight_read_time_s(
        a["params_total"],
        a["weight_bytes_per_param"],
        a["chips"],
        a["hbm_bandwidth_bytes_per_s"],
        mbu=mbu,
        pipeline_stages=a["pipeline_stages"],
    )

    def window(ctx):
        return kv_window_bytes(ctx, a["kv_window_bytes_per_sequence"], a["sliding_window_tokens"])

    def cost_floor(ctx):
        return MEGA * roofline.decode_cost_floor_usd_per_token(
            ctx,
            a["kv_bytes_per_token"],
            a["params_active"],
            a["peak_flop_per_s"],
            a["hbm_bandwidth_bytes_per_s"],
            usd_per_chip_hour,
            mfu=mfu,
            mbu=mbu,
            kv_extra_bytes_per_sequence=window(ctx),
        )

    def fits(ctx):
        return memory.max_batch(
            a["chips"],
            a["hbm_capacity_bytes"],
            a["params_total"],
            a["weight_bytes_per_param"],
            ctx,
            a["kv_bytes_per_token"],
            window(ctx),
        )

    scenario_ctx = np.nan if scenario_context_tokens is None else float(scenario_context_tokens)
    columns = {
        "critical_batch_ratio": r,
        "sparsity_param_ratio": a["params_total"] / a["params_active"],
        "sparsity_expert_ratio": a["num_routed_experts"] / a["experts_per_token"],
        "balance_batch_seqs": b0,
        "balance_batch_experts_seqs": r * a["num_routed_experts"] / a["experts_per_token"],
        "balance_batch_achieved_seqs": roofline.balance_batch(achieved, a["params_total"], a["params_active"]),
        "critical_context_tokens": l_star,
        "critical_context_achieved_tokens": roofline.critical_context_tokens(
            achieved, a["weight_bytes_per_param"], a["params_active"], a["kv_bytes_per_token"]
        ),
        "balance_batch_at_8k_seqs": _finite(roofline.balance_batch_at_context(b0, CONTEXT_8K, l_star)),
        "balance_batch_at_128k_seqs": _finite(roofline.balance_batch_at_context(b0, CONTEXT_128K, l_star)),
        "latency_floor_s": floor,
        "max_tokens_per_s_per_sequence": 1.0 / floor,
        "cost_floor_at_8k_usd_per_mtok": cost_floor(CONTEXT_8K),
        "cost_floor_at_128k_usd_per_mtok": cost_floor(CONTEXT_128K),
        "prefill_cost_floor_usd_per_mtok": MEGA
        * roofline.prefill_cost_floor_usd_per_token(
            a["kv_bytes_per_token"],
            a["params_active"],
            a["peak_flop_per_s"],
            a["hbm_bandwidth_bytes_per_s"],
            usd_per_chip_hour,
            mfu=mfu,
            mbu=mbu,
        ),
        "scenario_context_tokens": np.full(len(r), scenario_ctx),
        "cost_floor_at_scenario_context_usd_per_mtok": cost_floor(scenario_ctx),
        "max_batch_at_8k_seqs": fits(CONTEXT_8K),
        "max_batch_at_128k_seqs": fits(CONTEXT_128K),
        "weight_bytes": memory.weight_bytes(a["params_total"], a["weight_bytes_per_param"]),
        "replica_hbm_bytes": a["chips"] * a["hbm_capacity_bytes"],
        "scale_up_effective_bandwidth_bytes_per_s": memory.effective_bandwidth_bytes_per_s(
            a["scale_up_domain_chips"], a["hbm_bandwidth_bytes_per_s"]
        ),
        "hbm_drain_time_s": drain_time_s(a["hbm_capacity_bytes"], a["hbm_bandwidth_bytes_per_s"]),
    }
    base = case_frame.select(
        "model",
        "chip",
        "number_format",
        "weight_bytes_per_param",
        pl.col("chips").cast(pl.Int64).alias("replica_chips"),
        pl.col("pipeline_stages").cast(pl.Int64),
        (pl.col("pipeline_stages") == 1).alias("replica_within_scale_up"),
    )
    out = base.with_columns(*(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in columns.items()))
    return out.with_columns(
        pl.lit(mfu).alias("mfu_frac"),
        pl.lit(mbu).alias("mbu_frac"),
        pl.lit(usd_per_chip_hour).alias("usd_per_chip_hour"),
    )


SUMMARY_COLUMNS = {
    "weight_bytes_per_param": "Bytes per stored weight b_w in this format [bytes/param]",
    "replica_chips": "Chips per replica G (see serving_curves) [chips]",
    "pipeline_stages": "Pipeline stages P (scale-up domains per replica)",
    "replica_within_scale_up": "False where the weights need more than one scale-up domain (pipelined over scale-out)",
    "critical_batch_ratio": "R = (F/2)*b_w/W, the lecture's ~300 for this chip and format (b.1)",
    "sparsity_param_ratio": "N_tot/N_act (what B*0 uses)",
    "sparsity_expert_ratio": "Routed experts / experts per token E/k (null for dense models)",
    "balance_batch_seqs": "B*0 = R*N_tot/N_act: decode batch where weight time = compute time at peak FLOP/s and "
    "bandwidth, "
    "KV ignored (lecture b.1) [sequences]",
    "balance_batch_experts_seqs": "R*E/k: the same with the expert ratio [sequences]",
    "balance_batch_achieved_seqs": "B*0*mfu/mbu: the same balance at the scenario's mfu and mbu, where "
    "serving_curves turn "
    "compute-bound (KV ignored, one pipeline stage) [sequences]",
    "critical_context_tokens": "L* = b_w*N_act/(R*b_kv) at peak: above it decode is memory-bound at every batch (KV "
    "at the "
    "scenario's kv_cache_format) [tokens]",
    "critical_context_achieved_tokens": "L* x mbu/mfu: the same at the scenario's mfu and mbu (what serving_curves "
    "show) [tokens]",
    "balance_batch_at_8k_seqs": "B*(L) = B*0/(1-L/L*) at L = 8,192, at peak; null where L >= L* (memory-bound at "
    "every batch) "
    "[sequences]",
    "balance_batch_at_128k_seqs": "B*(L) at L = 131,072; null where L >= L* [sequences]",
    "latency_floor_s": "P*N_tot*b_w/(G*W*mbu): no batch gives a faster decode step (lecture a.3) [s]",
    "max_tokens_per_s_per_sequence": "1/latency floor: the fastest a single stream can go on this replica [tokens/s]",
    "cost_floor_at_8k_usd_per_mtok": "Decode cost as B -> inf at 8,192 context: p*max(2*N_act/(F*mfu), "
    "L*b_kv/(W*mbu)) [USD/MTok]",
    "cost_floor_at_128k_usd_per_mtok": "Decode cost floor at 131,072 context [USD/MTok]",
    "prefill_cost_floor_usd_per_mtok": "Input (prefill) cost as the pass grows: p*max(2*N_act/(F*mfu), b_kv/(W*mbu)) "
    "(lecture f.3) [USD/MTok]",
    "scenario_context_tokens": "The scenario's context_tokens (null if the scenario has none) [tokens]",
    "cost_floor_at_scenario_context_usd_per_mtok": "Decode cost floor at the scenario's context [USD/MTok]",
    "max_batch_at_8k_seqs": "Largest batch whose weights + KV fit in the replica's HBM at 8,192 context [sequences]",
    "max_batch_at_128k_seqs": "Largest batch that fits at 131,072 context [sequences]",
    "weight_bytes": "N_tot*b_w [bytes]",
    "replica_hbm_bytes": "G * HBM capacity [bytes]",
    "scale_up_effective_bandwidth_bytes_per_s": "W_eff = S*W of one scale-up domain (lecture d.6) [bytes/s]",
    "hbm_drain_time_s": "HBM capacity / bandwidth of one chip (lecture a.6) [s]",
    "mfu_frac": "Achieved fraction of peak FLOP/s applied to compute terms (scenario prefill_mfu, 1 if absent)",
    "mbu_frac": "Achieved fraction of HBM bandwidth applied to memory terms (scenario decode_mbu, 1 if absent)",
    "usd_per_chip_hour": "Rental price used (scenario gpu_usd_per_hour) [USD/chip-hour]",
}


def with_kv_format(models: pl.DataFrame, kv_format: str) -> pl.DataFrame:
    """KV bytes at ``kv_format`` (``models`` stores them for a BF16 cache)."""
    scale = bytes_per_value(kv_format) / bytes_per_value("bf16")
    return models.with_columns(pl.col("kv_bytes_per_token") * scale, pl.col("kv_window_bytes_per_sequence") * scale)


def format_assumption(scenario, name: str, default: str, allowed=FORMATS) -> str:
    """The number format a scenario names in assumption ``name`` (its text), ``default`` where it has none.

    Raises ``EconError`` for a format not in ``allowed`` (a typo must not fall back silently).
    """
    a = scenario.assumptions.get(name)
    value = default if a is None or a.text is None else a.text
    if value not in allowed:
        raise EconError(
            f"scenario {scenario.name!r} sets {name} to {value!r}, not a number format econ can use here",
            f"use one of {', '.join(allowed)} in data/scenarios.csv",
        )
    return value


def run(ctx) -> None:
    scenario = load_scenario(ctx.con, "base")
    price = scenario["gpu_usd_per_hour"]
    mfu, mbu = scenario.get("prefill_mfu", 1.0), scenario.get("decode_mbu", 1.0)
    kv_format = format_assumption(scenario, "kv_cache_format", "bf16", tuple(BYTES_PER_VALUE))
    chip = scenario.text("serving_chip")
    models = with_kv_format(ctx.query("select * from models order by model"), kv_format)
    hardware = ctx.query("select * from hardware order by chip")
    case_frame = cases(models, hardware)
    mode = (
        f"mfu {mfu:g}, mbu {mbu:g}"
        + (" (pure roofline)" if mfu == 1.0 and mbu == 1.0 else "")
        + f", KV cache at {kv_format}"
    )
    ctx.write(
        "serving_curves",
        curve_frames(case_frame, usd_per_chip_hour=price, mfu=mfu, mbu=mbu),
        f"Decode and prefill roofline of every model x chip x number format over batch 1-65,536 and context "
        f"1,024-1,048,576 (powers of two), at ${price:g}/chip-hour, {mode}; times are lower bounds unless named "
        f"upper; models without a KV figure (attention 'other') are left out. "
        f"Grain: one row per model x chip x format x batch x context.",
        CURVE_COLUMNS,
    )
    ctx.write(
        "serving_summary",
        summary(
            case_frame,
            usd_per_chip_hour=price,
            mfu=mfu,
            mbu=mbu,
            scenario_context_tokens=scenario.get("context_tokens"),
        ),
        f"Per model x chip x number format: R, balance batch, critical context, latency and cost floors, what fits "
        f"(lecture a.3-a.4, b, d.4, d.6), {mode}. Grain: one row per model x chip x format.",
        SUMMARY_COLUMNS,
    )
    for name, (frame, description, columns) in {
        "serving_sparsity": sparsity_table(models),
        "network_ratios": network_table(models, hardware),
        "attention_crossover": attention_table(models, hardware, chip),
        "memory_tier_costs": memory_tier_table(
            models,
            hardware,
            ctx.query("select * from memory_tiers"),
            chip=chip,
            usd_per_chip_hour=price,
            mfu=mfu,
            number_format=format_assumption(scenario, "weight_format", "bf16"),
            kv_format=kv_format,
        ),
        "fast_mode_identity": fast_mode_table(ctx.query("select * from price_current")),
    }.items():
        ctx.write(name, frame, description, columns)
