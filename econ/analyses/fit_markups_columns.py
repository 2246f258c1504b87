"""Declarations of the markup model's tables (``fit_markups``, ``fit_markup_rows``, ``fit_markup_quantities``), their
units and cost bases, and the names of the cost reading's validation evidence (:mod:`econ.analyses.fit_markups`)."""

from __future__ import annotations

from econ.analyses import markup_costs
from econ.analyses.validation_evidence import evidence_columns, quantities_table
from econ.fits import markups, validation
from econ.results import ResultColumn as C
from econ.results import ResultTable

UNITS = {
    "long_context_input": "USD/MTok per MTok of context",
    "long_context_output": "USD/MTok per MTok of context",
    "cache_storage": "USD/MTok/hour",
}
COST_BASIS = {
    "input": "prefill per uncached prompt token at the traffic mix",
    "output": "decode per generated token at the batch meeting the tokens/s-per-user target",
    "cache_read": "reading the token's KV back from the ddr tier",
    "cache_write": "the input cost plus holding the KV in the ddr tier for the duration sold",
    "cache_storage": "holding the KV in the ddr tier for an hour",
    "long_context_input": "the deployment model's prefill cost slope over the tiers' contexts",
    "long_context_output": "the deployment model's decode KV cost slope over the tiers' contexts",
}
KEY = ("source", "provider", "model", "from_date", "price_column")
EVIDENCE = {
    "implied_value": "read_cost_value",
    "log_ratio": "log_ratio",
    "implied_over_true_ratio": "implied_over_true_ratio",
    "scenario_interval_covers_true": "scenario_interval_covers_true",
    "correction_factor_ratio": "correction_factor_ratio",
    "interval_covers_true": "interval_covers_true",
    "baseline_value": "baseline_cost_value",
    "baseline_low_value": "baseline_cost_low_value",
    "baseline_high_value": "baseline_cost_high_value",
    "interval_score_log": "interval_score_log",
    "baseline_interval_score_log": "baseline_interval_score_log",
}
"""The cost reading's validation evidence on ``fit_markup_rows``' open rows
(:mod:`econ.analyses.validation_evidence`)."""


def quantity(component: str) -> str:
    """The inference_quantities name of a component's cost reading."""
    return f"serving_cost_from_{component}_price"


FIT_MARKUP_ROWS = ResultTable(
    name="fit_markup_rows",
    grain="price row (source x seller x price key x period, base tier, standard) x price component",
    key=KEY,
    description=(
        "Every price of every open model the deployment model serves (all sellers, sources and snapshots) and every "
        "closed model's current first-party price, per component: the price, the calibrated cost it is set against "
        "(open models), ln(price/cost), the cost read back from the price by the markup model (open models: their "
        "own model left out) and its validated interval (econ.fits.validation) with, on open rows, the evidence of "
        "that check (the status: fit_markup_quantities, inference_quantities)"
    ),
    columns=(
        C("source", "str", "", "key", "Price source (hand, litellm, openrouter)"),
        C("provider", "str", "", "key", "Seller"),
        C("model", "str", "", "key", "Price key as the seller names it"),
        C("from_date", "date", "", "key", "First day of the price's period"),
        C("price_column", "str", "", "key", "prices column (or the tiers' slope) the component is read from"),
        C("component", "str", "", "label", "Price component (econ.fits.markups.COMPONENTS)"),
        C("unit", "str", "", "label", "Unit of the price and cost columns"),
        C("arch_model", "str", "", "input", "Open model behind the price (null: closed)"),
        C("provider_kind", "str", "", "input", "first_party, reseller, or null for a closed model"),
        C("price_value", "float", "(unit column)", "input", "The list price of the component"),
        C(
            "cost_value",
            "float",
            "(unit column)",
            "calibrated",
            "Calibrated serving cost (markup_costs)",
            markup_costs.chip_costs,
        ),
        C(
            "cost_shared_error_ratio",
            "float",
            "",
            "calibrated",
            "The calibrated cost's error shared by every model: exp|median held-out log ratio| of the published "
            "throughputs (calibration_errors: throughput, model_out); the reading's interval holds it too "
            "(econ.fits.validation.widened); 1 where not measured in this database",
            validation.shared_truth_error_log,
        ),
        C("log_markup_ratio", "float", "", "derived", "ln(price/cost)", markups.fit),
        C(
            "predicted_markup_ratio",
            "float",
            "",
            "fit",
            "exp(mu_component + gamma*reseller) of the fit without the row's own model (every open model for a "
            "closed one)",
            markups.left_out,
        ),
        C(
            "implied_cost_value",
            "float",
            "(unit column)",
            "inference",
            "The cost read from the price, published (corrected by the validation rule where its bias is significant)",
            validation.validate,
        ),
        C(
            "implied_cost_low_value",
            "float",
            "(unit column)",
            "inference",
            "Validated interval, low",
            validation.left_out,
        ),
        C(
            "implied_cost_high_value",
            "float",
            "(unit column)",
            "inference",
            "Validated interval, high",
            validation.left_out,
        ),
        *evidence_columns(EVIDENCE, "(unit column)", "The cost reading"),
    ),
)

FIT_MARKUPS = ResultTable(
    name="fit_markups",
    grain="price component",
    key=("component",),
    description=(
        "The markup model ln(price/cost) = mu_component + gamma*[reseller] over every price of the open models the "
        "deployment model serves (each architecture group x component weighing 1, left out whole): the maker's "
        "markup per component, the resellers' factor, the prediction interval a new model's markup gets (from the "
        "left-out spread); the validation of the costs it reads back from prices is fit_markup_quantities "
        "(inference_quantities)"
    ),
    columns=(
        C("component", "str", "", "key", "Price component"),
        C("cost_basis", "str", "", "label", "What the component's price is set against"),
        C("markup_ratio", "float", "", "fit", "exp(mu): price over calibrated cost of a model's maker", markups.fit),
        C(
            "reseller_markup_ratio",
            "float",
            "",
            "fit",
            "exp(mu + gamma): the same for a reseller (gamma shared by the components)",
            markups.fit,
        ),
        C(
            "gross_margin_frac",
            "float",
            "",
            "fit",
            "1 - 1/markup of a maker: the share of its price above the calibrated cost",
            markups.implied_margin,
        ),
        C(
            "markup_low_ratio",
            "float",
            "",
            "fit",
            "Prediction interval of a new model's maker markup, low (the validated interval of its cost reading)",
            validation.left_out,
        ),
        C("markup_high_ratio", "float", "", "fit", "The same, high", validation.left_out),
        C("n_models", "int", "", "check", "Open models with a price of the component"),
        C(
            "n_architecture_groups",
            "int",
            "",
            "check",
            "Their architecture groups (model_derived.architecture_group): the unit left out, weighed and counted",
        ),
        C("n_rows", "int", "", "check", "Price rows (sellers x sources x snapshots)"),
        C("n_sellers", "int", "", "check", "Distinct sellers of the open models"),
        C("quantity", "str", "", "label", "The cost reading's name in inference_quantities"),
    ),
)
LABELS = {
    quantity(c): (
        "fit_markup_rows",
        UNITS.get(c, "USD/MTok"),
        f"{c.replace('_', ' ')} price over the markup model's markup (left out) -> serving cost ({COST_BASIS[c]})",
        "reading",
    )
    for c in markups.COMPONENTS
}
"""quantity -> (table, unit, what is read from what, role): the labels of its ``fit_markup_quantities`` row."""
FIT_MARKUP_QUANTITIES = quantities_table("fit_markup_quantities", "fit_markup_rows")
