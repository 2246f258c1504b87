"""``inferred_changes``: what a price change implies — the inferred quantities of the pricing fits, before and after.

:func:`inferred_changes` runs the pricing fits (:func:`pricing_tables`) on the price rows in effect on each
date — only for the schedules whose prices changed, so a refresh stays fast — and lists every implied
quantity that moved: implied KV bytes per token, output/input ratio and implied decode batch, the memory
tier a cache duration is consistent with, and the fast-mode batch ratio.

The build compares the prices the fits read (every source but the replayed histories: :data:`INFERENCE_PRICES_SQL`)
in effect on the two dates ``price_changes`` compares, and dates the comparison by when each of those two states took
effect (:data:`EFFECTIVE_SQL`). What it reads is its ``READS``: a new snapshot of a replayed history (a refresh of
llm-prices) changes neither state, so the build keeps the table instead of fitting both states again.
"""

from __future__ import annotations

import duckdb
import polars as pl

from econ.analyses import (
    deployment_inputs,
    fit_cache_tiers,
    fit_context_tiers,
    fit_fast_mode,
    fit_io_market,
    fit_io_prices,
)
from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.inference_serving import Serving, serving_from, traffic_costs
from econ.analyses.inputs import MODELS_SQL
from econ.analyses.price_changes import COMPARED_SQL, dated
from econ.analyses.scenario import load_scenario
from econ.fits import price_changes as pc
from econ.fits.assumptions import Assumptions, from_scenario
from econ.fits.price_ratios import price_change_frac
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "inferred_changes"
INPUTS = (
    "prices",
    "price_snapshots",
    "models",
    "model_derived",
    "hardware",
    "hardware_derived",
    "memory_tiers",
    "scenarios",
    "calibration_parameters",
)

SCHEDULE = ["source", "provider", "model"]
SCHEMA = {
    "source": pl.String,
    "provider": pl.String,
    "model": pl.String,
    "variant": pl.String,
    "detail": pl.String,
    "quantity": pl.String,
    "value": pl.Float64,
    "label": pl.String,
}

# table -> (key renames, detail column, numeric quantities, categorical quantities)
QUANTITIES = {
    "fit_context_tiers": (
        {},
        "component",
        ["kv_read_bytes_per_context_token", "attention_flop_per_context_token", "kv_crossover_bytes_per_token"],
        [],
    ),
    "fit_io_prices": (
        {},
        None,
        ["output_over_input_ratio", "batch_over_balance_ratio", "implied_decode_mbu_frac"],
        [],
    ),
    "fit_cache_tiers": (
        {},
        "kv_method",
        ["hold_price_usd_per_mtok_hour", "hold_cost_usd_per_gb_hour"],
        ["identified_tier", "tier_status"],
    ),
    "fit_fast_mode": (
        {},
        None,
        ["batch_ratio", "implied_markup_ratio", *fit_fast_mode.ALLOWED],
        [],
    ),
}

INFERRED_CHANGES = ResultTable(
    name="inferred_changes",
    grain="schedule x variant x detail x quantity",
    key=("source", "provider", "model", "variant", "detail", "quantity"),
    description=(
        "What the price changes imply: inferred quantities of the pricing fits (implied KV bytes, output/input ratio "
        "and decode batch, cache hold price and memory tier, fast-mode batch ratio) that moved between the prices in "
        "effect on the two newest snapshot dates (of the sources the fits read), under scenario base"
    ),
    columns=(
        C(
            "from_date",
            "date",
            "",
            "key",
            "When the older prices compared took effect: the prices the fits read (not the replayed histories) in "
            "effect on price_changes' from_date",
        ),
        C(
            "to_date",
            "date",
            "",
            "key",
            "When the newer prices compared took effect, likewise for price_changes' to_date",
        ),
        C("source", "str", "", "key", "Price source of the schedule"),
        C("provider", "str", "", "key", "Seller"),
        C("model", "str", "", "key", "Model id as the seller names it"),
        C("variant", "str", "", "key", "Service variant"),
        C("detail", "str", "", "key", "Price component, cache item or blank"),
        C(
            "quantity",
            "str",
            "",
            "key",
            "Implied quantity (the column of the fit_* table it comes from; its unit is in its name)",
        ),
        C("old_value", "float", "", "input", "Value under the older prices (the fit_* column named in quantity)"),
        C("new_value", "float", "", "input", "Value under the newer prices (the fit_* column named in quantity)"),
        C(
            "change_frac",
            "float",
            "",
            "derived",
            "Relative change (null when either side is blank or the old is 0)",
            price_change_frac,
        ),
        C("old_label", "str", "", "input", "Older category (memory tiers; the fit_* column named in quantity)"),
        C("new_label", "str", "", "input", "Newer category (memory tiers; the fit_* column named in quantity)"),
    ),
)
TABLES = (INFERRED_CHANGES,)
IMPLIED_SCHEMA = {k: v for k, v in INFERRED_CHANGES.schema.items() if k not in ("from_date", "to_date")}


