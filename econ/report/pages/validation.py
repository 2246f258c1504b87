"""Validation page: the deployment model against published measurements (tables ``calibration_points``,
``calibration_errors``, ``calibration_parameters``, ``measured_points``)."""

from __future__ import annotations

import math

import polars as pl

from econ.report import findings
from econ.report.charts import validation as charts
from econ.report.figures import Figure
from econ.report.html import Col, fmt_interval, fmt_num, source_link, table
from econ.report.page import Download, PageContent, Section, SiteContext, note

NAME = "validation"
TITLE = "Validation"
SUMMARY = "How close the serving model comes to measured systems: the bound, the calibration and its held-out error."
REQUIRES = ("calibration_points", "calibration_errors", "calibration_parameters")

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

OVERALL = """
select basis, n_points, error_factor, error_factor_p90, median_log_ratio
from calibration_errors where group_kind = 'overall' order by basis
"""

GROUPS = """
select group_kind, "group", n_points, error_factor, error_factor_p90, exp(median_log_ratio) as median_ratio
from calibration_errors where basis = 'cv' and group_kind in ('chip', 'architecture', 'model', 'source', 'regime')
order by group_kind, "group"
"""

PARAMETERS = """
select parameter, family, estimate, low, high, unit, status, n_points, informed_by, meaning
from calibration_parameters order by parameter, family
"""

DETAIL = """
select c.point_id, c.source, c.publisher, c.engine, c.arch_model, c.chip, c.regime, c.measured_quantity,
       c.measured_value, c.bound_value, c.calibrated_value, c.cv_value, c.cv_over_measured_ratio,
       c.decode_batch_per_replica, c.prefill_tokens_per_pass, c.decode_context_tokens, c.limit_met, c.assumed,
       c.included, c.exclusion_reason, m.source_url, m.quote
from calibration_points as c join measured_points as m using (point_id)
order by c.included desc, c.source, c.point_id
"""


def _factor(v) -> str:
    return "" if v is None or not math.isfinite(v) else f"{v:.2f}×"


def render(ctx: SiteContext) -> PageContent:
    overall = {r["basis"]: r for r in ctx.query(OVERALL).iter_rows(named=True)}
    cv, bound = overall.get("cv"), overall.get("bound")
    sections = [_scatter(ctx), _errors(ctx), _parameters(ctx), _points(ctx)]
    if cv is None or bound is None:
        lead = "No measured point could be predicted: the calibration has no held-out error to report."
    else:
        counts = ctx.query(
            "select count(distinct source) filter (where included) as sources, count(*) filter (where not included) "
            "as excluded, count(*) as total from calibration_points"
        ).row(0, named=True)
        lead = (
            f"{cv['n_points']} published operating points from {counts['sources']} sources against econ's deployment "
            f"model ({counts['excluded']} more of the {counts['total']} in measured_points cannot be predicted; the "
            "reasons are below). The roofline bound alone is a median "
            f"{_factor(bound['error_factor'])} above what the systems measured. Fitted efficiencies (per architecture, "
            f"shrunk toward shared values) bring a prediction within {_factor(cv['error_factor'])} of the measurement "
            f"for the median point and within {_factor(cv['error_factor_p90'])} for 9 in 10, each point predicted by "
            "a fit that never saw its source (leave-one-source-out)."
        )
    return PageContent(title=TITLE, lead=lead, sections=sections, findings=findings.validation(ctx))


def _scatter(ctx: SiteContext) -> Section:
    frame = ctx.query(POINTS)
    if frame.is_empty():
        return Section("Predicted against measured", [note("No point could be predicted.", kind="pending")])
    return Section(
        "Predicted against measured",
        [
            Figure(
                "predicted-vs-measured",
                charts.predicted_vs_measured(frame),
                frame,
                caption="Each point is one published measurement (tokens/s per chip, or per user for a single "
                "stream), at x, and econ's number for the same setting, at y: left the roofline bound (every "
                "efficiency 1, no overhead), right the calibrated prediction from a fit without the point's source. "
                "A bound below y = x would be a physics error; the calibrated panel should hug y = x.",
                formula=f"{ctx.cite('econ.fits.calibration.predict')}; "
                f"{ctx.cite('econ.fits.calibration.cross_validate')}",
                source="calibration_points, from measured_points (each row's source_url and quote)",
            )
        ],
        intro="Points above the line are over-predicted, below under-predicted; the dashed band is ±1.5×.",
    )


def _errors(ctx: SiteContext) -> Section:
    frame = ctx.query(GROUPS)
    cols = [
        Col("group_kind", "By"),
        Col("group", "Group"),
        Col("n_points", "Points", kind="num"),
        Col("error_factor", "Typical error", kind="num", fmt=_factor),
        Col("error_factor_p90", "9 in 10 within", kind="num", fmt=_factor),
        Col("median_ratio", "Median predicted ÷ measured", kind="num", fmt=lambda v: fmt_num(v, sig=3)),
    ]
    return Section(
        "Held-out error by chip, architecture, model, source and regime",
        [
            table(frame, cols, caption="Leave-one-source-out error (calibration_errors, basis cv)", id="errors"),
            note(ctx.description("calibration_errors")),
        ],
        intro="A group with few points says little; the median ratio shows whether a group is over- (> 1) or "
        "under-predicted (< 1).",
    )


def _parameters(ctx: SiteContext) -> Section:
    frame = ctx.query(PARAMETERS)
    cols = [
        Col("parameter", "Parameter"),
        Col("family", "Architecture", fmt=lambda v: v or "shared"),
        Col("estimate", "Estimate", kind="num", fmt=lambda v: fmt_num(v, sig=3)),
        Col("low", "90% interval", fmt=lambda v: ""),
        Col("unit", "Unit"),
        Col("status", "Fit status"),
        Col("n_points", "Points", kind="num"),
        Col("informed_by", "From", wrap=True),
        Col("meaning", "Meaning", wrap=True),
    ]
    shown = frame.with_columns(
        pl.struct("low", "high")
        .map_elements(lambda r: fmt_interval(r["low"], r["high"]), return_dtype=pl.String)
        .alias("low")
    )
    cols[3] = Col("low", "90% interval")
    return Section(
        "The calibrated efficiencies",
        [
            table(shown, cols, caption="calibration_parameters: scenario calibrated uses these", id="parameters"),
            note(ctx.description("calibration_parameters")),
        ],
        intro="An architecture's value is the shared one moved by its own points, never above 1; chips of an "
        "architecture without measured points use the shared values (an extrapolation).",
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
        Col("cv_value", "Calibrated (held out)", kind="num"),
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
        "Every point",
        [
            table(
                included, cols, caption="Predicted points (measured_points joined to calibration_points)", id="points"
            ),
            table(
                excluded.sort("points", descending=True),
                [Col("exclusion_reason", "Not predicted because", wrap=True), Col("points", "Points", kind="num")],
                caption="Points kept in measured_points but not predicted, by reason",
                id="excluded",
            ),
            Download("points", frame, "every measured point with its quote, prediction and reason (CSV)"),
        ],
    )
