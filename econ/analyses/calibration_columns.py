"""Declarations of the calibration's tables: points, runs, parameters, errors and bands."""

from __future__ import annotations

from econ.fits import calibration, calibration_cv, calibration_throughput, error_bands
from econ.fits.wrapper import fit
from econ.physics import sharding
from econ.results import ResultColumn as C
from econ.results import ResultTable

BASES = ("model_out", "chip_out", "source_out", "random_out", "calibrated", "bound")
"""How a prediction saw its point: held out with its model (model_out: the model's whole architecture group,
model_derived.architecture_group, so DeepSeek-V3 and DeepSeek-R1 leave together), chip, source (document) or random
configuration fold; in-sample; or the roofline bound (every efficiency 1, no fixed cost, no queue)."""

POINTS = ResultTable(
    name="calibration_points",
    grain="measured operating point (measured_points.point_id)",
    key=("point_id",),
    description="Every published throughput point with the roofline bound, the calibrated prediction and its "
    "predictions held out with its model, chip and source, or why it is not predicted",
    columns=(
        C("point_id", "str", "", "key", "measured_points.point_id"),
        C("source", "str", "", "input", "Source id"),
        C("document", "str", "", "input", "The document (revisions of one page are one): held out as one source"),
        C("publisher", "str", "", "input", "Who published it"),
        C("engine", "str", "", "input", "Serving engine"),
        C("model", "str", "", "input", "Model as the source names it"),
        C("arch_model", "str", "", "input", "models.model whose architecture is used"),
        C("chip", "str", "", "input", "Accelerator"),
        C("architecture", "str", "", "input", "hardware.architecture: the family whose parameters apply"),
        C("regime", "str", "", "input", "How it was measured (measured_points.regime)"),
        C(
            "measured_quantity",
            "str",
            "",
            "label",
            "What the value counts: output or input tokens/s per chip, or per user",
        ),
        C("measured_value", "float", "tokens/s", "input", "The measured value per chip (per user for single_stream)"),
        C(
            "bound_value",
            "float",
            "tokens/s",
            "bound",
            "Roofline bound of the same quantity",
            calibration_throughput.predict_points,
        ),
        C(
            "calibrated_value",
            "float",
            "tokens/s",
            "calibrated",
            "In-sample prediction",
            calibration_throughput.predict_points,
        ),
        C(
            "cv_value",
            "float",
            "tokens/s",
            "calibrated",
            "Prediction from the fit without this point's source (document)",
            calibration_cv.cross_validate,
        ),
        C("bound_over_measured_ratio", "float", "", "check", "bound_value / measured_value (≥ 1 for a true bound)"),
        C("calibrated_over_measured_ratio", "float", "", "check", "calibrated_value / measured_value"),
        C("cv_over_measured_ratio", "float", "", "check", "cv_value / measured_value (source held out)"),
        C(
            "model_out_over_measured_ratio",
            "float",
            "",
            "check",
            "Predicted / measured with the point's model held out (with every model of its architecture group)",
        ),
        C("chip_out_over_measured_ratio", "float", "", "check", "Predicted / measured with the point's chip held out"),
        C(
            "decode_batch_per_replica",
            "float",
            "sequences",
            "calibrated",
            "Decode batch behind the prediction (stated, or the best that fits)",
            calibration_throughput.predict_points,
        ),
        C(
            "prefill_tokens_per_pass",
            "float",
            "tokens",
            "calibrated",
            "Prefill pass behind the prediction (stated, or the best that fits)",
            calibration_throughput.predict_points,
        ),
        C(
            "decode_context_tokens",
            "float",
            "tokens",
            "input",
            "Decode context: stated KV length, else prompt + half the output",
        ),
        C(
            "limit_met",
            "bool",
            "",
            "check",
            "The test's TTFT / time-per-token limit is met at the calibrated "
            "parameters (false: the fastest point is used)",
        ),
        C("assumed", "str", "", "label", "What econ assumed where the source is silent"),
        C("included", "bool", "", "check", "The point is in the fit"),
        C("exclusion_reason", "str", "", "label", "Why it is not (blank when included)"),
    ),
)

