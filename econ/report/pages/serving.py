"""Serving page: the decode roofline (latency and cost per token against batch), balance batch and drain time
by chip and what fits in memory. The page's deployment sections are in
:mod:`econ.report.pages.serving_deployment`, its sections on the models' architecture (attention vs weight FLOPs,
the sparsity discrepancy, the network ratio) in :mod:`econ.report.pages.serving_architecture`.

``serving_curves`` holds every model × chip × format × batch × context (hundreds of thousands of
rows), so the page charts a default selection chosen in SQL: the lecture's examples
(DeepSeek-V3, Llama-3.1-70B, gpt-oss-120b) on H100, B200 and GB200, at the scenario's weight
format and the sweep context nearest the scenario's context; the full tables are downloads.
"""

from __future__ import annotations

import polars as pl

from econ.report import serving_findings
from econ.report.charts import serving as charts
from econ.report.figures import Figure
from econ.report.html import Col, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages import serving_architecture as architecture
from econ.report.pages import serving_deployment as deployment
from econ.report.pages.common import guarded, nearest_on_log_grid, pick, setting, sig3

NAME = "serving"
TITLE = "Serving"
SUMMARY = (
    "Latency and cost per token against batch, balance batch and drain time by chip, what fits in memory, "
    "attention vs weight FLOPs, and the sparsity discrepancy."
)
REQUIRES = ("serving_curves", "serving_summary")

PREFERRED_MODELS = ("DeepSeek-V3", "Llama-3.1-70B", "gpt-oss-120b")
PREFERRED_CHIPS = ("H100", "B200", "GB200")
DEFAULT_CONTEXT_TOKENS = 8192.0
SOURCE = (
    "serving_curves / serving_summary tables of the serving analysis, from the hardware table (vendor "
    "datasheets) and the models table (config.json of each open model)"
)

CURVES = """
select model, chip, context_tokens, replica_chips, batch_seqs, decode_step_time_s, output_usd_per_mtok, decode_bound,
       case when fits_in_memory then 'fits' else 'does not fit' end as fit
from serving_curves
where list_contains(?, model) and list_contains(?, chip) and number_format = ? and context_tokens = ?
order by model, chip, batch_seqs
"""

SUMMARY_SQL = """
select model, chip, number_format, replica_chips, tensor_parallel, attention_data_parallel, pipeline_parallel,
       h.critical_batch_ratio, d.sparsity_param_ratio, weight_bytes_touched_batch1_bytes,
       weight_bytes_touched_batch16_bytes,
       case number_format when 'bf16' then d.weight_bf16_bytes when 'fp4' then d.weight_fp4_bytes
            else d.weight_fp8_bytes end as weight_bytes,
       balance_batch_seqs, balance_batch_achieved_seqs, critical_context_tokens, balance_batch_at_8k_seqs,
       latency_floor_s,
       max_tokens_per_s_per_sequence, cost_floor_at_8k_usd_per_mtok, cost_floor_at_128k_usd_per_mtok,
       prefill_cost_floor_usd_per_mtok, max_batch_at_8k_seqs, max_batch_at_128k_seqs, decode_mfu_frac as mfu_frac,
       decode_mbu_frac as mbu_frac, usd_per_chip_hour
from serving_summary join hardware_derived as h using (chip, number_format) join model_derived as d using (model)
where list_contains(?, model) and list_contains(?, chip) and number_format = ?
order by list_position(?, model), list_position(?, chip)
"""

BALANCE = """
select chip, model, number_format, balance_batch_seqs, h.critical_batch_ratio
from serving_summary join hardware_derived as h using (chip, number_format)
where list_contains(?, model)
qualify row_number() over (partition by chip, model
                           order by (number_format = ?) desc, (number_format = 'bf16') desc, number_format) = 1
order by chip, model
"""

DRAIN = """
select distinct chip, hbm_drain_time_s, hbm_capacity_bytes, hbm_bandwidth_bytes_per_s
from hardware_derived order by chip
"""

MEMORY_FIT = """
select model, chip, any_value(replica_chips) as replica_chips, context_tokens,
       max(batch_seqs) filter (where fits_in_memory) as max_batch_seqs
from serving_curves
where list_contains(?, model) and list_contains(?, chip) and number_format = ?
group by model, chip, context_tokens
order by model, chip, context_tokens
"""


