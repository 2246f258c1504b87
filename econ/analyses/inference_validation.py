"""``inference_validation`` and ``inference_quantities``: every price inference checked against the open models whose
true value the architecture gives, and what that check earns each inferred quantity.

The readings are those of ``fit_context_tiers`` (default rule: output slope → decode KV bytes read per context token,
input slope → prefill attention FLOPs per context token, the lecture's crossover hypothesis) and ``fit_io_prices``
(input price → prefill FLOPs per prompt token). One row per quantity × open-model price schedule (first-party and
reseller sellers apart), checked by the rule of :func:`econ.fits.validation.validate`: a significant bias is
corrected with the row's own model left out, the interval is the left-out prediction interval of the other open
models' errors around it, and each interval is scored against the no-price baseline (the geometric mean of the
other open models' true values), so ``interval_covers_true`` and the interval scores are cross-validated, not fits
to themselves. ``inference_quantities`` is the evidence each reported number cites: models, left-out coverage at
the stated level, bias and its test, the interval score beside the baseline's, the interval width and one status
(ok, uninformative, falsified, too_few_open_models) that the report shows everywhere.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import fit_context_tiers, fit_io_prices, fit_markups, markup_inversions
from econ.fits import context_readings, markups, validation
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "inference_validation"
INPUTS = ("fit_context_tiers", "fit_io_prices", "fit_markup_rows", "markup_inversions")

QUANTITIES = {
    context_readings.QUANTITIES["output"]: (
        "fit_context_tiers",
        "bytes/token",
        "output-price slope of the long-context tiers -> bytes a decode step reads per context token",
        "reading",
    ),
    context_readings.QUANTITIES["input"]: (
        "fit_context_tiers",
        "FLOP/token",
        "input-price slope of the long-context tiers -> prefill attention FLOPs per context token",
        "reading",
    ),
    context_readings.CROSSOVER: (
        "fit_context_tiers",
        "bytes/token",
        "first tier threshold taken as the roofline crossover L* -> KV bytes per token (lecture f.1)",
        "hypothesis",
    ),
    fit_io_prices.QUANTITY: (
        "fit_io_prices",
        "FLOP/token",
        "base-tier input price -> prefill FLOPs per uncached prompt token (compute-bound prefill)",
        "reading",
    ),
    **{
        fit_markups.quantity(c): (
            "fit_markup_rows",
            fit_markups.UNITS.get(c, "USD/MTok"),
            f"{c.replace('_', ' ')} price over the markup model's markup (left out) -> serving cost "
            f"({fit_markups.COST_BASIS[c]})",
            "reading",
        )
        for c in markups.COMPONENTS
    },
    markup_inversions.ACTIVE: (
        "markup_inversions",
        "params",
        "input price -> serving cost (markup model) -> active parameters at the other open models' cost per one",
        "reading",
    ),
    markup_inversions.HELD: (
        "markup_inversions",
        "bytes/token",
        "price of holding a cached prompt (storage, or a write's premium per second) -> KV bytes held per token at "
        "the cache tier's cost of holding a byte",
        "reading",
    ),
}
"""quantity -> (table it is read in, unit, what is read from what, role: a reading or the lecture's hypothesis)."""
COMPONENT_OF = {fit_markups.quantity(c): c for c in markups.COMPONENTS}

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
        "with the model itself left out) value and its left-out prediction interval, whether it covers the truth, "
        "and its interval score beside the no-price baseline's (the geometric mean of the other open models' true "
        "values). The evidence every inferred number of the report cites (inference_quantities)"
    ),
    columns=(
        C("quantity", "str", "", "key", "Inferred quantity (inference_quantities.quantity)"),
        C("model", "str", "", "key", "Open-weights model whose architecture gives the truth (models.model)"),
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
            "Validated interval, low: the published value's prediction interval from the other open models' errors",
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
            "Whether the validated interval covers the truth (cross-validated: the model was left out)",
            validation.covers,
        ),
        C(
            "baseline_value",
            "float",
            "(unit column)",
            "check",
            "No-price baseline: the geometric mean of the other open models' true values",
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
        "What the check on open models earns each price inference: models and rows checked, the bias and its t "
        "test, the correction applied, left-out coverage of the validated interval at the stated level, the "
        "interval score beside the no-price baseline's (skill), the interval a closed model gets (width), the "
        "uncorrected hypothesis's verdict and one status (econ.fits.validation): too_few_open_models (< 5), "
        "falsified (a hypothesis missing beyond its own interval), uninformative (no skill, or wider than 10x), ok"
    ),
    columns=(
        C("quantity", "str", "", "key", "Inferred quantity"),
        C("source_table", "str", "", "label", "The table whose rows carry the reading and its interval"),
        C("unit", "str", "", "label", "Unit of the quantity"),
        C("reading", "str", "", "label", "What is read from which price"),
        C("role", "str", "", "label", "reading (bias-corrected where needed) or hypothesis (tested as stated)"),
        C("n_models", "int", "", "check", "Open models with a true value (one vote each)"),
        C("n_rows", "int", "", "check", "Validated schedules (first-party and reseller rows apart)"),
        C(
            "coverage_models_frac",
            "float",
            "",
            "check",
            "Left-out coverage: mean over open models of the share of their rows the validated interval covers",
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
            "exp(b), b the mean over models of ln ratio: the bias (1 = none)",
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
            "Mean over open models of the left-out interval score of the validated interval, in ln (lower is better)",
            validation.interval_score,
        ),
        C(
            "baseline_interval_score_log",
            "float",
            "",
            "check",
            "The same for the no-price baseline (geometric mean of the other open models' true values)",
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
            "The uncorrected reading: falsified (its bias is significant and beyond its own interval) or consistent",
            validation.hypothesis_verdict,
        ),
        C(
            "status",
            "str",
            "",
            "check",
            "ok | uninformative (no skill against the baseline, or wider than 10x) | falsified (a hypothesis missing "
            "beyond its own interval) | too_few_open_models (< 5)",
            validation.summary,
        ),
        C("status_reason", "str", "", "label", "Why the status is what it is, in words"),
    ),
)
TABLES = (INFERENCE_VALIDATION, INFERENCE_QUANTITIES)


