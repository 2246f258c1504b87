"""What prices tell us: the price inferences that pass their check on open models, the markup model and every
seller's implied margin, and — apart — what prices do not tell us, each with the reason its check gives.

Selection and formatting only: every number is a row of ``inference_quantities``, ``fit_markups``,
``implied_margins`` or ``markup_inversions``; a status is the one :mod:`econ.fits.validation` gave.
"""

from __future__ import annotations

import polars as pl

from econ.report import inference_findings
from econ.report.html import Col, table
from econ.report.page import Download, PageContent, Section, SiteContext, note
from econ.report.pages.common import guarded, interval_text, sig3

NAME = "inferences"
TITLE = "What prices tell us"
SUMMARY = (
    "The price inferences that pass their check on open models (left-out coverage, skill against a no-price "
    "baseline), the markup model and every seller's implied margin; and what prices do not tell us, with the reason."
)
REQUIRES = ("inference_quantities",)

QUANTITIES = """
select quantity, role, reading, unit, n_models, n_architecture_groups, n_rows, coverage_groups_frac, level_frac,
       geometric_mean_ratio, bias_corrected, correction_factor_ratio, interval_score_log, baseline_interval_score_log,
       skill_score_frac, interval_width_ratio, hypothesis_status, status, status_reason
from inference_quantities order by quantity
"""

MARKUPS = """
select m.*, q.status from fit_markups as m left join inference_quantities as q using (quantity) order by component
"""

MARGINS = """
select arch_model, component, count(distinct provider) as sellers, median(margin_frac) as median_margin_frac,
       min(margin_frac) as low_margin_frac, max(margin_frac) as high_margin_frac,
       min(margin_low_frac) as lowest_over_chips_frac, max(margin_high_frac) as highest_over_chips_frac,
       median(price_over_market_ratio) as median_price_over_market_ratio
from implied_margins group by all order by arch_model, component
"""

CLOSED = """
select provider, model, implied_active_params, active_params_low, active_params_high,
       (select status from inference_quantities where quantity = 'active_params_from_input_price')
           as active_params_status,
       implied_kv_held_bytes_per_token,
       (select status from inference_quantities where quantity = 'kv_held_bytes_per_token_from_cache_price')
           as kv_held_status,
       decode_batch_status
from markup_inversions
where arch_model is null and source = 'hand'
qualify row_number() over (partition by provider, model order by from_date desc) = 1
order by provider, model
"""


def render(ctx: SiteContext) -> PageContent:
    frame = ctx.query(QUANTITIES)
    sections = [
        guarded("Readings that pass", lambda: _passing(frame)),
        guarded("What prices do not tell us", lambda: _not_told(frame)),
        guarded("Markups by price component", lambda: _markups(ctx)),
        guarded("Every seller's implied margin", lambda: _margins(ctx)),
        guarded("Closed models read backwards", lambda: _closed(ctx)),
    ]
    return PageContent(
        title=TITLE,
        lead=(
            "A price inference is published only where open models, whose architecture gives the true value, check "
            "it: each architecture (a model with its re-releases) left out of its own check, a bias corrected when it "
            "is significant, the interval scored against a no-price guess (the geometric mean of the other "
            "architectures' true values). The readings that pass are headlined; the others are listed with the reason "
            "their check gives."
        ),
        sections=sections,
        findings=inference_findings.inferences(ctx),
    )


def _columns(*, status_first: bool = False) -> list[Col]:
    """The readings' columns; where they fail (``status_first``) the status comes second and the narrow view keeps it
    to the last, so a reader sees why a reading is not headlined without widening the table."""
    status = [Col("status", "Status", keep=True)] if status_first else []
    return [
        Col("quantity", "Quantity"),
        *status,
        Col("reading", "Read from", wrap=True),
        Col("n_models", "Open models", kind="num"),
        Col("n_architecture_groups", "Architectures", kind="num"),
        Col("coverage", "Left-out coverage (of architectures)"),
        Col("interval_score_log", "Interval score (ln)", kind="num", fmt=sig3),
        Col("baseline_interval_score_log", "No-price baseline's (ln)", kind="num", fmt=sig3),
        Col("skill_score_frac", "Skill (frac)", kind="num", fmt=sig3),
        Col("interval_width_ratio", "Width, high/low (ratio)", kind="num", fmt=sig3),
        Col("geometric_mean_ratio", "Bias (ratio)", kind="num", fmt=sig3),
        *([] if status_first else [Col("status", "Status")]),
        Col("status_reason", "Why", wrap=True),
    ]


def _with_coverage(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.when(pl.col("coverage_groups_frac").is_not_null())
        .then(
            pl.format(
                "{}% at {}%",
                (pl.col("coverage_groups_frac") * 100).round(0).cast(pl.Int64),
                (pl.col("level_frac") * 100).round(0).cast(pl.Int64),
            )
        )
        .alias("coverage")
    )


def _passing(frame: pl.DataFrame) -> Section:
    ok = _with_coverage(frame.filter(pl.col("status") == "ok"))
    if ok.is_empty():
        return Section("Readings that pass", [note("No price reading passes its check on open models.")])
    return Section(
        "Readings that pass",
        [
            table(
                ok,
                _columns(),
                caption="Status ok: at least 5 architectures of open models (a model and its re-releases are one), "
                "skill against the no-price baseline by the interval score (Gneiting-Raftery, in ln, each architecture "
                "left out whole), an interval at most 10x wide, and (a "
                "hypothesis) not missing the truth beyond its own interval; left-out coverage at the stated level",
                id="passing",
            )
        ],
    )


