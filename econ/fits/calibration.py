"""Calibration: the efficiencies and fixed costs at which the serving model reproduces measured runs.

Two kinds of measurement are fitted together:

- **runs** (``inferencex_train``: TTFT and TPOT of a stated configuration at a stated concurrency). TPOT is a step
  of the decode pool (in aggregated serving the mean of a step alone and a step that carries a prefill chunk,
  weighted by the share of steps that carry one) over the accepted tokens per step; TTFT is
  :func:`econ.physics.step_time.ttft_s` of the request's first pass, the prefill demand per request and the closed
  loop of C users;
- **points** (``measured_points``: tokens/s of a system in a regime, at a stated or best batch), as the regimes
  of :mod:`econ.analyses.calibration_points` read them (:func:`econ.fits.calibration_throughput.predict_points`).

Every step is :func:`econ.physics.step_time.kernel_step_time_s` of features computed once at peak (:class:`Step`:
each kernel class's compute and memory seconds, communication seconds and hops, layers) and the parameters of
:data:`PARAMETERS`. An efficiency ``η = 1/(1 + e^u)`` (so a time scales by ``1/η = 1 + e^u ≥ 1``: a calibrated
step is never faster than the roofline), a positive quantity ``e^u``. Engines, architecture families, the serving
mode and the model's attention kind move some parameters by offsets ``δ`` in ``u`` (:data:`OFFSETS`), shrunk toward
the shared value by pseudo-residuals ``δ·σ/τ`` (prior ``δ ~ N(0, τ²)``). Robust (soft-L1) least squares on
``log(predicted / measured)``; the Jacobian is exact in the offsets and finite-difference in each row's physical
parameters (one evaluation per parameter, not per offset).
"""

from __future__ import annotations

import numpy as np

from econ.fits.calibration_features import Points, Problem, Runs, Step, prefill_parameters, step_seconds  # noqa: F401
from econ.fits.calibration_throughput import predict_points
from econ.fits.wrapper import FitResult, fit
from econ.formula import formula
from econ.physics import slot_wait, step_time

EFFICIENCIES = (
    "gemm_mfu_frac",
    "prefill_gemm_mfu_frac",
    "expert_mfu_frac",
    "attention_mfu_frac",
    "hbm_bandwidth_frac",
    "expert_hbm_bandwidth_frac",
    "link_bandwidth_frac",
)
START = {
    "gemm_mfu_frac": 0.78,
    "prefill_gemm_mfu_frac": 0.78,
    "expert_mfu_frac": 0.3,
    "attention_mfu_frac": 0.67,
    "hbm_bandwidth_frac": 0.9,
    "expert_hbm_bandwidth_frac": 0.9,
    "link_bandwidth_frac": 0.5,
    "collective_latency_s": 2e-6,
    "layer_overhead_s": 3e-5,
    "sequence_overhead_s": 3e-5,
    "step_overhead_s": 1e-3,
    "expert_imbalance_scale": 1.0,
    "ttft_overhead_s": 0.05,
    "ttft_stream_steps": 2.0,
    "queue_wait_frac": 0.5,
    "burst_wait_frac": 1.0,
    "speculation_speedup": 1.8,
}
PARAMETERS = tuple(START)
"""The shared parameters, in this order (efficiencies first, then positive quantities). Each starts at, and its
prior is centred on, its value in :data:`START`. ``speculation_speedup`` is the TPOT speed-up of a run launched with
speculative decoding whose draft length and acceptance are not stated (InferenceX's MTP launches,
:mod:`econ.analyses.launch_layouts`); it starts at DeepSeek-V3's "1.8 times TPS" with MTP (DeepSeek-V3 Technical
Report, arXiv 2412.19437, section 5.4.3) and moves no run without such a launch. ``expert_hbm_bandwidth_frac`` is
the share of HBM bandwidth the routed experts' weight reads reach (a grouped GEMM reads many expert matrices, each
for the few tokens routed to it), apart from ``hbm_bandwidth_frac`` of the dense weights and the cache. Fitted apart
on the 2,640 runs (2026-12-06): 0.78 of peak (0.75-0.81) against 0.95; leave-one-model-out TPOT 1.176x -> 1.163x
(p90 1.647x -> 1.660x), TTFT p90 3.04x -> 2.97x; six of the eight models with more than two runs read closer held out
(Llama-3.1-70B 1.155x -> 1.138x, MiniMax-M2.5 1.137x -> 1.110x), gpt-oss-120b and Qwen3-32B further (1.168x ->
1.197x, 1.218x -> 1.238x). It is shared, with no engine or architecture offset: with both, held-out TPOT was 1.181x.

``prefill_gemm_mfu_frac`` is the share of peak FLOP/s the dense GEMMs of a prompt's tokens reach (a run's first pass
and prefill demand, an aggregated decode step that carries a prompt chunk, a point's prefill pass), apart from
``gemm_mfu_frac`` of the decode steps alone: fitted 0.63 against 0.84 (2026-12-06); held out by model TPOT 1.163x /
1.660x -> 1.152x / 1.618x, TTFT 1.454x / 2.971x -> 1.413x / 2.858x (docs/design-notes.md: the variants not kept)."""


