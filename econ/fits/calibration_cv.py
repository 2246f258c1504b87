"""Grouped cross-validation of the calibration: every measured row's held-out prediction.

A fold leaves out a whole group — a model, a chip, a source (a campaign of runs; revisions of one document are one
source), or a random share of configurations (duplicated measurements of one configuration fall together) — refits
warm-started from the full fit, and predicts what it left out. Every measured row thus gets a held-out
``log(predicted / measured)`` per basis; :mod:`econ.fits.error_bands` turns them into the bands a prediction claims.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from econ.fits import calibration as cal
from econ.fits.neighbours import interpolated_residual
from econ.formula import formula

RANDOM_FOLDS = 5
"""Folds of the random-configuration CV (a seed-fixed shuffle of distinct configurations)."""

FOLD_ITERATIONS = 40
"""Gauss–Newton iterations a fold may take from the full fit (:func:`refit`, which stops sooner where an iteration
gains less than the fit's tolerance). A fold that stops early leaks the full fit into its held-out predictions (they
look better than they are). At this cap the leave-one-chip-out errors are those of scipy's solver run to
convergence within 0.4% at the median and the p90 (bench/calibration.py), and a source fold, which holds out 73% of
the runs, reads its runs as the converged fold does (tests/fits/test_calibration.py). The cap of 6 kept until session
65 read TTFT held out by model 2.565× at p90 where converged folds read 2.600×, and a tenth of that source fold's
TTFT predictions more than 18% off the converged ones."""

ANY_ENGINE = "_any_engine"
"""Suffix of a held-out prediction (and of its ratio column, basis and band) made with no engine stated: every engine
and engine/mode offset the mean of its kind's (:func:`engine_average_runs`)."""
NEIGHBOURS = "_neighbours"
"""Suffix of a held-out prediction corrected by the fold's measured runs of its configuration at other concurrencies
(:mod:`econ.fits.neighbours`)."""
LENGTHS = "_lengths"
"""Suffix of one corrected by the fold's runs of its layout (the configuration but for the lengths) where no run of
its configuration was fitted."""


@dataclasses.dataclass(frozen=True)
class Neighbours:
    """The runs that may correct a held-out run (:func:`econ.fits.neighbours.interpolated_residual`): each run's key
    per target ("ttft", "tpot"), its log concurrency, and whether a run at the same concurrency counts."""

    keys: dict[str, np.ndarray]
    log_users: np.ndarray
    same_x: bool = False


def random_groups(config_keys: np.ndarray, folds: int = RANDOM_FOLDS, seed: int = 0) -> np.ndarray:
    """Fold index (0 … folds−1) of every row: distinct configuration keys shuffled (fixed seed) and dealt out."""
    keys, inverse = np.unique(np.asarray(config_keys, dtype=object).astype(str), return_inverse=True)
    order = np.random.default_rng(seed).permutation(keys.size)
    fold_of_key = np.empty(keys.size, dtype=int)
    fold_of_key[order] = np.arange(keys.size) % folds
    return fold_of_key[inverse]


