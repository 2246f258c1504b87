"""The calibration: a synthetic round trip recovers known efficiencies; predictions stay physical away from the data.

The problem is built from the shipped measured points (their real layouts, models and chips) by the analysis's own
builder; the measured values are replaced by values generated at known efficiencies, so the fit's answer is known.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest

from econ.analyses import calibration as analysis
from econ.analyses import deployment_inputs as inputs
from econ.fits import calibration as cal
from econ.physics import deployment

TRUE = {
    "prefill_mfu_frac": 0.55,
    "decode_mfu_frac": 0.25,
    "expert_mfu_frac": 0.09,
    "hbm_bandwidth_frac": 0.75,
    "link_bandwidth_frac": 0.4,
    "step_overhead_s": 0.002,
}


@pytest.fixture(scope="module")
def shipped(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        p = con.sql(analysis.POINTS_SQL).pl()
        models = con.sql("select * from model_derived where kv_bytes_per_token is not null").pl()
        hw = con.sql(
            "select chip, hbm_capacity_bytes, hbm_bandwidth_bytes_per_s, scale_up_domain_chips, "
            "scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s from hardware"
        ).pl()
        included = con.sql("select point_id from calibration_points where included").pl()["point_id"].to_list()
    p = p.join(hw, on="chip", how="left").filter(pl.col("point_id").is_in(included)).sort("point_id")
    return analysis.problem(p, models, 0.1)


def _coords(values: dict, problem) -> np.ndarray:
    return np.concatenate([cal._unconstrained(values), np.zeros(len(cal.PER_FAMILY) * len(problem.families))])


def _with_measured(problem, log_measured):
    return cal.Problem(**{**problem.__dict__, "log_measured": log_measured})


def test_round_trip_recovers_known_efficiencies(shipped):
    z = _coords(TRUE, shipped)
    clean = np.log(cal.predict(shipped, cal.efficiencies(z, shipped))["value"])
    noise = np.random.default_rng(0).normal(0.0, 0.05, shipped.n)  # 5% measurement noise
    result = cal.fit_calibration(_with_measured(shipped, clean + noise))
    fitted = {r["parameter"]: r["estimate"] for r in cal.natural(result, shipped) if not r["family"]}
    assert result.status == "ok", result.message
    for name in ("prefill_mfu_frac", "decode_mfu_frac", "expert_mfu_frac", "hbm_bandwidth_frac", "link_bandwidth_frac"):
        assert fitted[name] == pytest.approx(TRUE[name], rel=0.15), name
    assert fitted["step_overhead_s"] == pytest.approx(TRUE["step_overhead_s"], rel=0.3)
    pred = np.log(cal.predict(shipped, cal.efficiencies(cal.usable(result), shipped))["value"])
    assert np.median(np.abs(pred - clean)) < 0.05


def test_a_term_that_never_binds_is_not_identified(shipped):
    """With links nearly free, communication never sets a step: the wrapper says so instead of guessing."""
    z = _coords({**TRUE, "link_bandwidth_frac": 0.999}, shipped)
    clean = np.log(cal.predict(shipped, cal.efficiencies(z, shipped))["value"])
    result = cal.fit_calibration(_with_measured(shipped, clean))
    assert result.status == "rank_deficient" and "link_bandwidth_frac" in result.message
    assert np.isnan(result["link_bandwidth_frac"])


def test_cross_validation_of_clean_data_is_near_exact(shipped):
    z = _coords(TRUE, shipped)
    clean = np.log(cal.predict(shipped, cal.efficiencies(z, shipped))["value"])
    problem = _with_measured(shipped, clean)
    held_out = cal.cross_validate(problem, cal.fit_calibration(problem))
    assert np.median(np.abs(held_out)) < 0.05


def test_predictions_never_exceed_the_bound(shipped):
    bound = cal.predict(shipped, cal.idealised(shipped))["value"]
    rng = np.random.default_rng(1)
    for _ in range(20):
        values = {k: (rng.uniform(1e-4, 0.01) if k == "step_overhead_s" else rng.uniform(0.02, 1.0)) for k in TRUE}
        z = _coords(values, shipped)
        z[len(cal.SHARED) :] = rng.normal(0.0, 0.5, z.size - len(cal.SHARED))  # family offsets, capped at 1
        value = cal.predict(shipped, cal.efficiencies(z, shipped))["value"]
        assert np.all(value <= bound * (1 + 1e-9))


def _llama_and_deepseek(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        cases = con.sql(inputs.CASES_SQL).pl()
    return cases.filter(
        pl.col("model").is_in(["Llama-3.1-70B", "DeepSeek-V3"])
        & pl.col("chip").is_in(["H100", "B200"])
        & (pl.col("number_format") == "fp8")
    )


SETTINGS = {"mfu": 0.3, "expert_mfu": 0.12, "mbu": 0.7, "link_frac": 0.6, "step_overhead_s": 0.002}


def _terms(cases, batch, context, settings):
    n = cases.height
    model = {k: v[:, None, None] for k, v in inputs.model_arrays(cases).items()}
    chip = {k: v[:, None, None] for k, v in inputs.chip_arrays(cases).items()}
    tp = np.where(cases["num_routed_experts"].is_null().to_numpy(), 8.0, 1.0)[:, None, None]
    dp = 8.0 / tp
    layout = {
        "tensor_parallel": tp,
        "attention_data_parallel": dp,
        "pipeline_parallel": np.ones((n, 1, 1)),
        "replicate_attention": dp > 1,
        "replicate_shared_experts": dp > 1,
        "replicate_dense": dp > 1,
        "replicate_embeddings": dp > 1,
        "redundant_expert_slots": np.zeros((n, 1, 1)),
    }
    run = {"weight_bytes_per_param": 1.0, "dispatch_bytes": 1.0, **settings}
    return deployment.decode_terms(model, chip, layout, batch, context, settings=run)


def test_calibrated_decode_is_monotone_in_batch_and_context(real_db):
    """Away from the data: per-chip throughput never falls and per-user speed never rises as the batch grows;
    the step never shortens as the context grows (at calibrated-like efficiencies)."""
    cases = _llama_and_deepseek(real_db)
    batch = np.geomspace(1, 4096, 25)[None, :, None]
    context = np.geomspace(256, 131_072, 12)[None, None, :]
    out = _terms(cases, batch, context, SETTINGS)
    chip_rate, user_rate, step = out["tokens_per_s_per_chip"], out["tokens_per_s_per_user"], out["step_time_s"]
    assert np.all(np.diff(chip_rate, axis=1) >= -1e-9 * chip_rate[:, 1:])
    assert np.all(np.diff(user_rate, axis=1) <= 1e-9 * user_rate[:, 1:])
    assert np.all(np.diff(step, axis=2) >= -1e-12)


def test_calibrated_throughput_never_exceeds_the_idealised_bound(real_db):
    cases = _llama_and_deepseek(real_db)
    batch = np.geomspace(1, 4096, 25)[None, :, None]
    context = np.geomspace(256, 131_072, 12)[None, None, :]
    calibrated = _terms(cases, batch, context, SETTINGS)["tokens_per_s_per_chip"]
    bound = _terms(cases, batch, context, {})["tokens_per_s_per_chip"]
    assert np.all(calibrated <= bound * (1 + 1e-12))
    assert np.all(calibrated < bound)  # an overhead and efficiencies below 1 always cost something


def test_the_split_compute_time_matches_the_deployment_model(real_db):
    """decode_terms' compute time is compute_time_s of its own FLOP columns (the fit re-times them this way)."""
    cases = _llama_and_deepseek(real_db)
    batch = np.geomspace(1, 4096, 9)[None, :, None]
    out = _terms(cases, batch, np.array(4096.0).reshape(1, 1, 1), SETTINGS)
    chip = {k: v[:, None, None] for k, v in inputs.chip_arrays(cases).items()}
    again = deployment.compute_time_s(
        out["weight_flop_per_chip"],
        out["expert_flop_per_chip"],
        out["attention_flop_per_chip"],
        chip["peak_flop_per_s"],
        chip["attention_peak_flop_per_s"],
        SETTINGS["mfu"],
        SETTINGS["expert_mfu"],
    )
    np.testing.assert_allclose(out["compute_time_s"], again, rtol=1e-12)
    at_peak = _terms(cases, batch, np.array(4096.0).reshape(1, 1, 1), {})
    np.testing.assert_allclose(out["memory_time_s"], at_peak["memory_time_s"] / SETTINGS["mbu"], rtol=1e-12)
    np.testing.assert_allclose(out["comm_time_s"], at_peak["comm_time_s"] / SETTINGS["link_frac"], rtol=1e-12)