def pricing_tables(
    prices: pl.DataFrame, models: pl.DataFrame, tiers: pl.DataFrame, a: Assumptions, deployed: Serving | None = None
) -> dict:
    """Every fit_* table of the pricing analyses (pure) and the summaries of their validations, the way the build
    computes them (open models priced by ``deployed``, the deployment model of
    :func:`econ.analyses.inference_serving.serving`)."""
    context, context_checks = fit_context_tiers.tables(prices, models, a, deployed)
    cache, _detail = fit_cache_tiers.tables(prices, models, tiers, a, deployed)
    costs = traffic_costs(deployed) if deployed is not None else None
    io, io_checks = fit_io_prices.tables(prices, models, a, costs)
    return {
        "fit_context_tiers": context,
        "fit_context_tier_quantities": context_checks,
        "fit_io_prices": io,
        "fit_io_price_quantities": io_checks,
        "fit_io_market": fit_io_market.tables(
            prices, models, a, costs, efficiencies=fit_io_market.efficiencies_of(deployed.scenario)
        )[0]
        if costs is not None
        else pl.DataFrame(),
        "fit_cache_tiers": cache,
        "fit_fast_mode": fit_fast_mode.table(prices, models, a, deployed),
    }


def quantities(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The implied quantities of the pricing tables in long format (one row per schedule × quantity)."""
    parts = [pl.DataFrame(schema=SCHEMA)]
    for name, (renames, detail, numeric, categorical) in QUANTITIES.items():
        frame = tables.get(name)
        if frame is None or frame.is_empty():
            continue
        frame = frame.rename(renames)
        if name == "fit_context_tiers":
            frame = frame.filter(pl.col("default_rule").fill_null(False) & ~pl.col("pooled").fill_null(False))
        if name == "fit_fast_mode":
            frame = frame.with_columns(pl.col("tier_min_prompt_tokens").cast(pl.String).alias("_detail"))
            detail = "_detail"
        det = pl.col(detail).cast(pl.String) if detail else pl.lit(None, pl.String)
        keys = [*[pl.col(c) for c in SCHEDULE], pl.col("variant"), det.alias("detail")]
        parts += [
            frame.select(
                *keys,
                pl.lit(q).alias("quantity"),
                pl.col(q).cast(pl.Float64).alias("value"),
                pl.lit(None, pl.String).alias("label"),
            )
            for q in numeric
            if q in frame.columns
        ]
        parts += [
            frame.select(
                *keys,
                pl.lit(q).alias("quantity"),
                pl.lit(None, pl.Float64).alias("value"),
                pl.col(q).cast(pl.String).alias("label"),
            )
            for q in categorical
            if q in frame.columns
        ]
    return pl.concat(parts, how="vertical_relaxed").unique(keep="first", maintain_order=True)


def inferred_changes(
    old_prices, new_prices, models, tiers, a: Assumptions, deployed: Serving | None = None, *, rel_tol: float = 1e-9
) -> pl.DataFrame:
    """Implied quantities that moved between two price states, for the schedules whose prices changed.

    A quantity that only one side can infer (e.g. a long-context tier that gained a cache-read price) is
    listed with a blank on the other side.
    """
    moved = pc.changes_between(old_prices, new_prices).filter(change="changed").select(SCHEDULE).unique()
    empty = pl.DataFrame(schema=IMPLIED_SCHEMA)
    if moved.is_empty():
        return empty

    def subset(p):
        return p.join(moved, on=SCHEDULE, how="semi")

    old = quantities(pricing_tables(subset(old_prices), models, tiers, a, deployed))
    new = quantities(pricing_tables(subset(new_prices), models, tiers, a, deployed))
    key = [*SCHEDULE, "variant", "detail", "quantity"]
    joined = old.join(new, on=key, how="full", coalesce=True, suffix="_new", nulls_equal=True)
    value_moved = ~pl.col("value").eq_missing(pl.col("value_new")) & ~(
        (pl.col("value") - pl.col("value_new")).abs() <= rel_tol * pl.col("value").abs()
    )
    label_moved = ~pl.col("label").eq_missing(pl.col("label_new"))
    out = joined.filter(value_moved.fill_null(True) | label_moved).select(
        *key,
        pl.col("value").alias("old_value"),
        pl.col("value_new").alias("new_value"),
        price_change_frac(pl.col("value_new"), pl.col("value")).alias("change_frac"),
        pl.col("label").alias("old_label"),
        pl.col("label_new").alias("new_label"),
    )
    return pl.concat([empty, out], how="vertical_relaxed").sort(key, nulls_last=True)


def inferred_between(
    prices: pl.DataFrame, start, end, models, tiers, a: Assumptions, deployed: Serving | None = None
) -> pl.DataFrame:
    """:func:`inferred_changes` between the price rows in effect on two dates (sources present on both)."""
    return inferred_changes(*pc.states_on(prices, start, end), models, tiers, a, deployed)


INFERENCE_PRICES_SQL = (
    "select * from prices where source not in (select distinct source from price_snapshots where commit is not null)"
)
"""The price periods whose inferences are compared: those of the sources the fits read (queries/inference_prices.sql:
not the replayed histories)."""

STATES_SQL = f"""
with compared as ({COMPARED_SQL}), fitted as ({INFERENCE_PRICES_SQL})
select fitted.* from fitted, compared
where (fitted.from_date <= compared.start_date and coalesce(fitted.to_date > compared.start_date, true))
   or (fitted.from_date <= compared.end_date and coalesce(fitted.to_date > compared.end_date, true))
"""
"""The rows of :data:`INFERENCE_PRICES_SQL` in effect on either compared date (none with fewer than two dates)."""

EFFECTIVE_SQL = f"""
with compared as ({COMPARED_SQL}), fitted as ({INFERENCE_PRICES_SQL}),
boundaries as (select from_date as day from fitted union select to_date from fitted where to_date is not null)
select (select max(day) from boundaries, compared where day <= compared.start_date) as from_date,
       (select max(day) from boundaries, compared where day <= compared.end_date) as to_date
"""
"""When each compared state took effect: the last start or end of a period of :data:`INFERENCE_PRICES_SQL` on or
before each compared date. The state in effect on a compared date is the state in effect on that day (no period
starts or ends between them), so the two states and these dates are all the table is a function of."""

READS = {"prices": STATES_SQL, "price_snapshots": EFFECTIVE_SQL}
"""All it reads of ``prices`` and ``price_snapshots`` (``econ.analyses.runner``)."""


def inference_inputs(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, pl.DataFrame, Assumptions, Serving]:
    """What the pricing fits read besides prices: architectures, memory tiers, scenario base's assumptions (its
    efficiencies through :func:`serving_scenario`) and the open models' deployments."""
    models = pl.DataFrame(con.sql(MODELS_SQL))
    tiers = pl.DataFrame(con.sql("select * from memory_tiers order by tier, device"))
    hardware = pl.DataFrame(con.sql("select * from hardware_derived order by chip, format_order"))
    base = load_scenario(con, "base")
    scenario = serving_scenario(base, base.serving_chip, con)
    deployed = serving_from(scenario, pl.DataFrame(con.sql(deployment_inputs.CASES_SQL)))
    return models, tiers, from_scenario(scenario, hardware), deployed


def run(ctx) -> None:
    (start, end), *_ = ctx.query(EFFECTIVE_SQL).iter_rows()
    if start is None or end is None:  # fewer than two snapshot dates, or no price in effect on the older one
        ctx.write(INFERRED_CHANGES, INFERRED_CHANGES.empty_frame())
        return
    implied = inferred_between(ctx.query(STATES_SQL), start, end, *inference_inputs(ctx.con))
    ctx.write(INFERRED_CHANGES, dated(implied, start, end))
