"""``inference_validation`` and ``inference_quantities``: every price inference checked against the open models whose
true value the architecture gives, and what that check earns each inferred quantity.

The readings are those of ``fit_context_tiers`` (default rule: output slope → decode KV bytes read per context token,
input slope → prefill attention FLOPs per context token, the lecture's crossover hypothesis) and ``fit_io_prices``
(input price → prefill FLOPs per prompt token). One row per quantity × open-model price schedule (first-party and
reseller sellers apart); the intervals are the validated ones of :func:`econ.fits.validation.validate` (scenario
interval widened in quadrature by t·RMS of the other open models' log errors, each model left out of its own), so
``interval_covers_true`` is a cross-validated check, not a fit to itself. ``inference_quantities`` is the evidence
each reported number cites: coverage, median |ln(implied/true)|, bias, the widening factor and the status.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import fit_context_tiers, fit_io_prices
from econ.fits import context_readings, validation
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "inference_validation"
INPUTS = ("fit_context_tiers", "fit_io_prices")

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
}
"""quantity -> (table it is read in, unit, what is read from what, role: a reading or the lecture's hypothesis)."""

KEY = ("quantity", "model", "price_source", "price_provider", "price_model", "variant")

INFERENCE_VALIDATION = ResultTable(
    name="inference_validation",
    grain="inferred quantity x open-weights model x price schedule (first-party and resellers apart)",
    key=KEY,
    description=(
        "Every price inference on the open-weight models whose architecture gives the true value: implied and true "
        "value, their ratio, and whether the validated interval (scenario interval widened in quadrature by "
        "t_(0.95, n-1) x the RMS of the other open models' ln(implied/true), the model itself left out) covers the "
        "truth; the scenario interval's own coverage beside it. The evidence every inferred number of the report "
        "cites (inference_quantities)"
    ),
    columns=(
        C("quantity", "str", "", "key", "Inferred quantity (inference_quantities.quantity)"),
        C("model", "str", "", "key", "Open-weights model whose architecture gives the truth (models.model)"),
        C("price_source", "str", "", "key", "Price source of the schedule (hand, litellm, openrouter)"),
        C("price_provider", "str", "", "key", "Seller"),
        C("price_model", "str", "", "key", "Model id as the seller names it"),
        C("variant", "str", "", "key", "Service variant (standard: the validated rows)"),
        C("provider_kind", "str", "", "input", "first_party (the model's maker) or reseller"),
        C("unit", "str", "", "label", "Unit of implied_value, true_value and the intervals"),
        C(
            "implied_value",
            "float",
            "(unit column)",
            "inference",
            "Value read from the price (the quantity's fit_* table: its reading columns)",
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
            "Scenario interval, low (assumption ranges, Monte Carlo)",
            context_readings.readings,
        ),
        C(
            "scenario_high_value",
            "float",
            "(unit column)",
            "inference",
            "Scenario interval, high",
            context_readings.readings,
        ),
        C(
            "scenario_interval_covers_true",
            "bool",
            "",
            "check",
            "Whether the scenario interval alone covers the truth",
            validation.covers,
        ),
        C(
            "validated_low_value",
            "float",
            "(unit column)",
            "inference",
            "Validated interval, low (scenario interval widened by the left-out validation error)",
            validation.widened_interval,
        ),
        C(
            "validated_high_value",
            "float",
            "(unit column)",
            "inference",
            "Validated interval, high",
            validation.widened_interval,
        ),
        C(
            "widening_factor_ratio",
            "float",
            "",
            "check",
            "exp(h): the factor the interval is widened by (from the other open models)",
            validation.half_widths,
        ),
        C(
            "interval_covers_true",
            "bool",
            "",
            "check",
            "Whether the validated interval covers the truth (cross-validated)",
            validation.covers,
        ),
    ),
)
INFERENCE_QUANTITIES = ResultTable(
    name="inference_quantities",
    grain="inferred quantity",
    key=("quantity",),
    description=(
        "What the check on open models earns each price inference: models and rows checked, coverage of the "
        "validated and of the scenario intervals, median |ln(implied/true)|, geometric-mean bias, the full-sample "
        "widening factor a closed model's interval gets, and the status (ok, undercovered, too_few_open_models; "
        "econ.fits.validation)"
    ),
    columns=(
        C("quantity", "str", "", "key", "Inferred quantity"),
        C("source_table", "str", "", "label", "The fit_* table whose rows carry the reading and its interval"),
        C("unit", "str", "", "label", "Unit of the quantity"),
        C("reading", "str", "", "label", "What is read from which price"),
        C("role", "str", "", "label", "reading, or hypothesis (the lecture's crossover: never a headline)"),
        C("n_models", "int", "", "check", "Open models with a true value (one vote each)"),
        C("n_rows", "int", "", "check", "Validated schedules (first-party and reseller rows apart)"),
        C(
            "coverage_models_frac",
            "float",
            "",
            "check",
            "Share of open models whose validated intervals cover the truth",
            validation.summary,
        ),
        C("coverage_rows_frac", "float", "", "check", "Share of schedules covered", validation.summary),
        C(
            "scenario_coverage_rows_frac",
            "float",
            "",
            "check",
            "Share of schedules the scenario interval alone covers (before widening)",
            validation.covers,
        ),
        C(
            "median_abs_log_ratio",
            "float",
            "",
            "check",
            "Median |ln(implied/true)| over the schedules",
            validation.summary,
        ),
        C(
            "median_error_factor_ratio",
            "float",
            "",
            "check",
            "exp(median |ln ratio|): the typical factor off",
            validation.summary,
        ),
        C(
            "geometric_mean_ratio",
            "float",
            "",
            "check",
            "exp(mean over models of ln ratio): the bias (1 = none)",
            validation.summary,
        ),
        C("rms_log_ratio", "float", "", "check", "RMS over models of ln ratio (bias counts)", validation.summary),
        C(
            "widening_factor_ratio",
            "float",
            "",
            "check",
            "exp(h) with every open model: the widening a closed model's interval gets",
            validation.half_widths,
        ),
        C("level_frac", "float", "", "assumption", "Level the t quantile is taken at"),
        C(
            "error_within_factor",
            "bool",
            "",
            "check",
            "Whether the median error factor is within the stated widening factor",
            validation.summary,
        ),
        C(
            "status",
            "str",
            "",
            "check",
            "ok | undercovered (models covered < 3/4) | too_few_open_models (< 3)",
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
    return fit_io_prices.validation_rows(frame)


def _reason(s: dict) -> str:
    if s["status"] == "too_few_open_models":
        return f"{s['n_models']} open model(s) with a true value; at least {validation.MIN_MODELS} are needed"
    covered = f"validated intervals cover {s['coverage_models_frac']:.0%} of {s['n_models']} open models"
    if s["status"] == "undercovered":
        return f"{covered}, below {validation.MIN_COVERAGE_FRAC:.0%}"
    return f"{covered}; typical error x{s['median_error_factor_ratio']:.3g}, widening x{s['widening_factor_ratio']:.3g}"


def tables(fits: dict[str, pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``inference_validation``, ``inference_quantities``) from the fit_* tables (``fits``: name -> frame)."""
    rows, summaries = [], []
    for quantity, (source, unit, reading, role) in QUANTITIES.items():
        found = _rows(fits, quantity)
        summary = {"n_models": 0, "n_rows": 0, "status": "too_few_open_models"}
        if found.height:
            checked, summary = validation.validate(found)
            open_rows = checked.filter(pl.col("log_ratio").is_not_null())
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
                    "provider_kind",
                    pl.lit(unit).alias("unit"),
                    pl.col("implied").alias("implied_value"),
                    pl.col("true").alias("true_value"),
                    pl.col("log_ratio").exp().alias("implied_over_true_ratio"),
                    "log_ratio",
                    pl.col("scenario_low").alias("scenario_low_value"),
                    pl.col("scenario_high").alias("scenario_high_value"),
                    pl.Series("scenario_interval_covers_true", scenario_covers, dtype=pl.Boolean),
                    pl.col("validated_low").alias("validated_low_value"),
                    pl.col("validated_high").alias("validated_high_value"),
                    "widening_factor_ratio",
                    pl.col("covers_true").alias("interval_covers_true"),
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
                "status_reason": _reason({**summary, "n_models": summary["n_models"]}),
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