RUNS = ResultTable(
    name="calibration_runs",
    grain="measured serving run (inferencex_train.id)",
    key=("run_id",),
    description="Every InferenceX run with its measured TTFT and TPOT, the roofline bound, the calibrated "
    "prediction, and its predictions held out with its model, its chip, its source and a random fold of "
    "configurations",
    columns=(
        C("run_id", "str", "", "key", "inferencex_train.id"),
        C("engine", "str", "", "input", "Serving engine (trtllm, sglang, vllm)"),
        C("model_path", "str", "", "input", "Hugging Face id as the run names it"),
        C("arch_model", "str", "", "input", "models.model whose architecture is used"),
        C("chip", "str", "", "input", "hardware.chip"),
        C("mode", "str", "", "input", "agg (one pool) or disagg (prefill and decode workers)"),
        C(
            "source",
            "str",
            "",
            "input",
            "Who measured it: InferenceX, or NVIDIA's gap analysis for AIConfigurator (silicon_data_source names "
            "aic-auto-gap-analysis; exact lengths); held out as one source each",
        ),
        C("input_tokens", "float", "tokens", "input", "Nominal prompt length (the client draws 0.8–1.0 of it)"),
        C("output_tokens", "float", "tokens", "input", "Nominal output length"),
        C("concurrency", "float", "requests", "input", "Requests in flight (the benchmark's concurrency)"),
        C(
            "speculative_tokens",
            "float",
            "tokens",
            "input",
            "Draft tokens per decode step the run states (0: none stated; InferenceX's rows state none)",
        ),
        C(
            "speculation_launched",
            "bool",
            "",
            "input",
            "Launched with MTP without stating its draft length or acceptance (inferencex_launches): TPOT timed with "
            "the calibrated speculation speed-up",
        ),
        C("decode_layout", "str", "", "input", "Decode worker: workers x (tp x dp x pp), ep/etp"),
        C("prefill_layout", "str", "", "input", "Prefill worker (disagg): workers x (tp x dp x pp)"),
        C("system_chips", "float", "chips", "input", "Chips of the measured system"),
        C(
            "prefill_worker_chips",
            "float",
            "chips",
            "input",
            "Chips of one prefill worker (disagg; null for agg): a run that states no workers is bounded by the "
            "largest of the runs that do (econ.analyses.assumed_workers.largest_systems)",
        ),
        C(
            "decode_running_per_worker",
            "float",
            "sequences",
            "derived",
            "Sequences one decode worker runs at once: its share of the users, or what its KV cache or its engine's "
            "launch limit holds if fewer (the rest wait for a slot; notes say so)",
            sharding.max_batch_per_replica,
        ),
        C("workers_assumed", "bool", "", "check", "Worker counts not stated: assumed (calibration_runs notes)"),
        C(
            "launch_choices",
            "float",
            "sets",
            "input",
            "Sets of pools the InferenceX launches matching a run without worker counts state, of those whose chips "
            "a worker its stored layout states where any do (null: none match or the run states its pools); of "
            "several, the run takes the median in chips and its regime stays …_unstated_workers",
        ),
        C(
            "regime_ttft",
            "str",
            "",
            "label",
            "Regime of the TTFT (agg, disagg_prefill, batch_1, …; …_slot_wait where users wait for a decode slot)",
        ),
        C(
            "regime_tpot",
            "str",
            "",
            "label",
            "Regime of the TPOT (agg, disagg_decode, batch_1, …; …_slot_wait where the decode workers are at their "
            "limit)",
        ),
        C("measured_ttft_s", "float", "s", "input", "Measured mean time to first token"),
        C("measured_tpot_s", "float", "s", "input", "Measured mean time per output token"),
        C(
            "bound_ttft_s",
            "float",
            "s",
            "bound",
            "Roofline bound of the first pass (no fixed cost, no queue)",
            calibration.predict_runs,
        ),
        C("bound_tpot_s", "float", "s", "bound", "Roofline bound of the decode step", calibration.predict_runs),
        C("predicted_ttft_s", "float", "s", "calibrated", "In-sample TTFT", calibration.predict_runs),
        C("predicted_tpot_s", "float", "s", "calibrated", "In-sample TPOT", calibration.predict_runs),
        *(
            C(
                f"{basis}_{target}_ratio",
                "float",
                "",
                "check",
                f"Predicted / measured {target.upper()} with the run's {what} held out",
                calibration_cv.cross_validate,
            )
            for basis, what in (
                ("model_out", "model (its whole architecture group)"),
                ("chip_out", "chip"),
                ("source_out", "source (every run of its campaign)"),
                ("random_out", "configuration fold"),
                (
                    "neighbour_out",
                    "configuration fold, corrected by its configuration's runs at other concurrencies in the fit "
                    "(econ.fits.neighbours; NaN where there are none)",
                ),
                (
                    "lengths_out",
                    "configuration fold, corrected by its layout's runs at other lengths in the fit where its "
                    "configuration has none (econ.fits.neighbours; NaN otherwise)",
                ),
            )
            for target in ("ttft", "tpot")
        ),
        *(
            C(
                f"{basis}{calibration_cv.ANY_ENGINE}_{target}_ratio",
                "float",
                "",
                "check",
                f"As {basis}_{target}_ratio, predicted with no engine stated (every engine offset the engines' mean, "
                "as econ predict without --engine)",
                calibration_cv.engine_average_runs,
            )
            for basis in ("model_out", "chip_out", "source_out", "random_out", "neighbour_out", "lengths_out")
            for target in ("ttft", "tpot")
        ),
        C(
            "configuration_key",
            "str",
            "",
            "label",
            "What the run states but its concurrency (calibration_tables.configuration_key): a prediction of the same "
            "configuration at another concurrency is corrected by this run's residual (econ.fits.neighbours)",
        ),
        C(
            "layout_key",
            "str",
            "",
            "label",
            "What the run states but its concurrency and lengths (calibration_tables.layout_key): a prediction of the "
            "same layout at other lengths, whose configuration has no run, is corrected by this run's residual",
        ),
        C("included", "bool", "", "check", "The run is in the fit and its errors"),
        C(
            "reason",
            "str",
            "",
            "label",
            "Why it is not (blank when included; a copy of another row's measurement names the run kept)",
        ),
        C("notes", "str", "", "label", "How the row was read (repaired layouts, assumed workers, concurrency)"),
    ),
)

