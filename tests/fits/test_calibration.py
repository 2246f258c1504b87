"""The calibration: a synthetic round trip recovers known parameters; the Jacobian is the finite differences'; the
refits of the cross-validation converge (the bands' own tests: tests/fits/test_error_bands.py).

The problem is built from the shipped runs and points (their real layouts, models and chips) by the analysis's own
builder; for the round trip the measured values are replaced by values generated at known parameters.
"""

from __future__ import annotations

import dataclasses
from datetime import date

import duckdb
import numpy as np
import pytest

from econ.analyses import calibration as analysis
from econ.analyses.runner import BuildContext, _Scenarios
from econ.fits import calibration as cal
from econ.fits import calibration_cv as cv
from econ.fits import calibration_grad as grad

TRUE = {
    "gemm_mfu_frac": 0.55,
    "prefill_gemm_mfu_frac": 0.7,
    "expert_mfu_frac": 0.3,
    "attention_mfu_frac": 0.6,
    "hbm_bandwidth_frac": 0.8,
    "expert_hbm_bandwidth_frac": 0.6,
    "link_bandwidth_frac": 0.5,
    "collective_latency_s": 2e-6,
    "layer_overhead_s": 4e-5,
    "sequence_overhead_s": 3e-5,
    "step_overhead_s": 5e-4,
    "expert_imbalance_scale": 2.0,
    "ttft_overhead_s": 0.05,
    "ttft_stream_steps": 3.0,
    "queue_wait_frac": 0.5,
    "burst_wait_frac": 1.0,
    "speculation_speedup": 1.5,
}
IDENTIFIED = (
    "prefill_gemm_mfu_frac",
    "expert_mfu_frac",
    "hbm_bandwidth_frac",
    "expert_hbm_bandwidth_frac",
    "layer_overhead_s",
    "sequence_overhead_s",
    "ttft_overhead_s",
    "ttft_stream_steps",
    "burst_wait_frac",
    "speculation_speedup",
)
"""Parameters the runs inform strongly (the rest bind rarely: their prior holds them near the start; a decode step's
dense GEMMs, ``gemm_mfu_frac``, bind on compute only in the few decode steps that carry no prompt chunk and run large
batches)."""