def _not_told(frame: pl.DataFrame) -> Section:
    rest = _with_coverage(frame.filter(pl.col("status") != "ok"))
    if rest.is_empty():
        return Section("What prices do not tell us", [note("Every price reading passes its check.")])
    return Section(
        "What prices do not tell us",
        [
            table(
                rest,
                _columns(status_first=True),
                caption="Readings that fail their check: too_few_open_models (fewer than 5 architectures of open "
                "models with the price and a true value), falsified (a hypothesis that misses the truth beyond its "
                "own interval, e.g. the lecture's crossover), uninformative (no skill against the no-price "
                "baseline, or an interval wider than 10x). Their numbers stay in the tables, never in a headline",
                id="not-told",
            )
        ],
    )


def _markups(ctx: SiteContext) -> Section:
    if not ctx.has("fit_markups"):
        return Section("Markups by price component", [note("No markup model in this database.", kind="pending")])
    frame = ctx.query(MARKUPS).with_columns(interval_text("markup_low_ratio", "markup_high_ratio").alias("interval"))
    return Section(
        "Markups by price component",
        [
            table(
                frame,
                [
                    Col("component", "Component"),
                    Col("cost_basis", "Set against", wrap=True),
                    Col("markup_ratio", "Maker's markup (ratio)", kind="num", fmt=sig3),
                    Col("reseller_markup_ratio", "Reseller's (ratio)", kind="num", fmt=sig3),
                    Col("gross_margin_frac", "Maker's gross margin (frac)", kind="num", fmt=sig3),
                    Col("interval", "A new model's markup (validated interval)"),
                    Col("n_models", "Open models", kind="num"),
                    Col("n_architecture_groups", "Architectures", kind="num"),
                    Col("n_rows", "Prices", kind="num"),
                    Col("n_sellers", "Sellers", kind="num"),
                    Col("status", "Status of the cost reading"),
                ],
                caption="ln(price / calibrated serving cost) = mu_component + gamma*[reseller], every seller, source "
                "and snapshot of the open models the deployment model serves, each architecture x component "
                "weighing 1 and left out whole (fit_markups). The cost each price reads back to is validated like "
                "every other reading (inference_quantities: serving_cost_from_<component>_price)",
                id="markups",
            ),
            Download("fit-markup-rows", ctx.query("select * from fit_markup_rows order by all"), "Every price row"),
        ],
    )


def _margins(ctx: SiteContext) -> Section:
    if not ctx.has("implied_margins"):
        return Section("Every seller's implied margin", [note("No implied margins in this database.", kind="pending")])
    frame = ctx.query(MARGINS).with_columns(
        interval_text("low_margin_frac", "high_margin_frac").alias("across_sellers"),
        interval_text("lowest_over_chips_frac", "highest_over_chips_frac").alias("over_chips"),
    )
    return Section(
        "Every seller's implied margin",
        [
            table(
                frame,
                [
                    Col("arch_model", "Open model"),
                    Col("component", "Component"),
                    Col("sellers", "Sellers", kind="num"),
                    Col("median_margin_frac", "Median margin, serving chip (frac)", kind="num", fmt=sig3),
                    Col("across_sellers", "Range across sellers"),
                    Col("over_chips", "Range over the chips it could run on"),
                    Col(
                        "median_price_over_market_ratio", "Price over the market's markup (ratio)", kind="num", fmt=sig3
                    ),
                ],
                caption="1 - cost/price of every seller's current price of each open model, the calibrated cost on "
                "the scenario's serving chip and, over every chip with a rental quote (median quote, that chip's "
                "calibrated efficiencies), the lowest and highest; a negative margin prices below that chip's cost "
                "(implied_margins)",
                id="margins",
            ),
            Download("implied-margins", ctx.query("select * from implied_margins order by all"), "Every seller"),
        ],
    )


def _closed(ctx: SiteContext) -> Section:
    if not ctx.has("markup_inversions"):
        return Section("Closed models read backwards", [note("No inversions in this database.", kind="pending")])
    frame = ctx.query(CLOSED).with_columns(
        interval_text("active_params_low", "active_params_high").alias("active_interval")
    )
    return Section(
        "Closed models read backwards",
        [
            table(
                frame,
                [
                    Col("provider", "Provider"),
                    Col("model", "Model"),
                    Col("implied_active_params", "Implied active parameters", kind="num", fmt=sig3),
                    Col("active_interval", "Validated interval"),
                    Col("active_params_status", "Status (active parameters)", keep=True),
                    Col("implied_kv_held_bytes_per_token", "Implied KV bytes held per token", kind="num", fmt=sig3),
                    Col("kv_held_status", "Status (KV held)"),
                    Col("decode_batch_status", "Decode batch", wrap=True),
                ],
                caption="Hand-kept first-party prices of closed models through the markup model "
                "(markup_inversions); a reading whose status is not ok is shown with it and is not a finding",
                id="closed",
            )
        ],
    )
