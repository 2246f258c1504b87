"""Charts of the Training page: Chinchilla's runs with the fitted law's isoFLOP slices and the compute-optimal
line, compute-optimal size against budget with real models, over-training by model, the inference-aware
optimum against the equal-cost heuristic, and a tornado of the token balance's sensitivity."""

from __future__ import annotations

import altair as alt
import numpy as np
import polars as pl

from econ.report.charts import HEIGHT, WIDTH, axis_title, guide_rule
from econ.report.charts.data import equals, named, with_datasets

LAW_RANGE = ["#1f5fa8", "#3b9c5a", "#e4892b"]
LOG = alt.Scale(type="log")


def law_color(laws: list[str]) -> alt.Color:
    domain = sorted(laws, key=lambda law: (not law.startswith("refit"), law))
    palette = LAW_RANGE + ["#7a5aa8", "#8a6d3b", "#c4424b"]
    return alt.Color("law:N", title="Law", scale=alt.Scale(domain=domain, range=palette[: len(domain)]))


def isoflop(points: pl.DataFrame, curves: pl.DataFrame, optimum: pl.DataFrame, *, law: str) -> alt.LayerChart:
    """Final loss against model size: Chinchilla's runs, the law's isoFLOP slices and its compute-optimal points.

    ``points``: params, training_flop, loss_nats_per_token, budget_label (the slice a run is nearest),
    used_in_fit. ``curves``: budget_label, params, loss_nats_per_token (the law on a grid of N at
    each budget). ``optimum``: compute_flop, params, loss_nats_per_token (the closed-form optimum).
    """
    budgets = curves["budget_label"].unique(maintain_order=True).to_list()
    color = alt.Color("budget_label:O", title="Budget C (FLOP)", sort=budgets, scale=alt.Scale(scheme="viridis"))
    x = alt.X("params:Q", title=axis_title("Model size N", "parameters"), scale=LOG, axis=alt.Axis(format="~s"))
    y = alt.Y(
        "loss_nats_per_token:Q", title=axis_title("Final training loss", "nats/token"), scale=alt.Scale(zero=False)
    )
    lines = (
        alt.Chart(named("curves"))
        .mark_line(strokeWidth=1.3, opacity=0.8)
        .encode(
            x=x,
            y=y,
            color=color,
            detail="budget_label:O",
            tooltip=[
                alt.Tooltip("budget_label:O", title="Budget (FLOP)"),
                alt.Tooltip("params:Q", title="N (parameters)", format=".3~s"),
                alt.Tooltip("loss_nats_per_token:Q", title="Law's loss (nats/token)", format=".4~g"),
            ],
        )
    )
    runs = (
        alt.Chart(named("points"))
        .mark_point(size=28, filled=True, opacity=0.85)
        .encode(
            x=x,
            y=y,
            color=color,
            shape=alt.Shape(
                "used_in_fit:N", title="Run", scale=alt.Scale(domain=["fitted", "dropped"], range=["circle", "cross"])
            ),
            tooltip=[
                alt.Tooltip("params:Q", title="N (parameters)", format=".3~s"),
                alt.Tooltip("training_flop:Q", title="C (FLOP)", format=".3~e"),
                alt.Tooltip("loss_nats_per_token:Q", title="Reported loss (nats/token)", format=".4~g"),
                alt.Tooltip("used_in_fit:N", title="In the refit"),
            ],
        )
    )
    best = (
        alt.Chart(named("optimum"))
        .mark_line(color="#111", strokeWidth=2, point=alt.OverlayMarkDef(color="#111", size=30))
        .encode(
            x=x,
            y=y,
            tooltip=[
                alt.Tooltip("compute_flop:Q", title="Budget (FLOP)", format=".3~e"),
                alt.Tooltip("params:Q", title="N_opt (parameters)", format=".3~s"),
                alt.Tooltip("loss_nats_per_token:Q", title="Loss at the optimum (nats/token)", format=".4~g"),
            ],
        )
    )
    chart = alt.layer(lines, runs, best).properties(
        title=f"Chinchilla's runs and the fitted law ({law}): isoFLOP slices and the compute-optimal line",
        width=WIDTH,
        height=HEIGHT + 60,
    )
    return with_datasets(
        chart,
        points=points.select("params", "training_flop", "loss_nats_per_token", "used_in_fit", "budget_label"),
        curves=curves.select("budget_label", "params", "loss_nats_per_token"),
        optimum=optimum.select("compute_flop", "params", "loss_nats_per_token"),
    )