def _rows(tables: dict[str, pl.DataFrame], quantity: str) -> pl.DataFrame:
    source = QUANTITIES[quantity][0]
    frame = tables.get(source)
    if frame is None or frame.height == 0:
        return pl.DataFrame()
    if source == "fit_context_tiers":
        return fit_context_tiers.validation_rows(frame, quantity)
    if source == "fit_markup_rows":
        return fit_markups.validation_rows(frame, COMPONENT_OF[quantity])
    if source == "markup_inversions":
        return markup_inversions.validation_rows(frame, quantity)
    return fit_io_prices.validation_rows(frame)


def reason(s: dict) -> str:
    """The status of one quantity in words, with the numbers it rests on."""
    n = s.get("n_models") or 0
    if s["status"] == "too_few_open_models":
        return f"{n} open model(s) with a true value; at least {validation.MIN_MODELS} are needed"
    bias = (
        f"bias x{s['geometric_mean_ratio']:.3g} (t = {s['bias_t_stat']:.2g}, "
        + ("significant" if s["bias_significant"] else "not significant")
        + ")"
    )
    if s["status"] == "falsified":
        return f"the hypothesis misses the truth beyond its own interval on {n} open models: {bias}"
    skill = (
        f"interval score {s['interval_score_log']:.3g} against the no-price baseline's "
        f"{s['baseline_interval_score_log']:.3g} (skill {s['skill_score_frac']:.2f})"
    )
    coverage = f"left-out coverage {s['coverage_models_frac']:.0%} at {s['level_frac']:.0%}"
    width = f"interval x{s['interval_width_ratio']:.3g} wide (high/low)"
    corrected = "; bias-corrected" if s["bias_corrected"] else ""
    if s["status"] == "uninformative":
        why = []
        if not (s["skill_score_frac"] is not None and s["skill_score_frac"] > 0):
            why.append("no skill against the no-price baseline")
        if s["interval_width_ratio"] > validation.MAX_WIDTH_RATIO:
            why.append(f"wider than {validation.MAX_WIDTH_RATIO:g}x")
        return f"{' and '.join(why)}: {skill}; {width}; {coverage}; {bias}{corrected}"
    return f"{n} open models; {coverage}; {skill}; {width}; {bias}{corrected}"


