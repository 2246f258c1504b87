"""Validation page: the serving model against measured systems (tables ``calibration_runs``,
``calibration_points``, ``calibration_errors``, ``calibration_bands``, ``calibration_parameters``)."""

from __future__ import annotations

import math

import polars as pl

from econ.report import serving_findings
from econ.report.charts import validation as charts
from econ.report.figures import Figure
from econ.report.html import Col, fmt_interval, fmt_num, source_link, table
from econ.report.page import Download, PageContent, Section, SiteContext, note

NAME = "validation"
TITLE = "Validation"
SUMMARY = "How close the serving model comes to measured systems: the bound, the calibration, its grouped "
"cross-validation and the coverage of its error bands."
REQUIRES = (
    "calibration_runs",
    "calibration_points",
    "calibration_errors",
    "calibration_bands",
    "calibration_parameters",
)

BINS_PER_DECADE = 8

CELLS = f"""
with r as (
  select 'ttft' as target, measured_ttft_s * 1e3 as x, measured_ttft_s * model_out_ttft_ratio * 1e3 as y
  from calibration_runs where included and model_out_ttft_ratio is not null
  union all
  select 'tpot', measured_tpot_s * 1e3, measured_tpot_s * model_out_tpot_ratio * 1e3
  from calibration_runs where included and model_out_tpot_ratio is not null
), b as (
  select target, floor(log10(x) * {BINS_PER_DECADE}) as bx, floor(log10(y) * {BINS_PER_DECADE}) as b_y from r
  where x > 0 and y > 0
), final as (
  select target, pow(10, bx / {BINS_PER_DECADE}) as x_low_ms, pow(10, (bx + 1) / {BINS_PER_DECADE}) as x_high_ms,
         pow(10, b_y / {BINS_PER_DECADE}) as y_low_ms, pow(10, (b_y + 1) / {BINS_PER_DECADE}) as y_high_ms,
         count(*) as runs
  from b group by all
)
select * from final order by target, x_low_ms, y_low_ms
"""

POINTS = """
select 'roofline bound' as basis, point_id, source, chip, engine, arch_model, regime, measured_quantity,
       measured_value, bound_value as predicted_value
from calibration_points where included
union all
select 'calibrated, source held out', point_id, source, chip, engine, arch_model, regime, measured_quantity,
       measured_value, cv_value
from calibration_points where included
order by basis, point_id
"""

CV_TABLE = """
select target, basis, group_kind, "group", n_points, error_factor, error_factor_p90, exp(median_log_ratio) as bias,
       band_coverage_frac
from calibration_errors
where (group_kind in ('overall', 'regime', 'engine', 'chip', 'model')
       and (basis in ('model_out', 'chip_out', 'source_out', 'random_out', 'replicates')
            or (basis in ('calibrated', 'bound') and group_kind in ('overall', 'regime'))
            or (basis = 'neighbour_out' and group_kind in ('overall', 'regime', 'engine'))
            or (basis like 'lengths_out%' and group_kind = 'overall')
            or (basis like '%_any_engine' and basis not like 'lengths_out%' and basis not like 'source_out%'
                and group_kind in ('overall', 'engine'))))
   or (basis = 'source_out' and group_kind = 'source')
order by list_position(['tpot', 'ttft', 'throughput'], target), group_kind = 'overall' desc, group_kind, "group",
         list_position(['model_out', 'model_out_any_engine', 'chip_out', 'chip_out_any_engine', 'source_out',
                        'random_out', 'random_out_any_engine', 'neighbour_out', 'neighbour_out_any_engine',
                        'lengths_out', 'lengths_out_any_engine', 'calibrated', 'bound', 'replicates'], basis)
"""

BANDS = """
select * from calibration_bands
order by list_position(['tpot', 'ttft', 'throughput'], target), regime, distance, engine_stated desc, engine, chip,
         arch_model
"""