class Selection:
    """What the roofline charts show: models, chips, number format and context (chosen from the tables)."""

    def __init__(self, ctx: SiteContext):
        models = [r[0] for r in ctx.con.sql("select distinct model from serving_summary").fetchall()]
        chips = [r[0] for r in ctx.con.sql("select distinct chip from serving_summary").fetchall()]
        self.models = pick(models, PREFERRED_MODELS, 3)
        self.chips = pick(chips, PREFERRED_CHIPS, 3)
        formats = {
            r[0]
            for r in ctx.con.sql(
                "select number_format from serving_summary where list_contains(?, model) and list_contains(?, chip) "
                "group by number_format having count(*) = ?",
                params=[self.models, self.chips, len(self.models) * len(self.chips)],
            ).fetchall()
        }
        wanted = setting(ctx, "weight_format")[1]
        self.scenario_format = wanted or "bf16"
        self.number_format = (
            wanted if wanted in formats else ("bf16" if "bf16" in formats else min(formats, default="bf16"))
        )
        self.scenario_context = setting(ctx, "context_tokens")[0]
        grid = [r[0] for r in ctx.con.sql("select distinct context_tokens from serving_curves").fetchall()]
        self.context_tokens = nearest_on_log_grid(grid, self.scenario_context, DEFAULT_CONTEXT_TOKENS)

    def describe(self) -> str:
        context = f"{fmt_num(int(self.context_tokens))} tokens of context"
        if self.scenario_context:
            context += f" (the sweep's grid point nearest scenario context {fmt_num(self.scenario_context)})"
        fmt = self.number_format + (
            ""
            if self.number_format == self.scenario_format
            else f" (the scenario's {self.scenario_format} is not available for every chip)"
        )
        return f"{', '.join(self.models)} on {', '.join(self.chips)}, {fmt} weights and math, {context}"


def render(ctx: SiteContext) -> PageContent:
    sel = Selection(ctx)
    summary = ctx.query(SUMMARY_SQL, [sel.models, sel.chips, sel.number_format, sel.models, sel.chips])
    sections = [
        guarded("Latency and cost against batch", lambda: _roofline(ctx, sel, summary)),
        guarded("Balance batch and drain time by chip", lambda: _by_chip(ctx, sel)),
        guarded("What fits in memory against context", lambda: _memory(ctx, sel)),
    ]
    if ctx.has("serving_frontier"):
        sections.insert(
            1,
            guarded(
                "Throughput against speed per user", lambda: deployment.frontier(ctx, sel.models, sel.number_format)
            ),
        )
    sections.insert(
        2,
        guarded(
            "Where a decode step's time goes",
            lambda: deployment.terms(ctx, sel.models, sel.chips, sel.number_format, sel.context_tokens),
        ),
    )
    sections.insert(3, guarded("What a small batch reads", lambda: deployment.touched(ctx, sel.number_format)))
    if ctx.has("attention_crossover"):
        sections.append(guarded("Attention vs weight FLOPs", lambda: architecture.attention(ctx, sel.scenario_context)))
    if ctx.has("serving_sparsity"):
        sections.append(
            guarded("Sparsity: parameters, experts, and the lecture's figure", lambda: architecture.sparsity(ctx))
        )
    if ctx.has("network_ratios"):
        sections.append(
            guarded(
                "Scale-up vs scale-out at a pipeline boundary", lambda: architecture.network(ctx, sel.models, sel.chips)
            )
        )
    return PageContent(
        title=TITLE,
        lead=(
            "What one decode step costs in time and money on real chips under a parallel layout: a step takes at "
            "least the longest of its compute time (weights and attention), its memory time (the weights the batch "
            "touches plus its KV cache and state) and its communication time (lecture section a, extended to "
            "tensor, expert and data parallelism), every sequence gets one token per step, and the chips are paid "
            "for by the second. The roofline panels are bounds (every efficiency 1); the throughput-speed frontier "
            "is the calibrated prediction, drawn beside its bound. "
            f"Charts show {sel.describe()}; the full sweep is a download."
        ),
        sections=sections,
        findings=serving_findings.serving(ctx),
    )


