"""Training page: the Chinchilla refit (data, fitted law, compute-optimal line), over-training of real models,
the inference-aware optimum against the equal-cost heuristic, and the token balance with its sensitivity.

The isoFLOP slices are the training analysis's ``scaling_law_isoflops`` (the law on a grid of N at fixed
budgets); the optimum on them is ``compute_optimal``. The page computes nothing.
"""

from __future__ import annotations

import polars as pl

from econ.report import findings
from econ.report.charts import training as charts
from econ.report.figures import Figure
from econ.report.html import Col, fmt_num, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import guarded, interval_text, sig3

NAME = "training"
TITLE = "Training"
SUMMARY = (
    "Chinchilla refit, compute-optimal size, over-training factors by model, the inference-aware optimum and "
    "the sensitivity of the token balance."
)
REQUIRES = ("scaling_law_fits", "token_balance", "overtraining", "token_balance_sensitivity")

TORNADO_QUANTITY = "overtraining_ratio"
MIN_TOKENS_PER_PARAM = 1.0  # the Sardana chart's floor (the equal-cost heuristic dives far below at low demand)
SHOWN_LAWS = ("besiroglu_2024", "hoffmann_2022")  # published laws drawn next to the refit

LAW = """
select law from scaling_law_fits
order by (kind = 'refit' and status = 'ok') desc, (law = 'besiroglu_2024') desc, law limit 1
"""

POINTS = """
select params, training_flop, loss_nats_per_token,
       case when used_in_fit then 'fitted' else 'dropped' end as used_in_fit,
       printf('%.1e', pow(10, round(2 * log10(training_flop)) / 2)) as budget_label
from scaling_law_residuals where law = ?
order by training_flop, params
"""

ISOFLOP = """
select budget_label, compute_flop, params, loss_nats_per_token from scaling_law_isoflops where law = ?
order by compute_flop, params
"""

OPTIMUM_IN_RANGE = """
select compute_flop, params, tokens, loss_nats_per_token from compute_optimal
where law = ? and compute_flop between ? and ? order by compute_flop
"""

OPTIMAL_LINES = """
select case when kind = 'refit' then 'refit' else o.law end as law, compute_flop, params, tokens_per_param_ratio,
       params_low, params_high
from compute_optimal as o join scaling_law_fits using (law)
where (kind = 'refit' and o.law = ?) or o.law in (select unnest(?))
order by law, compute_flop
"""

MODELS = """
select model, lab, params_total, params_active, pretrain_tokens, training_flop, tokens_per_active_param_ratio,
       chinchilla_tokens_per_param_ratio, overtraining_active_ratio, overtraining_active_low_ratio,
       overtraining_active_high_ratio, overtraining_total_ratio, law_optimal_tokens_per_param_ratio,
       case when is_moe then 'MoE' else 'dense' end as architecture, caveat, pretrain_tokens_source_url
from overtraining order by overtraining_active_ratio desc
"""

SARDANA = """
select printf('%gB', reference_params / 1e9) as reference_label, reference_params, form, method, demand_source,
       inference_tokens, params, train_tokens, tokens_per_param_ratio, excess_over_optimum_frac,
       saving_vs_chinchilla_frac, target_loss_nats_per_token
from sardana_optimum
where law = ? and inference_tokens > 0
order by reference_params, form, method, inference_tokens
"""

TORNADO = """
with rows as (
    select assumption, assumption_unit, assumption_value, assumption_low, assumption_high, central_value, swing_decades,
           value_at_low, value_at_high, quantity_unit
    from token_balance_sensitivity
    where scenario = ? and quantity = ? and swing_decades > 0
)
select assumption, 'low' as "end", value_at_low as value, central_value, swing_decades, quantity_unit,
       printf('%g–%g %s', assumption_low, assumption_high, assumption_unit) as assumption_range
from rows
union all
select assumption, 'high', value_at_high, central_value, swing_decades, quantity_unit,
       printf('%g–%g %s', assumption_low, assumption_high, assumption_unit)
from rows
order by swing_decades desc, assumption, "end" desc
"""

BALANCE = """
select quantity, unit, central_value, p5_value, p95_value, draws, low_value, high_value, lecture_value, formula,
       lecture_section
from token_balance where scenario = ? order by rowid
"""


