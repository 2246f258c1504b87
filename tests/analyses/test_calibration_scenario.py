"""The calibrated scenario carries what the calibration fitted to where econ predict, econ fleet and the serving tables
time a step."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_scenario import FIELDS, calibrated
from econ.analyses.scenario import load_scenario
from econ.fits.calibration_features import Step, step_seconds
from econ.fits.calibration_grad import STEP_PARAMETERS
from econ.physics import deployment
from tests.analyses.helpers import deepseek_v3_h800_dep16


def test_the_calibrated_scenario_times_a_step_as_the_fit_that_made_it(real_db):
    """Two paths time one step: the fit re-times each run's terms at its parameters (``step_seconds`` of
    ``Step.from_terms``), while econ predict, econ fleet and the serving tables run ``decode_terms`` at the calibrated
    scenario's settings (``calibration_scenario.FIELDS`` -> ``deployment_inputs.settings``). At the shared fitted
    values they must agree: a parameter the fit times but the scenario does not carry (the routed experts' HBM share
    had to be wired through four modules) would time the scenario's steps otherwise. DeepSeek-V3 on H800 reads dense,
    expert and cache bytes, computes experts' FLOPs and communicates, at batches from memory- to compute-bound."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        base = load_scenario(con, "base")
        parameters = con.sql("select * from calibration_parameters").pl()
    s = calibrated(base, parameters)
    assert set(STEP_PARAMETERS) <= set(FIELDS)  # every parameter of a step has a scenario field
    model, chip, layout = deepseek_v3_h800_dep16(real_db)
    batch = np.array([4.0, 256.0, 4096.0])
    settings = inputs.settings(s, "decode", 1.0)
    scenario_step = deployment.decode_terms(model, chip, layout, batch, 4000.0, settings=settings)
    ideal = {k: settings[k] for k in ("weight_bytes_per_param", "activation_bytes", "dispatch_bytes")}
    terms = deployment.decode_terms(model, chip, layout, batch, 4000.0, settings=ideal)
    fitted = {parameter: np.full(batch.shape, float(getattr(s, fields[0]))) for parameter, fields in FIELDS.items()}
    assert all(np.isfinite(fitted[p]).all() for p in STEP_PARAMETERS)  # fitted, not base's NaN or bound
    fit_step = step_seconds(Step.from_terms(terms), fitted)
    assert scenario_step["kernel_step_time_s"] == pytest.approx(fit_step, rel=1e-9)
