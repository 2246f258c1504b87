"""What one :func:`econ.fits.validation.validate` call leaves behind, kept where it is computed.

Each analysis that reads a quantity from prices validates it once (the fit tables publish every row's value, open
and closed models alike, and later fits read them: the markup model's cost interval feeds the decode batch) and keeps
the rest of that call's answer: on each open row that was checked, the correction, whether the interval covers the
truth, the no-price baseline and the two interval scores (:func:`evidence`, under the table's own column names,
declared by :func:`evidence_columns`), and per quantity the summary and status (:func:`quantities_table`).
``inference_validation`` and ``inference_quantities`` reshape those into one layout; nothing is validated twice.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.inference_validation_tables import INFERENCE_QUANTITIES
from econ.fits import validation
from econ.results import ResultColumn as C
from econ.results import ResultTable

EVIDENCE = (
    "correction_factor_ratio",
    "interval_covers_true",
    "baseline_value",
    "baseline_low_value",
    "baseline_high_value",
    "interval_score_log",
    "baseline_interval_score_log",
)
"""The per-row answers of :func:`econ.fits.validation.validate` beyond the published value and its interval, by
their ``inference_validation`` names."""

SUMMARY = (
    "n_models",
    "n_architecture_groups",
    "n_rows",
    "coverage_groups_frac",
    "coverage_rows_frac",
    "median_abs_log_ratio",
    "median_error_factor_ratio",
    "geometric_mean_ratio",
    "bias_t_stat",
    "bias_significant",
    "bias_corrected",
    "correction_factor_ratio",
    "interval_width_ratio",
    "interval_score_log",
    "baseline_interval_score_log",
    "skill_score_frac",
    "level_frac",
    "hypothesis_status",
    "status",
)
"""The per-quantity answers of :func:`econ.fits.validation.summary`, by their ``inference_quantities`` names."""


def evidence(checked: pl.DataFrame, names: dict[str, str]) -> list[pl.Series]:
    """The :data:`EVIDENCE` of a validated frame under ``names`` (generic name -> the table's column): the correction
    on every row (a closed model's is every open group's), the rest on the open rows that were checked only."""
    checked_row = pl.col("log_ratio").is_not_null() & pl.col("model_key").is_not_null()
    source = {
        "correction_factor_ratio": (-pl.col("correction_log")).exp(),
        "interval_covers_true": pl.col("covers_true"),
        "baseline_value": pl.col("baseline_value"),
        "baseline_low_value": pl.col("baseline_low"),
        "baseline_high_value": pl.col("baseline_high"),
        "interval_score_log": pl.col("interval_score_log"),
        "baseline_interval_score_log": pl.col("baseline_interval_score_log"),
    }
    exprs = [
        (e if g == "correction_factor_ratio" else pl.when(checked_row).then(e)).alias(names[g])
        for g, e in source.items()
        if g in names
    ]
    return checked.select(exprs).get_columns()


def published(value: str, low: str, high: str, names: dict[str, str]) -> list[pl.Expr]:
    """A table's published value, validated interval and evidence columns under the names
    :func:`econ.fits.validation.validate` gives them (``corrected``, ``validated_low``, ``validated_high``) and the
    :data:`EVIDENCE` names: what ``inference_validation`` reshapes."""
    return [
        pl.col(value).alias("corrected"),
        pl.col(low).alias("validated_low"),
        pl.col(high).alias("validated_high"),
        *(pl.col(names[g]).alias(g) for g in EVIDENCE if g in names),
    ]


def empty_evidence(names: dict[str, str]) -> list[pl.Expr]:
    """Null :data:`EVIDENCE` columns (a table with no row to validate)."""
    return [
        pl.lit(None, pl.Boolean if g == "interval_covers_true" else pl.Float64).alias(names[g])
        for g in EVIDENCE
        if g in names
    ]


def evidence_names(prefix: str, unit_suffix: str) -> dict[str, str]:
    """The evidence columns of one quantity in a wide table: ``<prefix>_<what>[_<unit suffix>]``."""
    return {
        "correction_factor_ratio": f"{prefix}_correction_factor_ratio",
        "interval_covers_true": f"{prefix}_interval_covers_true",
        "baseline_value": f"{prefix}_baseline_{unit_suffix}",
        "baseline_low_value": f"{prefix}_baseline_low_{unit_suffix}",
        "baseline_high_value": f"{prefix}_baseline_high_{unit_suffix}",
        "interval_score_log": f"{prefix}_interval_score_log",
        "baseline_interval_score_log": f"{prefix}_baseline_interval_score_log",
    }


def evidence_columns(names: dict[str, str], unit: str, what: str) -> tuple[C, ...]:
    """Declarations of the :data:`EVIDENCE` columns ``names`` of the reading ``what`` (values in ``unit``)."""
    meaning = {
        "correction_factor_ratio": (
            "float",
            "",
            f"{what}: published / implied, exp(-b) with the row's architecture group left out (every open group for "
            "a closed model); 1 where uncorrected",
            validation.left_out,
        ),
        "interval_covers_true": (
            "bool",
            "",
            f"{what}, open rows checked: whether the validated interval covers the truth (its group left out)",
            validation.covers,
        ),
        "baseline_value": (
            "float",
            unit,
            f"{what}, open rows checked: the no-price baseline, the geometric mean of the other groups' true values",
            validation.baseline_interval,
        ),
        "baseline_low_value": (
            "float",
            unit,
            f"{what}: the baseline's prediction interval, low",
            validation.baseline_interval,
        ),
        "baseline_high_value": (
            "float",
            unit,
            f"{what}: the baseline's prediction interval, high",
            validation.baseline_interval,
        ),
        "interval_score_log": (
            "float",
            "",
            f"{what}, open rows checked: interval score of the validated interval, in ln (lower is better)",
            validation.interval_score,
        ),
        "baseline_interval_score_log": (
            "float",
            "",
            f"{what}, open rows checked: interval score of the baseline's interval, in ln",
            validation.interval_score,
        ),
    }
    return tuple(C(names[g], meaning[g][0], meaning[g][1], "check", *meaning[g][2:]) for g in EVIDENCE if g in names)


def quantities_table(name: str, source: str) -> ResultTable:
    """The per-quantity summary table the analysis writing ``source`` keeps of its validations."""
    declared = {c.name: c for c in INFERENCE_QUANTITIES.columns}
    return ResultTable(
        name=name,
        grain="validated quantity",
        key=("quantity",),
        description=(
            f"What the check on open models earns each quantity read in {source} (econ.fits.validation.summary, "
            "computed once with the table's validation): the rows of inference_quantities whose source_table is "
            f"{source}, before their labels"
        ),
        columns=(declared["quantity"], *(declared[n] for n in SUMMARY)),
    )


def summary_frame(summaries: dict[str, dict], table: ResultTable) -> pl.DataFrame:
    """``table`` (:func:`quantities_table`) from {quantity: :func:`econ.fits.validation.summary` dict}."""
    records = [{"quantity": q, **{k: s.get(k) for k in SUMMARY}} for q, s in summaries.items()]
    return pl.DataFrame(records, schema=table.schema, strict=False).with_columns(pl.col(pl.Float64).fill_nan(None))
