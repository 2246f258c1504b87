"""Fleet page: the chips, racks, megawatts and dollars that serve the scenario's traffic, the cost–speed frontier,
and how serving and training share a fleet (tables ``fleet_plan``, ``serving_frontier``, ``training_fleet``)."""

from __future__ import annotations

import dataclasses

import polars as pl

from econ.report import serving_findings
from econ.report.charts import axis_title
from econ.report.charts import fleet as charts
from econ.report.figures import Figure
from econ.report.html import Col, Markup, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import interval_text

NAME = "fleet"
TITLE = "Fleet"
SUMMARY = "Chips, racks, power and cost to serve a usage scenario; the cost–speed frontier; serving vs training."
REQUIRES = ("fleet_plan", "serving_frontier", "training_fleet")

PLAN = """
select * from fleet_plan where scenario = ? and price_kind = 'scenario' order by deployment
"""

BREAKDOWN = """
select deployment, 'prefill' as pool, prefill_chips as chips, prefill_usd_per_day as usd_per_day,
usd_per_chip_hour
from fleet_plan where scenario = ? and price_kind = 'scenario' and chips is not null
union all
select deployment, 'decode', decode_chips, decode_usd_per_day, usd_per_chip_hour
from fleet_plan where scenario = ? and price_kind = 'scenario' and chips is not null
order by deployment, pool
"""

MARGINS = """
select deployment, price_kind, usd_per_chip_hour, usd_per_day, revenue_usd_per_day, gross_margin_frac
from fleet_plan where scenario = ? and gross_margin_frac is not null order by deployment, price_kind
"""

FRONTIER = """
with shown as (
    select distinct model, chip, number_format from fleet_plan where scenario = ? and decode_batch_seqs is not null
),
final as (
    select f.model, f.chip, f.number_format, f.layout, f.replica_chips, f.batch_per_replica as batch_seqs,
           f.tokens_per_s_per_user, f.tokens_per_s_per_chip, f.usd_per_mtok
    from serving_frontier as f
    inner join shown as s using (model, chip, number_format)
    where f.efficiency_basis = (select any_value(efficiency_basis) from fleet_plan where scenario = ?)
)
select * from final order by model, chip, number_format, tokens_per_s_per_user
"""

BESIDE_BOUND = """
select c.deployment, c.chips as calibrated_chips, b.chips as bound_chips, c.chips / b.chips as chips_ratio,
       c.output_usd_per_mtok as calibrated_usd_per_mtok, b.output_usd_per_mtok as bound_usd_per_mtok
from fleet_plan as c join fleet_plan as b using (deployment, price_kind)
where c.scenario = 'calibrated' and b.scenario = 'base' and c.price_kind = 'scenario'
order by c.deployment
"""

OPERATING = """
select deployment, model, chip, number_format, decode_batch_seqs, tokens_per_s_per_user,
       decode_tokens_per_s_per_chip as tokens_per_s_per_chip, output_usd_per_mtok as usd_per_mtok
from fleet_plan where scenario = ? and price_kind = 'scenario' and decode_batch_seqs is not null order by deployment
"""

TRAINING = """
select * from training_fleet where scenario = ? order by deployment, phase
"""

SPLIT = """
with one as (
    select distinct deployment, serving_peak_chips, training_chips_separate, training_chips_time_shared
    from training_fleet where scenario = ? and serving_peak_chips is not null
)
select deployment, 'separate' as mode, 'serving (sized for the peak)' as component, serving_peak_chips as chips from one
union all select deployment, 'separate', 'training (own chips)', training_chips_separate from one
union all select deployment, 'time-shared', 'serving (sized for the peak)', serving_peak_chips from one
union all select deployment, 'time-shared', 'training (own chips)', training_chips_time_shared from one
order by deployment, mode, component
"""