@pytest.fixture(scope="module")
def shipped(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        ctx = BuildContext(con=con, as_of=date(2026, 11, 30), _scenarios=_Scenarios(con))
        inputs = analysis.build_problem(ctx)
    p = inputs.problem
    keep = np.zeros(p.runs.n, bool)
    keep[np.random.default_rng(0).choice(p.runs.n, 400, replace=False)] = True  # a small problem: fast tests
    return dataclasses.replace(p, run_mask=keep, point_mask=np.zeros(p.points.n, bool))


def _coords(values: dict, problem) -> np.ndarray:
    z = cal.start(problem.levels)
    z[: len(cal.PARAMETERS)] = [cal.to_coordinate(k, values[k]) for k in cal.PARAMETERS]
    return z


def _measured_at(problem, z, noise=0.0, seed=0):
    pred = cal.predict(z, problem)
    rng = np.random.default_rng(seed)
    runs = dataclasses.replace(
        problem.runs,
        log_ttft=pred["ttft"] + rng.normal(0, noise, problem.runs.n),
        log_tpot=pred["tpot"] + rng.normal(0, noise, problem.runs.n),
    )
    return dataclasses.replace(problem, runs=runs)


def test_round_trip_recovers_known_parameters(shipped):
    truth = _coords(TRUE, shipped)
    problem = _measured_at(shipped, truth, noise=0.05)
    result = cal.fit_calibration(problem)
    fitted = {r["parameter"]: r["estimate"] for r in cal.natural(result, problem.levels) if not r["group_kind"]}
    assert result.status == "ok", result.message
    for name in IDENTIFIED:
        assert fitted[name] == pytest.approx(TRUE[name], rel=0.3), name
    # a prompt's dense GEMMs apart from a decode step's (one share for both would sit between 0.55 and 0.7)
    assert fitted["prefill_gemm_mfu_frac"] == pytest.approx(TRUE["prefill_gemm_mfu_frac"], rel=0.05)
    pred = cal.predict(cal.usable(result, problem.levels), problem)
    clean = cal.predict(truth, problem)
    use = shipped.run_mask
    assert np.median(np.abs(pred["tpot"] - clean["tpot"])[use]) < 0.03
    assert np.median(np.abs(pred["ttft"] - clean["ttft"])[use]) < 0.05


def test_the_jacobian_is_the_finite_differences(shipped):
    z = _coords(TRUE, shipped) + np.random.default_rng(2).normal(0, 0.2, cal.start(shipped.levels).size)
    exact = grad.jacobian(z, shipped)
    numeric = cal.finite_difference_jacobian(z, shipped)
    waiting = shipped.runs.slot_share > 1.0  # runs with more users than their KV cache holds: the slot wait's terms
    assert waiting.sum() >= 20
    chunked = (shipped.runs.chunk_step_frac > 0) & (
        shipped.runs.chunk_step_frac < 1
    )  # decode steps alone and with a chunk
    assert (chunked & shipped.run_mask).sum() >= 20
    held = shipped.runs.first_wait_steps > 0  # prompts held for every attention rank to prefill together
    assert held.sum() >= 20
    speculating = (shipped.runs.accepted > 1.0) | (shipped.runs.speculation > 0)  # σ waits steps, not tokens
    assert speculating.sum() >= 20
    runs = shipped.run_mask | waiting | held | speculating
    rows = np.concatenate([runs, runs, shipped.point_mask])
    scale = np.abs(numeric[rows]).max(axis=0) + 1e-6
    assert np.max(np.abs(exact[rows] - numeric[rows]) / scale) < 1e-3


def test_the_wait_before_the_first_token_is_counted_in_decode_steps_not_tokens(shipped):
    """A step that yields two tokens (speculative decoding, MTP) takes as long as one that yields one: the σ decode
    steps a first token waits are the same seconds, though the time per output token halves. Counted in tokens, the
    wait shrank with the acceptance: TensorRT-LLM's speculating aggregated runs, held out by model, read 0.58x of
    their measured TTFT (0.67x counted in steps)."""
    p = {k: np.full(shipped.runs.n, v) for k, v in TRUE.items()}
    p.update(queue_wait_frac=np.zeros(shipped.runs.n), burst_wait_frac=np.zeros(shipped.runs.n))
    alone = dataclasses.replace(shipped.runs, accepted=np.ones(shipped.runs.n), speculation=np.zeros(shipped.runs.n))
    fast = dataclasses.replace(alone, accepted=np.full(shipped.runs.n, 2.0))
    still = alone.slot_wait_lifetimes == 0  # a slot wait lasts (O − 1) tokens of decode: it does halve
    a, b = cal.run_components(p, alone), cal.run_components(p, fast)
    assert still.sum() >= 100
    np.testing.assert_allclose(b["tpot_s"], a["tpot_s"] / 2.0, rtol=1e-12)
    np.testing.assert_allclose(b["ttft_s"][still], a["ttft_s"][still], rtol=1e-12)


def test_the_jacobian_of_points_that_overlap_communication_or_balance_experts_is_the_finite_differences(shipped):
    """Published points whose source overlaps communication with another micro-batch (measured_points.overlap_comm:
    LMSYS's two-batch overlap, RTP-LLM's micro-batching) or balances its experts (expert_balanced: the imbalance
    scale does not move them) are fitted so; their rows of the exact Jacobian match the finite differences, and so
    do the runs whose launch balanced their decode experts (eplbN recipes)."""
    runs = np.asarray(shipped.runs.decode.balanced).reshape(shipped.runs.n, -1).any(axis=-1)
    problem = dataclasses.replace(shipped, point_mask=np.ones(shipped.points.n, bool), run_mask=shipped.run_mask | runs)

    def flagged(field):
        return (np.asarray(getattr(problem.points.decode, field)) > 0).any(axis=-1) | (
            np.asarray(getattr(problem.points.prefill, field)) > 0
        ).any(axis=-1)

    overlapping, balanced = flagged("overlap"), flagged("balanced")
    assert overlapping.sum() >= 4 and balanced.sum() >= 4 and runs.sum() >= 5
    z = _coords(TRUE, problem) + np.random.default_rng(4).normal(0, 0.2, cal.start(problem.levels).size)
    exact = grad.jacobian(z, problem)
    numeric = cal.finite_difference_jacobian(z, problem)
    rows = np.concatenate([runs, runs, overlapping | balanced])
    scale = np.abs(numeric[rows]).max(axis=0) + 1e-6
    assert np.max(np.abs(exact[rows] - numeric[rows]) / scale) < 1e-3


def test_a_fold_refit_converges_to_the_solvers_answer(shipped):
    """The cross-validation's Gauss-Newton refit against scipy's solver run to convergence on the same fold."""
    problem = _measured_at(shipped, _coords(TRUE, shipped), noise=0.1, seed=3)
    full = cal.usable(cal.fit_calibration(problem), problem.levels)
    held = problem.run_mask & (np.arange(problem.runs.n) % 3 == 0)
    fold = dataclasses.replace(problem, run_mask=problem.run_mask & ~held)
    quick = cal.predict(cv.refit(fold, full, cv.FOLD_ITERATIONS), problem)
    solved = cal.predict(cal.usable(cal.fit_calibration(fold, full), problem.levels), problem)
    for target in ("ttft", "tpot"):
        assert np.median(np.abs(quick[target] - solved[target])[held]) < 0.01


def test_a_fold_that_holds_out_a_whole_source_converges_within_the_cap(real_db):
    """A source fold of the shipped runs holds out InferenceX's (73% of them; NVIDIA's gap-analysis runs are the
    rest), so its optimum lies far from the full fit's: the refit at the cap reads the held-out runs as scipy's solver
    run to convergence on the fold does (at a cap of 6, a tenth of its TTFT predictions were more than 18% off)."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        inputs = analysis.build_problem(BuildContext(con=con, as_of=date(2026, 11, 30), _scenarios=_Scenarios(con)))
    problem = inputs.problem
    full = cal.usable(cal.fit_calibration(problem), problem.levels)
    held = inputs.runs["source"].to_numpy() == "InferenceX"
    assert 0.7 < held.mean() < 0.76
    fold = dataclasses.replace(problem, run_mask=~held)
    quick = cal.predict(cv.refit(fold, full, cv.FOLD_ITERATIONS), problem)
    solved = cal.predict(cal.usable(cal.fit_calibration(fold, full), problem.levels), problem)
    for target in ("ttft", "tpot"):
        off = np.abs(quick[target] - solved[target])[held]
        assert np.median(off) < 0.005 and np.quantile(off, 0.9) < 0.05, target


def test_a_fold_started_from_the_shared_start_point_is_the_fold_alone(shipped):
    """Cross-validation evaluates the start once for all folds (cv.at_point on the unmasked problem); a fold's refit
    from it is the refit that evaluates the start itself, bit for bit, and a start point of another z is refused."""
    problem = _measured_at(shipped, _coords(TRUE, shipped), noise=0.1, seed=4)
    start = cal.start(problem.levels) + 0.1
    held = problem.run_mask & (np.arange(problem.runs.n) % 4 == 1)
    fold = dataclasses.replace(problem, run_mask=problem.run_mask & ~held)
    known = cv.at_point(start, problem)
    assert np.array_equal(cv.refit(fold, start, 3, known), cv.refit(fold, start, 3))
    with pytest.raises(ValueError, match="another point"):
        cv.refit(fold, start + 1e-3, 3, known)


def test_clean_data_cross_validates_near_exact_from_a_start_away_from_the_truth(shipped):
    """Each fold starts 0.5 off the truth in every shared coordinate (efficiencies ~10 points lower, fixed costs 1.65x)
    and must find its way back within the fold's capped refit: the held-out errors of noise-free data are then near
    0, where the start alone is far off."""
    truth = _coords(TRUE, shipped)
    problem = _measured_at(shipped, truth)
    away = truth.copy()
    away[: len(cal.PARAMETERS)] += 0.5  # every efficiency lower, every fixed cost 1.65x: every time too long
    start_error = np.abs(cal.predict(away, problem)["tpot"] - problem.runs.log_tpot)[problem.run_mask]
    assert np.median(start_error) > 0.2  # the start is far enough off that a fold that did not move would fail
    groups = np.array([f"g{i % 4}" for i in range(problem.runs.n)], dtype=object)
    groups[~problem.run_mask] = None
    held = cv.cross_validate(problem, away, groups, np.full(problem.points.n, None, dtype=object))
    assert np.nanmedian(np.abs(held["tpot"])) < 0.02 and np.nanmedian(np.abs(held["ttft"])) < 0.03


def test_calibrated_predictions_are_never_faster_than_the_bound(shipped):
    """Where a run states its speculation (or has none); a run launched speculating without saying how is bounded
    without the speed-up (its bound is the step's, the prediction's TPOT times the fitted speed-up)."""
    bound = cal.predict_runs(cal.ideal_parameters(shipped.runs.n), shipped.runs)
    assert shipped.runs.speculation.sum() > 50
    rng = np.random.default_rng(5)
    for _ in range(5):
        values = {
            k: (rng.uniform(0.05, 1.0) if k in cal.EFFICIENCIES else v * rng.uniform(0.1, 10)) for k, v in TRUE.items()
        }
        ttft, tpot = cal.predict_runs({k: np.full(shipped.runs.n, v) for k, v in values.items()}, shipped.runs)
        plain = shipped.runs.speculation == 0
        speedup = values["speculation_speedup"] ** shipped.runs.speculation
        assert np.all(tpot * speedup >= bound[1] * (1 - 1e-12))
        assert np.all(ttft[plain] >= bound[0][plain] * (1 - 1e-12))


def test_a_run_predicted_without_its_engine_takes_the_mean_offset_of_its_engines_and_mode(shipped):
    """engine_average_runs (what a fold predicts for a run with no engine stated) against a second route: the same
    coordinates with every engine level's offset set to the engines' mean, and every engine/mode level's to the mean
    of its mode's levels, predicted through the ordinary per-level codes. Each run then differs from its own-engine
    prediction (the offsets are far apart), and agrees with the averaged coordinates to rounding."""
    lv = shipped.levels
    z = _coords(TRUE, shipped)
    rng = np.random.default_rng(7)
    averaged = z.copy()
    for _, kind, _, j in cal.offset_columns(lv):
        z[j] = rng.normal(0, 0.4) if kind in ("engine", "serving") else 0.0
    averaged[:] = z
    for kind in ("engine", "serving"):
        levels = lv[kind]
        pool = [lvl.rpartition("/")[2] if "/" in lvl else "" for lvl in levels]
        cols = [(p, lv_i, j) for p, k, lv_i, j in cal.offset_columns(lv) if k == kind]
        for p in {c[0] for c in cols}:
            for pl_name in set(pool):
                js = [j for q, lv_i, j in cols if q == p and pool[lv_i] == pl_name]
                averaged[js] = z[js].mean()
    ttft, tpot = cv.engine_average_runs(z, shipped)
    expected = cal.predict(averaged, shipped)
    own = cal.predict(z, shipped)
    assert np.allclose(ttft, expected["ttft"], atol=1e-9) and np.allclose(tpot, expected["tpot"], atol=1e-9)
    assert np.median(np.abs(own["ttft"] - ttft)) > 0.05
