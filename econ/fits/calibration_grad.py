"""Exact derivatives of the calibration's predictions with respect to each row's parameter coordinates.

The fit's Jacobian is these per-row derivatives (rows × parameters), spread to the shared coordinates and the
group offsets by :func:`econ.fits.calibration.jacobian` (a row's offset moves only its own coordinate). They are
the chain rule through the formulas of :mod:`econ.physics.step_time`:

- a soft roofline ``s = (x^p + y^p)^(1/p)`` moves by ``(x/s)^(p−1)`` per unit of x; an efficiency's time factor
  ``κ = 1/η = 1 + e^u`` by ``e^u = κ − 1``; a positive quantity ``v = e^u`` by ``v``;
- the closed-loop response ``R = (b + √(b² + 4DZ))/2``, ``b = N·D − Z``: ``∂R/∂D = (N + (b·N + 2Z)/√·)/2``,
  ``∂R/∂Z = (−1 + (2D − b)/√·)/2``;
- a point's throughput at its chosen batch (the envelope theorem: the choice does not move to first order).

tests/fits/test_calibration.py checks them against finite differences.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from econ.fits import calibration as cal
from econ.fits.calibration_throughput import predict_points
from econ.physics.slot_wait import slot_wait_s
from econ.physics.step_time import SMOOTH_MAX_POWER

STEP_PARAMETERS = (
    *cal.EFFICIENCIES,
    "collective_latency_s",
    "layer_overhead_s",
    "sequence_overhead_s",
    "step_overhead_s",
    "expert_imbalance_scale",
)
WAVES = 10.0


def _pull(x, s):
    """∂smax/∂x = (x/s)^(p−1) (0 where the step is empty)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s > 0, (x / s) ** (SMOOTH_MAX_POWER - 1.0), 0.0)


