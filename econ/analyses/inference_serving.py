"""The deployment model the price inferences price open models with: each open model on the scenario's chip and
weight format at its reference layout, with the scenario's run settings.

Selection and joins only: the architecture is ``model_derived``, the chip ``hardware`` / ``hardware_derived``,
the layout :func:`econ.physics.layout_search.default_layout` (the one ``serving_curves`` uses) and the
efficiencies those of :func:`econ.analyses.inference_efficiencies.serving_scenario`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs
from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.scenario import Scenario
from econ.physics import deployment, layout_search

INPUTS = ("models", "model_derived", "hardware", "hardware_derived", "scenarios")
"""What :func:`serving` reads (an analysis that calls it lists these among its own INPUTS)."""


@dataclass(frozen=True)
class Serving:
    """Open models at the scenario chip × format, one row per model with its default layout (``cases``)."""

    scenario: Scenario
    cases: pl.DataFrame

    @property
    def kv_scale(self) -> float:
        return deployment_inputs.cache_scale(self.scenario)

    def rows(self, arch_models) -> tuple[np.ndarray, dict, dict, dict, np.ndarray]:
        """For ``arch_models`` (one per price row): which have a modelled deployment, and the model, chip and
        layout arrays and the bytes per weight of those rows, in order."""
        index = {m: i for i, m in enumerate(self.cases["model"].to_list())}
        wanted = list(arch_models)
        have = np.array([m in index for m in wanted], dtype=bool)
        picked = self.cases[[index[m] for m, h in zip(wanted, have) if h]]
        model = deployment_inputs.model_arrays(picked)
        chip = deployment_inputs.chip_arrays(picked)
        layout = {k: picked[k].to_numpy() for k in deployment.LAYOUT_KEYS}
        return have, model, chip, layout, picked["weight_bytes_per_param"].to_numpy().astype(float)

    def settings(self, pool: str, weight_bytes_per_param) -> dict:
        """The scenario's run settings of a pool (decode or prefill), one bytes-per-weight per row."""
        return deployment_inputs.settings(self.scenario, pool, weight_bytes_per_param)


def serving_from(scenario: Scenario, cases: pl.DataFrame) -> Serving:
    """:class:`Serving` of a scenario over ``deployment_inputs.CASES_SQL`` rows: the scenario's chip and weight
    format, each model at its default layout (a model with none that fits is left out)."""
    rows = cases.filter((pl.col("chip") == scenario.serving_chip) & (pl.col("number_format") == scenario.weight_format))
    if rows.height == 0:
        return Serving(scenario, rows)
    layout = layout_search.default_layout(
        deployment_inputs.model_arrays(rows),
        deployment_inputs.chip_arrays(rows),
        weight_bytes_per_param=rows["weight_bytes_per_param"].to_numpy(),
        context_tokens=scenario.context_tokens,
        kv_scale=deployment_inputs.cache_scale(scenario),
        hbm_reserve_frac=scenario.hbm_reserve_frac,
    )
    with_layout = rows.with_columns(pl.Series(k, layout[k]) for k in deployment.LAYOUT_KEYS)
    return Serving(scenario, with_layout.filter(pl.col("tensor_parallel").is_not_nan()))


def serving(ctx) -> Serving:
    """The open models' deployments for the price inferences of the database being built."""
    base = ctx.scenario("base")
    scenario = serving_scenario(base, base.serving_chip, ctx.con)
    return serving_from(scenario, ctx.query(deployment_inputs.CASES_SQL))
