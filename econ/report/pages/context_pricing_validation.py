"""Context-pricing page section on the check of its readings on open models ("Checked on open models": tables
``inference_quantities`` and ``inference_validation``), with each quantity's validation status and the words that
state it, which the page's captions use.
"""

from __future__ import annotations

import polars as pl

from econ.report.html import Col, details, fmt_num, table
from econ.report.page import Download, Section, SiteContext, note
from econ.report.pages.common import interval_text, sig3

QUANTITY_STATUS = """
select quantity, status, n_models, n_architecture_groups, coverage_groups_frac, level_frac, median_abs_log_ratio,
       median_error_factor_ratio, geometric_mean_ratio, bias_corrected, interval_width_ratio, interval_score_log,
       baseline_interval_score_log, skill_score_frac, hypothesis_status, status_reason
from inference_quantities
"""

VALIDATION_ROWS = """
select quantity, model, price_provider as provider, provider_kind, unit, implied_value, true_value,
       implied_over_true_ratio, published_value, validated_low_value, validated_high_value,
       scenario_interval_covers_true, interval_covers_true, baseline_value
from inference_validation order by quantity, model, price_provider
"""


def quantity_status(ctx: SiteContext) -> dict[str, dict]:
    """inference_quantities by quantity ({} when the database has none)."""
    if not ctx.has("inference_quantities"):
        return {}
    return {r["quantity"]: r for r in ctx.query(QUANTITY_STATUS).iter_rows(named=True)}


def evidence(q: dict | None) -> str:
    """The validation in words, for a caption or a headline: status, left-out coverage, skill, width, bias."""
    if not q:
        return "not validated (no inference_quantities table in this database)"
    if q["status"] == "too_few_open_models" or q["coverage_groups_frac"] is None:
        return f"status {q['status']}: {q['status_reason']}"
    return (
        f"status {q['status']} on {q['n_architecture_groups']} architectures ({q['n_models']} open models): "
        f"left-out coverage {q['coverage_groups_frac']:.0%} at {q['level_frac']:.0%}; interval score "
        f"{fmt_num(q['interval_score_log'], sig=3)} against the no-price baseline's "
        f"{fmt_num(q['baseline_interval_score_log'], sig=3)}; interval ×{fmt_num(q['interval_width_ratio'], sig=3)} "
        f"wide; bias ×{fmt_num(q['geometric_mean_ratio'], sig=3)}" + (" (corrected)" if q["bias_corrected"] else "")
    )


def validation_section(ctx: SiteContext, quantities: dict) -> Section:
    if not quantities:
        return Section("Checked on open models", [note("No validation table in this database.", kind="pending")])
    summary = ctx.query("select * from inference_quantities order by role, quantity").with_columns(
        (pl.col("coverage_groups_frac") * 100).round(0).alias("coverage_pct"),
        (pl.col("scenario_coverage_rows_frac") * 100).round(0).alias("scenario_coverage_pct"),
    )
    blocks = [
        table(
            summary,
            [
                Col("quantity", "Quantity"),
                Col("role", "Role"),
                Col("reading", "Read from", wrap=True),
                Col("n_models", "Open models", kind="num"),
                Col("n_architecture_groups", "Architectures", kind="num"),
                Col("n_rows", "Schedules", kind="num"),
                Col("coverage_pct", "Left-out coverage at 90% (% of architectures)", kind="num"),
                Col("scenario_coverage_pct", "Own interval alone covers (% of schedules)", kind="num"),
                Col("geometric_mean_ratio", "Bias, geometric mean (ratio)", kind="num", fmt=sig3),
                Col("bias_t_stat", "Bias t", kind="num", fmt=sig3),
                Col("correction_factor_ratio", "Correction applied (ratio)", kind="num", fmt=sig3),
                Col("interval_score_log", "Interval score (ln)", kind="num", fmt=sig3),
                Col("baseline_interval_score_log", "No-price baseline's score (ln)", kind="num", fmt=sig3),
                Col("skill_score_frac", "Skill (frac)", kind="num", fmt=sig3),
                Col("interval_width_ratio", "Interval width, high/low (ratio)", kind="num", fmt=sig3),
                Col("hypothesis_status", "Uncorrected hypothesis"),
                Col("status", "Status"),
                Col("status_reason", "Why", wrap=True),
            ],
            caption="Each price inference checked on the open-weight models whose architecture gives the true "
            "value, each architecture (a model with its re-releases: GLM-5 with GLM-5.1) left out of its own check "
            "whole and weighing 1 in the bias, coverage and skill. A significant bias (t test, 5%) is corrected with "
            "the architecture left out and the interval is the prediction interval of the other architectures' "
            "errors around it (not their RMS); each interval is scored (Gneiting-Raftery interval score in ln, lower "
            "is better) against the no-price baseline, the geometric mean of the other architectures' true values. "
            "Status: too_few_open_models under 5 architectures; falsified when a hypothesis misses beyond its own "
            "interval; uninformative with no skill against the baseline or an interval wider than 10x; ok otherwise",
            id="inference-quantities",
        )
    ]
    if ctx.has("inference_validation"):
        every = ctx.query(VALIDATION_ROWS)
        rows = every.filter(pl.col("provider_kind") == "first_party")  # the resellers' rows: in the download
        blocks.append(
            details(
                f"The first-party schedules ({rows.height:,} of the {every.height:,} validated; every row in the CSV "
                "below)",
                table(
                    rows.with_columns(interval_text("validated_low_value", "validated_high_value").alias("interval")),
                    [
                        Col("quantity", "Quantity"),
                        Col("model", "Open model"),
                        Col("provider", "Seller"),
                        Col("provider_kind", "Kind"),
                        Col("implied_value", "Implied", kind="num", fmt=sig3),
                        Col("published_value", "Published", kind="num", fmt=sig3),
                        Col("true_value", "True", kind="num", fmt=sig3),
                        Col("unit", "Unit"),
                        Col("implied_over_true_ratio", "Implied/true (ratio)", kind="num", fmt=sig3),
                        Col("interval", "Validated interval"),
                        Col("interval_covers_true", "Covers truth"),
                        Col("baseline_value", "No-price baseline", kind="num", fmt=sig3),
                    ],
                    caption="The first-party schedules of each open model, each validated apart (the resellers' "
                    "schedules are validated the same way; their rows are in the download, so the page stays light)",
                    id="inference-validation",
                ),
            )
        )
        blocks.append(
            Download(
                "inference-validation",
                ctx.query("select * from inference_validation order by all"),
                "Every validation row",
            )
        )
    return Section("Checked on open models", blocks)