def render(ctx: SiteContext) -> PageContent:
    calibrated = ctx.scalar("select count(*) from fleet_plan where scenario = 'calibrated'")
    if calibrated:  # what real systems need: the calibrated plan, with the bound beside it
        ctx = dataclasses.replace(ctx, scenario="calibrated")
    plan = ctx.query(PLAN, [ctx.scenario])
    sections = [_plan(ctx, plan), _frontier(ctx), _training(ctx)]
    return PageContent(
        title=TITLE,
        lead=(
            f"How many chips, racks and megawatts serve scenario {ctx.scenario}'s traffic, what that costs per day at "
            "each rental price, what the list prices leave as margin, and how serving and training share a fleet. "
            "Prefill and decode run on separate pools, each with the layout the search picks for its service target. "
            + (
                "Step times use the efficiencies calibrated against measured systems (held-out error: "
                f"{ctx.calibration_error()}); the roofline bound's plan (scenario base) needs fewer chips and is "
                "shown beside it."
                if calibrated
                else "Step times are lower bounds, so chip counts and costs are lower bounds and margins upper bounds."
            )
        ),
        sections=sections,
        findings=serving_findings.fleet(ctx),
    )


def _plan(ctx: SiteContext, plan: pl.DataFrame) -> Section:
    if plan.is_empty():
        return Section("Serving plan", [note(f"Scenario {ctx.scenario} has no deployments.", kind="pending")])
    pct = lambda v: "" if v is None else f"{v * 100:.0f}%"  # noqa: E731
    blocks = [
        table(
            plan,
            [
                Col("deployment", "Deployment"),
                Col("model", "Model"),
                Col("chip", "Chip"),
                Col("number_format", "Format"),
                Col("tokens_per_s", "Traffic (tokens/s)", kind="num"),
                Col("decode_layout", "Decode layout"),
                Col("decode_replica_chips", "Decode chips per replica", kind="num"),
                Col("prefill_replica_chips", "Prefill chips per replica", kind="num"),
                Col("decode_batch_seqs", "Decode batch (sequences)", kind="num"),
                Col("batch_status", "Batch", wrap=True),
                Col("tokens_per_s_per_user", "Speed (tokens/s/user)", kind="num"),
                Col("prefill_replicas", "Prefill replicas", kind="num"),
                Col("decode_replicas", "Decode replicas", kind="num"),
                Col("prefill_decode_replica_ratio", "Prefill : decode", kind="num"),
                Col("chips", "Chips", kind="num"),
                Col("racks", "Racks", kind="num"),
                Col(
                    "facility_power_w", "Power (MW)", kind="num", fmt=lambda v: fmt_num(None if v is None else v / 1e6)
                ),
                Col("usd_per_day", "Cost (USD/day)", kind="num"),
                Col("input_usd_per_mtok", "Input cost (USD/MTok)", kind="num"),
                Col("output_usd_per_mtok", "Output cost (USD/MTok)", kind="num"),
                Col("list_input_usd_per_mtok", "List input (USD/MTok)", kind="num"),
                Col("list_output_usd_per_mtok", "List output (USD/MTok)", kind="num"),
                Col("gross_margin_frac", "Gross margin", kind="num", fmt=pct),
                Col("notes", "Notes", wrap=True),
            ],
            caption=f"Serving plan of every deployment of scenario {ctx.scenario} at the scenario's price per "
            "chip-hour "
            "(click a header to sort)",
            id="fleet-plan",
        )
    ]
    if ctx.scenario == "calibrated":
        beside = ctx.query(BESIDE_BOUND)
        blocks.append(
            table(
                beside,
                [
                    Col("deployment", "Deployment"),
                    Col("calibrated_chips", "Chips (calibrated)", kind="num"),
                    Col("bound_chips", "Chips (roofline bound)", kind="num"),
                    Col("chips_ratio", "Calibrated ÷ bound", kind="num", fmt=lambda v: fmt_num(v, sig=3)),
                    Col("calibrated_usd_per_mtok", "Output cost, calibrated (USD/MTok)", kind="num"),
                    Col("bound_usd_per_mtok", "Output cost, bound (USD/MTok)", kind="num"),
                ],
                caption="The calibrated plan beside the roofline bound's (scenario base): the bound is what no real "
                "system beats",
                id="fleet-beside-bound",
            )
        )
    first = plan.row(0, named=True)
    blocks.append(
        Markup(
            f"<p>Traffic mix: {fmt_num(first['mean_prompt_tokens'])} prompt tokens per request on average, "
            f"{fmt_num(first['output_tokens_per_request'])} output tokens, {pct(first['prompt_cache_hit_frac'])} of "
            "prompt "
            f"tokens from the prompt cache; decoding sequences attend to {fmt_num(first['decode_context_tokens'])} "
            "tokens on "
            "average. The lecture's yardstick: a rack decodes about 2,000 × 64 = 128,000 tokens/s, so hundreds of "
            "millions "
            "of tokens/s need about a thousand racks.</p>"
        )
    )
    breakdown = ctx.query(BREAKDOWN, [ctx.scenario, ctx.scenario])
    if breakdown.height:
        blocks.append(
            Figure(
                "cost-breakdown",
                charts.cost_breakdown(breakdown),
                breakdown,
                caption="Rental cost per day of each deployment's fleet at the scenario's $/chip-hour, split into the "
                "prefill pool (prompts, compute-bound) and the decode pool (one token per sequence per step).",
                formula="cost = chips × $/chip-hour × 24; chips = ⌈replicas needed⌉ × G per pool; decode replicas = "
                "output "
                f"tokens/s ÷ (B/t_step) ({ctx.cite('econ.physics.roofline.tokens_per_s')}); prefill replicas = "
                "requests/s × Σ share × t_pass / "
                "prompts per pass",
                source="fleet_plan (deployments, scenarios, models, hardware)",
            )
        )
    margin = ctx.query(MARGINS, [ctx.scenario])
    if margin.height:
        blocks.append(
            Figure(
                "margins",
                charts.margins(margin),
                margin,
                caption="Gross margin at the model's list prices (long-context tier by prompt length, cached input "
                "at the "
                "cache-read price) against the fleet's rental cost, for every rental price kind quoted for the chip "
                "and the scenario's price. Lower-bound costs make these upper bounds. A margin below −100% (cost "
                "above twice the revenue) is drawn hollow at the axis's left edge; its value is in the tooltip.",
                formula="margin = (revenue − cost) / revenue; revenue = requests/s × Σ share × (uncached·p_in + "
                "cached·p_cache "
                "+ output·p_out)",
                source="fleet_plan; list prices from the prices table (first-party pages, LiteLLM, OpenRouter); rental "
                "quotes from rental_prices",
            )
        )
    blocks.append(
        Download(
            "fleet-plan",
            ctx.query("select * from fleet_plan order by all"),
            "Every plan row: every scenario, deployment and rental price kind",
        )
    )
    return Section(
        "Serving plan",
        blocks,
        intro="Each deployment serves a share of the scenario's tokens per second with one model on one chip.",
    )


