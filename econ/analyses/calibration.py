"""``calibration_points``, ``calibration_parameters``, ``calibration_errors``: the deployment model against
measured systems.

Each row of ``measured_points`` is either excluded with its reason (the source's, or econ's: no architecture, no
chip, no stated token kind, a layout that does not fit) or predicted from its layout, formats and lengths by
:func:`econ.fits.calibration.predict` on step terms at peak; the efficiencies are fitted by
:func:`econ.fits.calibration.fit_calibration` and checked by leave-one-source-out cross-validation. Where a
source is silent econ assumes, and says so in ``assumed``: the KV cache in BF16, the math in the weights' format
(BF16 on a chip without that format), every data-parallel rank replicating attention and the non-expert weights,
one pipeline stage, a single-stream context of :data:`SINGLE_STREAM_CONTEXT_TOKENS`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_columns import ERRORS, PARAMETERS, POINTS
from econ.fits import calibration as cal
from econ.formats import bytes_per_value, kv_scale
from econ.physics import deployment

NAME = "calibration"
INPUTS = ("measured_points", "model_derived", "hardware", "hardware_derived", "scenarios")
TABLES = (POINTS, PARAMETERS, ERRORS)

DECODE_BATCH = np.geomspace(1.0, 131_072.0, 69)  # 2^(k/4): sequences per decode replica
PREFILL_PROMPTS = np.geomspace(1.0, 65_536.0, 33)  # 2^(k/2): prompts per prefill pass
SINGLE_STREAM_CONTEXT_TOKENS = 2048.0
"""Context of a batch-1 point whose source gives no lengths: at batch 1 the weights dominate the bytes read, so
the prediction moves by under 2% between 512 and 8,192 tokens for the models measured so (tested)."""

MEANING = {
    "prefill_mfu_frac": "achieved share of peak FLOP/s of a prefill pass's non-expert weight and attention FLOPs",
    "decode_mfu_frac": "achieved share of peak FLOP/s of a decode step's non-expert weight and attention FLOPs",
    "expert_mfu_frac": "achieved share of peak FLOP/s of the routed experts' grouped GEMMs (both pools)",
    "hbm_bandwidth_frac": "achieved share of HBM bandwidth (sets prefill_mbu_frac and decode_mbu_frac)",
    "link_bandwidth_frac": "achieved share of scale-up and scale-out link bandwidth",
    "step_overhead_s": "fixed time per step or pass no roofline term explains (launches, scheduling, latencies)",
}
QUANTITY = {
    "offline": "output tokens/s per chip",
    "disaggregated": "output tokens/s per chip",
    "decode": "output tokens/s per chip",
    "prefill": "input tokens/s per chip",
    "single_stream": "output tokens/s per user",
}
TOKENS_NEEDED = {"offline": "output", "disaggregated": "output", "decode": "output", "prefill": "input"}

POINTS_SQL = """
select p.*, h.architecture,
       d.peak_flop_per_s as format_peak_flop_per_s, b.peak_flop_per_s as bf16_peak_flop_per_s,
       f8.peak_flop_per_s as fp8_peak_flop_per_s