DISTANCES = ("seen_configuration", "seen_layout", "seen", "new_model", "new_chip", "new_model_and_chip")
_BY_DISTANCE = ", ".join(
    f"max(error_factor_p90) filter (where distance = '{d}') as {d}_p90, "
    f"max(coverage_p90_frac) filter (where distance = '{d}') as {d}_covered"
    for d in DISTANCES
)
BANDS_BY_DISTANCE = f"""
select target, regime,
       case when not engine_stated then 'average' when engine = '' then 'stated: any' else engine end as engine,
       max(n_points) as n_points, {_BY_DISTANCE}
from calibration_bands where chip = '' and arch_model = ''
group by target, regime, engine_stated, engine
order by list_position(['tpot', 'ttft', 'throughput'], target), regime, engine_stated desc, calibration_bands.engine
"""

PARAMETERS = """
select parameter, group_kind, "group", estimate, low, high, unit, status, n_points, informed_by, meaning
from calibration_parameters order by parameter, group_kind, "group"
"""

DETAIL = """
select c.point_id, c.source, c.document, c.publisher, c.engine, c.arch_model, c.chip, c.regime, c.measured_quantity,
       c.measured_value, c.bound_value, c.calibrated_value, c.cv_value, c.cv_over_measured_ratio,
       c.model_out_over_measured_ratio, c.chip_out_over_measured_ratio, c.decode_batch_per_replica,
       c.prefill_tokens_per_pass, c.decode_context_tokens, c.limit_met, c.assumed, c.included, c.exclusion_reason,
       m.source_url, m.quote
from calibration_points as c join measured_points as m using (point_id)
order by c.included desc, c.source, c.point_id
"""


def _factor(v) -> str:
    return "" if v is None or not math.isfinite(v) else f"{v:.2f}×"


def _held(row: dict) -> str:
    """A held-out error as the lead words it: "1.16× off (1.58×)", typical and 9 in 10."""
    return f"{_factor(row['error_factor'])} off ({_factor(row['error_factor_p90'])})"


def _pct(v) -> str:
    return "" if v is None or not math.isfinite(v) else f"{v:.0%}"


def render(ctx: SiteContext) -> PageContent:
    overall = {
        (r["basis"], r["target"]): r
        for r in ctx.query("select * from calibration_errors where group_kind = 'overall'").iter_rows(named=True)
    }
    counts = ctx.query(
        "select count(*) filter (where included) as runs, count(*) as total, "
        "count(*) filter (where reason like 'the same measurement as run %') as copies from calibration_runs"
    ).row(0, named=True)
    sections = [_runs(ctx), _cv(ctx), _bands(ctx), _scatter(ctx), _parameters(ctx), _runs_detail(ctx), _points(ctx)]
    lomo_tpot, lomo_ttft = overall.get(("model_out", "tpot")), overall.get(("model_out", "ttft"))
    loco_tpot, loco_ttft = overall.get(("chip_out", "tpot")), overall.get(("chip_out", "ttft"))
    bound = overall.get(("bound", "tpot"))
    if not (lomo_tpot and lomo_ttft and loco_tpot and loco_ttft and bound):
        lead = "No measured run could be predicted: the calibration has no held-out error to report."
    else:
        lead = (
            f"{counts['runs']:,} distinct measurements of {counts['total']:,} InferenceX rows (TensorRT-LLM, SGLang "
            f"and vLLM on H100, H200, B200 and GB200; {counts['copies']:,} rows repeat another row's measurement and "
            "count once) and the published throughputs of measured_points against econ's serving model; every row "
            "not fitted says why. The roofline bound alone is a median "
            f"{_factor(bound['error_factor'])} faster than the measured time per output token. Calibrated and held "
            f"out one model at a time, time per output token is a typical {_factor(lomo_tpot['error_factor'])} off "
            f"(9 in 10 within {_factor(lomo_tpot['error_factor_p90'])}), time to first token "
            f"{_factor(lomo_ttft['error_factor'])} ({_factor(lomo_ttft['error_factor_p90'])}); one chip at a time "
            f"{_factor(loco_tpot['error_factor'])} and {_factor(loco_ttft['error_factor'])}. These held-out "
            "figures, not the in-sample fit, are what a prediction for a new model or chip should expect."
        )
        campaign = [overall.get(("source_out", t)) for t in ("tpot", "ttft")]
        if all(campaign):
            lead += (
                " Held out one measurement campaign at a time (InferenceX's runs, then NVIDIA's gap-analysis runs), "
                f"time per output token is {_held(campaign[0])} and time to first token {_held(campaign[1])}"
            )
            covered = [row["band_coverage_frac"] for row in campaign]
            if all(c is not None and math.isfinite(c) for c in covered):
                lead += f", and the p90 bands econ prints cover {_pct(covered[0])} and {_pct(covered[1])} of those runs"
            lead += "."
        rep_tpot, rep_ttft = overall.get(("replicates", "tpot")), overall.get(("replicates", "ttft"))
        if rep_tpot and rep_ttft:
            tpot, tpot90 = _factor(rep_tpot["error_factor"]), _factor(rep_tpot["error_factor_p90"])
            ttft, ttft90 = _factor(rep_ttft["error_factor"]), _factor(rep_ttft["error_factor_p90"])
            lead += (
                f" The measurements themselves repeat only so well: {rep_tpot['n_points']} runs that state exactly "
                "what econ reads of another run (engine, architecture, chip, formats, launch settings, each pool's "
                f"layout and workers, lengths, concurrency) differ from them by a typical {tpot} in time per output "
                f"token (9 in 10 within {tpot90}), and {rep_ttft['n_points']} such runs by {ttft} ({ttft90}) in time "
                "to first token: on runs it has not seen, no model of those inputs can be expected to do better."
            )
        near_tpot, near_ttft = overall.get(("neighbour_out", "tpot")), overall.get(("neighbour_out", "ttft"))
        if near_tpot and near_ttft:
            lead += (
                " A configuration measured at other concurrencies corrects its own prediction by those runs: held out "
                f"by random fold, the {near_tpot['n_points']:,} runs that have such neighbours read a typical "
                f"{_factor(near_tpot['error_factor'])} in time per output token "
                f"({_factor(near_tpot['error_factor_p90'])}) and {_factor(near_ttft['error_factor'])} "
                f"({_factor(near_ttft['error_factor_p90'])}) in time to first token (basis neighbour_out)."
            )
    return PageContent(title=TITLE, lead=lead, sections=sections, findings=serving_findings.validation(ctx))