@formula("log(pred/meas) of each group's rows from a fit without that group", "grouped cross-validation")
def cross_validate(
    problem: cal.Problem,
    start: np.ndarray,
    run_groups: np.ndarray,
    point_groups: np.ndarray,
    known: tuple | None = None,
    neighbours: dict[str, Neighbours] | None = None,
) -> dict[str, np.ndarray]:
    """Held-out ``log(predicted / measured)`` of every run (TTFT, TPOT) and point, folding over the distinct
    values of the group labels (a label shared by runs and points leaves both out together; None: never held
    out). Each fold is warm-started from ``start`` and capped at :data:`FOLD_ITERATIONS` iterations; the predictions
    and Jacobian at ``start`` are computed once for all folds (they do not depend on what a fold leaves out: its
    masks choose which residual rows count; ``known``: :func:`at_point` of ``start``, shared by several bases).
    ``neighbours`` ({suffix: :class:`Neighbours`}, in order): each held-out run is also predicted corrected by the
    fold's residuals of the runs it fitted that share its key (:func:`econ.fits.neighbours.interpolated_residual`),
    under the keys with that suffix, where no earlier suffix corrected it (NaN where the fold fitted none: each
    suffix's rows are those it alone would correct)."""
    run_groups = np.asarray(run_groups, dtype=object)
    point_groups = np.asarray(point_groups, dtype=object)
    keys = ("ttft", "tpot", f"ttft{ANY_ENGINE}", f"tpot{ANY_ENGINE}")
    neighbours = neighbours or {}
    keys += tuple(f"{k}{suffix}" for suffix in neighbours for k in keys)
    out = {k: np.full(problem.runs.n, np.nan) for k in keys} | {"points": np.full(problem.points.n, np.nan)}
    labels = sorted({g for g in np.concatenate([run_groups, point_groups]) if g is not None}, key=str)
    measured = {"ttft": problem.runs.log_ttft, "tpot": problem.runs.log_tpot, "points": problem.points.log_measured}
    known = at_point(start, problem) if known is None else known  # every fold starts here: computed once
    for label in labels:
        held_r, held_p = run_groups == label, point_groups == label
        fold = dataclasses.replace(problem, run_mask=~held_r, point_mask=~held_p)
        z = refit(fold, start, FOLD_ITERATIONS, known)
        pred = cal.predict(z, problem)
        for key, held in (("ttft", held_r), ("tpot", held_r), ("points", held_p)):
            out[key][held] = (pred[key] - measured[key])[held]
        if not held_r.any():
            continue
        residual = {key: pred[key] - measured[key] for key in ("ttft", "tpot")}
        for key, log_value in zip(("ttft", "tpot"), engine_average_runs(z, problem)):
            residual[f"{key}{ANY_ENGINE}"] = log_value - measured[key]
        for key, r in residual.items():
            out[key][held_r] = r[held_r]
            todo = held_r.copy()
            for suffix, nb in neighbours.items():
                k, x, fit = nb.keys[key[:4]], nb.log_users, ~held_r  # key[:4]: the target, ttft or tpot
                corr, sides = interpolated_residual(k[fit], x[fit], r[fit], k[todo], x[todo], same_x=nb.same_x)
                out[f"{key}{suffix}"][todo] = np.where(sides > 0, r[todo] - corr, np.nan)
                todo[todo] = sides == 0
    return out


AVERAGED_KINDS = ("engine", "serving")
"""Offset kinds a prediction without a stated engine takes the mean of (``serving_predict.row_parameters``)."""