from measured_points as p
left join hardware as h using (chip)
left join hardware_derived as d on d.chip = p.chip and d.number_format = coalesce(p.compute_format, p.weight_format)
left join hardware_derived as b on b.chip = p.chip and b.number_format = 'bf16'
left join hardware_derived as f8 on f8.chip = p.chip and f8.number_format = 'fp8'
order by p.point_id
"""


def _reasons(p: pl.DataFrame, models: set[str]) -> pl.Series:
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


def _assumed(p: pl.DataFrame) -> pl.Series:
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
    return {
        "tensor_parallel": tp[:, None],
        "attention_data_parallel": (chips / tp)[:, None],
        "pipeline_parallel": ones,
        "replicate_attention": flag,
        "replicate_shared_experts": flag,
        "replicate_dense": flag,
        "replicate_embeddings": flag,
        "redundant_expert_slots": 0.0 * ones,
    }


def _f(p: pl.DataFrame, name: str) -> np.ndarray:
    return p[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def _pool(out: dict, tokens, layout: dict, stated: np.ndarray, limit: np.ndarray, chip: dict, reserve) -> cal.Pool:
    shape = np.broadcast_shapes(np.shape(out["step_time_s"]), np.shape(tokens))

    def grid(x):
        return np.broadcast_to(np.asarray(x, dtype=float), shape)

    fits = out["memory_per_chip_bytes"] <= chip["hbm_capacity_bytes"] * (1.0 - reserve)
    return cal.Pool(
        weight_flop=grid(out["weight_flop_per_chip"]),
        expert_flop=grid(out["expert_flop_per_chip"]),
        attention_flop=grid(out["attention_flop_per_chip"]),
        peak_flop_per_s=grid(chip["peak_flop_per_s"]),
        attention_peak_flop_per_s=grid(chip["attention_peak_flop_per_s"]),
        memory_time_s=grid(out["memory_time_s"]),
        comm_time_s=grid(out["comm_time_s"]),
        tokens=grid(tokens),
        fits=np.broadcast_to(fits, shape),
        replica_chips=layout["tensor_parallel"] * layout["attention_data_parallel"],
        stated=stated,
        limit_s=np.where(np.isnan(limit), np.inf, limit)[:, None],
    )


def problem(p: pl.DataFrame, models: pl.DataFrame, reserve: float) -> cal.Problem:
    """The fit's problem of the included points ``p`` (joined to their chips' peaks) and their models."""
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
    decode = _pool(d_out, batch, d_layout, ~np.isnan(stated_b), _f(p, "tpot_limit_s"), chip, reserve)
    prefill = _pool(
        p_out, prompts * prompt[:, None], p_layout, ~np.isnan(stated_pass), _f(p, "ttft_limit_s"), chip, reserve
    )
    families = tuple(sorted(set(p["architecture"].to_list())))
    chips = _f(p, "chips_measured")
    share = _f(p, "decode_chips_measured") / chips
    measured = _f(p, "measured_value") / np.where(regime == "single_stream", 1.0, _f(p, "value_chips"))
    return cal.Problem(
        regime=regime,
        family=np.array([families.index(a) for a in p["architecture"].to_list()]),
        families=families,
        source=p["source"].to_numpy(),
        log_measured=np.log(measured),
        input_tokens=np.where(np.isnan(isl), 0.0, isl),
        output_tokens=np.where(np.isnan(osl), 0.0, osl),
        decode_chips_share=np.where(np.isnan(share), 1.0, share),
        decode=decode,
        prefill=prefill,
    )


def _subset(pr: cal.Problem, keep: np.ndarray) -> cal.Problem:
    def pool(x: cal.Pool) -> cal.Pool:
        return cal.Pool(**{k: np.asarray(getattr(x, k))[keep] for k in x.__dataclass_fields__})

    families = tuple(sorted({pr.families[i] for i in pr.family[keep]}))
    return cal.Problem(
        regime=pr.regime[keep],
        family=np.array([families.index(pr.families[i]) for i in pr.family[keep]], dtype=int),
        families=families,
        source=pr.source[keep],
        log_measured=pr.log_measured[keep],
        input_tokens=pr.input_tokens[keep],
        output_tokens=pr.output_tokens[keep],
        decode_chips_share=pr.decode_chips_share[keep],
        decode=pool(pr.decode),
        prefill=pool(pr.prefill),
    )


def _errors(frame: pl.DataFrame) -> pl.DataFrame:
    """calibration_errors from the included points' ratios."""
    rows = []
    inc = frame.filter(pl.col("included"))
    for basis, col in (
        ("cv", "cv_over_measured_ratio"),
        ("calibrated", "calibrated_over_measured_ratio"),
        ("bound", "bound_over_measured_ratio"),
    ):
        log_ratio = inc.select(
            pl.col(col).log().alias("r"), "chip", "architecture", "arch_model", "source", "publisher", "regime"
        )
        for kind, key in (
            ("overall", None),
            ("chip", "chip"),
            ("architecture", "architecture"),
            ("model", "arch_model"),
            ("source", "source"),
            ("publisher", "publisher"),
            ("regime", "regime"),
        ):
            grouped = log_ratio.with_columns(pl.lit("all").alias("_g") if key is None else pl.col(key).alias("_g"))
            agg = grouped.group_by("_g").agg(
                pl.len().alias("n_points"),
                pl.col("r").abs().median().alias("median_abs_log_ratio"),
                pl.col("r").abs().quantile(0.9, interpolation="linear").alias("p90_abs_log_ratio"),
                pl.col("r").median().alias("median_log_ratio"),
            )
            rows.append(
                agg.with_columns(
                    pl.lit(basis).alias("basis"), pl.lit(kind).alias("group_kind"), pl.col("_g").alias("group")
                )
            )
    out = pl.concat(rows).with_columns(
        pl.col("median_abs_log_ratio").exp().alias("error_factor"),
        pl.col("p90_abs_log_ratio").exp().alias("error_factor_p90"),
    )
    return out.select(ERRORS.names).sort("basis", "group_kind", "group")


def _informed(frame: pl.DataFrame, family: str | None) -> tuple[int, str]:
    rows = frame.filter(pl.col("included") & ((pl.col("architecture") == family) if family else pl.lit(True)))
    regimes = ", ".join(sorted(set(rows["regime"].to_list())))
    sources = len(set(rows["source"].to_list()))
    return rows.height, f"{regimes} points from {sources} source{'s' if sources != 1 else ''}"


