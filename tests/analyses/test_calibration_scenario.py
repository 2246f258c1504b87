"""The calibrated scenario carries what the calibration fitted to where econ predict, econ fleet and the serving tables
time a step."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_scenario import FIELDS, calibrated
from econ.analyses.scenario import load_scenario
from econ.fits import calibration as cal
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


def test_the_calibrated_scenario_times_a_prefill_pass_as_the_fit_that_made_it(real_db):
    """The same for a prefill pass: the fit times its dense GEMMs at ``prefill_gemm_mfu_frac``
    (``calibration_features.prefill_parameters``), the scenario's prefill pool at ``prefill_mfu_frac``; a decode
    step alone stays at ``gemm_mfu_frac`` (``decode_mfu_frac``). Compute-bound passes of 1 to 64 prompts of 2,000
    tokens, where the two GEMM shares differ (0.63 against 0.84 fitted)."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        base = load_scenario(con, "base")
        parameters = con.sql("select * from calibration_parameters").pl()
    s = calibrated(base, parameters)
    assert s.prefill_mfu_frac != s.decode_mfu_frac
    model, chip, layout = deepseek_v3_h800_dep16(real_db)
    batch = np.array([1.0, 8.0, 64.0])
    settings = inputs.settings(s, "prefill", 1.0)
    scenario_pass = deployment.prefill_terms(model, chip, layout, batch, 2000.0, settings=settings)
    ideal = {k: settings[k] for k in ("weight_bytes_per_param", "activation_bytes", "dispatch_bytes")}
    terms = deployment.prefill_terms(model, chip, layout, batch, 2000.0, settings=ideal)
    fitted = {parameter: np.full(batch.shape, float(getattr(s, fields[0]))) for parameter, fields in FIELDS.items()}
    fit_pass = step_seconds(Step.from_terms(terms), cal.prefill_parameters(fitted))
    assert scenario_pass["kernel_step_time_s"] == pytest.approx(fit_pass, rel=1e-9)
    decode_timed = step_seconds(Step.from_terms(terms), fitted)  # at the decode steps' share: a different time
    assert not np.allclose(decode_timed, fit_pass, rtol=1e-3)
