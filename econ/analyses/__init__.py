"""Analyses: each module writes the result tables its name says (its ``TABLES`` declarations).

:data:`ORDER` (:func:`analyses`, the modules) is the build order: an analysis may read the result tables of earlier
ones (its ``INPUTS`` say which). Helper modules (``scenario``, ``inputs``, ``pricing_inputs``, ``fleet_inputs``,
``traffic``, ``*_columns``, ``*_tables``, ``fleet_command``, ``runner``) write no table.
"""

from __future__ import annotations

import importlib
from types import ModuleType

ORDER: tuple[str, ...] = (
    "model_derived",
    "hardware_derived",
    "calibration",
    "model_catalog",
    "price_ratios",
    "price_history",
    "price_timeline",
    "serving",
    "serving_layouts",
    "network_ratios",
    "attention_crossover",
    "memory_tier_costs",
    "fast_mode_identity",
    "fit_context_tiers",
    "fit_io_prices",
    "fit_io_market",
    "fit_cache_tiers",
    "fit_fast_mode",
    "markup_costs",
    "fit_markups",
    "implied_margins",
    "markup_inversions",
    "scaling_law_fits",
    "compute_optimal",
    "token_balance",
    "sardana_optimum",
    "overtraining",
    "fleet_plan",
    "training_fleet",
    "price_changes",
    "inferred_changes",
    "billing_example_bills",
)
"""The analyses' module names in build order."""


def analyses() -> list[ModuleType]:
    """The analysis modules in build order (imported on first use: a command that needs one analysis, such as econ
    predict, does not import them all)."""
    return [importlib.import_module(f"econ.analyses.{name}") for name in ORDER]


def declared_tables():
    """(analysis name, declaration) of every result table, in build order."""
    return [(module.NAME, table) for module in analyses() for table in module.TABLES]
