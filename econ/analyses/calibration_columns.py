"""Declarations of ``calibration_points``, ``calibration_parameters`` and ``calibration_errors``."""

from __future__ import annotations

from econ.fits import calibration
from econ.fits.wrapper import fit
from econ.results import ResultColumn as C
from econ.results import ResultTable

POINTS = ResultTable(
    name="calibration_points",
    grain="measured operating point (measured_points.point_id)",
    key=("point_id",),
    description="Every measured point with the roofline bound, the calibrated prediction and the leave-one-source-out "
    "prediction of what it measured, or why it is not predicted",
    columns=(
        C("point_id", "str", "", "key", "measured_points.point_id"),
        C("source", "str", "", "input", "Source document (the unit held out in cross-validation)"),
        C("publisher", "str", "", "input", "Who published it"),
        C("engine", "str", "", "input", "Serving engine"),
        C("model", "str", "", "input", "Model as the source names it"),
        C("arch_model", "str", "", "input", "models.model whose architecture is used"),
        C("chip", "str", "", "input", "Accelerator"),
        C("architecture", "str", "", "input", "hardware.architecture: the family whose efficiencies apply"),
        C("regime", "str", "", "input", "How it was measured (measured_points.regime)"),
        C(
            "measured_quantity",
            "str",
            "",
            "label",
            "What the value counts: output or input tokens/s per chip, or tokens/s per user",
        ),
        C("measured_value", "float", "tokens/s", "input", "The measured value per chip (per user for single_stream)"),
        C(
            "bound_value",
            "float",
            "tokens/s",
            "bound",
            "Roofline upper bound of the same quantity (every efficiency 1, no overhead)",
            calibration.predict,
        ),
        C(
            "calibrated_value",
            "float",
            "tokens/s",
            "calibrated",
            "Prediction at the calibrated efficiencies (in-sample)",
            calibration.predict,
        ),
        C(
            "cv_value",
            "float",
            "tokens/s",
            "calibrated",
            "Prediction from the fit without this point's source",
            calibration.cross_validate,
        ),
        C("bound_over_measured_ratio", "float", "", "check", "bound_value / measured_value (≥ 1 for a true bound)"),
        C("calibrated_over_measured_ratio", "float", "", "check", "calibrated_value / measured_value"),
        C("cv_over_measured_ratio", "float", "", "check", "cv_value / measured_value"),
        C(
            "decode_batch_per_replica",
            "float",
            "sequences",
            "calibrated",
            "Decode batch behind the calibrated prediction (stated, or the best that fits)",
            calibration.predict,
        ),
        C(
            "prefill_tokens_per_pass",
            "float",
            "tokens",
            "calibrated",
            "Prefill pass behind the calibrated prediction (stated, or the best that fits)",
            calibration.predict,
        ),
        C(
            "decode_context_tokens",
            "float",
            "tokens",
            "input",
            "Decode context used: stated KV length, else prompt + half the output",
        ),
        C(
            "limit_met",
            "bool",
            "",
            "check",
            "The test's TTFT / time-per-token limit is met at the calibrated "
            "efficiencies (false: the fastest point is used)",
        ),
        C("assumed", "str", "", "label", "What econ assumed where the source is silent"),
        C("included", "bool", "", "check", "The point is in the fit"),
        C("exclusion_reason", "str", "", "label", "Why it is not (blank when included)"),
    ),
)

PARAMETERS = ResultTable(
    name="calibration_parameters",
    grain="fitted efficiency × architecture family ('' = the shared value)",
    key=("parameter", "family"),
    description="The calibrated efficiencies: shared values and each measured architecture's, with intervals and the "
    "fit's status; scenario calibrated uses them",
    columns=(
        C("parameter", "str", "", "key", "Efficiency or overhead (a scenario field of the same name or the mbu pair)"),
        C("family", "str", "", "key", "hardware.architecture the value is for ('' = shared by every other chip)"),
        C(
            "estimate",
            "float",
            "",
            "fit",
            "Fitted value (a fraction of peak, or seconds for step_overhead_s)",
            calibration.fit_calibration,
        ),
        C("low", "float", "", "fit", "Interval low (90%)", fit),
        C("high", "float", "", "fit", "Interval high (90%)", fit),
        C("unit", "str", "", "label", "fraction or s"),
        C("status", "str", "", "check", "Fit status (econ.fits.wrapper: ok, rank_deficient, …)"),
        C("interval_kind", "str", "", "check", "covariance (delta method for a family), or none"),
        C("n_points", "int", "points", "check", "Included points that inform it (the family's, or all)"),
        C("informed_by", "str", "", "label", "The regimes and sources of those points"),
        C("meaning", "str", "", "label", "What the parameter is"),
    ),
)

ERRORS = ResultTable(
    name="calibration_errors",
    grain="basis × grouping × group",
    key=("basis", "group_kind", "group"),
    description="How far predictions are from measured points: leave-one-source-out (cv), in-sample (calibrated) and "
    "the bound, overall and by chip, model, source, publisher and regime",
    columns=(
        C("basis", "str", "", "key", "cv (held-out source), calibrated (in-sample) or bound"),
        C("group_kind", "str", "", "key", "overall, chip, architecture, model, source, publisher or regime"),
        C("group", "str", "", "key", "The group ('all' for overall)"),
        C("n_points", "int", "points", "check", "Included points in the group"),
        C("median_abs_log_ratio", "float", "", "fit", "Median |log(predicted / measured)|"),
        C("p90_abs_log_ratio", "float", "", "fit", "90th percentile of |log(predicted / measured)|"),
        C("median_log_ratio", "float", "", "fit", "Median log(predicted / measured): > 0 over-predicts"),
        C(
            "error_factor",
            "float",
            "",
            "fit",
            "exp(median |log ratio|): the typical factor between prediction and measurement",
        ),
        C("error_factor_p90", "float", "", "fit", "exp(p90 |log ratio|): 9 in 10 points are within this factor"),
    ),
)
