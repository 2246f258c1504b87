"""``implied_margins``: every seller's implied margin on every open model it sells, over the chips it could run on.

Per current standard base-tier price of an open model the deployment model serves (its canonical model names the
architecture, ``model_catalog``; one source per seller and price key: hand, else litellm, else openrouter; the prices
the fits read, ``inference_prices``: not the replayed histories) and per
component (input, output): margin = 1 − C/P
(:func:`econ.fits.markups.implied_margin`) with C the calibrated cost on the scenario's serving chip, and its range over
every chip with a rental quote (``markup_costs``: the chip's median rental, its calibrated efficiencies, the same
traffic mix and speed target). Beside it, the markup the market's model predicts for the seller's class
(``fit_markups``) and the seller's price over it: above 1 the seller charges more than the market's markup for that
component, below 1 less.
"""

from __future__ import annotations

import polars as pl

from econ.analyses import markup_costs
from econ.fits import markups
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "implied_margins"
INPUTS = ("inference_prices", "model_catalog", "markup_costs", "fit_markups")

CURRENT_SQL = """
with rows as (
    select p.*, c.arch_model, case when p.is_first_party then 'first_party' else 'reseller' end as provider_kind,
           row_number() over (
               partition by p.provider, p.model
               order by case p.source when 'hand' then 0 when 'litellm' then 1 else 2 end) as pick
    from inference_prices as p join model_catalog as c using (canonical_model)
    where c.arch_model is not null and p.variant = 'standard' and p.tier_min_prompt_tokens = 0
)
select * exclude (pick) from rows where pick = 1 order by source, provider, model
"""
"""Current standard base-tier prices of open models, one source per seller × price key."""

COMPONENTS = {"input": "input_usd_per_mtok", "output": "output_usd_per_mtok"}
COSTS = {"input": "input_cost_usd_per_mtok", "output": "output_cost_usd_per_mtok"}
KEY = ("source", "provider", "model", "component")

IMPLIED_MARGINS = ResultTable(
    name="implied_margins",
    grain="seller x price key of an open model (current standard base-tier price, one source) x component",
    key=KEY,
    description=(
        "Every seller's implied gross margin 1 - cost/price on every open model it sells, per component (input, "
        "output): the calibrated serving cost on the scenario's serving chip, and the range over every chip it could "
        "run on (markup_costs: median rental quote, the chip's calibrated efficiencies); the markup the market's model "
        "predicts for the seller's class (fit_markups) and the seller's price over it"
    ),
    columns=(
        C("source", "str", "", "key", "Price source"),
        C("provider", "str", "", "key", "Seller"),
        C("model", "str", "", "key", "Price key"),
        C("component", "str", "", "key", "input or output"),
        C("arch_model", "str", "", "input", "Open model (models.model)"),
        C("provider_kind", "str", "", "input", "first_party or reseller"),
        C("price_usd_per_mtok", "float", "USD/MTok", "input", "The seller's list price"),
        C(
            "cost_usd_per_mtok",
            "float",
            "USD/MTok",
            "calibrated",
            "Calibrated cost on the serving chip",
            markup_costs.chip_costs,
        ),
        C(
            "cost_low_usd_per_mtok",
            "float",
            "USD/MTok",
            "calibrated",
            "Cheapest chip's calibrated cost",
            markup_costs.chip_costs,
        ),
        C(
            "cost_high_usd_per_mtok",
            "float",
            "USD/MTok",
            "calibrated",
            "Dearest chip's calibrated cost",
            markup_costs.chip_costs,
        ),
        C("margin_frac", "float", "", "inference", "1 - cost/price on the serving chip", markups.implied_margin),
        C(
            "margin_low_frac",
            "float",
            "",
            "inference",
            "The lowest margin over the chips (on the dearest chip)",
            markups.implied_margin,
        ),
        C(
            "margin_high_frac",
            "float",
            "",
            "inference",
            "The highest margin over the chips (on the cheapest chip)",
            markups.implied_margin,
        ),
        C("cheapest_chip", "str", "", "label", "Chip of the highest margin"),
        C("dearest_chip", "str", "", "label", "Chip of the lowest margin"),
        C("n_chips", "int", "chips", "check", "Chips the range is over"),
        C(
            "market_markup_ratio",
            "float",
            "",
            "fit",
            "exp(mu_component + gamma*reseller) of fit_markups: the markup the market's model predicts",
            markups.fit,
        ),
        C(
            "price_over_market_ratio",
            "float",
            "",
            "inference",
            "price / (cost x market markup): above 1 the seller prices above the market's markup",
            markups.fit,
        ),
        C("n_sellers", "int", "", "check", "Sellers of the model in this table"),
    ),
)
TABLES = (IMPLIED_MARGINS,)


