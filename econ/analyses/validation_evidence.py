"""What one :func:`econ.fits.validation.validate` call leaves behind, kept where it is computed.

Each analysis that reads a quantity from prices validates it once (the fit tables publish every row's value, open
and closed models alike, and later fits read them: the markup model's cost interval feeds the decode batch) and keeps
the rest of that call's answer: on each open row that was checked, the correction, whether the interval covers the
truth, the no-price baseline and the two interval scores (:func:`evidence`, under the table's own column names,
declared by :func:`evidence_columns`), and per quantity the summary and status (:func:`quantities_table`).
The views ``inference_validation`` and ``inference_quantities`` (``queries/``) only select, rename and union those
stored columns; nothing is validated twice and nothing is stored twice.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.validation_columns import DESCRIPTION, QUANTITY_COLUMNS
from econ.fits import validation
from econ.results import ResultColumn as C
from econ.results import ResultTable

EVIDENCE = (
    "implied_value",
    "log_ratio",
    "implied_over_true_ratio",
    "scenario_interval_covers_true",
    "correction_factor_ratio",
    "interval_covers_true",
    "baseline_value",
    "baseline_low_value",
    "baseline_high_value",
    "interval_score_log",
    "baseline_interval_score_log",
)
"""The per-row answers of :func:`econ.fits.validation.validate` beyond the published value and its interval, by
their names in the ``inference_validation`` view."""

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
    scenario = (
        checked[c].cast(pl.Float64).fill_null(np.nan).to_numpy() for c in ("scenario_low", "scenario_high", "true")
    )
    source = {
        "implied_value": pl.col("implied"),
        "log_ratio": pl.col("log_ratio"),
        "implied_over_true_ratio": pl.col("log_ratio").exp(),
        "scenario_interval_covers_true": pl.lit(pl.Series(validation.covers(*scenario), dtype=pl.Boolean)),
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


def validate(rows: pl.DataFrame, role: str) -> tuple[pl.DataFrame, dict]:
    """:func:`econ.fits.validation.validate`, its summary with the share of the checked rows that the reading's own
    (assumption) interval covers (``scenario_coverage_rows_frac``; None without a checked row)."""
    checked, summary = validation.validate(rows, role=role)
    open_rows = checked.filter(pl.col("log_ratio").is_not_null() & pl.col("model_key").is_not_null())
    covers = validation.covers(
        *(open_rows[c].cast(pl.Float64).fill_null(np.nan).to_numpy() for c in ("scenario_low", "scenario_high", "true"))
    )
    return checked, {**summary, "scenario_coverage_rows_frac": float(covers.mean()) if open_rows.height else None}


def empty_evidence(names: dict[str, str]) -> list[pl.Expr]:
    """Null :data:`EVIDENCE` columns (a table with no row to validate)."""
    return [pl.lit(None, _DTYPES.get(g, pl.Float64)).alias(names[g]) for g in EVIDENCE if g in names]


_DTYPES = {
    "scenario_interval_covers_true": pl.Boolean,
    "interval_covers_true": pl.Boolean,
}


def evidence_names(prefix: str, unit_suffix: str, *, ratio_stored: bool = False) -> dict[str, str]:
    """The evidence columns of one quantity in a wide table: ``<prefix>_<what>[_<unit suffix>]``. Not repeated: the
    implied value (the table's own reading column), the architecture group (``model_derived``'s, which the
    ``inference_validation`` view joins) and, where the table already stores the reading's implied/true ratio
    (``ratio_stored``), that ratio."""
    return {
        "log_ratio": f"{prefix}_log_ratio",
        **({} if ratio_stored else {"implied_over_true_ratio": f"{prefix}_implied_over_true_ratio"}),
        "scenario_interval_covers_true": f"{prefix}_scenario_interval_covers_true",
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
        "implied_value": (
            "float",
            unit,
            f"{what}, open rows checked: the value read from the price, uncorrected (what the check reads)",
            None,
        ),
        "log_ratio": ("float", "", f"{what}, open rows checked: ln(implied/true)", validation.log_ratio),
        "implied_over_true_ratio": (
            "float",
            "",
            f"{what}, open rows checked: implied / true, exp(ln ratio)",
            validation.log_ratio,
        ),
        "scenario_interval_covers_true": (
            "bool",
            "",
            f"{what}, open rows checked: whether the reading's own (assumption) interval covers the truth (false "
            "without one)",
            validation.covers,
        ),
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
    return tuple(
        C(names[g], meaning[g][0], meaning[g][1], "check", meaning[g][2], *(meaning[g][3:] if meaning[g][3] else ()))
        for g in EVIDENCE
        if g in names
    )


def quantities_table(name: str, source: str) -> ResultTable:
    """The per-quantity table the analysis writing ``source`` keeps of its validations (the ``inference_quantities``
    view unions them)."""
    return ResultTable(
        name=name,
        grain="validated quantity",
        key=("quantity",),
        description=f"{DESCRIPTION}. The quantities read in {source}, computed once with that table's validation",
        columns=QUANTITY_COLUMNS,
    )


NO_CHECK = {"n_models": 0, "n_architecture_groups": 0, "n_rows": 0, "status": "too_few_open_models"}
"""The summary of a quantity with nothing to check."""


def summary_frame(summaries: dict[str, dict], table: ResultTable, labels: dict[str, tuple[str, str, str, str]]):
    """``table`` (:func:`quantities_table`): one row per quantity of ``labels`` (quantity -> (source table, unit,
    what is read from what, role)), its :func:`validate` summary from ``summaries`` (:data:`NO_CHECK` where none),
    the level and the status in words (:func:`reason`)."""
    records = []
    for quantity, (source, unit, reading, role) in labels.items():
        s = summaries.get(quantity) or NO_CHECK
        records.append(
            {
                **{c: s.get(c) for c in table.names},
                "quantity": quantity,
                "source_table": source,
                "unit": unit,
                "reading": reading,
                "role": role,
                "level_frac": validation.LEVEL,
                "status_reason": reason(s),
            }
        )
    return pl.DataFrame(records, schema=table.schema, strict=False).with_columns(pl.col(pl.Float64).fill_nan(None))


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