LABEL_CLEAR_DECADES = (1.5, 0.3)
"""Two labels of the compute-optimal chart overlap when their points are closer than this in log10 compute (a label
is about 1.5 decades wide) and in log10 parameters (a line of text is about 0.3 decades tall)."""


def labelled_models(models: pl.DataFrame) -> pl.DataFrame:
    """``models`` with ``labelled``: the few that matter, in this order (the largest run, the two most and the least
    over-trained), each kept only where its label clears the ones kept before (:data:`LABEL_CLEAR_DECADES`)."""
    if models.is_empty():
        return models.with_columns(pl.lit(False).alias("labelled"))
    ranked = models.with_row_index("_i")
    wanted = [
        *ranked.sort("training_flop", descending=True, nulls_last=True)["_i"].head(1),
        *ranked.sort("overtraining_active_ratio", descending=True, nulls_last=True)["_i"].head(2),
        *ranked.sort("overtraining_active_ratio", nulls_last=True)["_i"].head(1),
    ]
    x = np.log10(ranked["training_flop"].to_numpy().astype(float))
    y = np.log10(ranked["params_active"].to_numpy().astype(float))
    kept: list[int] = []
    for i in dict.fromkeys(wanted):  # a handful of candidates, in order of importance
        clear = all(abs(x[i] - x[k]) >= LABEL_CLEAR_DECADES[0] or abs(y[i] - y[k]) >= LABEL_CLEAR_DECADES[1]
                    for k in kept)  # fmt: skip
        if clear and np.isfinite(x[i]) and np.isfinite(y[i]):
            kept.append(i)
    return ranked.with_columns(pl.col("_i").is_in(kept).alias("labelled")).drop("_i")


def compute_optimal(lines: pl.DataFrame, models: pl.DataFrame) -> alt.LayerChart:
    """Compute-optimal N against budget for each law (refit with its bootstrap band) and where real models sit.

    ``lines``: law, compute_flop, params, params_low, params_high (nulls outside the refit).
    ``models``: model, params_active, training_flop, overtraining_active_ratio, is_moe.
    """
    laws = lines["law"].unique().to_list()
    x = alt.X("compute_flop:Q", title=axis_title("Training compute C", "FLOP"), scale=LOG, axis=alt.Axis(format=".0e"))
    y = alt.Y("params:Q", title=axis_title("Model size N (active for MoE)", "parameters"), scale=LOG)
    band = (
        alt.Chart(named("lines"))
        .transform_filter("isValid(datum.params_low)")
        .mark_area(opacity=0.18, color=LAW_RANGE[0])
        .encode(
            x=x,
            y=alt.Y("params_low:Q", title=axis_title("Model size N (active for MoE)", "parameters"), scale=LOG),
            y2="params_high:Q",
            tooltip=[
                alt.Tooltip("compute_flop:Q", title="C (FLOP)", format=".3~e"),
                alt.Tooltip("params_low:Q", title="N_opt 2.5% (parameters)", format=".3~s"),
                alt.Tooltip("params_high:Q", title="N_opt 97.5% (parameters)", format=".3~s"),
            ],
        )
    )
    line = (
        alt.Chart(named("lines"))
        .mark_line()
        .encode(
            x=x,
            y=y,
            color=law_color(laws),
            tooltip=[
                alt.Tooltip("law:N", title="Law"),
                alt.Tooltip("compute_flop:Q", title="C (FLOP)", format=".3~e"),
                alt.Tooltip("params:Q", title="N_opt (parameters)", format=".3~s"),
                alt.Tooltip("tokens_per_param_ratio:Q", title="D/N (tokens/param)", format=".3~g"),
            ],
        )
    )
    real = alt.Chart(named("models")).encode(
        x=alt.X("training_flop:Q", title=axis_title("Training compute C", "FLOP"), scale=LOG),
        y=alt.Y("params_active:Q", title=axis_title("Model size N (active for MoE)", "parameters"), scale=LOG),
        tooltip=[
            alt.Tooltip("model:N", title="Model"),
            alt.Tooltip("params_active:Q", title="N_act (parameters)", format=".3~s"),
            alt.Tooltip("pretrain_tokens:Q", title="D (tokens)", format=".3~s"),
            alt.Tooltip("training_flop:Q", title="6·N_act·D (FLOP)", format=".3~e"),
            alt.Tooltip("overtraining_active_ratio:Q", title="Over-training (×)", format=".3~g"),
        ],
    )
    dots = real.mark_point(filled=True, size=55, color="#c4424b").encode(
        shape=alt.Shape(
            "architecture:N", title="Model", scale=alt.Scale(domain=["dense", "MoE"], range=["circle", "diamond"])
        )
    )
    labels = (  # the few that matter, none over another (labelled_models); the rest in the tooltip
        real.transform_filter("datum.labelled")
        .mark_text(align="left", dx=6, dy=-4, fontSize=10, color="#5b6575")
        .encode(text="model:N")
    )
    chart = alt.layer(band, line, dots, labels).properties(
        title="Compute-optimal model size against budget, and where real models sit", width=WIDTH, height=HEIGHT
    )
    return with_datasets(
        chart,
        lines=lines.select("law", "compute_flop", "params", "tokens_per_param_ratio", "params_low", "params_high"),
        models=labelled_models(models).select(
            "model",
            "params_active",
            "pretrain_tokens",
            "training_flop",
            "overtraining_active_ratio",
            "architecture",
            "labelled",
        ),
    )