def table(rows: pl.DataFrame, costs: pl.DataFrame, fitted: pl.DataFrame) -> pl.DataFrame:
    """``implied_margins`` from ``CURRENT_SQL`` rows (module docstring)."""
    rows = rows.filter(pl.col("arch_model").is_in(costs["arch_model"].unique().to_list()))
    if rows.height == 0:
        return IMPLIED_MARGINS.empty_frame()
    markup = {r["component"]: r for r in fitted.iter_rows(named=True)}
    parts = []
    for component, column in COMPONENTS.items():
        priced = rows.filter(pl.col(column) > 0).select(
            "source", "provider", "model", "arch_model", "provider_kind", pl.col(column).alias("price_usd_per_mtok")
        )
        per_chip = priced.join(
            costs.select("arch_model", "chip", "reference", pl.col(COSTS[component]).alias("c")), on="arch_model"
        ).filter(pl.col("c") > 0)
        per_chip = per_chip.with_columns(
            pl.Series("m", markups.implied_margin(per_chip["price_usd_per_mtok"], per_chip["c"]))
        )
        agg = per_chip.group_by("source", "provider", "model").agg(
            pl.col("c").filter(pl.col("reference")).first().alias("cost_usd_per_mtok"),
            pl.col("c").min().alias("cost_low_usd_per_mtok"),
            pl.col("c").max().alias("cost_high_usd_per_mtok"),
            pl.col("m").min().alias("margin_low_frac"),
            pl.col("m").max().alias("margin_high_frac"),
            pl.col("chip").sort_by("m").last().alias("cheapest_chip"),
            pl.col("chip").sort_by("m").first().alias("dearest_chip"),
            pl.len().alias("n_chips"),
        )
        m = markup.get(component, {})
        mu = m.get("markup_ratio")
        reseller = m.get("reseller_markup_ratio")
        part = priced.join(agg, on=["source", "provider", "model"], how="inner").with_columns(
            pl.lit(component).alias("component"),
            pl.when(pl.col("provider_kind") == "reseller")
            .then(pl.lit(reseller, pl.Float64))
            .otherwise(pl.lit(mu, pl.Float64))
            .alias("market_markup_ratio"),
        )
        part = part.with_columns(
            pl.Series("margin_frac", markups.implied_margin(part["price_usd_per_mtok"], part["cost_usd_per_mtok"])),
            (pl.col("price_usd_per_mtok") / (pl.col("cost_usd_per_mtok") * pl.col("market_markup_ratio"))).alias(
                "price_over_market_ratio"
            ),
        )
        parts.append(part)
    out = pl.concat(parts, how="diagonal_relaxed")
    out = out.with_columns(pl.col("provider").n_unique().over("arch_model", "component").alias("n_sellers"))
    return out.select(IMPLIED_MARGINS.names).with_columns(pl.col(pl.Float64).fill_nan(None)).sort(KEY)


def run(ctx) -> None:
    frame = table(
        ctx.query(CURRENT_SQL),
        ctx.query("select * from markup_costs"),
        ctx.query("select * from fit_markups"),
    )
    ctx.write(IMPLIED_MARGINS, frame)