def render(ctx: SiteContext) -> PageContent:
    law = ctx.scalar(LAW)
    sections = [
        guarded("Chinchilla: the data, the fitted law and the compute-optimal line", lambda: _chinchilla(ctx, law)),
        guarded("Over-training by model", lambda: _overtraining(ctx)),
    ]
    if ctx.has("sardana_optimum"):
        sections.append(guarded("The inference-aware optimum vs the equal-cost heuristic", lambda: _sardana(ctx, law)))
    sections.append(guarded("Token balance and its sensitivity", lambda: _balance(ctx)))
    return PageContent(
        title=TITLE,
        lead=(
            "How big a model to train on how many tokens: Chinchilla's loss law refitted to its published runs "
            "(Epoch's method) next to the published constants, how far real open models train past the "
            "compute-optimal point, the optimum once inference is paid for, and the lecture's balance of "
            f"pre-training, RL and inference tokens under scenario {ctx.scenario} (section e)."
        ),
        sections=sections,
        findings=findings.training(ctx),
    )


def _chinchilla(ctx: SiteContext, law: str) -> Section:
    blocks = []
    points = ctx.query(POINTS, [law]) if ctx.has("scaling_law_residuals") else pl.DataFrame()
    if points.height:
        curves = ctx.query(ISOFLOP, [law])
        lo, hi = curves["compute_flop"].min(), curves["compute_flop"].max()
        optimum = (
            ctx.query(OPTIMUM_IN_RANGE, [law, lo * 0.99, hi * 1.01]) if ctx.has("compute_optimal") else pl.DataFrame()
        )
        blocks.append(
            Figure(
                "isoflop",
                charts.isoflop(points, curves.drop("compute_flop"), optimum, law=law),
                points,
                caption="Each point is one of Chinchilla's training runs (Epoch's extraction of Hoffmann et al. "
                "Figure 4), "
                f"coloured by the half-decade budget it is nearest; crosses are the highest-loss runs the refit "
                f"drops. Lines: the fitted law {law} at each budget (isoFLOP slices of the surface, D = C/6N); "
                "black: its compute-optimal points, which sit at each slice's minimum.",
                formula=f"{ctx.cite('econ.physics.scaling_laws.loss_nats_per_token')}; "
                f"{ctx.cite('econ.physics.scaling_laws.compute_optimal')}",
                source="scaling_law_points (Epoch AI's extraction of Chinchilla Fig. 4), scaling_law_fits, "
                "scaling_law_residuals and compute_optimal tables of the training analysis",
            )
        )
    if ctx.has("compute_optimal"):
        lines = ctx.query(OPTIMAL_LINES, [law, list(SHOWN_LAWS)])
        models = ctx.query(MODELS)
        if lines.height:
            blocks.append(
                Figure(
                    "compute-optimal",
                    charts.compute_optimal(lines, models),
                    lines,
                    caption="Compute-optimal model size against training budget under each law (the refit with its "
                    "bootstrap 95% band), and real open models at their active parameters and 6·N_act·D: a model "
                    "below the lines was trained on more tokens than compute-optimal for its size (over-trained).",
                    formula=f"{ctx.cite('econ.physics.scaling_laws.compute_optimal')}; C = 6·N·D",
                    source="compute_optimal and scaling_law_fits tables; overtraining table (reported token counts, "
                    "linked below)",
                )
            )
    fits = ctx.query("select * from scaling_law_fits order by kind desc, law")
    shown = fits.with_columns(
        *[
            pl.format(
                "{} ({}–{})",
                pl.col(c).round_sig_figs(4),
                pl.col(f"{c}_low").round_sig_figs(3),
                pl.col(f"{c}_high").round_sig_figs(3),
            )
            .fill_null(pl.col(c).round_sig_figs(4).cast(pl.String))
            .alias(f"{c}_shown")
            for c in ("e_nats_per_token", "a_coef", "b_coef", "alpha_exponent", "beta_exponent")
        ]
    )
    blocks.append(
        table(
            shown,
            [
                Col("law", "Law"),
                Col("kind", "Kind"),
                Col("status", "Status"),
                Col("e_nats_per_token_shown", "E (nats/token)"),
                Col("a_coef_shown", "A"),
                Col("b_coef_shown", "B"),
                Col("alpha_exponent_shown", "α"),
                Col("beta_exponent_shown", "β"),
                Col("optimal_params_exponent", "N_opt ∝ C^a: a", kind="num", fmt=sig3),
                Col("n_points", "Points fitted", kind="num"),
                Col("n_bootstrap_converged", "Resamples", kind="num"),
                Col("huber_objective", "Huber objective", kind="num", fmt=sig3),
                Col("status_detail", "Note", wrap=True),
                Col("source_url", "Source", kind="link"),
            ],
            caption="Our refit beside Epoch's (Besiroglu et al. 2024) and Hoffmann et al.'s published constants; "
            "refit intervals are bootstrap 2.5–97.5 percentiles",
            id="scaling-laws",
        )
    )
    blocks.append(
        Download(
            "compute-optimal-all",
            ctx.query("select * from compute_optimal order by law, compute_flop")
            if ctx.has("compute_optimal")
            else pl.DataFrame(),
            "Compute-optimal N and D per law and budget, closed form and numerical",
        )
    )
    return Section("Chinchilla: the data, the fitted law and the compute-optimal line", blocks)