def _assumptions(summary: pl.DataFrame) -> str:
    if summary.is_empty():
        return ""
    row = summary.row(0, named=True)
    prices = summary.select("chip", "usd_per_chip_hour").unique().sort("chip")
    priced = ", ".join(f"{c} {fmt_num(p)}" for c, p in prices.iter_rows())
    return (
        f"at each chip's on-demand rental price where one is quoted, else the scenario's (USD/chip-hour: {priced}; "
        f"serving_summary.price_basis), mfu {fmt_num(row['mfu_frac'])}, mbu {fmt_num(row['mbu_frac'])}"
    )


def _roofline(ctx: SiteContext, sel: Selection, summary: pl.DataFrame) -> Section:
    curves = ctx.query(CURVES, [sel.models, sel.chips, sel.number_format, int(sel.context_tokens)])
    # the curves apply the scenario's mfu/mbu, so they turn at B*0*mfu/mbu, not at the peak B*0
    marks = summary.select(
        "model", "chip", pl.col("balance_batch_achieved_seqs").alias("balance_batch_seqs"), "latency_floor_s"
    )
    blocks = []
    if curves.is_empty():
        blocks.append(note("The serving sweep holds no rows for this selection.", kind="pending"))
    else:
        assumptions = _assumptions(summary)
        compute = curves.filter(pl.col("decode_bound") == "compute").height
        regime = (
            "Squares: compute-bound steps; circles: memory-bound; faded points need more HBM than the replica "
            "has (weights + KV of the whole batch). "
            + (
                f"{compute} of the {curves.height} charted steps are compute-bound."
                if compute
                else "Every charted step is memory-bound: the context exceeds each model's critical context L* "
                "(table below), so the KV read grows with the batch as fast as the compute and the step never "
                "turns compute-bound (lecture b.3); B*₀ marks where it would with weights alone."
            )
        )
        for metric, slug, caption, formula in (
            (
                "latency",
                "latency-vs-batch",
                "Time of one decode step (each sequence gets one token per step) against batch, on each case's "
                f"default layout (table: chips, TP, DP, PP), {assumptions}. Dashed vertical lines: the balance batch "
                "where weight-read time equals compute time at the scenario's mfu and mbu (B*₀·mfu/mbu); dotted "
                "horizontal lines: the latency floor, the step of one sequence (its weights touched, attention, "
                f"communication), which no batch beats. Steps longer than {charts.LATENCY_CHART_MAX_S:g} s per token "
                f"are left off the chart (they are in its CSV). {regime}",
                f"{ctx.cite('econ.physics.deployment.overlap_bounds')}; "
                f"{ctx.cite('econ.physics.weights.distinct_experts')}; "
                f"{ctx.cite('econ.physics.roofline.balance_batch')}",
            ),
            (
                "cost",
                "cost-vs-batch",
                f"Decode cost per output token against batch, {assumptions}: the chip-seconds of a step shared by "
                "the batch. Dashed lines: B*₀·mfu/mbu; past it the cost flattens to the compute (or KV) floor. "
                f"{regime}",
                f"{ctx.cite('econ.physics.roofline.usd_per_token')}; "
                f"{ctx.cite('econ.physics.roofline.decode_cost_floor_usd_per_token')}; "
                f"{ctx.cite('econ.physics.roofline.balance_batch')}",
            ),
        ):
            blocks.append(
                Figure(
                    slug,
                    charts.roofline_panels(curves, marks, metric=metric, models=sel.models, chips=sel.chips),
                    curves,
                    caption=caption,
                    formula=formula,
                    source=SOURCE + "; scenario assumptions",
                )
            )
    blocks.append(
        table(
            summary,
            [
                Col("model", "Model"),
                Col("chip", "Chip"),
                Col("replica_chips", "Chips per replica", kind="num"),
                Col("tensor_parallel", "TP", kind="num"),
                Col("attention_data_parallel", "DP", kind="num"),
                Col("pipeline_parallel", "PP", kind="num"),
                Col("critical_batch_ratio", "R (ratio)", kind="num", fmt=sig3),
                Col("sparsity_param_ratio", "N_tot/N_act (ratio)", kind="num", fmt=sig3),
                Col("balance_batch_seqs", "B*₀ at peak (sequences)", kind="num", fmt=sig3),
                Col("balance_batch_achieved_seqs", "B*₀·mfu/mbu (sequences)", kind="num", fmt=sig3),
                Col("critical_context_tokens", "L* (tokens)", kind="num", fmt=sig3),
                Col("balance_batch_at_8k_seqs", "B* at 8k context (sequences)", kind="num", fmt=sig3),
                Col("latency_floor_s", "Latency floor (s)", kind="num", fmt=sig3),
                Col("max_tokens_per_s_per_sequence", "Fastest stream (tokens/s)", kind="num", fmt=sig3),
                Col("cost_floor_at_8k_usd_per_mtok", "Output cost floor at 8k (USD/MTok)", kind="num", fmt=sig3),
                Col("cost_floor_at_128k_usd_per_mtok", "Output cost floor at 128k (USD/MTok)", kind="num", fmt=sig3),
                Col("prefill_cost_floor_usd_per_mtok", "Input cost floor (USD/MTok)", kind="num", fmt=sig3),
                Col("max_batch_at_8k_seqs", "Largest batch at 8k (sequences)", kind="num"),
                Col("max_batch_at_128k_seqs", "Largest batch at 128k (sequences)", kind="num"),
            ],
            caption="The charted models and chips: balance batch, critical context, floors and what fits "
            f"({sel.number_format}; B*(L) = B*₀/(1 − L/L*) is blank where L ≥ L*, memory-bound at every batch)",
            id="serving-summary",
        )
    )
    blocks.append(
        Download(
            "serving-summary-all",
            ctx.query("select * from serving_summary order by model, chip, number_format"),
            "Every model × chip × format: balance batch, floors, what fits",
        )
    )
    return Section(
        "Latency and cost against batch",
        blocks,
        intro="Below B*₀ the step is memory-bound and adding sequences is nearly free; above it the "
        "step grows with the batch and the cost per token stops falling.",
    )


