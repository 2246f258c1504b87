"""The columns of ``inference_validation`` and ``inference_quantities`` (the tables
:mod:`econ.analyses.inference_validation` writes)."""

from __future__ import annotations

from econ.fits import context_readings, validation
from econ.results import ResultColumn as C
from econ.results import ResultTable

KEY = (
    "quantity",
    "model",
    "price_source",
    "price_provider",
    "price_model",
    "variant",
    "price_from_date",
    "price_column",
)

INFERENCE_VALIDATION = ResultTable(
    name="inference_validation",
    grain="inferred quantity x open-weights model x price schedule (first-party and resellers apart)",
    key=KEY,
    description=(
        "Every price inference on the open-weight models whose architecture gives the true value: implied and true "
        "value, their ratio, the published (bias-corrected where the bias is significant, the correction estimated "
        "with the model's whole architecture group left out) value and its left-out prediction interval, whether it "
        "covers the truth, and its interval score beside the no-price baseline's (the geometric mean of the other "
        "architecture groups' true values). The unit left out is the architecture group (a model and its "
        "re-releases share their true value; one left in would leak it). The evidence every inferred number of the "
        "report cites (inference_quantities)"
    ),
    columns=(
        C("quantity", "str", "", "key", "Inferred quantity (inference_quantities.quantity)"),
        C("model", "str", "", "key", "Open-weights model whose architecture gives the truth (models.model)"),
        C(
            "architecture_group",
            "str",
            "",
            "input",
            "The model's architecture group (model_derived.architecture_group): the unit left out together",
        ),
        C("price_source", "str", "", "key", "Price source of the schedule (hand, litellm, openrouter)"),
        C("price_provider", "str", "", "key", "Seller"),
        C("price_model", "str", "", "key", "Model id as the seller names it"),
        C("variant", "str", "", "key", "Service variant (standard: the validated rows)"),
        C(
            "price_from_date",
            "date",
            "",
            "key",
            "First day of the price's period where the reading keeps every snapshot (the markup model); null: current",
        ),
        C(
            "price_column",
            "str",
            "",
            "key",
            "The prices column read, where a schedule has several for one quantity (cache writes); null otherwise",
        ),
        C("provider_kind", "str", "", "input", "first_party (the model's maker) or reseller"),
        C("unit", "str", "", "label", "Unit of implied_value, true_value and the intervals"),
        C(
            "implied_value",
            "float",
            "(unit column)",
            "inference",
            "Value read from the price, uncorrected (the quantity's source table: its reading columns)",
            context_readings.readings,
        ),
        C("true_value", "float", "(unit column)", "input", "The architecture's value (deployment model's terms)"),
        C("implied_over_true_ratio", "float", "", "check", "implied_value / true_value", validation.log_ratio),
        C("log_ratio", "float", "", "check", "ln(implied/true)", validation.log_ratio),
        C(
            "scenario_low_value",
            "float",
            "(unit column)",
            "inference",
            "The reading's own interval, low (assumption ranges, Monte Carlo)",
            context_readings.readings,
        ),
        C(
            "scenario_high_value",
            "float",
            "(unit column)",
            "inference",
            "The reading's own interval, high",
            context_readings.readings,
        ),
        C(
            "scenario_interval_covers_true",
            "bool",
            "",
            "check",
            "Whether the reading's own interval covers the truth",
            validation.covers,
        ),
        C(
            "published_value",
            "float",
            "(unit column)",
            "inference",
            "The published value: implied * exp(-b_-m), b_-m the bias of the other open models (where the bias is "
            "significant and the quantity is a reading), else implied",
            validation.validate,
        ),
        C(
            "correction_factor_ratio",
            "float",
            "",
            "check",
            "published / implied: exp(-b_-m), 1 where uncorrected",
            validation.left_out,
        ),
        C(
            "validated_low_value",
            "float",
            "(unit column)",
            "inference",
            "Validated interval, low: the published value's prediction interval from the other groups' errors",
            validation.left_out,
        ),
        C(
            "validated_high_value",
            "float",
            "(unit column)",
            "inference",
            "Validated interval, high",
            validation.left_out,
        ),
        C(
            "interval_covers_true",
            "bool",
            "",
            "check",
            "Whether the validated interval covers the truth (cross-validated: its architecture group left out)",
            validation.covers,
        ),
        C(
            "baseline_value",
            "float",
            "(unit column)",
            "check",
            "No-price baseline: the geometric mean of the other architecture groups' true values",
            validation.baseline_interval,
        ),
        C(
            "baseline_low_value",
            "float",
            "(unit column)",
            "check",
            "No-price baseline's prediction interval, low",
            validation.baseline_interval,
        ),
        C(
            "baseline_high_value",
            "float",
            "(unit column)",
            "check",
            "No-price baseline's prediction interval, high",
            validation.baseline_interval,
        ),
        C(
            "interval_score_log",
            "float",
            "",
            "check",
            "Interval score of the validated interval, in ln (lower is better)",
            validation.interval_score,
        ),
        C(
            "baseline_interval_score_log",
            "float",
            "",
            "check",
            "Interval score of the baseline's interval, in ln",
            validation.interval_score,
        ),
    ),
)
INFERENCE_QUANTITIES = ResultTable(
    name="inference_quantities",
    grain="inferred quantity",
    key=("quantity",),
    description=(
        "What the check on open models earns each price inference: models, architecture groups and rows checked, "
        "the bias and its t test, the correction applied, left-out coverage of the validated interval at the stated "
        "level, the interval score beside the no-price baseline's (skill), the interval a closed model gets (width), "
        "the uncorrected hypothesis's verdict and one status (econ.fits.validation): too_few_open_models (< 5 "
        "architecture groups), falsified (a hypothesis missing beyond its own interval), uninformative (no skill, or "
        "wider than 10x), ok. The unit is the architecture group (model_derived.architecture_group): it is left out "
        "whole, counted for the 5, and weighs 1 in the bias, coverage and skill (its rows averaged first), because a "
        "model and its re-release share one true value and are one piece of evidence; coverage_rows_frac is the "
        "row-weighted share beside it"
    ),
    columns=(
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
    ),
)
