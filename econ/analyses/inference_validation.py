"""``inference_validation`` and ``inference_quantities``: every price inference checked against the open models whose
true value the architecture gives, and what that check earns each inferred quantity.

The readings are those of ``fit_context_tiers`` (default rule: output slope → decode KV bytes read per context token,
input slope → prefill attention FLOPs per context token, the lecture's crossover hypothesis) and ``fit_io_prices``
(input price → prefill FLOPs per prompt token). One row per quantity × open-model price schedule (first-party and
reseller sellers apart), checked by the rule of :func:`econ.fits.validation.validate`: a significant bias is
corrected with the row's own architecture group left out (``model_derived.architecture_group``: GLM-5 leaves with
GLM-5.1, whose true value is its own), the interval is the left-out prediction interval of the other groups' errors
around it, and each interval is scored against the no-price baseline (the geometric mean of the other groups' true
values), so ``interval_covers_true`` and the interval scores are cross-validated, not fits
to themselves. ``inference_quantities`` is the evidence each reported number cites: models, left-out coverage at
the stated level, bias and its test, the interval score beside the baseline's, the interval width and one status
(ok, uninformative, falsified, too_few_open_models) that the report shows everywhere.

**Nothing is validated here.** Each quantity is validated once, by the analysis that reads it (its fit table
publishes every row's value, closed models' too, and the markup model's cost interval feeds the decode batch); that
analysis keeps the call's per-row evidence on its open rows and the summary in its ``*_quantities`` table
(:mod:`econ.analyses.validation_evidence`). These two tables put them in one layout, with the labels, the reason in
words and the scenario interval's coverage (computed here only).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import fit_context_tiers, fit_io_prices, fit_markups, markup_inversions
from econ.analyses.inference_validation_tables import INFERENCE_QUANTITIES, INFERENCE_VALIDATION, KEY
from econ.analyses.inputs import architecture_groups
from econ.analyses.validation_evidence import EVIDENCE
from econ.fits import context_readings, markups, validation

NAME = "inference_validation"
INPUTS = (
    "fit_context_tiers",
    "fit_io_prices",
    "fit_markup_rows",
    "markup_inversions",
    "model_derived",
    "fit_context_tier_quantities",
    "fit_io_price_quantities",
    "fit_markup_quantities",
    "markup_inversion_quantities",
)

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
SUMMARIES = {
    "fit_context_tiers": fit_context_tiers.FIT_CONTEXT_TIER_QUANTITIES.name,
    "fit_io_prices": fit_io_prices.FIT_IO_PRICE_QUANTITIES.name,
    "fit_markup_rows": fit_markups.FIT_MARKUP_QUANTITIES.name,
    "markup_inversions": markup_inversions.MARKUP_INVERSION_QUANTITIES.name,
}
"""Source table -> the table its analysis keeps its validations' summaries in."""

TABLES = (INFERENCE_VALIDATION, INFERENCE_QUANTITIES)


def _rows(tables: dict[str, pl.DataFrame], quantity: str, groups: dict[str, str]) -> pl.DataFrame:
    source = QUANTITIES[quantity][0]
    frame = tables.get(source)
    if frame is None or frame.height == 0:
        return pl.DataFrame()
    if source == "fit_context_tiers":
        rows = fit_context_tiers.validation_rows(frame, quantity, groups, with_published=True)
    elif source == "fit_markup_rows":
        rows = fit_markups.validation_rows(frame, COMPONENT_OF[quantity], groups, with_published=True)
    elif source == "markup_inversions":
        rows = markup_inversions.validation_rows(frame, quantity, groups, with_published=True)
    else:
        rows = fit_io_prices.validation_rows(frame, groups, with_published=True)
    r = validation.log_ratio(*(rows[c].cast(pl.Float64).fill_null(np.nan).to_numpy() for c in ("implied", "true")))
    return rows.with_columns(pl.Series("log_ratio", r).fill_nan(None))


def _summary(tables: dict[str, pl.DataFrame], quantity: str) -> dict | None:
    """The summary the quantity's own analysis kept of its validation (None where it validated nothing), floats
    NaN where unknown (as :func:`econ.fits.validation.summary` gives them)."""
    frame = tables.get(SUMMARIES[QUANTITIES[quantity][0]])
    found = frame.filter(pl.col("quantity") == quantity) if frame is not None and frame.height else None
    if found is None or found.height == 0:
        return None
    floats = {c for c, t in found.schema.items() if t == pl.Float64}
    return {k: (np.nan if v is None and k in floats else v) for k, v in found.row(0, named=True).items()}


def reason(s: dict) -> str:
    """The status of one quantity in words, with the numbers it rests on."""
    n, g = s.get("n_models") or 0, s.get("n_architecture_groups") or 0
    models = f"{g} architecture group(s) of open models ({n} models)"
    if s["status"] == "too_few_open_models":
        return f"{models} with a true value; at least {validation.MIN_MODELS} groups are needed"
    bias = (
        f"bias x{s['geometric_mean_ratio']:.3g} (t = {s['bias_t_stat']:.2g}, "
        + ("significant" if s["bias_significant"] else "not significant")
        + ")"
    )
    if s["status"] == "falsified":
        return f"the hypothesis misses the truth beyond its own interval on {models}: {bias}"
    skill = (
        f"interval score {s['interval_score_log']:.3g} against the no-price baseline's "
        f"{s['baseline_interval_score_log']:.3g} (skill {s['skill_score_frac']:.2f})"
    )
    coverage = f"left-out coverage {s['coverage_groups_frac']:.0%} of groups at {s['level_frac']:.0%}"
    width = f"interval x{s['interval_width_ratio']:.3g} wide (high/low)"
    corrected = "; bias-corrected" if s["bias_corrected"] else ""
    if s["status"] == "uninformative":
        why = []
        if not (s["skill_score_frac"] is not None and s["skill_score_frac"] > 0):
            why.append("no skill against the no-price baseline")
        if s["interval_width_ratio"] > validation.MAX_WIDTH_RATIO:
            why.append(f"wider than {validation.MAX_WIDTH_RATIO:g}x")
        return f"{' and '.join(why)}: {skill}; {width}; {coverage}; {bias}{corrected}"
    return f"{models}; {coverage}; {skill}; {width}; {bias}{corrected}"


def tables(fits: dict[str, pl.DataFrame]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``inference_validation``, ``inference_quantities``) from the fit_* tables and the summaries their analyses
    kept of their validations (``fits``: name -> frame; with ``model_derived``, each open model's architecture
    group): a reshaping, nothing is validated here."""
    rows, summaries = [], []
    groups = architecture_groups(fits.get("model_derived", pl.DataFrame()))
    for quantity, (source, unit, reading, role) in QUANTITIES.items():
        checked, summary = _rows(fits, quantity, groups), _summary(fits, quantity)
        if summary is None:
            summary = {"n_models": 0, "n_architecture_groups": 0, "n_rows": 0, "status": "too_few_open_models"}
        elif checked.height:
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
                    pl.col("group_key").alias("architecture_group"),
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
                    pl.col("validated_low").alias("validated_low_value"),
                    pl.col("validated_high").alias("validated_high_value"),
                    *EVIDENCE,
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