def _overtraining(ctx: SiteContext) -> Section:
    models = ctx.query(MODELS)
    central = ctx.scalar(
        "select central_value from token_balance where scenario = ? and quantity = ?", [ctx.scenario, TORNADO_QUANTITY]
    )
    lecture = ctx.scalar(
        "select lecture_value from token_balance where scenario = ? and quantity = ?", [ctx.scenario, TORNADO_QUANTITY]
    )
    guides = pl.DataFrame(
        {
            "label": ["compute-optimal (1×)"]
            + ([f"token balance, scenario {ctx.scenario}"] if central else [])
            + (["lecture: ~100×"] if lecture else []),
            "ratio": [1.0] + ([central] if central else []) + ([lecture] if lecture else []),
        }
    )
    k = models["chinchilla_tokens_per_param_ratio"][0] if models.height else None
    return Section(
        "Over-training by model",
        [
            Figure(
                "overtraining",
                charts.overtraining(models, guides),
                models,
                caption=f"Reported pre-training tokens over Chinchilla's k = {fmt_num(k)} tokens per active parameter "
                "(dots; grey bars: k over its scenario range), and over total parameters (black ticks). "
                "Chinchilla's N is a dense model's, so for a mixture of experts the active-parameter "
                "factor is an upper reading. Dashed: compute-optimal, the lecture's token balance and its ~100×.",
                formula=ctx.cite("econ.physics.token_balance.overtraining_factor"),
                source="overtraining table (models table's reported token counts, linked below; k from the scenario)",
            ),
            table(
                models,
                [
                    Col("model", "Model"),
                    Col("lab", "Lab"),
                    Col("architecture", "Architecture"),
                    Col("params_active", "N_act (params)", kind="num", fmt=sig3),
                    Col("params_total", "N_tot (params)", kind="num", fmt=sig3),
                    Col("pretrain_tokens", "D (tokens)", kind="num", fmt=sig3),
                    Col("tokens_per_active_param_ratio", "D/N_act (tokens/param)", kind="num", fmt=sig3),
                    Col("overtraining_active_ratio", "Over-training, active (×)", kind="num", fmt=sig3),
                    Col("overtraining_total_ratio", "Over-training, total (×)", kind="num", fmt=sig3),
                    Col(
                        "law_optimal_tokens_per_param_ratio",
                        "Refit's optimal D/N at this C (tokens/param)",
                        kind="num",
                        fmt=sig3,
                    ),
                    Col("pretrain_tokens_source_url", "Token count source", kind="link"),
                ],
                caption="Open models with a reported pre-training token count",
                id="overtraining",
            ),
        ],
    )