def _frontier(ctx: SiteContext) -> Section:
    points = ctx.query(FRONTIER, [ctx.scenario, ctx.scenario])
    plans = ctx.query(OPERATING, [ctx.scenario])
    total = ctx.scalar("select count(*) from serving_frontier")
    if points.is_empty():
        return Section("Cost–speed frontier", [note("No frontier points for the deployed models.", kind="pending")])
    description = ctx.description("serving_frontier")
    blocks = [
        Figure(
            "frontier",
            charts.frontier(
                points,
                plans,
                y="tokens_per_s_per_chip",
                y_title=axis_title("Throughput per chip", "tokens/s"),
                title="Throughput per chip against speed per user as the batch grows",
            ),
            points,
            caption="Each line is one deployed model × chip × format: the best throughput per chip any layout and "
            "batch of the search reaches at each speed per user (right: small batches on wide replicas; left: large "
            "batches). Diamonds mark each plan's operating point. The curve the industry's serving benchmarks "
            "measure; here a bound at the scenario's efficiencies.",
            formula=f"speed = accepted/t_step; throughput = B·accepted/(t_step·c); "
            f"{ctx.cite('econ.physics.deployment.overlap_bounds')}; "
            f"{ctx.cite('econ.physics.layout_search.pareto_optimal')}",
            source=f"serving_frontier ({total:,} frontier points over every model × chip × format); plan points from "
            "fleet_plan",
        ),
        Figure(
            "frontier-cost",
            charts.frontier(
                points,
                plans,
                y="usd_per_mtok",
                y_title=axis_title("Decode cost", "USD/MTok"),
                title="Cost per million output tokens against speed per user",
            ),
            points,
            caption="The same curves as cost per million output tokens at the scenario's $/chip-hour: batch 1 is "
            "the most expensive; large batches approach the cost floor.",
            formula=f"{ctx.cite('econ.physics.roofline.usd_per_token')}; "
            f"{ctx.cite('econ.physics.roofline.decode_cost_floor_usd_per_token')}",
            source="serving_frontier; plan points from fleet_plan (decode pool cost / output tokens)",
        ),
        Download("frontier-points", points, "The frontier points drawn above"),
        note(description),
    ]
    return Section(
        "Cost–speed frontier",
        blocks,
        intro="Every model × chip × format in the data is in serving_frontier; the charts show the deployed ones.",
    )