def ideal_parameters(n: int) -> dict[str, np.ndarray]:
    """The roofline bound's parameters: every efficiency 1, no fixed cost, no imbalance, no queue, no speed-up from
    speculation the run does not state."""
    return {k: np.full(n, 1.0 if k in EFFICIENCIES or k == "speculation_speedup" else 0.0) for k in PARAMETERS}


SOURCED_SPREAD = 1.0
"""Prior spread (one standard deviation in u) of an efficiency whose centre is a published kernel measurement (90%
of the prior between ~0.44 and ~0.95 of peak around 0.8): DeepSeek's FlashMLA decode kernel reaches 3,000 GB/s of
the H800's 3.35 TB/s (0.90, ``hbm_bandwidth_frac``) and 660 of 989 dense BF16 TFLOP/s (0.67,
``attention_mfu_frac``) (github.com/deepseek-ai/FlashMLA, README); DeepGEMM's dense FP8 GEMM up to 1,550 of 1,979
TFLOP/s (0.78, ``gemm_mfu_frac``) (github.com/deepseek-ai/DeepGEMM, README). These are the best kernels at their
best shapes: the data may pull an engine's achieved share below them, and the prior keeps a share the runs
cannot separate (attention against memory at long context, every efficiency against the fixed costs) near what
kernels are measured to reach instead of at 0 or 1."""

PRIOR_SPREAD = {
    "gemm_mfu_frac": SOURCED_SPREAD,
    "prefill_gemm_mfu_frac": SOURCED_SPREAD,
    "attention_mfu_frac": SOURCED_SPREAD,
    "hbm_bandwidth_frac": SOURCED_SPREAD,
}
"""Parameters whose prior is a sourced measurement (:data:`SOURCED_SPREAD`); the others have :data:`SHARED_SPREAD`."""

OFFSETS = {
    "engine": (
        "gemm_mfu_frac",
        "expert_mfu_frac",
        "hbm_bandwidth_frac",
        "link_bandwidth_frac",
        "layer_overhead_s",
        "sequence_overhead_s",
        "speculation_speedup",
    ),
    "architecture": ("gemm_mfu_frac", "expert_mfu_frac", "hbm_bandwidth_frac"),
    "serving": ("ttft_overhead_s", "ttft_stream_steps", "burst_wait_frac"),
    "attention": ("attention_mfu_frac",),
}
"""The parameters each kind of group may move: an engine (trtllm, sglang, vllm) its kernels' efficiencies, its
collectives' share of the links (its own all-reduce and expert dispatch kernels; SGLang's fitted near the links'
peak, which also takes up the communication its two-batch overlap hides) and fixed costs and what its speculation
gains (TensorRT-LLM's MTP launches run faster than the same steps predict, SGLang's slower); an architecture family
(hardware.architecture) its efficiencies; a way of serving (engine/mode: trtllm/agg, sglang/disagg, …) the front end
of its TTFT; a model's attention kind (model_derived.attention: mla, gqa, hybrid) the share of peak its attention
kernels reach (MLA 0.38, hybrid 0.42, GQA 0.51 against a shared 0.43; docs/design-notes.md, "A model's attention
kind moves its attention share"). A kind no run measured takes the shared value; no parameter an attention kind
moves is moved by the chip's family too (:mod:`econ.analyses.calibration_scenario` keeps them apart)."""

SHARED_SPREAD = 3.0
"""A shared coordinate's prior spread around its start (one standard deviation in u: an efficiency from 5% to 95%,
a positive quantity within ~20×): it keeps a parameter the data cannot see finite, and moves none that they can."""

RESIDUAL_SCALE_LOG = float(np.log(1.25))
"""σ: the residual scale of ``log(predicted/measured)`` the prior is weighed against, and where the soft-L1 loss
bends (a point more than ~1.25× off counts less than quadratically)."""

