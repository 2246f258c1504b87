"""Grouped cross-validation of the calibration, and the error bands it gives each kind of prediction.

A fold leaves out a whole group — a model, a chip, a source (revisions of one document are one source), or a
random share of configurations (duplicated measurements of one configuration fall together) — refits warm-started
from the full fit, and predicts what it left out. Every measured row thus gets a held-out ``log(predicted /
measured)`` per basis.

An error band is the held-out error of *points like it*: the rows of the same target (TTFT, TPOT or a published
throughput), regime and distance from the data (a configuration of a seen model and chip: the random folds; an
unseen model: leave-one-model-out, a model's architecture group left out whole; an unseen chip: leave-one-chip-out;
both unseen: the larger of the two). The factor claimed at quantile q is ``exp(ℓ-quantile of |log ratio|)`` at a
level ℓ calibrated so that bands from all groups but one cover q of the group left out (:func:`calibrated_levels`:
rows of one model share its error, so the plain q-quantile of other models' rows covers fewer than q of a new
model's). Its promise is checked out of group at both levels: each group's rows are measured against the band
built, level included, from the other groups' rows alone (:func:`band_coverage`), so a band that only fits its
own data shows as low coverage.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from econ.fits import calibration as cal
from econ.fits.neighbours import interpolated_residual
from econ.fits.regimes import regime_family
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

QUANTILES = (0.5, 0.9)
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


MIN_BAND_POINTS = 8
"""Fewest held-out rows a band is computed from; a thinner cell takes its target's pooled band at that distance."""

MIN_BAND_GROUPS = 3
"""Fewest distinct groups (models, chips or folds) a band is computed from, counting only groups with at least
:data:`MIN_GROUP_ROWS` rows in it: a cell one model dominates says how that model's rows scatter, not how a new
model's will (its band widens to the pooled one)."""

MIN_GROUP_ROWS = 8
"""Fewest rows a group has in a cell to count as one of its groups: two rows of a model say nothing about how a
model scatters (they still count among the cell's rows)."""


def counted_groups(group: np.ndarray) -> int:
    """How many groups have at least :data:`MIN_GROUP_ROWS` rows."""
    _, n = np.unique(group, return_counts=True)
    return int((n >= MIN_GROUP_ROWS).sum())


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


def factors(abs_log: np.ndarray) -> tuple[float, float]:
    """(p50, p90) error factors of held-out ``|log ratio|`` values (NaN with none)."""
    x = np.asarray(abs_log, dtype=float)
    x = x[np.isfinite(x)]
    if not x.size:
        return np.nan, np.nan
    q = np.quantile(x, QUANTILES)
    return float(np.exp(q[0])), float(np.exp(q[1]))


MIN_LEVEL_GROUPS = 3
"""Fewest groups a band's level is calibrated over (a leave-one-group-out among them, each inner band from at least
two groups); with fewer the level is the nominal quantile itself."""

MIN_WIDENING_GROUPS = 2
"""Fewest groups an engine's split too thin for a band of its own must still have rows from (of
:data:`MIN_GROUP_ROWS`) to widen the band it takes to its own rows' (:func:`nested_claimed_bands`): two say how groups
differ, one only how its own rows scatter."""


def needed_levels(held: np.ndarray, others: np.ndarray, *, presorted: bool = False) -> np.ndarray:
    """The smallest quantile level of ``others`` (linear interpolation, numpy's default) that reaches each value of
    ``held``: 0 at or below the smallest, ``inf`` above the largest (``presorted``: ``others`` is sorted)."""
    s = others if presorted else np.sort(others)
    k = np.searchsorted(s, held, side="left")  # first order statistic ≥ the value
    below = s[np.maximum(k - 1, 0)]
    above = s[np.minimum(k, s.size - 1)]
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.where(above > below, (held - below) / (above - below), 1.0)
    level = (k - 1 + step) / max(s.size - 1, 1)
    return np.where(k == 0, 0.0, np.where(k >= s.size, np.inf, level))