PARAMETERS = ResultTable(
    name="calibration_parameters",
    grain="fitted parameter × group ('' = the shared value)",
    key=("parameter", "group_kind", "group"),
    description="The calibrated serving parameters: shared values and each architecture family's, engine's and "
    "serving mode's, with intervals and the fit's status; scenario calibrated uses them",
    columns=(
        C("parameter", "str", "", "key", "Efficiency, fixed cost or queue share (a scenario field of that meaning)"),
        C(
            "group_kind",
            "str",
            "",
            "key",
            "'' (shared), architecture, engine, serving (engine/mode) or attention (the model's kind)",
        ),
        C("group", "str", "", "key", "The group ('' for the shared value)"),
        C(
            "family",
            "str",
            "",
            "label",
            "hardware.architecture for a family's value, '' for the shared one, blank for an engine's or mode's",
        ),
        C(
            "estimate",
            "float",
            "",
            "fit",
            "Fitted value (a fraction, seconds, steps or a ratio)",
            calibration.fit_calibration,
        ),
        C("low", "float", "", "fit", "Interval low (90%)", fit),
        C("high", "float", "", "fit", "Interval high (90%)", fit),
        C("unit", "str", "", "label", "fraction, s, steps or ratio"),
        C("status", "str", "", "check", "Fit status (econ.fits.wrapper: ok, rank_deficient, …)"),
        C("interval_kind", "str", "", "check", "covariance (delta method for a group), or none"),
        C("n_points", "int", "points", "check", "Measured rows that inform it (the group's, or all)"),
        C("informed_by", "str", "", "label", "The kinds and sources of those rows"),
        C("meaning", "str", "", "label", "What the parameter is"),
        C(
            "scenario_fields",
            "str",
            "",
            "label",
            "The scenario fields the shared, family or attention kind's value sets in scenario calibrated, "
            "comma-separated (econ.analyses.calibration_scenario.FIELDS; '' for engine and mode offsets)",
        ),
    ),
)

ERRORS = ResultTable(
    name="calibration_errors",
    grain="basis × target × grouping × group",
    key=("basis", "target", "group_kind", "group"),
    description="How far predictions are from measurements, held out by model (a model's architecture group, "
    "model_derived.architecture_group, leaves whole: DeepSeek-V3 with DeepSeek-R1), chip, source and random "
    "configuration fold (and in-sample, the bound, and how far repeated runs of one configuration differ), for "
    "TTFT, TPOT and published throughput, overall and by regime, chip, model, engine and source, with the share "
    "inside the "
    "p90 band the held-out folds give",
    columns=(
        C(
            "basis",
            "str",
            "",
            "key",
            "model_out (architecture group held out), chip_out, source_out (a run's campaign, InferenceX or NVIDIA's "
            "gap analysis, or a point's document held out), random_out, neighbour_out (random_out's "
            "rows corrected by their configuration's runs at other concurrencies in the fold's fit, where it has any; "
            "econ.fits.neighbours), lengths_out (those with none, corrected by their layout's runs at other lengths) "
            "(…_any_engine: predicted with no engine stated), calibrated or bound; "
            "replicates: not a prediction but the measurements' own repeatability, each run against the other runs "
            "stating all the same inputs (econ.analyses.calibration_tables.REPLICATE_COLUMNS): held out, no model of "
            "those inputs can be expected to do better",
            calibration_cv.replicate_log_deviation,
        ),
        C("target", "str", "", "key", "ttft, tpot (InferenceX runs) or throughput (published points)"),
        C("group_kind", "str", "", "key", "overall, regime, chip, model, engine or source"),
        C("group", "str", "", "key", "The group ('all' for overall)"),
        C("n_points", "int", "points", "check", "Measured rows in the group"),
        C("median_abs_log_ratio", "float", "", "fit", "Median |log(predicted / measured)|"),
        C("p90_abs_log_ratio", "float", "", "fit", "90th percentile of |log(predicted / measured)|"),
        C("median_log_ratio", "float", "", "fit", "Median log(predicted / measured): > 0 over-predicts"),
        C("error_factor", "float", "", "fit", "exp(median |log ratio|): the typical factor"),
        C("error_factor_p90", "float", "", "fit", "exp(p90 |log ratio|): 9 in 10 rows are within this factor"),
        C(
            "band_coverage_frac",
            "float",
            "",
            "check",
            "Share of the group's held-out rows inside the p90 band "
            "computed from other groups' rows (about 0.9 when the bands hold); basis bound: the share "
            "of rows the roofline bound holds for (measured no faster than it; 1 when it is a bound)",
            error_bands.band_coverage,
        ),
    ),
)