def step_gradient(step: cal.Step, p: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(step time, {parameter: d time / d coordinate}) at per-row parameters ``p``. Where a step overlaps a share f
    of its communication with the kernels (a published point whose source says so), the time is
    ``K + B − f·min(B, K) + …``: a kernel parameter moves it by ``1 − f`` of its pull once the bandwidth time B
    exceeds the kernels' K, the link's by ``1 − f`` while B is under K."""
    k = {name: 1.0 / np.asarray(p[name], dtype=float) for name in cal.EFFICIENCIES}
    balanced = np.asarray(step.balanced, dtype=float) > 0
    gamma = np.where(balanced, 1.0, np.asarray(p["expert_imbalance_scale"], dtype=float))
    busy = 1.0 + gamma * (step.imbalance - 1.0)
    pairs = (
        (k["gemm_mfu_frac"] * step.dense_s, k["hbm_bandwidth_frac"] * step.dense_mem_s),
        (k["expert_mfu_frac"] * busy * step.expert_s, k["expert_hbm_bandwidth_frac"] * step.expert_mem_s),
        (k["attention_mfu_frac"] * step.attention_s, k["hbm_bandwidth_frac"] * step.kv_mem_s),
    )
    smax = [(x**SMOOTH_MAX_POWER + y**SMOOTH_MAX_POWER) ** (1.0 / SMOOTH_MAX_POWER) for x, y in pairs]
    wx = [_pull(x, s) for (x, _), s in zip(pairs, smax)]
    wy = [_pull(y, s) for (_, y), s in zip(pairs, smax)]
    alpha, t_layer, t_seq, t_step = (
        np.asarray(p[n], dtype=float)
        for n in ("collective_latency_s", "layer_overhead_s", "sequence_overhead_s", "step_overhead_s")
    )
    kernels, bandwidth, f = sum(smax), k["link_bandwidth_frac"] * step.comm_s, np.asarray(step.overlap, dtype=float)
    under = bandwidth < kernels  # the overlap hides the bandwidth time, else as much of it as the kernels take
    c_kernels, c_link = np.where(under, 1.0, 1.0 - f), np.where(under, 1.0 - f, 1.0)
    t = (
        kernels
        + bandwidth
        - f * np.minimum(bandwidth, kernels)
        + alpha * step.hops
        + t_layer * step.layers
        + t_seq * step.sequences
        + t_step
    )
    e_exp = k["expert_mfu_frac"] * busy * step.expert_s
    with np.errstate(invalid="ignore", divide="ignore"):
        imbalance = np.where((busy > 0) & ~balanced, e_exp * wx[1] * gamma * (step.imbalance - 1.0) / busy, 0.0)
    grad = {
        "gemm_mfu_frac": c_kernels * (k["gemm_mfu_frac"] - 1.0) * step.dense_s * wx[0],
        "expert_mfu_frac": c_kernels * (k["expert_mfu_frac"] - 1.0) * busy * step.expert_s * wx[1],
        "attention_mfu_frac": c_kernels * (k["attention_mfu_frac"] - 1.0) * step.attention_s * wx[2],
        "hbm_bandwidth_frac": c_kernels
        * (k["hbm_bandwidth_frac"] - 1.0)
        * (step.dense_mem_s * wy[0] + step.kv_mem_s * wy[2]),
        "expert_hbm_bandwidth_frac": c_kernels * (k["expert_hbm_bandwidth_frac"] - 1.0) * step.expert_mem_s * wy[1],
        "link_bandwidth_frac": c_link * (k["link_bandwidth_frac"] - 1.0) * step.comm_s,
        "collective_latency_s": alpha * step.hops,
        "layer_overhead_s": t_layer * step.layers,
        "sequence_overhead_s": t_seq * step.sequences,
        "step_overhead_s": t_step + 0.0 * t,
        "expert_imbalance_scale": c_kernels * imbalance,
        "prefill_gemm_mfu_frac": 0.0 * t,
    }
    return t, {name: np.broadcast_to(g, np.shape(t)) for name, g in grad.items()}


def prefill_step_gradient(step: cal.Step, p: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """:func:`step_gradient` of a step that carries prompt tokens: its dense GEMMs move with
    ``prefill_gemm_mfu_frac`` (:func:`econ.fits.calibration_features.prefill_parameters`)."""
    t, g = step_gradient(step, cal.prefill_parameters(p))
    return t, {**g, "prefill_gemm_mfu_frac": g["gemm_mfu_frac"], "gemm_mfu_frac": 0.0 * t}


def runs_gradient(p: dict, runs: cal.Runs) -> tuple[np.ndarray, np.ndarray]:
    """(d log TTFT / du, d log TPOT / du): rows × :data:`econ.fits.calibration.PARAMETERS`."""
    c = runs.chunk_step_frac  # TPOT's step is the mean of a step alone and one that carries a chunk
    t_alone, g_alone = step_gradient(runs.decode, p)
    t_chunk, g_chunk = prefill_step_gradient(runs.decode_chunk, p)
    t_dec = (1.0 - c) * t_alone + c * t_chunk
    g_dec = {name: (1.0 - c) * g_alone[name] + c * g_chunk[name] for name in g_alone}
    t_first, g_first = prefill_step_gradient(runs.first, p)
    t_full, g_full = prefill_step_gradient(runs.demand, p)
    t_base, g_base = prefill_step_gradient(runs.demand_base, p)
    n, users, out = runs.n, runs.users / runs.slot_share, runs.output_tokens
    accepted = cal.accepted_tokens(p, runs)
    tpot = t_dec / accepted
    busy = t_full > t_base
    demand = np.where(busy, t_full - t_base, 0.0) / runs.demand_requests
    think = np.maximum(out - 1.0, 0.0) * tpot
    b = users * demand - think
    root = np.sqrt(b * b + 4.0 * demand * think)
    response = (b + root) / 2.0
    queued = response > demand
    with np.errstate(invalid="ignore", divide="ignore"):
        d_r_d = np.where(root > 0, (users + (b * users + 2.0 * think) / root) / 2.0, users)
        d_r_z = np.where(root > 0, (-1.0 + (2.0 * demand - b) / root) / 2.0, 0.0)
    queue = np.where(queued, response - demand, 0.0)
    burst = np.maximum(users - 1.0, 0.0) * demand / 2.0
    omega, beta = p["queue_wait_frac"], p["burst_wait_frac"]
    sigma, tau0 = p["ttft_stream_steps"], p["ttft_overhead_s"]
    held = runs.first_wait_steps
    ttft = runs.first_steps * t_first + tau0 + sigma * t_dec + omega * queue + beta * burst / WAVES + held * t_dec
    by_demand = omega * np.where(queued, d_r_d - 1.0, 0.0) + beta * np.maximum(users - 1.0, 0.0) / (2.0 * WAVES)
    by_tpot = omega * np.where(queued, d_r_z, 0.0) * np.maximum(out - 1.0, 0.0)
    d_ttft = np.zeros((n, len(cal.PARAMETERS)))
    d_tpot = np.zeros((n, len(cal.PARAMETERS)))
    for name in STEP_PARAMETERS:
        i = cal.PARAMETERS.index(name)
        d_demand = np.where(busy, g_full[name] - g_base[name], 0.0) / runs.demand_requests
        d_tpot_abs = g_dec[name] / accepted
        d_ttft[:, i] = (
            runs.first_steps * g_first[name]
            + by_demand * d_demand
            + by_tpot * d_tpot_abs
            + (sigma + held) * g_dec[name]
        )
        d_tpot[:, i] = d_tpot_abs / tpot
    serving = {
        "ttft_overhead_s": tau0,
        "ttft_stream_steps": sigma * t_dec,
        "queue_wait_frac": omega * queue,
        "burst_wait_frac": beta * burst / WAVES,
    }
    for name, g in serving.items():
        d_ttft[:, cal.PARAMETERS.index(name)] = g
    i = cal.PARAMETERS.index("speculation_speedup")  # tpot ∝ v^(−f): d log tpot / du = −f
    d_tpot[:, i] = -runs.speculation
    d_ttft[:, i] = by_tpot * d_tpot[:, i] * tpot
    # the wait for a decode slot, w·(TTFT + Z), or (w·Z − TTFT)⁺ where the slot is taken after the prefill, with
    # Z = (O − 1)·TPOT: its derivative follows TTFT's and TPOT's
    wait = runs.slot_wait_lifetimes[:, None]
    d_think = np.maximum(out - 1.0, 0.0)[:, None] * (d_tpot * tpot[:, None])
    think = np.maximum(out - 1.0, 0.0) * tpot
    after = runs.slot_after_prefill > 0.0
    waits_after = (after & (runs.slot_wait_lifetimes * think > ttft))[:, None]
    d_ttft = np.where(
        after[:, None], np.where(waits_after, wait * d_think, d_ttft), (1.0 + wait) * d_ttft + wait * d_think
    )
    ttft = ttft + slot_wait_s(ttft, think, runs.slot_wait_lifetimes, runs.slot_after_prefill)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_ttft = np.where((np.isfinite(ttft) & (ttft > 0))[:, None], d_ttft / ttft[:, None], 0.0)
        d_tpot = np.where((np.isfinite(tpot) & (tpot > 0))[:, None], d_tpot, 0.0)
    return d_ttft, d_tpot


def _at(step: cal.Step, rows: np.ndarray, cols: np.ndarray) -> cal.Step:
    """The step's features at one cell of each row of its grid (rows × grid, or rows × 1, broadcast)."""
    shape = np.broadcast_shapes(*(np.shape(getattr(step, f.name)) for f in dataclasses.fields(step)))
    return cal.Step(
        **{f.name: np.broadcast_to(getattr(step, f.name), shape)[rows, cols] for f in dataclasses.fields(step)}
    )


def points_gradient(p: dict, pts: cal.Points) -> np.ndarray:
    """d log value / du of every point (rows × parameters), at the batch and pass its prediction chose."""
    pred = predict_points(p, pts)
    rows = np.arange(pts.n)
    pick_d, pick_p = pred["decode_pick"], pred["prefill_pick"]
    regime = pts.regime
    d_col = np.where(regime == "single_stream", 0, pick_d)
    p = {k: np.broadcast_to(np.asarray(v, dtype=float), (pts.n,)) for k, v in p.items()}
    td, g_d = step_gradient(_at(pts.decode, rows, d_col), p)  # at each row's chosen batch only, not the whole grid
    tp, g_p = prefill_step_gradient(_at(pts.prefill, rows, pick_p), p)
    with np.errstate(invalid="ignore", divide="ignore"):
        s_d = td * pts.decode_chips[:, 0] / pts.decode_tokens[rows, d_col]
        s_p = tp * pts.prefill_chips[:, 0] / pts.prefill_tokens[rows, pick_p]
        ell, out = pts.input_tokens, pts.output_tokens
        offline_w_p = ell * s_p / (ell * s_p + out * s_d)
        decode_side = pts.decode_share / s_d <= (1.0 - pts.decode_share) * out / (ell * s_p)
    grad = np.zeros((pts.n, len(cal.PARAMETERS)))
    for name in STEP_PARAMETERS:
        with np.errstate(invalid="ignore", divide="ignore"):
            dlog_d = g_d[name] / td
            dlog_p = g_p[name] / tp
        value = np.select(
            [regime == "prefill", regime == "offline", regime == "disaggregated"],
            [-dlog_p, -(offline_w_p * dlog_p + (1.0 - offline_w_p) * dlog_d), np.where(decode_side, -dlog_d, -dlog_p)],
            -dlog_d,
        )
        grad[:, cal.PARAMETERS.index(name)] = np.where(np.isfinite(value), value, 0.0)
    ok = np.isfinite(pred["value"]) & (pred["value"] > 0)
    return np.where(ok[:, None], grad, 0.0)


def spread(d: np.ndarray, problem: cal.Problem, extra_rows: int = 0) -> np.ndarray:
    """The Jacobian over fit coordinates from per-row derivatives ``d`` (residual rows × shared parameters): a
    shared column is ``d``'s, an offset column ``d``'s column on the rows of its group and 0 elsewhere. ``extra_rows``
    zero rows follow (room for the prior's rows, filled by the caller without a copy of the whole matrix)."""
    k = len(cal.PARAMETERS)
    cols = cal.offset_columns(problem.levels)
    jac = np.zeros((d.shape[0] + extra_rows, k + len(cols)))
    jac[: d.shape[0], :k] = d
    first = {}
    for i, kind, level, j in cols:
        first.setdefault((kind, i), j - level)
    at = {}  # per kind: the rows in a group and their level, once (each kind moves several parameters)
    for kind in {kind for kind, _ in first}:
        run_code = problem.run_codes.get(kind, np.full(problem.runs.n, -1))
        point_code = problem.point_codes.get(kind, np.full(problem.points.n, -1))
        code = np.concatenate([run_code, run_code, point_code])
        rows = np.flatnonzero(code >= 0)
        at[kind] = (rows, code[rows])
    for (kind, i), base in first.items():
        rows, level = at[kind]
        jac[rows, base + level] = d[rows, i]
    return jac


def jacobian(z, problem: cal.Problem, prior_weights: np.ndarray | None = None) -> np.ndarray:
    """d(stacked predictions: runs' log TTFT, runs' log TPOT, points' log value)/dz: each row's derivatives in its
    physical coordinates, on the shared coordinate and on the offsets of the row's groups (a prediction that
    cannot run, held at a constant, has none). With ``prior_weights``, the prior's rows follow (``diag(w)``: the
    fit's whole residual Jacobian, without a copy to stack them)."""
    lv = problem.levels
    k = len(cal.PARAMETERS)
    parts = []
    if problem.runs.n:
        u_r = cal.coordinates(z, lv, problem.run_codes, problem.runs.n)
        parts += list(runs_gradient(cal.values(u_r), problem.runs))
    else:
        parts += [np.zeros((0, k)), np.zeros((0, k))]
    if problem.points.n:
        u_p = cal.coordinates(z, lv, problem.point_codes, problem.points.n)
        parts.append(points_gradient(cal.values(u_p), problem.points))
    else:
        parts.append(np.zeros((0, k)))
    d = np.vstack(parts)
    if prior_weights is None:
        return spread(np.where(np.isfinite(d), d, 0.0), problem)
    jac = spread(np.where(np.isfinite(d), d, 0.0), problem, extra_rows=prior_weights.size)
    jac[d.shape[0] :] = np.diag(prior_weights)
    return jac
