"""The one door through which the price inferences get their serving efficiencies.

Every price inference (``fit_context_tiers``, ``fit_io_prices``, ``fit_io_market``, ``fit_cache_tiers``,
``fit_fast_mode``, ``inference_validation`` through them) reads the decode and prefill mfu/mbu, the link
bandwidth fraction and the per-step overhead from the scenario this function returns: scenario ``calibrated``
(issue 14: efficiencies fitted to measured operating points) with the serving chip's architecture family's values
where the calibration fitted them, and the calibration's intervals as the ranges the scenario interval draws from.
An analysis that calls it lists ``calibration_parameters`` among its INPUTS (``pricing_inputs.INPUTS``).
"""

from __future__ import annotations

import dataclasses
import math

import polars as pl

from econ.analyses.calibration_scenario import FIELDS, calibrated, has_calibration
from econ.analyses.scenario import Assumption, Scenario


def _architecture(con, chip: str) -> str | None:
    rows = con.execute("select architecture from hardware where chip = ?", [chip]).fetchall()
    return rows[0][0] if rows else None


def _finite(x) -> bool:
    return x is not None and math.isfinite(x)


def serving_scenario(scenario: Scenario, chip: str, con) -> Scenario:
    """The scenario whose efficiencies the price inferences use on ``chip``.

    With a calibration in the database: :func:`econ.analyses.calibration_scenario.calibrated` of ``scenario``, each
    efficiency field set to the value fitted for ``chip``'s architecture family (else the shared value), and its
    range (what the scenario interval varies) the calibration's interval. Without one (a database built before the
    calibration, or a test without measured points) the stated scenario itself, whose ``efficiency_basis`` says
    what its efficiencies are (``bound`` for scenario base).
    """
    if con is None or not has_calibration(con):
        return scenario
    params = pl.DataFrame(
        con.sql(  # the shared values, the chip architectures' and the attention kinds' (no engine or serving mode's)
            'select parameter, group_kind, "group", family, estimate, low, high from calibration_parameters '
            "where coalesce(group_kind, '') in ('', 'architecture', 'attention')"
        )
    )
    params = params.filter(params["estimate"].is_not_null() & params["estimate"].is_finite())
    if params.height == 0:
        return scenario
    cal = calibrated(scenario, params)
    family = _architecture(con, chip)
    rows = {(r["parameter"], r["family"]): r for r in params.iter_rows(named=True)}
    values, assumptions = {}, dict(cal.assumptions)
    for parameter, fields in FIELDS.items():
        row = rows.get((parameter, family or "")) or rows.get((parameter, ""))
        if row is None:
            continue
        low = row["low"] if _finite(row["low"]) else row["estimate"]
        high = row["high"] if _finite(row["high"]) else row["estimate"]
        where = f"{family} chips" if (parameter, family or "") in rows and family else "shared"
        for f in fields:
            values[f] = float(row["estimate"])
            old = assumptions.get(f)
            assumptions[f] = Assumption(
                name=f,
                value=float(row["estimate"]),
                text=None,
                unit=old.unit if old is not None else "",
                low=float(min(low, row["estimate"])),
                high=float(max(high, row["estimate"])),
                alternatives=(),
                rationale=f"calibrated to measured operating points (calibration_parameters.{parameter}, {where})",
                source_url=old.source_url if old is not None else "",
            )
    return dataclasses.replace(cal, **values, assumptions=assumptions)