def _by_chip(ctx: SiteContext, sel: Selection) -> Section:
    balance = ctx.query(BALANCE, [sel.models, sel.number_format])
    drain = ctx.query(DRAIN) if ctx.has("hardware_derived") else pl.DataFrame()
    blocks = []
    if balance.height and drain.height:
        blocks.append(
            Figure(
                "balance-drain",
                charts.balance_and_drain(balance, drain, models=sel.models),
                balance,
                caption=f"Left: the balance batch of each charted model on every chip ({sel.number_format} where the "
                "chip supports it, else bf16; R is nearly the same for every format when weights are stored "
                "at the math's precision). A dense model's B*₀ is R; a mixture of experts multiplies it by its "
                "sparsity N_tot/N_act. Right: how long one chip takes to read its whole HBM, the lecture's "
                "~20 ms step time.",
                formula=f"{ctx.cite('econ.physics.roofline.balance_batch')}; "
                f"{ctx.cite('econ.physics.roofline.critical_batch_ratio')}; "
                f"{ctx.cite('econ.physics.hardware.drain_time_s')}",
                source=SOURCE + "; drain times from the hardware_derived view",
            )
        )
        blocks.append(Download("drain-times", drain, "HBM capacity, bandwidth and drain time per chip"))
    else:
        blocks.append(note("No hardware_derived view or serving rows for the charted models.", kind="pending"))
    return Section("Balance batch and drain time by chip", blocks)


def _memory(ctx: SiteContext, sel: Selection) -> Section:
    frame = ctx.query(MEMORY_FIT, [sel.models, sel.chips, sel.number_format])
    blocks = []
    if frame.height and frame["max_batch_seqs"].is_not_null().any():
        blocks.append(
            Figure(
                "memory-fit",
                charts.memory_fit(frame, models=sel.models, context_tokens=sel.scenario_context),
                frame,
                caption="The largest batch on the sweep's power-of-two grid whose weights plus KV cache fit the "
                "replica's "
                f"HBM ({sel.number_format} weights, KV at the scenario's cache format), against context. "
                "Lines end where not even one sequence fits; compare with B*₀ above to see whether the "
                "balance batch can be held at all.",
                formula=f"{ctx.cite('econ.physics.memory.memory_per_chip_micro_batch_bytes')}; fits ⇔ N_tot·b_w + "
                "B·L·b_kv ≤ G·C_HBM",
                source=SOURCE,
            )
        )
    else:
        blocks.append(note("No batch fits in memory for the charted selection.", kind="pending"))
    return Section("What fits in memory against context", blocks)