def calibrated_levels(abs_log: np.ndarray, group: np.ndarray, nominal=QUANTILES) -> np.ndarray:
    """The quantile level of these rows' ``|log ratio|`` to claim each ``nominal`` coverage at: the smallest level at
    which bands from the other groups' rows (each group left out in turn) cover ``nominal`` of the rows left out
    (split conformal over groups, the level checked by leaving groups out rather than assumed). Groups that differ
    more than their rows scatter need a level above nominal: rows of one group share its error, so the q-quantile of
    the others' rows covers fewer than q of a new group's. Fewer than :data:`MIN_LEVEL_GROUPS` groups of
    :data:`MIN_GROUP_ROWS` rows (smaller groups take no part): the nominal levels; no level reaching a nominal: 1
    (the largest error seen). Never below nominal: the plain quantile of held-out errors is the least a band
    claims."""
    nominal = np.asarray(nominal, dtype=float)
    _, code, n = np.unique(group, return_inverse=True, return_counts=True)
    keep = n[code] >= MIN_GROUP_ROWS
    if (n >= MIN_GROUP_ROWS).sum() < MIN_LEVEL_GROUPS:
        return nominal
    order = np.argsort(abs_log[keep], kind="stable")  # each group's others, sorted once for all of them
    values, codes = abs_log[keep][order], code[keep][order]
    needed = [
        needed_levels(values[codes == h], values[codes != h], presorted=True)
        for h in np.flatnonzero(n >= MIN_GROUP_ROWS)
        if codes.size - n[h] >= MIN_BAND_POINTS
    ]
    if not needed:
        return nominal
    needed = np.sort(np.concatenate(needed))  # a level ℓ covers the rows whose needed level is ≤ ℓ
    at = needed[np.ceil(nominal * needed.size).astype(int) - 1]
    return np.where(np.isfinite(at), np.clip(at, nominal, 1.0), 1.0)


def band_factors(abs_log: np.ndarray, group: np.ndarray) -> tuple[float, float, float]:
    """(p50, p90) error factors a band claims from held-out ``|log ratio|`` values of several groups, and the level
    of its p90: the quantiles at :func:`calibrated_levels` (NaN with none)."""
    x = np.asarray(abs_log, dtype=float)
    ok = np.isfinite(x)
    if not ok.any():
        return np.nan, np.nan, np.nan
    x, g = x[ok], np.asarray(group, dtype=object).astype(str)[ok]
    levels = calibrated_levels(x, g)
    q = np.quantile(x, levels)
    return float(np.exp(q[0])), float(np.exp(q[1])), float(levels[1])


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


@formula(
    "coverage = share of a group's held-out |log ratio| ≤ p90 band of the other groups' rows, at the level "
    "calibrated on those other groups alone (nested leave-one-group-out)",
    "this module",
)
def band_coverage(
    abs_log: np.ndarray,
    cell: np.ndarray,
    group: np.ndarray,
    *,
    min_points: int = MIN_BAND_POINTS,
    min_groups: int = MIN_BAND_GROUPS,
) -> tuple[np.ndarray, np.ndarray]:
    """(p90 band each row would have been given from rows of its cell outside its own group, whether the row falls
    inside it). The band is built exactly as :func:`band_factors` builds a published one (its level calibrated by
    leaving out each of the other groups), never seeing the row's group: the check is out of fold at both levels.
    Fewer than ``min_points`` other rows (:data:`MIN_BAND_POINTS`), or from fewer than ``min_groups`` other groups
    (:data:`MIN_BAND_GROUPS`), give NaN."""
    abs_log = np.asarray(abs_log, dtype=float)
    band, _ = _out_of_group_bands(abs_log, cell, group, min_points, min_groups)
    inside = np.where(np.isfinite(band), abs_log <= band, np.nan)
    return np.exp(band), inside