def tables(fits: dict[str, pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``inference_validation``, ``inference_quantities``) from the fit_* tables (``fits``: name -> frame)."""
    rows, summaries = [], []
    for quantity, (source, unit, reading, role) in QUANTITIES.items():
        found = _rows(fits, quantity)
        summary = {"n_models": 0, "n_rows": 0, "status": "too_few_open_models"}
        if found.height:
            checked, summary = validation.validate(found, role=role)
            open_rows = checked.filter(pl.col("log_ratio").is_not_null() & pl.col("model_key").is_not_null())
            scenario_covers = validation.covers(
                open_rows["scenario_low"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
                open_rows["scenario_high"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
                open_rows["true"].cast(pl.Float64).to_numpy(),
            )
            summary["scenario_coverage_rows_frac"] = float(scenario_covers.mean()) if open_rows.height else None
            rows.append(
                open_rows.select(
                    pl.lit(quantity).alias("quantity"),
                    pl.col("model_key").alias("model"),
                    pl.col("source").alias("price_source"),  # price_*: the table's own model is the open model
                    pl.col("provider").alias("price_provider"),
                    pl.col("model").alias("price_model"),
                    "variant",
                    (pl.col("from_date") if "from_date" in open_rows.columns else pl.lit(None, pl.Date)).alias(
                        "price_from_date"
                    ),
                    (pl.col("price_column") if "price_column" in open_rows.columns else pl.lit(None, pl.String)).alias(
                        "price_column"
                    ),
                    "provider_kind",
                    pl.lit(unit).alias("unit"),
                    pl.col("implied").alias("implied_value"),
                    pl.col("true").alias("true_value"),
                    pl.col("log_ratio").exp().alias("implied_over_true_ratio"),
                    "log_ratio",
                    pl.col("scenario_low").alias("scenario_low_value"),
                    pl.col("scenario_high").alias("scenario_high_value"),
                    pl.Series("scenario_interval_covers_true", scenario_covers, dtype=pl.Boolean),
                    pl.col("corrected").alias("published_value"),
                    (-pl.col("correction_log")).exp().alias("correction_factor_ratio"),
                    pl.col("validated_low").alias("validated_low_value"),
                    pl.col("validated_high").alias("validated_high_value"),
                    pl.col("covers_true").alias("interval_covers_true"),
                    "baseline_value",
                    pl.col("baseline_low").alias("baseline_low_value"),
                    pl.col("baseline_high").alias("baseline_high_value"),
                    "interval_score_log",
                    "baseline_interval_score_log",
                )
            )
        summaries.append(
            {
                **{c: None for c in INFERENCE_QUANTITIES.names},
                **{k: v for k, v in summary.items() if k in INFERENCE_QUANTITIES.names},
                "quantity": quantity,
                "source_table": source,
                "unit": unit,
                "reading": reading,
                "role": role,
                "level_frac": validation.LEVEL,
                "status_reason": reason(summary),
            }
        )
    validated = (
        pl.concat(rows, how="vertical_relaxed").sort(KEY) if rows else pl.DataFrame(schema=INFERENCE_VALIDATION.schema)
    )
    quantities = pl.DataFrame(summaries, schema=INFERENCE_QUANTITIES.schema, strict=False)
    return validated.select(INFERENCE_VALIDATION.names), quantities.with_columns(
        pl.col(pl.Float64).fill_nan(None)
    ).select(INFERENCE_QUANTITIES.names)


def run(ctx) -> None:
    fits = {t: ctx.query(f"select * from {t}") for t in INPUTS}
    validated, quantities = tables(fits)
    ctx.write(INFERENCE_VALIDATION, validated)
    ctx.write(INFERENCE_QUANTITIES, quantities)
