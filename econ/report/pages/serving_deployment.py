"""Serving page sections of the deployment model: the throughput–speed frontier by chip, where a decode step's
time goes, and what a small batch really reads (tables ``serving_frontier``, ``serving_curves``,
``serving_summary``)."""

from __future__ import annotations

from econ.report.charts import deployment as charts
from econ.report.figures import Figure
from econ.report.page import Download, Section, SiteContext, note

TERM_BATCHES = [1, 16, 256, 4096]

FRONTIER = """
select efficiency_basis, model, chip, number_format, layout, replica_chips, tensor_parallel, attention_data_parallel,
       batch_per_replica, tokens_per_s_per_user, tokens_per_s_per_chip, usd_per_mtok
from serving_frontier
where list_contains(?, model) and number_format = ? and list_contains(?, chip)
order by efficiency_basis, model, chip, tokens_per_s_per_user
"""
FRONTIER_CHIPS = ("H100", "H200", "B200", "GB200", "B300", "MI300X", "MI355X", "TPU7x", "Trainium2", "A100")
"""The chips the frontier chart compares (one current and one older part per vendor where the data has them;
every chip's frontier is in the table and its download): at most ten series in one legend."""

TERMS = """
with picked as (
    select model, chip, batch_seqs, decode_weight_time_s, decode_kv_time_s, decode_compute_time_s, decode_comm_time_s,
           decode_step_time_s
    from serving_curves
    where list_contains(?, model) and list_contains(?, chip) and number_format = ? and context_tokens = ?
      and list_contains(?, batch_seqs) and fits_in_memory
),
final as (
    select model, chip, batch_seqs, 'weights' as term, 0 as term_order, decode_weight_time_s as time_s,
           decode_step_time_s as step_time_s from picked
    union all select model, chip, batch_seqs, 'KV and state', 1, decode_kv_time_s, decode_step_time_s from picked
    union all select model, chip, batch_seqs, 'compute', 2, decode_compute_time_s, decode_step_time_s from picked
    union all select model, chip, batch_seqs, 'communication', 3, decode_comm_time_s, decode_step_time_s from picked
)
select * from final order by model, chip, batch_seqs, term_order
"""

TOUCHED = """
with one as (
    select distinct s.model, s.weight_bytes_touched_batch1_bytes, s.weight_bytes_touched_batch16_bytes,
           d.weight_fp8_bytes, d.weight_bf16_bytes, d.weight_fp4_bytes, s.number_format
    from serving_summary as s join model_derived as d using (model)
    where s.number_format = ? and d.num_routed_experts is not null
),
final as (
    select model, 'batch 1' as reading, weight_bytes_touched_batch1_bytes as bytes from one
    union all select model, 'batch 16', weight_bytes_touched_batch16_bytes from one
    union all select model, 'all weights',
           case number_format when 'bf16' then weight_bf16_bytes when 'fp4' then weight_fp4_bytes
                else weight_fp8_bytes end from one
)
select * from final order by model, reading
"""


def frontier(ctx: SiteContext, models: list[str], number_format: str) -> Section:
    frame = ctx.query(FRONTIER, [models, number_format, list(FRONTIER_CHIPS)])
    if frame.is_empty():
        return Section("Throughput against speed per user", [note("No frontier points.", kind="pending")])
    blocks = [
        Figure(
            "frontier-by-chip",
            charts.frontier_by_chip(frame, models=models),
            frame,
            caption="For each chip, the best throughput per chip any layout (tensor, data and expert parallel degrees, "
            "replica size) and batch reaches at each per-user decode speed: the curve accelerators are compared by. "
            f"{number_format} weights and math, the traffic mix's mean decode context. Solid lines are calibrated "
            f"predictions (efficiencies fitted to measured systems; held-out error {ctx.calibration_error()}); "
            "dashed lines are the roofline bound of the same layouts.",
            formula=f"{ctx.cite('econ.physics.deployment.decode_terms')}; "
            f"{ctx.cite('econ.physics.layout_search.pareto_optimal')}",
            source=f"serving_frontier ({ctx.scalar('select count(*) from serving_frontier'):,} points; the chart shows "
            f"{', '.join(sorted(set(frame['chip'].to_list())))})",
        ),
        note(ctx.description("serving_frontier")),
    ]
    return Section(
        "Throughput against speed per user",
        blocks,
        intro="Small batches on wide replicas buy speed per user; large batches buy throughput per chip.",
    )


def terms(ctx: SiteContext, models: list[str], chips: list[str], number_format: str, context_tokens: float) -> Section:
    frame = ctx.query(TERMS, [models, chips, number_format, int(context_tokens), TERM_BATCHES])
    if frame.is_empty():
        return Section("Where a decode step's time goes", [note("No fitting steps.", kind="pending")])
    blocks = [
        Figure(
            "step-terms",
            charts.step_terms(frame, batches=TERM_BATCHES),
            frame,
            caption="Each term of a decode step on the default layout, stacked: weight bytes touched, KV and "
            "state bytes, FLOPs (weights and attention) and communication (tensor-parallel all-reduce, expert "
            "dispatch and combine). The lower bound is the largest term (they overlap); the upper bound is the "
            f"stack. {int(context_tokens):,} tokens of context.",
            formula=f"{ctx.cite('econ.physics.deployment.overlap_bounds')}; "
            f"{ctx.cite('econ.physics.pool_comm.communication_times_s')}",
            source="serving_curves",
        ),
        Download("step-terms-data", frame, "The step-time terms drawn above"),
    ]
    return Section("Where a decode step's time goes", blocks)


def touched(ctx: SiteContext, number_format: str) -> Section:
    frame = ctx.query(TOUCHED, [number_format])
    if frame.is_empty():
        return Section("What a small batch reads", [note("No mixture-of-experts models.", kind="pending")])
    models = frame["model"].unique().to_list()
    blocks = [
        Figure(
            "small-batch-bytes",
            charts.touched_bytes(frame),
            frame,
            caption=f"Weight bytes one decode step reads ({number_format}), one copy: everything but the routed "
            "experts, plus the distinct experts the batch's tokens route to. A mixture of experts at batch 1 reads "
            "a small share of its weights (DeepSeek-V3: 37 of 671 GB in FP8); by batch 16 a large one. "
            f"{len(models)} mixture-of-experts models.",
            formula=f"{ctx.cite('econ.physics.weights.distinct_experts')}; "
            f"{ctx.cite('econ.physics.weights.weight_bytes_touched')}",
            source="serving_summary, model_derived",
        ),
    ]
    return Section("What a small batch reads", blocks)
