"""Analyses: each module writes the result tables its name says (its ``TABLES`` declarations).

``ANALYSES`` is the build order: an analysis may read the result tables of earlier ones (its ``INPUTS``
say which). Helper modules (``scenario``, ``inputs``, ``pricing_inputs``, ``fleet_inputs``, ``traffic``,
``*_columns``, ``*_tables``, ``fleet_command``, ``runner``) write no table.
"""

from __future__ import annotations

from econ.analyses import (
    attention_crossover,
    billing_example_bills,
    calibration,
    compute_optimal,
    fast_mode_identity,
    fit_cache_tiers,
    fit_context_tiers,
    fit_fast_mode,
    fit_io_market,
    fit_io_prices,
    fit_markups,
    fleet_plan,
    hardware_derived,
    implied_margins,
    inference_validation,
    inferred_changes,
    markup_costs,
    markup_inversions,
    memory_tier_costs,
    model_catalog,
    model_derived,
    network_ratios,
    overtraining,
    price_changes,
    price_history,
    price_ratios,
    price_timeline,
    sardana_optimum,
    scaling_law_fits,
    serving,
    serving_layouts,
    token_balance,
    training_fleet,
)

ANALYSES: list = [
    model_derived,
    hardware_derived,
    calibration,
    model_catalog,
    price_ratios,
    price_history,
    price_timeline,
    serving,
    serving_layouts,
    network_ratios,
    attention_crossover,
    memory_tier_costs,
    fast_mode_identity,
    fit_context_tiers,
    fit_io_prices,
    fit_io_market,
    fit_cache_tiers,
    fit_fast_mode,
    markup_costs,
    fit_markups,
    implied_margins,
    markup_inversions,
    inference_validation,
    scaling_law_fits,
    compute_optimal,
    token_balance,
    sardana_optimum,
    overtraining,
    fleet_plan,
    training_fleet,
    price_changes,
    inferred_changes,
    billing_example_bills,
]


def declared_tables():
    """(analysis name, declaration) of every result table, in build order."""
    return [(module.NAME, table) for module in ANALYSES for table in module.TABLES]