def _training(ctx: SiteContext) -> Section:
    frame = ctx.query(TRAINING, [ctx.scenario])
    if frame.is_empty():
        return Section("Training and the fleet split", [note("No training rows for this scenario.", kind="pending")])
    frame = frame.with_columns(interval_text("cost_low_usd", "cost_high_usd").alias("range"))
    blocks = [
        table(
            frame,
            [
                Col("deployment", "Deployment"),
                Col("model", "Model"),
                Col("chip", "Chip"),
                Col("phase", "Phase"),
                Col("tokens", "Tokens", kind="num"),
                Col("flop", "FLOP", kind="num"),
                Col("chip_hours", "Chip-hours", kind="num"),
                Col("days_on_training_fleet", "Days on the training fleet", kind="num"),
                Col("energy_mwh", "Energy (MWh)", kind="num"),
                Col("cost_usd", "Cost at the scenario price (USD)", kind="num"),
                Col("range", "Cost at rental quotes (USD)"),
                Col("tokens_source", "Tokens from", wrap=True),
            ],
            caption="Pre-training and RL of each deployed model for its share of the traffic (the lecture's token "
            "balance), "
            "and its reported pre-training, at the scenario's MFU on the bf16 peak",
            id="training-fleet",
        )
    ]
    split = ctx.query(SPLIT, [ctx.scenario])
    if split.height:
        blocks.append(
            Figure(
                "fleet-split",
                charts.fleet_split(split),
                split,
                caption="Chips to serve a deployment (sized for its daily peak) and to pre-train and RL its next "
                "model within "
                "one deployment period: on separate fleets, or time-shared so training first fills the serving "
                "chips idle off-peak ('serving by day, training by night').",
                formula="serving peak = mean chips × peak/mean; training chips = (pre-training + RL chip-hours) / "
                "period; "
                "time-shared = peak + max(0, training chip-hours − (peak − mean) × period) / period; "
                f"{ctx.cite('econ.physics.token_balance.phase_costs_flop')}",
                source="training_fleet (fleet_plan, token_balance or the scenario, models, hardware)",
            )
        )
    blocks.append(
        Download(
            "training-fleet",
            ctx.query("select * from training_fleet order by all"),
            "Every training-fleet row, every scenario",
        )
    )
    return Section(
        "Training and the fleet split",
        blocks,
        intro="The lecture balances pre-training, RL and inference costs; here in chip-hours on real chips.",
    )