BANDS = ResultTable(
    name="calibration_bands",
    grain="target × regime × engine × chip × model × distance from the data × whether the engine is stated",
    key=("target", "regime", "engine", "chip", "arch_model", "distance", "engine_stated"),
    description="The error factors econ claims for a prediction: the held-out error of measured rows like it (its "
    "target, regime and distance from the calibration data, predicted with their engine or, engine_stated false, "
    "with the engines' average; then those of its engine, its chip and its model, in turn, where they are enough) "
    "and how often that p90 band covered rows it was not computed from",
    columns=(
        C("target", "str", "", "key", "ttft, tpot or throughput"),
        C(
            "regime",
            "str",
            "",
            "key",
            "agg, disagg_prefill, disagg_decode, batch_1 (…_unstated_workers: worker "
            "counts assumed; …_slot_wait: users wait for a decode slot); for throughput the measured_points regime",
        ),
        C(
            "engine",
            "str",
            "",
            "key",
            "The engine whose rows the band is from (a prediction that names it claims this row); empty: every "
            "engine's rows of the regime (a prediction with the engines' average, or an engine without a row)",
        ),
        C(
            "chip",
            "str",
            "",
            "key",
            "The chip whose rows (of the engine, where one is named) the band is from, for a seen model on a seen "
            "chip (distance seen); empty: every chip's",
        ),
        C(
            "arch_model",
            "str",
            "",
            "key",
            "The model whose rows (of the chip, and of the engine where one is named) the band is from, for a seen "
            "model on a seen chip; empty: every model's",
        ),
        C(
            "distance",
            "str",
            "",
            "key",
            "seen_configuration (the configuration measured at other concurrencies: the prediction is corrected by "
            "those runs, econ.fits.neighbours), seen_layout (the layout measured at other lengths: corrected by "
            "those), seen (model and chip calibrated), new_model, new_chip or new_model_and_chip",
        ),
        C(
            "engine_stated",
            "bool",
            "",
            "key",
            "The prediction names its engine (false: econ predict or fleet without --engine, the engines' average)",
        ),
        C(
            "basis",
            "str",
            "",
            "label",
            "The held-out predictions behind it (random_out, model_out, chip_out, or the "
            "larger of model_out and chip_out; …_any_engine where the engine is not stated)",
        ),
        C("n_points", "int", "points", "check", "Held-out rows in the cell (its factors pooled where fewer than 8)"),
        C("error_factor_p50", "float", "", "fit", "Half of such rows are within this factor", error_bands.factors),
        C(
            "error_factor_p90",
            "float",
            "",
            "fit",
            "9 in 10 of such rows are within this factor",
            error_bands.factors,
        ),
        C(
            "p90_level_frac",
            "float",
            "",
            "fit",
            "The quantile of the cell's held-out |log ratio| the p90 band is: the level at which bands from all groups "
            "but one cover 90% of the group left out (above 0.9 where groups differ more than their rows scatter)",
            error_bands.calibrated_levels,
        ),
        C(
            "coverage_p90_frac",
            "float",
            "",
            "check",
            "Share of the cell's rows inside the p90 band built, level included, without their own group (model: "
            "architecture group; chip; random fold)",
            error_bands.band_coverage,
        ),
        C(
            "pooled",
            "bool",
            "",
            "check",
            "The regime's cell had too few rows or groups: the band is the larger of its own and its target's at "
            "that distance (an engine's, a chip's or a model's cell that thin has no row: its predictions take the "
            "cell it splits)",
        ),
    ),
)