def overtraining(frame: pl.DataFrame, guides: pl.DataFrame) -> alt.LayerChart:
    """Over-training factor D/(k·N_act) per model with its range over Chinchilla's k, log scale.

    ``frame``: model, overtraining_active_ratio, overtraining_active_low_ratio, overtraining_active_high_ratio,
    overtraining_total_ratio, architecture. ``guides``: label, ratio (vertical rules).
    """
    order = frame.sort("overtraining_active_ratio", descending=True)["model"].to_list()
    x_title = axis_title("Over-training factor D / (k·N)", "ratio")
    y = alt.Y("model:N", title="Model", sort=order)
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("architecture:N", title="Architecture"),
        alt.Tooltip("overtraining_active_ratio:Q", title="By active params (×)", format=".3~g"),
        alt.Tooltip("overtraining_active_low_ratio:Q", title="Low (k high) (×)", format=".3~g"),
        alt.Tooltip("overtraining_active_high_ratio:Q", title="High (k low) (×)", format=".3~g"),
        alt.Tooltip("overtraining_total_ratio:Q", title="By total params (×)", format=".3~g"),
    ]
    rng = (
        alt.Chart(named("models"))
        .transform_filter(
            "isValid(datum.overtraining_active_low_ratio) && isValid(datum.overtraining_active_high_ratio)"
        )
        .mark_rule(strokeWidth=2, color="#8a94a3")
        .encode(
            x=alt.X("overtraining_active_low_ratio:Q", title=x_title, scale=LOG),
            x2="overtraining_active_high_ratio:Q",
            y=y,
            tooltip=tooltip,
        )
    )
    dots = (
        alt.Chart(named("models"))
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("overtraining_active_ratio:Q", title=x_title, scale=LOG),
            y=y,
            color=alt.Color(
                "architecture:N",
                title="Architecture",
                scale=alt.Scale(domain=["dense", "MoE"], range=["#1f5fa8", "#e4892b"]),
            ),
            tooltip=tooltip,
        )
    )
    total = (
        alt.Chart(named("models"))
        .mark_tick(color="#111", thickness=1.5, size=12)
        .encode(x=alt.X("overtraining_total_ratio:Q", title=x_title, scale=LOG), y=y, tooltip=tooltip)
    )
    rules = guide_rule(
        "guides", alt.X("ratio:Q", title=x_title, scale=LOG), alt.Tooltip("ratio:Q", title="Factor (×)", format=".3~g")
    )
    text = (
        alt.Chart(named("guides"))
        .mark_text(align="left", dx=4, dy=-6, fontSize=10, color="#333", y=0)
        .encode(
            x=alt.X("ratio:Q", title=x_title, scale=LOG),
            text="label:N",
            tooltip=[alt.Tooltip("label:N", title="Guide")],
        )
    )
    chart = alt.layer(rng, total, dots, rules, text).properties(
        title="Over-training factor of open models (reported pre-training tokens)",
        width=WIDTH,
        height=max(160, 22 * len(order)),
    )
    return with_datasets(
        chart,
        models=frame.select(
            "model",
            "architecture",
            "overtraining_active_ratio",
            "overtraining_active_low_ratio",
            "overtraining_active_high_ratio",
            "overtraining_total_ratio",
        ),
        guides=guides,
    )