def _out_of_group_bands(
    abs_log: np.ndarray, cell: np.ndarray, group: np.ndarray, min_points: int, min_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """(log p90 band each row would have been given from rows of its cell outside its own group, where at least
    ``min_points`` such rows from ``min_groups`` groups exist (else NaN); whether those rows also reach
    :data:`MIN_BAND_POINTS` from :data:`MIN_BAND_GROUPS` groups): the band of :func:`band_coverage`, which does not
    depend on the thresholds where they are met, so one pass serves both of :func:`claimed_band`'s."""
    abs_log = np.asarray(abs_log, dtype=float)
    # cells and groups as integer codes: the nested leave-one-group-out compares them ~100,000 times
    cell = np.unique(np.asarray(cell, dtype=object).astype(str), return_inverse=True)[1].reshape(-1)
    group = np.unique(np.asarray(group, dtype=object).astype(str), return_inverse=True)[1].reshape(-1)
    band = np.full(abs_log.size, np.nan)
    enough = np.zeros(abs_log.size, dtype=bool)
    for c in np.unique(cell):
        in_cell = (cell == c) & np.isfinite(abs_log)
        for g in np.unique(group[in_cell]):
            others = in_cell & (group != g)
            n_others, n_groups = others.sum(), counted_groups(group[others])
            if n_others >= min_points and n_groups >= min_groups:
                level = calibrated_levels(abs_log[others], group[others])[1]
                band[in_cell & (group == g)] = np.quantile(abs_log[others], level)
                enough[in_cell & (group == g)] = n_others >= MIN_BAND_POINTS and n_groups >= MIN_BAND_GROUPS
    return band, enough


def claimed_band(abs_log: np.ndarray, cell: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p90 band each row would have been given without its own group, whether the row falls inside it): its cell's
    band where the cell has enough rows from enough other groups; else the band a thin cell is published with
    (``calibration_bands.bands``): the larger of all cells pooled, the cells of its family pooled
    (:func:`econ.fits.regimes.regime_family`) and whatever rows of its cell the other groups have: the pooled band
    alone is narrower than that where the cell's other rows scatter more than the pool (a new model's disaggregated
    cells: the pool is mostly aggregated rows), and a cell one group holds has no rows of other groups (a new model's
    runs without worker counts, all of DeepSeek's architecture once the launches settle the others': 64% inside the
    pooled band)."""
    abs_log = np.asarray(abs_log, dtype=float)
    own_log, enough = _out_of_group_bands(abs_log, cell, group, 1, 0)  # the cell's band where enough, one pass
    own = np.exp(own_log)
    band = np.where(enough, own, np.nan)
    pooled, _ = band_coverage(abs_log, np.full(np.size(abs_log), "all"), group)
    family, _ = _out_of_group_bands(abs_log, regime_family(cell), group, 1, 0)
    claimed = np.where(np.isfinite(band), band, np.fmax(np.fmax(pooled, own), np.exp(family)))
    return claimed, inside_band(abs_log, claimed)


def nested_claimed_bands(
    abs_log: np.ndarray,
    cell: np.ndarray,
    splits: tuple[np.ndarray, ...],
    group: np.ndarray,
    widening: tuple[bool, ...] = (),
) -> list[np.ndarray]:
    """:func:`claimed_band` of cells split further by each of ``splits`` in turn (a regime's rows by their engine,
    then by their chip), one array per depth (0: the cells unsplit): each row's band from the rows of its split
    outside its own group where they reach :data:`MIN_BAND_POINTS` from :data:`MIN_BAND_GROUPS` groups, else the band
    one level up. A split ``widening`` marks (the engine) whose other rows reach :data:`MIN_BAND_POINTS` from
    :data:`MIN_WIDENING_GROUPS` groups takes their band where wider (``calibration_bands`` publishes it so)."""
    abs_log = np.asarray(abs_log, dtype=float)
    claimed = [claimed_band(abs_log, cell, group)[0]]
    key = np.asarray(cell, dtype=str)
    for i, split in enumerate(splits):
        finer = np.char.add(np.char.add(key, "\x1f"), np.asarray(split, dtype=str))
        if np.unique(finer).size == np.unique(key).size:  # the split divides no cell: the same bands
            claimed.append(claimed[-1])
            continue
        key = finer
        widens = i < len(widening) and widening[i]
        own_log, enough = _out_of_group_bands(
            abs_log, key, group, MIN_BAND_POINTS, MIN_WIDENING_GROUPS if widens else 0
        )
        thin = np.fmax(claimed[-1], np.exp(own_log)) if widens else claimed[-1]
        claimed.append(np.where(enough, np.exp(own_log), thin))
    return claimed


def inside_band(abs_log: np.ndarray, claimed: np.ndarray) -> np.ndarray:
    """Whether each |log ratio| is within its claimed factor (NaN where either is not finite)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isfinite(claimed) & np.isfinite(abs_log), abs_log <= np.log(claimed), np.nan)


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