def _runs(ctx: SiteContext) -> Section:
    cells = ctx.query(CELLS)
    if cells.is_empty():
        return Section("Predicted against measured", [note("No run could be predicted.", kind="pending")])
    return Section(
        "Predicted against measured",
        [
            Figure(
                "runs-predicted-vs-measured",
                charts.runs_density(cells),
                cells,
                caption="Each cell counts the InferenceX runs whose measured value (x) and held-out prediction (y: "
                "from a fit that never saw the run's model) fall in it, for time to first token (left) and time "
                "per output token (right). A perfect model puts every run on y = x.",
                formula=f"{ctx.cite('econ.fits.calibration.predict_runs')}; "
                f"{ctx.cite('econ.fits.calibration_cv.cross_validate')}",
                source="calibration_runs (inferencex_train)",
            )
        ],
        intro="Time per output token is a decode step: the kernels and the fixed costs, and in aggregated serving "
        "the steps that also prefill a chunk of a new prompt. Time to first token adds the engine's front end, the "
        "wait for a decode slot, the steps an engine holds a prompt back and the queue of prompts the benchmark's "
        "concurrency builds: the harder quantity.",
    )


def _cv(ctx: SiteContext) -> Section:
    frame = ctx.query(CV_TABLE)
    cols = [
        Col("target", "Target"),
        Col("basis", "Held out"),
        Col("group_kind", "By"),
        Col("group", "Group"),
        Col("n_points", "Rows", kind="num"),
        Col("error_factor", "Typical error", kind="num", fmt=_factor),
        Col("error_factor_p90", "9 in 10 within", kind="num", fmt=_factor),
        Col("bias", "Median predicted ÷ measured", kind="num", fmt=lambda v: fmt_num(v, sig=3)),
        Col("band_coverage_frac", "Inside the p90 band", kind="num", fmt=_pct),
    ]
    return Section(
        "Held-out error by regime, chip, model, engine and source",
        [
            table(frame, cols, caption="Grouped cross-validation (calibration_errors)", id="errors"),
            note(ctx.description("calibration_errors")),
        ],
        intro="model_out leaves out every run and point of a model, chip_out of a chip, source_out a source (the runs "
        "of one campaign, InferenceX's or NVIDIA's gap analysis, or a published document), random_out a fifth of the "
        "distinct configurations, neighbour_out the same rows corrected by their configuration's runs at other "
        "concurrencies that the fold fitted (the rows that have any), lengths_out those with none corrected by their "
        "layout's runs at other lengths; …_any_engine predicts the same held-out runs with no engine stated (the "
        "engines' average, as the calibrated scenario, plans and econ predict without --engine do). 'Inside the p90 "
        "band' is the share of the held-out rows within the band econ would have printed from the other groups' rows "
        "(source_out: the band econ prints at a run's distance from the other campaign's runs). replicates is no "
        "prediction: each run against the other runs of the same stated configuration, the spread "
        "of the measurements themselves; calibrated (in sample) and bound are listed overall and by regime here, by "
        "chip, model and engine in the table calibration_errors.",
    )