def sardana(frame: pl.DataFrame, scenario: pl.DataFrame, *, references: list[str]) -> alt.HConcatChart:
    """Tokens per parameter of the inference-aware optimum and of the equal-cost heuristic, against demand.

    ``frame``: reference_label, form, method, inference_tokens (> 0), tokens_per_param_ratio, params,
    excess_over_optimum_frac. ``scenario``: the same columns at the scenario's demand.
    One panel per reference size (the target loss is that size's compute-optimal loss).
    """
    x = alt.X(
        "inference_tokens:Q",
        title=axis_title("Lifetime inference demand D_inf", "tokens"),
        scale=LOG,
        axis=alt.Axis(format=".0e"),
    )
    y = alt.Y(
        "tokens_per_param_ratio:Q", title=axis_title("Training tokens per parameter D_tr/N", "tokens/param"), scale=LOG
    )
    color = alt.Color(
        "method:N", title="Method", scale=alt.Scale(domain=["optimum", "equal_cost"], range=["#1f5fa8", "#e4892b"])
    )
    dash = alt.StrokeDash(
        "form:N", title="Objective", scale=alt.Scale(domain=["compute", "cost"], range=[[1, 0], [5, 3]])
    )
    tooltip = [
        alt.Tooltip("reference_label:N", title="Target: loss of"),
        alt.Tooltip("method:N", title="Method"),
        alt.Tooltip("form:N", title="Objective"),
        alt.Tooltip("inference_tokens:Q", title="D_inf (tokens)", format=".3~e"),
        alt.Tooltip("params:Q", title="N (parameters)", format=".3~s"),
        alt.Tooltip("tokens_per_param_ratio:Q", title="D_tr/N (tokens/param)", format=".3~g"),
        alt.Tooltip("excess_over_optimum_frac:Q", title="Cost above optimum", format=".2%"),
    ]
    panels = []
    for label in references:
        line = (
            alt.Chart(named("curves"))
            .transform_filter(equals("reference_label", label))
            .mark_line()
            .encode(x=x, y=y, color=color, strokeDash=dash, detail="form:N", tooltip=tooltip)
        )
        mark = (
            alt.Chart(named("scenario"))
            .transform_filter(equals("reference_label", label))
            .mark_point(size=70, filled=True, color="#111")
            .encode(x=x, y=y, shape=alt.Shape("method:N", title="At the scenario's demand"), tooltip=tooltip)
        )
        panels.append(alt.layer(line, mark).properties(title=f"Target: loss of a {label} model", width=190, height=240))
    chart = (
        alt.hconcat(*panels)
        .resolve_scale(y="shared")
        .properties(title="Inference-aware optimum (Sardana et al.) vs the lecture's equal-cost heuristic")
    )
    keep = [
        "reference_label",
        "form",
        "method",
        "inference_tokens",
        "params",
        "tokens_per_param_ratio",
        "excess_over_optimum_frac",
    ]
    return with_datasets(chart, curves=frame.select(keep), scenario=scenario.select(keep))


def tornado(frame: pl.DataFrame, *, quantity: str, unit: str, central: float) -> alt.LayerChart:
    """One bar per assumption from the quantity's value at the assumption's low end to its value at the high end.

    ``frame``: assumption, end (low, high), value, central_value, assumption_range, swing_decades
    (assumptions that move the quantity at all).
    """
    order = (
        frame.group_by("assumption")
        .agg(pl.col("swing_decades").first())
        .sort(["swing_decades", "assumption"], descending=[True, False])["assumption"]
        .to_list()
    )
    x_title = axis_title(quantity.replace("_", " "), unit)
    bars = (
        alt.Chart(named("ends"))
        .mark_bar(height=12)
        .encode(
            x=alt.X("central_value:Q", title=x_title, scale=LOG),
            x2="value:Q",
            y=alt.Y("assumption:N", title="Assumption moved to its low or high end", sort=order),
            color=alt.Color(
                "end:N",
                title="Assumption at its",
                scale=alt.Scale(domain=["low", "high"], range=["#1f5fa8", "#e4892b"]),
            ),
            tooltip=[
                alt.Tooltip("assumption:N", title="Assumption"),
                alt.Tooltip("assumption_range:N", title="Range"),
                alt.Tooltip("end:N", title="At its"),
                alt.Tooltip("value:Q", title=f"{quantity} ({unit})", format=".3~g"),
                alt.Tooltip("swing_decades:Q", title="Swing (decades)", format=".2f"),
            ],
        )
    )
    rule = pl.DataFrame({"central_value": [central], "label": ["every assumption central"]})
    center = (
        alt.Chart(named("central"))
        .mark_rule(color="#111")
        .encode(
            x=alt.X("central_value:Q", title=x_title, scale=LOG),
            tooltip=[
                alt.Tooltip("label:N", title="Guide"),
                alt.Tooltip("central_value:Q", title="Value", format=".3~g"),
            ],
        )
    )
    chart = alt.layer(bars, center).properties(
        title=f"Sensitivity of the {quantity.replace('_', ' ')} to each assumption (one at a time)",
        width=WIDTH,
        height=max(140, 24 * len(order)),
    )
    return with_datasets(chart, ends=frame, central=rule)
