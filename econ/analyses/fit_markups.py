"""``fit_markups`` and ``fit_markup_rows``: the markup model (:mod:`econ.fits.markups`) fitted where the truth is known.

Every standard price row of an open model the deployment model serves (every seller, hand-kept and imported, every
snapshot), base tier, per component it quotes, against the calibrated cost of that component on the scenario's
serving chip (``markup_costs``; the long-context slopes against ``fit_context_tiers``' deployment cost slopes of the
current schedules). One markup per component for the model's maker and one reseller effect; each open model's rows
read back as a cost with that model left out, and those readings validated by the rule of
:mod:`econ.fits.validation` (quantity ``serving_cost_from_<component>_price``); closed models' first-party prices read
with every open model in the fit.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fit_markups_columns import (
    COST_BASIS,
    EVIDENCE,
    FIT_MARKUP_QUANTITIES,
    FIT_MARKUP_ROWS,
    FIT_MARKUPS,
    KEY,
    LABELS,
    UNITS,
    quantity,
)
from econ.analyses.inputs import MODELS_SQL, architecture_groups, architecture_of
from econ.analyses.validation_evidence import evidence, summary_frame, validate
from econ.fits import markups, validation
from econ.fits.price_selection import attach_architecture, choose_sources, provider_kind

NAME = "fit_markups"
INPUTS = (
    "prices",
    "price_snapshots",
    "inference_prices",
    "price_keys",
    "model_catalog",
    "models",
    "model_derived",
    "markup_costs",
    "fit_context_tiers",
    "calibration_errors",
)

COST_ERROR_SQL = """
select any_value(median_log_ratio) from calibration_errors
where basis = 'model_out' and target = 'throughput' and group_kind = 'overall'
"""
"""The calibrated cost's error shared by every model: a cost per token is a chip-hour price over a throughput, and the
published throughputs held out by model are the calibration's check of exactly that; their median log ratio is what
it gets wrong on every model alike (the spread around it is already in each reading's own spread)."""

HISTORY_SOURCES_SQL = "select distinct source from price_snapshots where commit is not null"
BASE_PRICES_SQL = f"""
select * from prices
where variant = 'standard' and tier_min_prompt_tokens = 0 and source not in ({HISTORY_SOURCES_SQL})
"""
READS = {"prices": BASE_PRICES_SQL, "price_snapshots": HISTORY_SOURCES_SQL}
"""All it reads of ``prices`` and ``price_snapshots``: a new snapshot of a replayed history keeps its tables
(``econ.analyses.runner``)."""

OPEN_SQL = f"""
select p.*, c.arch_model, case when k.is_first_party then 'first_party' else 'reseller' end as provider_kind
from ({BASE_PRICES_SQL}) as p
join price_keys as k using (source, provider, model)
join model_catalog as c on c.canonical_model = k.canonical_model
where c.arch_model is not null
order by p.source, p.provider, p.model, p.from_date
"""
"""Every standard base-tier price of an open model: the catalog's canonical model (price_keys, model_aliases) names
its architecture; first-party where the seller's organisation makes it. The sources the fits read: the hand-kept
pages and the imported maps, not the replayed histories (as queries/inference_prices.sql)."""

PRICE_COLUMNS = {  # price column -> (component, hold time in s for the cache cost; 0: none)
    "input_usd_per_mtok": ("input", 0.0),
    "output_usd_per_mtok": ("output", 0.0),
    "cache_read_usd_per_mtok": ("cache_read", 0.0),
    "cache_write_5m_usd_per_mtok": ("cache_write", 300.0),
    "cache_write_1h_usd_per_mtok": ("cache_write", 3_600.0),
    "cache_write_12h_usd_per_mtok": ("cache_write", 43_200.0),
    "cache_storage_usd_per_mtok_hour": ("cache_storage", 3_600.0),
}
SLOPE_COLUMN = {"input": "long_context_input", "output": "long_context_output"}
TABLES = (FIT_MARKUPS, FIT_MARKUP_ROWS, FIT_MARKUP_QUANTITIES)


def _long(rows: pl.DataFrame, costs: pl.DataFrame | None) -> pl.DataFrame:
    """One row per price row × priced component (price > 0), with its cost where ``costs`` has the model."""
    parts = []
    for column, (component, hold_s) in PRICE_COLUMNS.items():
        if column not in rows.columns:
            continue
        part = rows.filter(pl.col(column) > 0).select(
            "source",
            "provider",
            "model",
            "from_date",
            pl.lit(column).alias("price_column"),
            pl.lit(component).alias("component"),
            "arch_model",
            "provider_kind",
            pl.col(column).cast(pl.Float64).alias("price_value"),
        )
        if costs is not None:
            part = part.join(costs, on="arch_model", how="left")
            cost = {
                "input": pl.col("input_cost_usd_per_mtok"),
                "output": pl.col("output_cost_usd_per_mtok"),
                "cache_read": pl.col("cache_retrieve_usd_per_mtok"),
                "cache_write": pl.col("input_cost_usd_per_mtok") + pl.col("cache_hold_usd_per_mtok_s") * hold_s,
                "cache_storage": pl.col("cache_hold_usd_per_mtok_s") * hold_s,
            }[component]
            part = part.with_columns(cost.alias("cost_value")).select(*part.columns[:9], "cost_value")
        else:
            part = part.with_columns(pl.lit(None, pl.Float64).alias("cost_value"))
        parts.append(part)
    return pl.concat(parts, how="vertical_relaxed") if parts else pl.DataFrame()


def slope_rows(context: pl.DataFrame) -> pl.DataFrame:
    """The long-context slopes of ``fit_context_tiers`` (default rule, current schedules, standard) as price rows."""
    if context.height == 0:
        return pl.DataFrame()
    rows = context.filter(
        pl.col("default_rule")
        & ~pl.col("pooled")
        & (pl.col("variant") == "standard")
        & pl.col("component").is_in(list(SLOPE_COLUMN))
        & (pl.col("slope_usd_per_mtok_per_mtok_context") > 0)
    )
    return rows.select(
        "source",
        "provider",
        "model",
        pl.lit(None, pl.Date).alias("from_date"),
        (pl.col("component") + "_slope_usd_per_mtok_per_mtok_context").alias("price_column"),
        pl.col("component").replace_strict(SLOPE_COLUMN).alias("component"),
        "arch_model",
        "provider_kind",
        pl.col("slope_usd_per_mtok_per_mtok_context").alias("price_value"),
        pl.col("deployment_cost_slope_usd_per_mtok_per_mtok_context").alias("cost_value"),
    )


def price_rows(open_rows: pl.DataFrame, current: pl.DataFrame, models: pl.DataFrame, costs, context) -> pl.DataFrame:
    """Open models' rows (``OPEN_SQL``: every source and snapshot, with a reference cost) and closed models' current
    first-party-or-chosen ones (one source per model, :func:`econ.fits.price_selection.choose_sources`)."""
    reference = costs.filter(pl.col("reference")).drop("chip", "reference", "usd_per_chip_hour", "cache_device")
    base = (pl.col("variant") == "standard") & (pl.col("tier_min_prompt_tokens") == 0)
    open_rows = open_rows.filter(pl.col("arch_model").is_in(reference["arch_model"].to_list()))
    closed = choose_sources(current.filter(base)).pipe(attach_architecture, models)
    closed = closed.filter(pl.col("arch_model").is_null()).with_columns(provider_kind())
    parts = [_long(open_rows, reference), _long(closed, None), slope_rows(context)]
    if not any(p.height for p in parts):  # a data set without one priced model (the smallest one that builds)
        return parts[0].head(0)
    frame = pl.concat([p for p in parts if p.height], how="vertical_relaxed")
    frame = frame.filter(pl.col("arch_model").is_null() | (pl.col("cost_value") > 0))
    return frame.unique(subset=list(KEY), keep="first").sort(KEY, nulls_last=True)


def fitted(
    frame: pl.DataFrame, cost_median_log_ratio: float | None = None, groups: dict[str, str] | None = None
) -> tuple[pl.DataFrame, dict]:
    """The rows with the markup model's predictions and validated readings, and each component's summary. The unit
    weighed and left out is the open model's architecture group (``groups``: model ->
    ``model_derived.architecture_group``; a model and its re-release share their cost, so one left in would read
    the other's)."""
    comp = {c: i for i, c in enumerate(markups.COMPONENTS)}
    c = frame["component"].replace_strict(comp, return_dtype=pl.Int64).to_numpy()
    reseller = (frame["provider_kind"] == "reseller").fill_null(False).to_numpy().astype(float)
    price = frame["price_value"].to_numpy()
    cost = frame["cost_value"].fill_null(np.nan).to_numpy()
    is_open = frame["arch_model"].is_not_null().to_numpy()
    keys = frame.select(architecture_of(groups or {}))["arch_model"].to_list()
    names = sorted({k for k in keys if k is not None})
    group = np.array([names.index(k) if k is not None else -1 for k in keys])
    y = np.log(price / np.where(is_open, cost, np.nan))
    n_c = len(markups.COMPONENTS)
    w = markups.model_weights(group[is_open], c[is_open])
    mu, gamma = markups.fit(y[is_open], c[is_open], reseller[is_open], w, n_components=n_c)
    log_cost = np.log(price) - mu[c] - gamma * reseller  # closed rows: every open model in the fit
    log_cost[is_open] = markups.left_out(
        np.log(price[is_open]), y[is_open], c[is_open], reseller[is_open], group[is_open], n_components=n_c
    )
    out = frame.with_columns(
        pl.lit(np.exp(validation.shared_truth_error_log(cost_median_log_ratio))).alias("cost_shared_error_ratio"),
        pl.Series("log_markup_ratio", y, nan_to_null=True),
        pl.Series("predicted_markup_ratio", price / np.exp(log_cost), nan_to_null=True),
        pl.Series("_read", np.exp(log_cost), nan_to_null=True),
    )
    pieces, summaries = [], {}
    for component in markups.COMPONENTS:
        rows = out.filter(pl.col("component") == component)
        if rows.height == 0:
            summaries[component] = {
                "n_models": 0,
                "n_architecture_groups": 0,
                "n_rows": 0,
                "status": "too_few_open_models",
            }
            continue
        checked, summary = validate(
            rows.select(
                pl.col("arch_model").alias("model_key"),
                architecture_of(groups or {}).alias("group_key"),
                pl.col("_read").alias("implied"),
                pl.lit(None, pl.Float64).alias("scenario_low"),
                pl.lit(None, pl.Float64).alias("scenario_high"),
                pl.col("cost_value").alias("true"),
                pl.col("cost_shared_error_ratio").log().alias("truth_error_log"),
            ),
            role="reading",
        )
        sellers = rows.filter(pl.col("arch_model").is_not_null())["provider"].n_unique()
        summary.update(mu=mu[comp[component]], gamma=gamma, n_sellers=sellers)
        summaries[component] = summary
        pieces.append(
            rows.with_columns(
                checked["corrected"].alias("implied_cost_value"),
                checked["validated_low"].alias("implied_cost_low_value"),
                checked["validated_high"].alias("implied_cost_high_value"),
                *evidence(checked, EVIDENCE),
            )
        )
    rows = pl.concat(pieces, how="vertical_relaxed").drop("_read") if pieces else FIT_MARKUP_ROWS.empty_frame()
    return rows.with_columns(pl.col("component").replace_strict(UNITS, default="USD/MTok").alias("unit")), summaries


def summary_table(summaries: dict) -> pl.DataFrame:
    """``fit_markups`` from the per-component summaries of :func:`fitted`."""
    records = []
    for component in markups.COMPONENTS:
        s = summaries.get(component, {})
        mu, gamma = s.get("mu", np.nan), s.get("gamma", np.nan)
        width = s.get("interval_width_ratio", np.nan)
        half = np.sqrt(width) if width is not None and np.isfinite(width) else np.inf
        markup = float(np.exp(mu)) if np.isfinite(mu) else None
        records.append(
            {
                "component": component,
                "cost_basis": COST_BASIS[component],
                "markup_ratio": markup,
                "reseller_markup_ratio": float(np.exp(mu + gamma)) if np.isfinite(mu + gamma) else None,
                "gross_margin_frac": float(markups.implied_margin(markup, 1.0)) if markup else None,
                "markup_low_ratio": markup / half if markup else None,
                "markup_high_ratio": markup * half if markup and np.isfinite(half) else None,
                "n_models": s.get("n_models", 0),
                "n_architecture_groups": s.get("n_architecture_groups", 0),
                "n_rows": s.get("n_rows", 0),
                "n_sellers": s.get("n_sellers", 0),
                "quantity": quantity(component),
            }
        )
    return pl.DataFrame(records, schema=FIT_MARKUPS.schema, strict=False).with_columns(
        pl.col(pl.Float64).fill_nan(None)
    )


def tables(
    open_rows, current, models, costs, context, cost_median_log_ratio: float | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(``fit_markups``, ``fit_markup_rows``, ``fit_markup_quantities``); ``cost_median_log_ratio``:
    :data:`COST_ERROR_SQL`'s ratio."""
    frame = price_rows(open_rows, current, models, costs, context)
    if frame.height == 0 or frame["arch_model"].is_null().all():
        return summary_table({}), FIT_MARKUP_ROWS.empty_frame(), summary_frame({}, FIT_MARKUP_QUANTITIES, LABELS)
    rows, summaries = fitted(frame, cost_median_log_ratio, architecture_groups(models))
    validated = {quantity(c): s for c, s in summaries.items() if "level_frac" in s}  # validated, not a stub
    return (
        summary_table(summaries),
        rows.select(FIT_MARKUP_ROWS.names).sort(KEY, nulls_last=True),
        summary_frame(validated, FIT_MARKUP_QUANTITIES, LABELS),
    )


def run(ctx) -> None:
    markups_table, rows, quantities = tables(
        ctx.query(OPEN_SQL),
        ctx.query("select * from inference_prices"),
        ctx.query(MODELS_SQL),
        ctx.query("select * from markup_costs"),
        ctx.query("select * from fit_context_tiers"),
        ctx.con.sql(COST_ERROR_SQL).fetchall()[0][0],
    )
    ctx.write(FIT_MARKUPS, markups_table)
    ctx.write(FIT_MARKUP_ROWS, rows)
    ctx.write(FIT_MARKUP_QUANTITIES, quantities)
