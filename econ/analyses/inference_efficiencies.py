"""The one door through which the price inferences get their serving efficiencies.

Every price inference (``fit_context_tiers``, ``fit_io_prices``, ``fit_io_market``, ``fit_cache_tiers``,
``fit_fast_mode``, ``inference_validation`` through them) reads the decode and prefill mfu/mbu, the link
bandwidth fraction and the per-step overhead from the scenario this function returns, so that the calibration
(issue 14: efficiencies fitted to measured operating points, per chip family) reaches all of them with one change.
"""

from __future__ import annotations

from econ.analyses.scenario import Scenario


def serving_scenario(scenario: Scenario, chip: str, con) -> Scenario:
    """The scenario whose efficiencies the price inferences use on ``chip``.

    For now the stated scenario itself (the efficiencies of ``data/scenarios.csv``, ranges included).
    """
    # TODO(issue 14): return calibrated(scenario, chip, con.sql("select * from calibration_parameters").pl())
    # (econ.analyses.calibration_scenario.calibrated), and add calibration_parameters to the INPUTS of the
    # analyses that call this (pricing_inputs.INPUTS).
    del chip, con
    return scenario
