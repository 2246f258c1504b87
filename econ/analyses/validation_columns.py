"""The columns of each ``*_quantities`` table (:func:`econ.analyses.validation_evidence.quantities_table`), the
rows the ``inference_quantities`` view puts together: what the check on open models earns one price inference."""

from __future__ import annotations

from econ.fits import validation
from econ.results import ResultColumn as C

DESCRIPTION = (
    "What the check on open models earns each price inference: models, architecture groups and rows checked, "
    "the bias and its t test, the correction applied, left-out coverage of the validated interval at the stated "
    "level, the interval score beside the no-price baseline's (skill), the interval a closed model gets (width), "
    "the uncorrected hypothesis's verdict and one status (econ.fits.validation): too_few_open_models (< 5 "
    "architecture groups), falsified (a hypothesis missing beyond its own interval), uninformative (no skill, or "
    "wider than 10x), ok. The unit is the architecture group (model_derived.architecture_group): it is left out "
    "whole, counted for the 5, and weighs 1 in the bias, coverage and skill (its rows averaged first), because a "
    "model and its re-release share one true value and are one piece of evidence; coverage_rows_frac is the "
    "row-weighted share beside it"
)

QUANTITY_COLUMNS = (
    C("quantity", "str", "", "key", "Inferred quantity"),
    C("source_table", "str", "", "label", "The table whose rows carry the reading and its interval"),
    C("unit", "str", "", "label", "Unit of the quantity"),
    C("reading", "str", "", "label", "What is read from which price"),
    C("role", "str", "", "label", "reading (bias-corrected where needed) or hypothesis (tested as stated)"),
    C("n_models", "int", "", "check", "Open models with a true value"),
    C(
        "n_architecture_groups",
        "int",
        "",
        "check",
        "Their architecture groups (model_derived.architecture_group; one vote each, the count the 5 is on)",
        validation.summary,
    ),
    C("n_rows", "int", "", "check", "Validated schedules (first-party and reseller rows apart)"),
    C(
        "coverage_groups_frac",
        "float",
        "",
        "check",
        "Left-out coverage: mean over architecture groups of the share of their rows the validated interval covers",
        validation.summary,
    ),
    C("coverage_rows_frac", "float", "", "check", "Share of schedules covered", validation.summary),
    C(
        "scenario_coverage_rows_frac",
        "float",
        "",
        "check",
        "Share of schedules the reading's own (assumption) interval covers",
        validation.covers,
    ),
    C(
        "median_abs_log_ratio",
        "float",
        "",
        "check",
        "Median |ln(implied/true)| over the schedules, uncorrected",
        validation.summary,
    ),
    C(
        "median_error_factor_ratio",
        "float",
        "",
        "check",
        "exp(median |ln ratio|): the typical factor off, uncorrected",
        validation.summary,
    ),
    C(
        "geometric_mean_ratio",
        "float",
        "",
        "check",
        "exp(b), b the mean over architecture groups of ln ratio: the bias (1 = none)",
        validation.bias_test,
    ),
    C("bias_t_stat", "float", "", "check", "t = b*sqrt(n)/s of the bias", validation.bias_test),
    C(
        "bias_significant",
        "bool",
        "",
        "check",
        "|t| above the two-sided 5% quantile of Student's t with n-1 degrees of freedom",
        validation.bias_test,
    ),
    C(
        "bias_corrected",
        "bool",
        "",
        "check",
        "Whether the published values are bias-corrected (a reading with a significant bias)",
        validation.validate,
    ),
    C(
        "correction_factor_ratio",
        "float",
        "",
        "check",
        "exp(-b) with every open model: the correction a closed model's reading gets (1 = none)",
        validation.left_out,
    ),
    C(
        "interval_width_ratio",
        "float",
        "",
        "check",
        "High over low of the validated interval a closed model gets (every open model in the error)",
        validation.left_out,
    ),
    C(
        "interval_score_log",
        "float",
        "",
        "check",
        "Mean over architecture groups of the validated interval's left-out interval score, in ln (lower: better)",
        validation.interval_score,
    ),
    C(
        "baseline_interval_score_log",
        "float",
        "",
        "check",
        "The same for the no-price baseline (geometric mean of the other groups' true values)",
        validation.interval_score,
    ),
    C(
        "skill_score_frac",
        "float",
        "",
        "check",
        "1 - interval score / baseline's: above 0 when the price says more than the baseline",
        validation.summary,
    ),
    C("level_frac", "float", "", "assumption", "Level of the validated intervals (coverage is checked at it)"),
    C(
        "hypothesis_status",
        "str",
        "",
        "check",
        "The uncorrected reading: falsified (its bias is significant and beyond the side of its own interval that "
        "faces the truth) or consistent; null without an own interval",
        validation.hypothesis_verdict,
    ),
    C(
        "status",
        "str",
        "",
        "check",
        "ok | uninformative (no skill against the baseline, or wider than 10x) | falsified (a hypothesis missing "
        "beyond its own interval) | too_few_open_models (< 5 architecture groups)",
        validation.summary,
    ),
    C("status_reason", "str", "", "label", "Why the status is what it is, in words"),
)
"""Declarations of a ``*_quantities`` table's columns (the ``inference_quantities`` view's)."""