def _sardana(ctx: SiteContext, law: str) -> Section:
    frame = ctx.query(SARDANA, [law])
    shown = pl.col("tokens_per_param_ratio") >= MIN_TOKENS_PER_PARAM
    grid = frame.filter((pl.col("demand_source") == "grid") & shown)
    below = frame.filter((pl.col("demand_source") == "grid") & ~shown).height
    at_scenario = frame.filter(pl.col("demand_source") == "scenario")
    blocks = []
    if grid.height:
        refs = grid.sort("reference_params")["reference_label"].unique(maintain_order=True).to_list()
        blocks.append(
            Figure(
                "sardana",
                charts.sardana(grid, at_scenario.filter(shown), references=refs),
                grid,
                caption=f"Training tokens per parameter that reach a target loss at least lifetime cost as inference "
                f"demand grows, under {law}: Sardana et al.'s optimum (blue) and the lecture's heuristic of making "
                "training and inference cost the same (orange); solid lines count FLOPs, dashed lines weigh "
                "inference FLOPs by the decode efficiency. Black marks: the scenario's demand."
                + (
                    f" {below} grid points below {MIN_TOKENS_PER_PARAM:g} token per parameter (the heuristic at "
                    "low demand, where it trains a huge model on almost no data) are left off the chart; they "
                    "are in the download below."
                    if below
                    else ""
                ),
                formula=f"{ctx.cite('econ.physics.scaling_laws.inference_aware_optimum')}; "
                f"{ctx.cite('econ.physics.token_balance.equal_cost_optimum')}",
                source="sardana_optimum table of the training analysis (scenario inference demand from token_balance)",
            )
        )
    if at_scenario.height:
        blocks.append(
            table(
                at_scenario,
                [
                    Col("reference_label", "Target: loss of"),
                    Col("form", "Objective"),
                    Col("method", "Method"),
                    Col("inference_tokens", "D_inf (tokens)", kind="num", fmt=sig3),
                    Col("params", "N (params)", kind="num", fmt=sig3),
                    Col("tokens_per_param_ratio", "D_tr/N (tokens/param)", kind="num", fmt=sig3),
                    Col("excess_over_optimum_frac", "Cost above the optimum (frac)", kind="num", fmt=sig3),
                    Col("saving_vs_chinchilla_frac", "Saving vs Chinchilla-optimal (frac)", kind="num", fmt=sig3),
                ],
                caption="At the scenario's lifetime inference demand",
                id="sardana-scenario",
            )
        )
    blocks.append(
        Download(
            "sardana-all",
            ctx.query("select * from sardana_optimum order by all"),
            "Every law, objective, method, reference size and demand",
        )
    )
    return Section("The inference-aware optimum vs the equal-cost heuristic", blocks)


def _balance(ctx: SiteContext) -> Section:
    balance = ctx.query(BALANCE, [ctx.scenario])
    tornado = ctx.query(TORNADO, [ctx.scenario, TORNADO_QUANTITY])
    blocks = []
    if balance.is_empty():
        blocks.append(note(f"The token balance has no rows for scenario {ctx.scenario}.", kind="pending"))
    else:
        balance = balance.with_columns(
            interval_text("p5_value", "p95_value").alias("likely"),
            interval_text("low_value", "high_value").alias("range"),
        )
        blocks.append(
            table(
                balance,
                [
                    Col("quantity", "Quantity"),
                    Col("unit", "Unit"),
                    Col("central_value", "Central", kind="num", fmt=sig3),
                    Col("likely", "5–95% over independent draws of the ranges"),
                    Col("range", "Bound: every assumption at its worst end at once"),
                    Col("lecture_value", "Lecture", kind="num", fmt=sig3),
                    Col("formula", "Formula"),
                    Col("lecture_section", "Lecture §"),
                ],
                caption=f"The lecture's token balance under scenario {ctx.scenario}: the 5th–95th percentiles over "
                f"{balance['draws'][0]:,} independent draws of every assumption's range (log-uniform over ranges wider "
                "than 3x, uniform otherwise) are what the ranges make likely; the bound sets every assumption to its "
                "worst end at once and is not a likely range",
                id="token-balance",
            )
        )
    if tornado.height:
        central = tornado["central_value"][0]
        unit = tornado["quantity_unit"][0]
        still = ctx.query(
            "select assumption from token_balance_sensitivity where scenario = ? and quantity = ? "
            "and swing_decades = 0 order by assumption",
            [ctx.scenario, TORNADO_QUANTITY],
        )["assumption"]
        blocks.append(
            Figure(
                "tornado",
                charts.tornado(tornado, quantity=TORNADO_QUANTITY, unit=unit, central=central),
                tornado,
                caption="The over-training factor with one assumption at a time moved to its low (blue) or high "
                "(orange) "
                f"end of its range, the others central (black line: {fmt_num(central, sig=3)}). Longest bars "
                "first." + (f" Assumptions that do not move it: {', '.join(still)}." if still.len() else ""),
                formula=f"{ctx.cite('econ.physics.token_balance.token_balance')}; "
                f"{ctx.cite('econ.physics.token_balance.inference_tokens_per_model')}; "
                f"{ctx.cite('econ.physics.token_balance.overtraining_factor')}",
                source="token_balance_sensitivity table of the training analysis (ranges from the scenarios table)",
            )
        )
    blocks.append(
        Download(
            "sensitivity-all",
            ctx.query(
                "select * from token_balance_sensitivity where scenario = ? order by quantity, swing_decades desc",
                [ctx.scenario],
            ),
            "Every token-balance quantity against every assumption",
        )
    )
    return Section(
        "Token balance and its sensitivity",
        blocks,
        intro=f"{ctx.cite('econ.physics.token_balance.phase_costs_flop')}; "
        f"{ctx.cite('econ.physics.token_balance.rl_cost_per_token_ratio')}.",
    )
