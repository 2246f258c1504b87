"""Serving page sections on the models' architecture: attention vs weight FLOPs against context (table
``attention_crossover``), the sparsity discrepancy (``serving_sparsity``) and the scale-up vs scale-out network ratio
at a pipeline boundary (``network_ratios``)."""

from __future__ import annotations

import polars as pl

from econ.report.charts import serving as charts
from econ.report.figures import Figure
from econ.report.html import Col, details, table
from econ.report.page import Download, Section, SiteContext, note
from econ.report.pages.common import sig3

ATTENTION = """
select model, attention, crossover_context_tokens, crossover_context_absorbed_mla_tokens,
       attention_over_weight_flop_at_8k_ratio, attention_over_weight_flop_at_128k_ratio,
       attention_over_weight_flop_at_1m_ratio, kv_over_attention_time_ratio, chip
from attention_crossover order by crossover_context_tokens, model
"""

NETWORK = """
select model, chip, num_routed_experts, experts_per_token, expert_parallel_chips, distinct_chips_per_token,
       scale_up_over_out_bandwidth_ratio, time_ratio_one_layer_ratio, time_ratio_one_layer_lecture_k_ratio,
       min_layers_per_stage, max_pipeline_stages
from network_ratios join (select distinct chip, scale_up_over_out_bandwidth_ratio from hardware_derived) using (chip)
where list_contains(?, model) and list_contains(?, chip)
order by model, chip
"""


def attention(ctx: SiteContext, context_tokens: float | None) -> Section:
    frame = ctx.query(ATTENTION)
    finite = frame.filter(pl.col("crossover_context_tokens").is_finite())
    never = frame.filter(~pl.col("crossover_context_tokens").is_finite())["model"].to_list()
    blocks = []
    if finite.height:
        left_out = (
            f" Not shown (attention never overtakes, or the layout is unknown): {', '.join(never)}." if never else ""
        )
        blocks.append(
            Figure(
                "attention-crossover",
                charts.attention_crossover(finite, context_tokens=context_tokens),
                finite,
                caption="Context length at which a decode token's attention FLOPs equal its weight FLOPs 2·N_act, per "
                "model (sliding-window layers counted up to their window; compressed layers (csa) per cached entry, "
                "one per 4 or 128 tokens; every cached token counted, no sparse top-k; chunked layers (Llama-4) "
                "counted as full; linear-attention layers not counted). "
                "Black ticks: the same for MLA computed in the latent space, as decode kernels do."
                f"{left_out}",
                formula=ctx.cite("econ.physics.attention.attention_flop_per_token"),
                source="attention_crossover table of the serving analysis, from the models table (config.json)",
            )
        )
    blocks.append(
        details(
            f"Attention over weight FLOPs at 8k, 128k and 1M context, every model ({frame.height})",
            table(
                frame,
                [
                    Col("model", "Model"),
                    Col("attention", "Attention"),
                    Col("crossover_context_tokens", "Crossover (tokens)", kind="num", fmt=sig3),
                    Col("attention_over_weight_flop_at_8k_ratio", "At 8k (ratio)", kind="num", fmt=sig3),
                    Col("attention_over_weight_flop_at_128k_ratio", "At 128k (ratio)", kind="num", fmt=sig3),
                    Col("attention_over_weight_flop_at_1m_ratio", "At 1M (ratio)", kind="num", fmt=sig3),
                    Col(
                        "kv_over_attention_time_ratio", "KV read / attention compute time (ratio)", kind="num", fmt=sig3
                    ),
                    Col("chip", "On chip"),
                ],
                caption="Attention FLOPs over weight FLOPs per decode token; the last column compares reading a "
                "context "
                "token's KV with computing its attention (lecture h.2: memory, not compute, limits context)",
                id="attention",
            ),
        )
    )
    return Section("Attention vs weight FLOPs", blocks)


def sparsity(ctx: SiteContext) -> Section:
    frame = ctx.query(
        "select s.*, d.sparsity_param_ratio, d.sparsity_expert_ratio from serving_sparsity as s "
        "join model_derived as d using (model) order by lecture_sparsity_ratio is null, model"
    )
    return Section(
        "Sparsity: parameters, experts, and the lecture's figure",
        [
            table(
                frame,
                [
                    Col("model", "Model"),
                    Col("sparsity_param_ratio", "N_tot/N_act (ratio)", kind="num", fmt=sig3),
                    Col("sparsity_expert_ratio", "Experts E/k (ratio)", kind="num", fmt=sig3),
                    Col("lecture_sparsity_ratio", "Lecture's figure (ratio)", kind="num", fmt=sig3),
                    Col("balance_batch_param_r300_seqs", "300 × N_tot/N_act (sequences)", kind="num", fmt=sig3),
                    Col("balance_batch_expert_r300_seqs", "300 × E/k (sequences)", kind="num", fmt=sig3),
                    Col("balance_batch_lecture_r300_seqs", "300 × lecture's (sequences)", kind="num", fmt=sig3),
                ],
                caption="“Optimal batch ≈ 300 × sparsity” depends on which sparsity: DeepSeek-V3 is 671/37 ≈ 18 by "
                "parameters (what the derivation uses), 256/8 = 32 by routed experts, and 8 as said in the "
                "lecture (“32 out of 256”), so B*₀ is 5,400, 9,600 or 2,400",
                id="sparsity",
            ),
        ],
        intro=f"{ctx.cite('econ.physics.model.sparsity_param_ratio')}.",
    )


def network(ctx: SiteContext, models: list[str], chips: list[str]) -> Section:
    frame = ctx.query(NETWORK, [models, chips])
    blocks = []
    if frame.height:
        blocks.append(
            table(
                frame,
                [
                    Col("model", "Model"),
                    Col("chip", "Chip"),
                    Col("num_routed_experts", "Experts E", kind="num"),
                    Col("experts_per_token", "Per token k", kind="num"),
                    Col("expert_parallel_chips", "E_p (chips)", kind="num", fmt=sig3),
                    Col("distinct_chips_per_token", "k_GPU (chips)", kind="num", fmt=sig3),
                    Col("scale_up_over_out_bandwidth_ratio", "W_up/W_out (ratio)", kind="num", fmt=sig3),
                    Col("time_ratio_one_layer_ratio", "t_up/t_out, 1 layer (ratio)", kind="num", fmt=sig3),
                    Col("time_ratio_one_layer_lecture_k_ratio", "Same with k (ratio)", kind="num", fmt=sig3),
                    Col("min_layers_per_stage", "Min MoE layers per stage", kind="num", fmt=sig3),
                    Col("max_pipeline_stages", "Max pipeline stages", kind="num", fmt=sig3),
                ],
                caption="Charted mixtures of experts on the charted chips: scale-out is not the bottleneck while "
                "t_up/t_out ≥ 1",
                id="network",
            )
        )
    else:
        blocks.append(note("None of the charted models is a mixture of experts on the charted chips.", kind="pending"))
    blocks.append(
        Download(
            "network-ratios",
            ctx.query("select * from network_ratios order by model, chip"),
            "Every mixture of experts × chip",
        )
    )
    return Section(
        "Scale-up vs scale-out at a pipeline boundary",
        blocks,
        intro=f"{ctx.cite('econ.physics.network.scale_up_over_scale_out_time_ratio')}.",
    )