@formula(
    "u(row) = shared + its architecture's offset + mean engine offset + mean offset of the engine/mode groups of its "
    "mode",
    "the engine average of serving_predict.row_parameters",
)
def engine_average_runs(z, problem: cal.Problem) -> tuple[np.ndarray, np.ndarray]:
    """(log TTFT, log TPOT) of every run as ``econ predict`` gives them when no engine is stated: each engine and
    engine/mode offset replaced by the mean of its kind's (a serving group's over the groups of its mode)."""
    lv, n = problem.levels, problem.runs.n
    codes = problem.run_codes
    u = cal.coordinates(z, lv, {k: v for k, v in codes.items() if k not in AVERAGED_KINDS}, n)
    shared = cal.coordinates(z, lv, {}, 1)[0]
    for kind in AVERAGED_KINDS:
        levels = lv.get(kind, ())
        if not levels or codes.get(kind) is None:
            continue
        offset = np.stack([cal.coordinates(z, lv, {kind: np.array([i])}, 1)[0] - shared for i in range(len(levels))])
        pool = np.array([level.rpartition("/")[2] if "/" in level else "" for level in levels])
        pool_mean = np.stack([offset[pool == p].mean(axis=0) for p in pool])  # each level's pool's mean offset
        code = np.asarray(codes[kind])
        u = u + np.where((code >= 0)[:, None], pool_mean[np.clip(code, 0, None)], 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ttft, tpot = cal.predict_runs(cal.values(u), problem.runs)
        return np.log(ttft), np.log(tpot)


@formula(
    "e_i = √(n/(n − 1))·(ln y_i − mean_j ln y_j), j over the n distinct runs stating what run i states",
    "the measurements' own repeatability: Var(y_i − ȳ) = σ²·(n − 1)/n for n draws of one σ",
)
def replicate_log_deviation(key: np.ndarray, log_value: np.ndarray) -> np.ndarray:
    """Each run's log deviation from the mean of the runs that state the same inputs (``key``), scaled so that it
    spreads as one run's noise does; NaN for a run measured once. Rows with equal key and equal value are one
    measurement stored twice (the InferenceX file holds some), counted once: a copy is not a repeat. A value that is
    not finite is no measurement: NaN, and not counted among its key's."""
    y = np.asarray(log_value, dtype=float)
    _, code = np.unique(np.asarray(key), return_inverse=True)
    code = code.reshape(-1)
    finite = np.isfinite(y)
    distinct = np.unique(np.column_stack([code[finite], y[finite]]), axis=0)
    d_code = distinct[:, 0].astype(int)
    n = np.bincount(d_code, minlength=code.max() + 1 if code.size else 0).astype(float)
    total = np.bincount(d_code, weights=distinct[:, 1], minlength=n.size)
    mean, scale = total / np.maximum(n, 1.0), np.sqrt(n / np.maximum(n - 1.0, 1.0))
    return np.where((n[code] >= 2.0) & finite, (y - mean[code]) * scale[code], np.nan)


def at_point(z, problem: cal.Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(z, stacked predictions, Jacobian) at ``z`` over every row of the problem, whatever its masks: the folds of a
    cross-validation all start at the full fit, where these are the same for every fold (:func:`refit`'s ``known``)."""
    from econ.fits.calibration_grad import jacobian  # the derivatives import this module

    z = np.asarray(z, dtype=float)
    return z, cal.stacked_predictions(cal.predict(z, problem)), jacobian(z, problem)


def refit(problem: cal.Problem, start_at: np.ndarray, iterations: int, known: tuple | None = None) -> np.ndarray:
    """Coordinates of a warm-started refit of the problem's masked rows: a cross-validation fold's fit (no status,
    no interval: only its predictions are used). Levenberg–Marquardt on the soft-L1 cost with iteratively
    reweighted Gauss–Newton steps (weights ``ρ'(r²) = 1/√(1 + (r/σ)²)``, scipy's soft-L1), at most ``iterations``
    Jacobians; a fold starts near its optimum, where Gauss–Newton converges in a few steps. ``known``
    (:func:`at_point` of ``start_at`` on any masks of the same rows) saves the start's predictions and Jacobian."""
    idx, target = cal.residual_rows(problem)
    if known is not None and not np.array_equal(known[0], start_at):
        raise ValueError("refit: known is at another point than start_at")
    model, jac = cal.model_and_jacobian(problem, known)
    x = idx[:, None].astype(float)
    f = cal.RESIDUAL_SCALE_LOG

    def cost(z):
        r = model(x, z) - target
        return float(np.sum(np.sqrt(1.0 + (r / f) ** 2) - 1.0)), r

    z = start_at if known is None else known[0]  # that array: _model recognises it
    z = np.asarray(z, dtype=float)
    c, r = cost(z)
    damping = 1e-3
    for _ in range(iterations):
        j = jac(x, z)
        w = 1.0 / np.sqrt(1.0 + (r / f) ** 2)
        normal = j.T @ (j * w[:, None])
        grad = j.T @ (w * r)
        diag = np.where(np.diag(normal) > 0, np.diag(normal), 1.0)
        for _ in range(10):
            step = -np.linalg.solve(normal + damping * np.diag(diag), grad)
            c_new, r_new = cost(z + step)
            if c_new < c:
                break
            damping *= 10.0
        else:
            return z
        z, r, improvement, c = z + step, r_new, c - c_new, c_new
        damping = max(damping / 10.0, 1e-9)
        if improvement < cal.TOLERANCE * max(c, 1.0):
            break
    return z