def _bands(ctx: SiteContext) -> Section:
    words = {
        "seen_configuration": "measured config",
        "seen_layout": "measured layout",
        "seen": "seen",
        "new_model": "new model",
        "new_chip": "new chip",
        "new_model_and_chip": "both new",
    }
    # one table per target: a phone keeps the regime, the engine and the p90 of a seen model in view
    cols = [Col("regime", "Regime"), Col("engine", "Engine")]
    cols.append(Col("n_points", "Held-out rows", kind="num"))
    for d in DISTANCES:
        cols.append(Col(f"{d}_p90", f"p90, {words[d]}", kind="num", fmt=_factor, keep=d == "seen"))
        cols.append(Col(f"{d}_covered", "covered", kind="num", fmt=_pct, keep=d == "seen"))
    lengths = ctx.query("select * from calibration_lengths").row(0, named=True)
    span = (
        f" The runs span {lengths['min_input_tokens']:,.0f}-{lengths['max_input_tokens']:,.0f} prompt and "
        f"{lengths['min_output_tokens']:,.0f}-{lengths['max_output_tokens']:,.0f} output tokens "
        "(calibration_lengths): a prediction outside them says in its notes that its band was not measured there."
        if lengths["max_input_tokens"] is not None
        else ""
    )
    frame = ctx.query(BANDS_BY_DISTANCE)
    named = {"tpot": "time per output token", "ttft": "time to first token", "throughput": "published throughput"}
    tables = [
        table(
            frame.filter(pl.col("target") == target),
            cols,
            caption=f"calibration_bands, {named.get(target, target)}: the p90 factor econ predict claims for a point, "
            "and the share of held-out runs that band covered, by distance from the data (each chip's rows, the p50 "
            "factors, the quantile used and the pooling: in the CSV)",
            id=f"bands-{target}",
        )
        for target in frame["target"].unique(maintain_order=True).to_list()
    ]
    return Section(
        "Error bands and their coverage",
        [
            *tables,
            Download("bands", ctx.query(BANDS), "every band with its chip, p50, quantile level and pooling (CSV)"),
            note(ctx.description("calibration_bands")),
        ],
        intro="econ predict and econ predict --points print, for each prediction, the factors of the cell its target, "
        "regime, distance and engine fall in ('average': no engine stated, the engines' average parameters, as the "
        "calibrated scenario and plans use; an engine named: that engine's held-out rows of the regime, or, where "
        "they are too few, 'stated: any', every engine's; a seen model on a seen chip: that chip's rows, where "
        "enough); a p90 band that holds covers about 90% of rows it was not computed from. The band is the held-out "
        "errors' quantile at the level that covered 90% of each group left out in turn (never below 90%)." + span,
    )


def _scatter(ctx: SiteContext) -> Section:
    frame = ctx.query(POINTS)
    if frame.is_empty():
        return Section("Published throughputs", [note("No published point could be predicted.", kind="pending")])
    return Section(
        "Published throughputs",
        [
            Figure(
                "predicted-vs-measured",
                charts.predicted_vs_measured(frame),
                frame,
                caption="Each point is one published measurement (tokens/s per chip, or per user for a single "
                "stream), at x, and econ's number for the same setting, at y: left the roofline bound, right the "
                "calibrated prediction from a fit without the point's source.",
                formula=f"{ctx.cite('econ.fits.calibration_throughput.predict_points')}",
                source="calibration_points, from measured_points (each row's source_url and quote)",
            )
        ],
        intro="Points above the line are over-predicted, below under-predicted; the dashed band is ±1.5×.",
    )