def run(ctx) -> None:
    base = ctx.scenario("base")
    p = ctx.query(POINTS_SQL)
    models = ctx.query("select * from model_derived where kv_bytes_per_token is not null")
    hw = ctx.query(
        "select chip, hbm_capacity_bytes, hbm_bandwidth_bytes_per_s, scale_up_domain_chips, "
        "scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s from hardware"
    )
    p = p.join(hw, on="chip", how="left").with_columns(
        _reasons(p, set(models["model"].to_list())).alias("_reason"), _assumed(p).alias("assumed")
    )
    p = p.sort("point_id")
    candidates = p.filter(pl.col("_reason").is_null())
    pr = problem(candidates, models, base.hbm_reserve_frac)
    bound_all = cal.predict(pr, cal.idealised(pr))
    runs = np.isfinite(bound_all["value"]) & (bound_all["value"] > 0)
    no_fit = (
        "the stated layout does not hold the weights and one sequence in econ's memory model (HBM less the "
        f"{base.hbm_reserve_frac:.0%} reserve)"
    )
    candidates = candidates.with_columns(pl.Series("_reason", [None if r else no_fit for r in runs], dtype=pl.String))
    pr = _subset(pr, runs)
    result = cal.fit_calibration(pr)
    z = cal.usable(result)
    predicted = cal.predict(pr, cal.efficiencies(z, pr))
    bound = cal.predict(pr, cal.idealised(pr))
    cv = np.exp(cal.cross_validate(pr, result) + pr.log_measured)
    measured = np.exp(pr.log_measured)
    d_pick, p_pick = predicted["decode_pick"], predicted["prefill_pick"]
    rows = np.arange(pr.n)
    fitted = (
        candidates.filter(pl.Series(runs))
        .with_columns(
            pl.Series("measured_value_per", measured),
            pl.Series("bound_value", bound["value"]),
            pl.Series("calibrated_value", predicted["value"]),
            pl.Series("cv_value", cv),
            pl.Series("decode_batch_per_replica", pr.decode.tokens[rows, d_pick]),
            pl.Series("prefill_tokens_per_pass", pr.prefill.tokens[rows, p_pick]),
            pl.Series("limit_met", predicted["limit_met"]),
            pl.lit(True).alias("included"),
        )
        .with_columns(
            pl.when(pl.col("regime").is_in(["prefill", "offline", "disaggregated"]))
            .then(pl.col("prefill_tokens_per_pass"))
            .otherwise(None)
            .alias("prefill_tokens_per_pass"),
            pl.when(pl.col("regime") == "prefill")
            .then(None)
            .otherwise(pl.col("decode_batch_per_replica"))
            .alias("decode_batch_per_replica"),
        )
    )
    others = (
        p.filter(~pl.col("point_id").is_in(fitted["point_id"].to_list()))
        .join(candidates.select("point_id", pl.col("_reason").alias("_fit_reason")), on="point_id", how="left")
        .with_columns(pl.coalesce("_reason", "_fit_reason").alias("_reason"), pl.lit(False).alias("included"))
    )
    frame = pl.concat([fitted, others], how="diagonal_relaxed").sort("point_id")
    regime = pl.col("regime")
    frame = frame.with_columns(
        regime.replace_strict(QUANTITY, default=None).alias("measured_quantity"),
        pl.when(pl.col("included"))
        .then(pl.col("measured_value_per"))
        .otherwise(
            pl.col("measured_value") / pl.when(regime == "single_stream").then(1).otherwise(pl.col("value_chips"))
        )
        .alias("measured_value"),
        pl.when(pl.col("included"))
        .then(pl.col("input_tokens") + pl.col("output_tokens").fill_null(0) / 2)
        .alias("_ctx"),
        pl.col("_reason").alias("exclusion_reason"),
    ).with_columns(
        (pl.col("bound_value") / pl.col("measured_value")).alias("bound_over_measured_ratio"),
        (pl.col("calibrated_value") / pl.col("measured_value")).alias("calibrated_over_measured_ratio"),
        (pl.col("cv_value") / pl.col("measured_value")).alias("cv_over_measured_ratio"),
        pl.coalesce("context_tokens", "_ctx").alias("decode_context_tokens"),
    )
    ctx.write(POINTS, frame.select(POINTS.names))

    params = []
    for r in cal.natural(result, pr):
        n, informed = _informed(frame, r["family"] or None)
        params.append(
            {
                **r,
                "unit": "s" if r["parameter"] == "step_overhead_s" else "fraction",
                "status": result.status,
                "interval_kind": result.interval_kind,
                "n_points": n,
                "informed_by": informed,
                "meaning": MEANING[r["parameter"]] + (f", on {r['family']} chips" if r["family"] else ""),
            }
        )
    ctx.write(PARAMETERS, pl.DataFrame(params).select(PARAMETERS.names))
    ctx.write(ERRORS, _errors(frame))