GROUP_SPREAD_LOG = RESIDUAL_SCALE_LOG
"""τ: a group's parameter is a priori within ~1.25× (in ``e^u``) of the shared value (one standard deviation), the
residual scale σ of one run: an offset costs as much as one run read 1.25× off. At ln 2, with three engines and three
architectures, an engine's offsets took up what its own models' runs err by and carried it to a model or chip held
out: TPOT p90 by model / chip 1.578× / 1.612× → 1.567× / 1.596×, TTFT 2.669× / 2.591× → 2.583× / 2.575×. τ was chosen
on the folds it is reported on, from ln 1.1 … ln 3 (docs/design-notes.md: "A group's offset is a priori as large as
one run's residual")."""

TOLERANCE = 1e-5
FD_STEP = 1e-6


def names(levels: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Fit coordinates: the shared parameters, then ``<parameter>@<kind>=<level>`` offsets."""
    out = list(PARAMETERS)
    for kind, params in OFFSETS.items():
        out += [f"{p}@{kind}={lv}" for p in params for lv in levels.get(kind, ())]
    return tuple(out)


def offset_columns(levels) -> list[tuple[int, str, int, int]]:
    """(shared parameter index, kind, level index, coordinate index) of every offset."""
    cols, j = [], len(PARAMETERS)
    for kind, params in OFFSETS.items():
        for p in params:
            for lv in range(len(levels.get(kind, ()))):
                cols.append((PARAMETERS.index(p), kind, lv, j))
                j += 1
    return cols


def to_value(name: str, u):
    """A parameter's value from its coordinate: an efficiency ``1/(1 + e^u)``, else ``e^u``."""
    u = np.minimum(np.asarray(u, dtype=float), 50.0)
    return 1.0 / (1.0 + np.exp(u)) if name in EFFICIENCIES else np.exp(u)


def to_coordinate(name: str, value: float) -> float:
    return float(np.log(1.0 / value - 1.0)) if name in EFFICIENCIES else float(np.log(value))


def start(levels) -> np.ndarray:
    return np.concatenate([[to_coordinate(k, v) for k, v in START.items()], np.zeros(len(offset_columns(levels)))])


def coordinates(z, levels, codes: dict[str, np.ndarray], n: int) -> np.ndarray:
    """Each row's coordinate of every shared parameter (rows × parameters): shared + its groups' offsets."""
    z = np.asarray(z, dtype=float)
    k = len(PARAMETERS)
    u = np.tile(z[:k], (n, 1))
    j = k
    for kind, params in OFFSETS.items():
        count = len(levels.get(kind, ()))
        if not count:
            continue
        code = codes.get(kind)
        if code is not None:  # whole rows of a full-width table (0 in the columns the kind does not move: exact)
            table = np.zeros((count + 1, k))
            table[:count, [PARAMETERS.index(p) for p in params]] = z[j : j + len(params) * count].reshape(-1, count).T
            u += table[np.where(code >= 0, code, count)]
        j += len(params) * count
    return u


def values(u: np.ndarray) -> dict[str, np.ndarray]:
    return {name: to_value(name, u[:, i]) for i, name in enumerate(PARAMETERS)}


# ---------------------------------------------------------------------------- predictions


@formula(
    "TPOT = ((1 − c)·t(decode) + c·t'(decode + chunk))/(accepted·v^f);  "
    "T₁ = ttft_s(S₀ = k·t'(first), D = (t'(full) − t'(base))/n_req, C/s, "
    "Z = (O − 1)·TPOT) + h·t(step);  TTFT = T₁ + w·(T₁ + Z),  s = C/K;  "
    "t' = t with the dense GEMMs at prefill_gemm_mfu_frac",
    "this module; econ.physics.step_time",
)
def predict_runs(p: dict, runs: Runs) -> tuple[np.ndarray, np.ndarray]:
    """(TTFT, TPOT) of every run at per-row parameters ``p`` [s]; ``s = C/K`` users per decode slot (1 where all fit)
    enter the prefill queue ``C/s`` at a time and wait ``w`` request lifetimes for a slot
    (:func:`econ.physics.slot_wait.routed_slot_wait`, :func:`econ.physics.slot_wait.slot_wait_s`); a prompt held
    ``h`` decode steps to prefill beside other prompts waits ``h`` steps of the decode pool
    (:mod:`econ.physics.prompt_hold`)."""
    parts = run_components(p, runs)
    return parts["ttft_s"], parts["tpot_s"]


def accepted_tokens(p: dict, runs: Runs) -> np.ndarray:
    """Tokens a decode step yields per sequence: the stated speculation's, times ``speculation_speedup`` where a run
    was launched speculating without saying how (``runs.speculation``)."""
    return runs.accepted * np.asarray(p["speculation_speedup"], dtype=float) ** runs.speculation


def run_components(p: dict, runs: Runs) -> dict[str, np.ndarray]:
    """The parts of each run's prediction [s]: its TPOT, first pass, prefill demand per request, TTFT."""
    c = runs.chunk_step_frac  # aggregated: the share of decode steps that carry a prefill chunk
    q = prefill_parameters(p)
    step = (1.0 - c) * step_seconds(runs.decode, p) + c * step_seconds(runs.decode_chunk, q)
    tpot = step / accepted_tokens(p, runs)
    first = runs.first_steps * step_seconds(runs.first, q)
    demand = np.maximum(step_seconds(runs.demand, q) - step_seconds(runs.demand_base, q), 0.0)
    demand = demand / runs.demand_requests
    think = np.maximum(runs.output_tokens - 1.0, 0.0) * tpot
    ttft = step_time.ttft_s(
        first,
        demand,
        runs.users / runs.slot_share,
        think,
        step,
        ttft_overhead_s=p["ttft_overhead_s"],
        stream_steps=p["ttft_stream_steps"],
        queue_wait_frac=p["queue_wait_frac"],
        burst_wait_frac=p["burst_wait_frac"],
    )
    ttft = ttft + runs.first_wait_steps * step  # held to prefill beside other prompts
    ttft = ttft + slot_wait.slot_wait_s(ttft, think, runs.slot_wait_lifetimes, runs.slot_after_prefill)
    return {"tpot_s": tpot, "first_pass_s": first, "demand_s": demand, "ttft_s": ttft}


def predict(z, problem: Problem) -> dict[str, np.ndarray]:
    """log TTFT and log TPOT of every run, log value of every point, at fit coordinates ``z``."""
    u_r = coordinates(z, problem.levels, problem.run_codes, problem.runs.n)
    u_p = coordinates(z, problem.levels, problem.point_codes, problem.points.n)
    return _predict_u(u_r, u_p, problem)


def _predict_u(u_r, u_p, problem: Problem) -> dict[str, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ttft, tpot = predict_runs(values(u_r), problem.runs) if problem.runs.n else (np.zeros(0), np.zeros(0))
        points = predict_points(values(u_p), problem.points)["value"] if problem.points.n else np.zeros(0)
        return {"ttft": np.log(ttft), "tpot": np.log(tpot), "points": np.log(points)}


# ---------------------------------------------------------------------------- the fit


def _targets(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """(measured log values, which residual rows count): runs' TTFT, runs' TPOT, points."""
    r, pts = problem.runs, problem.points
    rm = np.ones(r.n, bool) if problem.run_mask is None else problem.run_mask
    pm = np.ones(pts.n, bool) if problem.point_mask is None else problem.point_mask
    y = np.concatenate([r.log_ttft, r.log_tpot, pts.log_measured])
    use = np.concatenate([rm & np.isfinite(r.log_ttft), rm & np.isfinite(r.log_tpot), pm]) & np.isfinite(y)
    return y, use


def stacked_predictions(pred: dict) -> np.ndarray:
    full = np.concatenate([pred["ttft"], pred["tpot"], pred["points"]])
    return np.where(np.isfinite(full), full, -50.0)  # a point that cannot run counts as far off


def finite_difference_jacobian(z, problem: Problem) -> np.ndarray:
    """d(stacked predictions)/dz by forward differences in each row's physical coordinates (one evaluation per
    shared parameter; exact in the offsets): the check of :func:`econ.fits.calibration_grad.jacobian`."""
    lv = problem.levels
    u_r = coordinates(z, lv, problem.run_codes, problem.runs.n)
    u_p = coordinates(z, lv, problem.point_codes, problem.points.n)
    base = stacked_predictions(_predict_u(u_r, u_p, problem))
    k = len(PARAMETERS)
    d = np.empty((base.size, k))
    for i in range(k):
        ur, up = u_r.copy(), u_p.copy()
        ur[:, i] += FD_STEP
        up[:, i] += FD_STEP
        d[:, i] = (stacked_predictions(_predict_u(ur, up, problem)) - base) / FD_STEP
    cols = offset_columns(lv)
    jac = np.zeros((base.size, k + len(cols)))
    jac[:, :k] = d
    for i, kind, level, j in cols:
        run_code = problem.run_codes.get(kind, np.full(problem.runs.n, -1))
        point_code = problem.point_codes.get(kind, np.full(problem.points.n, -1))
        rows = np.concatenate([run_code == level, run_code == level, point_code == level])
        jac[:, j] = np.where(rows, d[:, i], 0.0)
    return jac


def _prior_weights(levels) -> np.ndarray:
    """Pseudo-residual weight of each coordinate's prior (``σ/τ``): shared within :data:`PRIOR_SPREAD` (else
    :data:`SHARED_SPREAD`) of the start, offsets within :data:`GROUP_SPREAD_LOG` of 0."""
    n_off = len(offset_columns(levels))
    shared = [RESIDUAL_SCALE_LOG / PRIOR_SPREAD.get(p, SHARED_SPREAD) for p in PARAMETERS]
    return np.concatenate([shared, np.full(n_off, RESIDUAL_SCALE_LOG / GROUP_SPREAD_LOG)])


def model_and_jacobian(problem: Problem, known: tuple | None = None):
    """The fit's model and Jacobian of the residual rows ``x``; at ``known``'s point (the same
    array; :func:`econ.fits.calibration_cv.at_point`), its predictions and Jacobian instead of computing
    them again."""
    w = _prior_weights(problem.levels)
    centre = start(problem.levels)

    def model(x, z):
        idx = x[:, 0].astype(int)
        prior = (np.asarray(z, dtype=float) - centre) * w
        stacked = known[1] if known is not None and z is known[0] else stacked_predictions(predict(z, problem))
        return np.concatenate([stacked, prior])[idx]

    def jac(x, z):
        from econ.fits.calibration_grad import jacobian  # the derivatives import this module

        idx = x[:, 0].astype(int)
        if known is not None and z is known[0]:
            return np.vstack([known[2], np.diag(w)])[idx]
        return jacobian(z, problem, w)[idx]

    return model, jac


def residual_rows(problem: Problem):
    """(indices of the residual vector the fit uses, their targets)."""
    y, use = _targets(problem)
    n_prior = len(names(problem.levels))
    idx = np.concatenate([np.flatnonzero(use), y.size + np.arange(n_prior)])
    return idx, np.concatenate([y, np.zeros(n_prior)])[idx]


@formula("min Σ ρ(log pred − log meas) + Σ ((u − u₀)·σ/τ₀)² + Σ (δ·σ/τ)², ρ = soft-L1", "this module")
def fit_calibration(problem: Problem, start_at: np.ndarray | None = None, max_nfev: int | None = None) -> FitResult:
    """Fit the shared parameters and group offsets to the problem's masked rows."""
    idx, target = residual_rows(problem)
    model, jac = model_and_jacobian(problem)
    return fit(
        model,
        idx[:, None].astype(float),
        target,
        start(problem.levels) if start_at is None else start_at,
        names=names(problem.levels),
        loss="soft_l1",
        f_scale=RESIDUAL_SCALE_LOG,
        tol=TOLERANCE,
        jac=jac,
        max_nfev=max_nfev,
    )


def usable(result: FitResult, levels) -> np.ndarray:
    """Fit coordinates to predict with: an unidentified parameter keeps its starting value."""
    return np.where(np.isfinite(result.estimate), result.estimate, start(levels))


def natural(result: FitResult, levels) -> list[dict]:
    """Parameter rows in natural units: the shared values and each group's value, with 90% intervals (the
    coordinate's interval mapped through the transform; a group's from the covariance of (u, δ)). Without a
    covariance (status not ``ok``) intervals are unbounded."""
    z = usable(result, levels)
    cov = result.extra.get("covariance")
    t = np.where(result.stderr > 0, (result.high - result.estimate) / result.stderr, np.nan)
    t_q = float(np.nanmax(t)) if np.isfinite(t).any() else np.nan
    rows = []

    def row(name, kind, level, u, grad):
        if cov is not None and np.isfinite(t_q):
            half = t_q * float(np.sqrt(max(grad @ cov @ grad, 0.0)))
            a, b = to_value(name, u - half), to_value(name, u + half)
            low, high = float(min(a, b)), float(max(a, b))
        else:
            low, high = 0.0, (1.0 if name in EFFICIENCIES else np.inf)
        rows.append(
            {
                "parameter": name,
                "group_kind": kind,
                "group": level,
                "estimate": float(to_value(name, u)),
                "low": low,
                "high": high,
            }
        )

    for i, name in enumerate(PARAMETERS):
        grad = np.zeros(z.size)
        grad[i] = 1.0
        row(name, "", "", z[i], grad)
    for i, kind, level, j in offset_columns(levels):
        grad = np.zeros(z.size)
        grad[i], grad[j] = 1.0, 1.0
        row(PARAMETERS[i], kind, levels[kind][level], z[i] + z[j], grad)
    return rows