def _parameters(ctx: SiteContext) -> Section:
    frame = ctx.query(PARAMETERS)
    shown = frame.with_columns(
        pl.struct("low", "high")
        .map_elements(lambda r: fmt_interval(r["low"], r["high"]), return_dtype=pl.String)
        .alias("interval"),
        pl.when(pl.col("group_kind") == "")
        .then(pl.lit("shared"))
        .otherwise(pl.format("{} {}", pl.col("group_kind"), pl.col("group")))
        .alias("applies_to"),
    )
    cols = [
        Col("parameter", "Parameter"),
        Col("applies_to", "Applies to"),
        Col("estimate", "Estimate", kind="num", fmt=lambda v: fmt_num(v, sig=3), keep=True),
        Col("interval", "90% interval"),
        Col("unit", "Unit"),
        Col("status", "Fit status"),
        Col("n_points", "Rows", kind="num"),
        Col("informed_by", "From", wrap=True),
        Col("meaning", "Meaning", wrap=True),
    ]
    return Section(
        "The calibrated parameters",
        [
            table(
                shown,
                cols,
                caption="calibration_parameters: scenario calibrated uses the shared and architecture values",
                id="parameters",
            ),
            note(ctx.description("calibration_parameters")),
        ],
        intro="A group's value is the shared one moved by its own rows, shrunk toward it; an engine's values apply "
        "when econ predict is told the engine; a chip of an architecture without measured rows uses the shared "
        "values (an extrapolation, and its band says so).",
    )


def _runs_detail(ctx: SiteContext) -> Section:
    frame = ctx.query("select * from calibration_runs order by included desc, run_id")
    excluded = (
        frame.filter(~pl.col("included"))
        .with_columns(
            pl.col("reason")
            .str.replace(r"tensor parallel \d+ ", "tensor parallel N ")
            .str.replace(r"as run \S+ ", "as another run ")
        )
        .group_by("reason")
        .agg(pl.len().alias("runs"))
        .sort("runs", "reason", descending=[True, False])
    )
    return Section(
        "Every run",
        [
            table(
                excluded,
                [Col("reason", "Not fitted because", wrap=True), Col("runs", "Runs", kind="num")],
                caption="InferenceX runs kept but not fitted or scored, by reason",
                id="runs-excluded",
            ),
            Download(
                "runs", frame, "every InferenceX run with its reading, prediction, held-out ratios and reason (CSV)"
            ),
        ],
    )


def _points(ctx: SiteContext) -> Section:
    frame = ctx.query(DETAIL)
    included = frame.filter(pl.col("included"))
    cols = [
        Col("point_id", "Point"),
        Col("arch_model", "Model"),
        Col("chip", "Chip"),
        Col("engine", "Engine"),
        Col("regime", "Regime"),
        Col("measured_value", "Measured", kind="num"),
        Col("bound_value", "Bound", kind="num"),
        Col("cv_value", "Calibrated (source held out)", kind="num"),
        Col("cv_over_measured_ratio", "Held out ÷ measured", kind="num", fmt=lambda v: fmt_num(v, sig=3)),
        Col("decode_batch_per_replica", "Decode batch", kind="num"),
        Col("assumed", "Assumed", wrap=True),
        Col("source_url", "Source", fmt=lambda v: source_link(v)),
    ]
    excluded = (
        frame.filter(~pl.col("included"))
        .group_by("exclusion_reason")
        .agg(pl.len().alias("points"))
        .sort("points", "exclusion_reason", descending=[True, False])
    )
    return Section(
        "Every published point",
        [
            table(
                included, cols, caption="Predicted points (measured_points joined to calibration_points)", id="points"
            ),
            table(
                excluded,
                [Col("exclusion_reason", "Not predicted because", wrap=True), Col("points", "Points", kind="num")],
                caption="Points kept in measured_points but not predicted, by reason",
                id="excluded",
            ),
            Download("points", frame, "every measured point with its quote, prediction and reason (CSV)"),
        ],
    )
