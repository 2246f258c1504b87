"""The calibrated scenario carries what the calibration fitted to where econ predict, econ fleet and the serving tables
time a step."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_scenario import FIELDS, all_scenarios, calibrated
from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.inference_serving import serving_from
from econ.analyses.scenario import load_scenario
from econ.fits import calibration as cal
from econ.fits.calibration_features import Step, step_seconds
from econ.fits.calibration_grad import STEP_PARAMETERS
from econ.physics import deployment
from tests.analyses.helpers import deepseek_v3_h800_dep16


def _timed_both_ways(real_db, pool: str, batch: np.ndarray, tokens: float):
    """The calibrated scenario; the time of a ``pool`` step (``decode_terms`` at a context, ``prefill_terms`` of
    prompts of ``tokens``) of DeepSeek-V3 on H800 at the scenario's settings; the same step's terms at ideal settings
    (``Step``); and the shared fitted value of each calibration parameter, per batch."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        base = load_scenario(con, "base")
        parameters = con.sql("select * from calibration_parameters").pl()
    s = calibrated(base, parameters)
    model, chip, layout = deepseek_v3_h800_dep16(real_db)
    terms_of = deployment.decode_terms if pool == "decode" else deployment.prefill_terms
    settings = inputs.settings(s, pool, 1.0)
    scenario_step = terms_of(model, chip, layout, batch, tokens, settings=settings)
    ideal = {k: settings[k] for k in ("weight_bytes_per_param", "activation_bytes", "dispatch_bytes")}
    terms = terms_of(model, chip, layout, batch, tokens, settings=ideal)
    fitted = {parameter: np.full(batch.shape, float(getattr(s, fields[0]))) for parameter, fields in FIELDS.items()}
    return s, scenario_step["kernel_step_time_s"], Step.from_terms(terms), fitted


def test_the_calibrated_scenario_times_a_step_as_the_fit_that_made_it(real_db):
    """Two paths time one step: the fit re-times each run's terms at its parameters (``step_seconds`` of
    ``Step.from_terms``), while econ predict, econ fleet and the serving tables run ``decode_terms`` at the calibrated
    scenario's settings (``calibration_scenario.FIELDS`` -> ``deployment_inputs.settings``). At the shared fitted
    values they must agree: a parameter the fit times but the scenario does not carry (the routed experts' HBM share
    had to be wired through four modules) would time the scenario's steps otherwise. DeepSeek-V3 on H800 reads dense,
    expert and cache bytes, computes experts' FLOPs and communicates, at batches from memory- to compute-bound."""
    assert set(STEP_PARAMETERS) <= set(FIELDS)  # every parameter of a step has a scenario field
    _, scenario_step, step, fitted = _timed_both_ways(real_db, "decode", np.array([4.0, 256.0, 4096.0]), 4000.0)
    assert all(np.isfinite(fitted[p]).all() for p in STEP_PARAMETERS)  # fitted, not base's NaN or bound
    assert scenario_step == pytest.approx(step_seconds(step, fitted), rel=1e-9)


def test_the_calibrated_scenario_times_a_prefill_pass_as_the_fit_that_made_it(real_db):
    """The same for a prefill pass: the fit times its dense GEMMs at ``prefill_gemm_mfu_frac``
    (``calibration_features.prefill_parameters``), the scenario's prefill pool at ``prefill_mfu_frac``; a decode
    step alone stays at ``gemm_mfu_frac`` (``decode_mfu_frac``). Compute-bound passes of 1 to 64 prompts of 2,000
    tokens, where the two GEMM shares differ (0.63 against 0.84 fitted)."""
    s, scenario_pass, step, fitted = _timed_both_ways(real_db, "prefill", np.array([1.0, 8.0, 64.0]), 2000.0)
    assert s.prefill_mfu_frac != s.decode_mfu_frac
    fit_pass = step_seconds(step, cal.prefill_parameters(fitted))
    assert scenario_pass == pytest.approx(fit_pass, rel=1e-9)
    decode_timed = step_seconds(step, fitted)  # at the decode steps' share: a different time
    assert not np.allclose(decode_timed, fit_pass, rtol=1e-3)


def test_a_models_attention_kind_times_its_attention_at_that_kinds_fitted_share(real_db):
    """The fit moves the attention share by the model's attention kind (``calibration.OFFSETS["attention"]``; on the
    shipped runs MLA ~0.38, hybrid ~0.42, GQA ~0.51 of peak). The calibrated scenario that econ predict, econ fleet,
    the serving tables and the price inferences time a step with must take each kind's value as
    ``calibration_parameters`` states it (``row_parameters`` reads the offsets, ``calibration_tables`` wrote the
    value), time DeepSeek-V3 (MLA) at MLA's share as the fit does, and give a kind no run measured (DeepSeek-V4's
    compressed attention) the shared share. A decode step at 32k context, where attention is a large part."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        s = all_scenarios(con)["calibrated"]
        sql = "select \"group\", estimate from calibration_parameters where group_kind = 'attention'"
        stated = dict(con.sql(sql).fetchall())
    assert set(stated) == {"gqa", "hybrid", "mla"}
    kinds = np.array(sorted(stated) + ["csa"], dtype=object)
    shares = inputs.settings(s, "decode", 1.0, None, kinds)["attention_mfu"]
    assert shares == pytest.approx([stated[k] for k in sorted(stated)] + [s.attention_mfu_frac], rel=1e-9)
    assert stated["mla"] < s.attention_mfu_frac < stated["gqa"]  # the kinds differ: the offset does work

    model, chip, layout = deepseek_v3_h800_dep16(real_db)
    batch = np.array([8.0, 256.0])
    settings = inputs.settings(s, "decode", 1.0, None, np.array(["mla"], dtype=object))
    scenario_step = deployment.decode_terms(model, chip, layout, batch, 32_000.0, settings=settings)
    ideal = {k: settings[k] for k in ("weight_bytes_per_param", "activation_bytes", "dispatch_bytes")}
    step = Step.from_terms(deployment.decode_terms(model, chip, layout, batch, 32_000.0, settings=ideal))
    fitted = {parameter: np.full(batch.shape, float(getattr(s, fields[0]))) for parameter, fields in FIELDS.items()}
    fitted["attention_mfu_frac"] = np.full(batch.shape, stated["mla"])
    assert scenario_step["kernel_step_time_s"] == pytest.approx(step_seconds(step, fitted), rel=1e-9)
    fitted["attention_mfu_frac"] = np.full(batch.shape, s.attention_mfu_frac)
    assert not np.allclose(scenario_step["kernel_step_time_s"], step_seconds(step, fitted), rtol=1e-3)


def test_the_price_inferences_deployment_times_each_models_attention_at_its_kinds_share(real_db):
    """The price inferences (context tiers, traffic costs, fast mode) time their deployments through
    ``inference_serving.Serving``, whose settings passed neither the chip's family nor the model's kind: DeepSeek-V3
    (MLA), Llama-3.1-70B (GQA) and gpt-oss-120b (hybrid) on the scenario's chip must take the shares
    ``calibration_parameters`` states for their kinds, in the order asked, and a picked row's own bytes per weight."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        base = load_scenario(con, "base")
        deployed = serving_from(serving_scenario(base, base.serving_chip, con), con.sql(inputs.CASES_SQL).pl())
        stated = dict(
            con.sql("select \"group\", estimate from calibration_parameters where group_kind = 'attention'").fetchall()
        )
    models = ["gpt-oss-120b", "DeepSeek-V3", "Llama-3.1-70B", "DeepSeek-V3"]
    settings = deployed.settings("decode", models, (-1, 1))
    assert settings["attention_mfu"].shape == (4, 1)
    want = [stated["hybrid"], stated["mla"], stated["gqa"], stated["mla"]]
    assert settings["attention_mfu"][:, 0] == pytest.approx(want, rel=1e-9)
    assert settings["weight_bytes_per_param"][:, 0] == pytest.approx(deployed.rows(models)[4], rel=0)
