"""Validation of a price inference against the open models whose true value is known, by a rule that can fail.

A price inference reads a hidden quantity (KV bytes read per context token, prefill FLOPs per token, …) back from
a price under stated assumptions. On an open-weight model the architecture gives the true value, so the reading's
error is measured, not assumed:

    r = ln(implied / true)                        per validation row (model × seller schedule)
    r_m = mean of r over the rows of group m      (one vote per group; its rows are left out together)

**The unit left out is an architecture group**, not a model: models of identical architecture and size (a model and
its re-releases or fine-tunes, ``model_derived.architecture_group``: GLM-5 and GLM-5.1) share their true value, so
leaving one out while its twin stays in the fit leaks the truth into the correction and the spread and flatters
coverage and skill. Below, "model m" reads "architecture group m"; a row without a group is its model's own group.

**Bias.** b = mean of r_m over the n groups, tested against 0 with Student's t (t = b·√n/s, s the standard
deviation of r_m; significant when |t| > t_{1−α/2, n−1}, α = :data:`BIAS_ALPHA`). A reading with a significant bias
is published **bias-corrected**: x_c = x·exp(−b), with b estimated with the model itself left out for an open model
(b₋ₘ) and from every open model for a closed one.

**Interval** (level :data:`LEVEL`), a prediction interval for a model not in the fit, in log space around x_c:

    corrected:    h = t_{(1+level)/2, k−1} · s_k · √(1 + 1/k)     s_k: spread of the k = n−1 other r_m around b₋ₘ
    uncorrected:  h = t_{(1+level)/2, k} · √(mean over the k others of r_j²)          (no bias: spread around 0)

(k = n for a closed model), or the jackknife conformal quantile of the others' left-out residuals where that is
wider (heavy tails; Barber et al. 2021). The RMS counts a bias as error, so a reading off by the same factor on
every model would be "covered" by construction; around a corrected centre only the spread counts.

**A truth that is itself a prediction.** Where the true value of an open model is a calibrated prediction (its
serving cost) rather than arithmetic on its architecture, the reading is validated against that prediction. The
prediction's error on each model is already in the spread of r (the price follows the real cost, the truth the
predicted one); an error it makes on every model alike is not: the bias correction absorbs it and passes it to every
published value. With ``e`` that shared error in log (the predictor's median held-out log ratio), the interval for
the real quantity is h' = √(h² + e²), the two taken as independent; the baseline's interval is widened alike (it
predicts the same truth).

**Skill.** Each open model's left-out interval is scored by the interval score of Gneiting & Raftery (2007, eq. 43)
in log space, IS = (u − l) + (2/α)·(l − y)⁺ + (2/α)·(y − u)⁺ with α = 1 − level, and compared with the
**no-price baseline**: the geometric mean of the other open models' true values with the prediction interval of
their spread (same formula on ln y). Lower is better; skill = 1 − IS/IS_baseline.

**Coverage and skill are counted per architecture group**: each group's rows are averaged first and every group
weighs 1, because two models of one architecture are one piece of evidence, not two (a row-weighted share is
reported beside it).

**Status** of a quantity, in order: ``too_few_open_models`` (n < :data:`MIN_MODELS` architecture groups);
``falsified`` (a hypothesis whose uncorrected value misses the truth beyond its own interval: the bias is
significant and lies outside the median own log half-width on its side); ``uninformative`` (no skill against the
baseline, or the interval a closed model gets is wider than :data:`MAX_WIDTH_RATIO` high over low); else ``ok``. A
reading (not a hypothesis) is never falsified: its uncorrected hypothesis's verdict is reported beside the status
(``hypothesis_status``).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.formula import formula

LEVEL = 0.9
MIN_MODELS = 5
"""Distinct architecture groups of open models a reading needs before it is validated (with fewer there is no spread
to measure; a model's re-release is not a second one)."""
BIAS_ALPHA = 0.05
"""Two-sided significance level of the bias test."""
MAX_WIDTH_RATIO = 10.0
"""A validated interval wider than this (high over low) locates a quantity only to an order of magnitude:
``uninformative``."""
STATUSES = ("ok", "uninformative", "falsified", "too_few_open_models")
ROLES = ("reading", "hypothesis")


def _t(dof, p):
    """Student's t quantile at ``p`` for ``dof`` degrees of freedom (inf below 1)."""
    from scipy.special import stdtrit  # imported when a quantile is computed (see econ.fits.wrapper)

    dof = np.asarray(dof, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(dof >= 1, stdtrit(np.maximum(dof, 1.0), p), np.inf)


@formula("r = ln(implied/true)", "econ validation")
def log_ratio(implied, true):
    """ln(implied/true) where both are positive and finite, else NaN."""
    x, y = np.asarray(implied, dtype=float), np.asarray(true, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    return np.where(ok, np.log(np.where(ok, x, 1.0) / np.where(ok, y, 1.0)), np.nan)


def model_means(model_keys, values) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(models, mean of ``values`` per model, index of each row's model or −1) over rows with a finite value."""
    keys = np.asarray([k if k is not None else "" for k in model_keys], dtype=object)
    v = np.asarray(values, dtype=float)
    has = (keys != "") & np.isfinite(v)
    names = sorted(set(keys[has]))
    index = {m: i for i, m in enumerate(names)}
    row = np.array([index.get(k, -1) if h else -1 for k, h in zip(keys, has)], dtype=int)
    if not names:
        return names, np.zeros(0), row
    sums = np.bincount(row[row >= 0], weights=v[row >= 0], minlength=len(names))
    counts = np.bincount(row[row >= 0], minlength=len(names))
    return names, sums / counts, row


@formula("t = b·√n/s, significant when |t| > t_{1−α/2, n−1}", "Student's t test of the mean")
def bias_test(r_m, *, alpha: float = BIAS_ALPHA) -> tuple[float, float, bool]:
    """(bias b = mean r_m, its t statistic, whether it is significant) over the per-model log ratios."""
    r = np.asarray(r_m, dtype=float)
    n = r.size
    if n < 2:
        return (float(r.mean()) if n else float("nan")), float("nan"), False
    b, s = float(r.mean()), float(r.std(ddof=1))
    t = b * np.sqrt(n) / s if s > 0 else (np.inf if b != 0 else 0.0)
    return b, float(t), bool(abs(t) > float(_t(n - 1, 1 - alpha / 2)))


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """Per row of ``values`` (inf-padded), the smallest value whose cumulative weight reaches q of the row's total
    weight plus one unit (the conformal correction for the left-out model); inf when it is not reached."""
    order = np.argsort(values, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    w = np.take_along_axis(weights, order, axis=1)
    cum = np.cumsum(w, axis=1)
    need = q * (w.sum(axis=1, keepdims=True) + 1.0)
    reach = cum >= need
    first = np.argmax(reach, axis=1)
    return np.where(reach.any(axis=1), v[np.arange(v.shape[0]), first], np.inf)


@formula(
    "b₋ₘ = mean of the others' r_j; h = max(t_{(1+level)/2,k−1}·s_k·√(1+1/k), conformal quantile of the others' rows)",
    "leave one model out; Barber et al. 2021 (jackknife+)",
)
def left_out(r, *, groups=None, level: float = LEVEL, corrected: bool) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Per model m with m left out: (correction b₋ₘ, log half-width h₋ₘ); and those with every model (closed rows).

    ``r``: ln(implied/true) per row, ``groups``: each row's unit index 0…n−1 (the architecture group in
    :func:`validate`, whose rows leave together; default: one row per unit). The
    bias is the mean of the model means; the interval is for one row of a new model, so it is read from the other
    models' rows, each model weighing 1 in all: their residuals r_ji − b (b fitted without j and without m when
    ``corrected``, 0 otherwise). The half-width is the larger of Student's t prediction interval on their spread
    (exact for normal errors) and their weighted conformal quantile (distribution-free; finite from 9 other models
    at 90%). Fewer than 2 other models (3 corrected) leave h infinite.
    """
    r = np.asarray(r, dtype=float)
    g = np.arange(r.size) if groups is None else np.asarray(groups, dtype=int)
    n = int(g.max()) + 1 if g.size else 0
    if n == 0:
        return np.zeros(0), np.zeros(0), float("nan"), float("inf")
    count = np.bincount(g, minlength=n).astype(float)
    mean = np.bincount(g, weights=r, minlength=n) / count
    total = mean.sum()
    p = (1 + level) / 2
    # centres: b₋ₘ for model m's rows; for model j's residual inside m's check, the mean without j and m
    with np.errstate(invalid="ignore", divide="ignore"):
        b_m = (total - mean) / (n - 1) if n > 1 else np.full(n, np.nan)
        b_all = total / n
        if corrected:
            pair = (total - mean[:, None] - mean[None, :]) / (n - 2)  # [m, j]
            e = r[None, :] - pair[:, g]  # [m, row]
            e_all = r - b_m[g]
        else:
            e = np.broadcast_to(r[None, :], (n, r.size))
            e_all = r
    w = 1.0 / count[g]
    others = g[None, :] != np.arange(n)[:, None]
    k = n - 1.0
    # Student's t part: the others' rows around their own mean b₋ₘ (the sample spread, k − 1 degrees of freedom)
    spread = r[None, :] - (b_m[:, None] if corrected else 0.0)
    wsq = np.where(others, w[None, :] * np.nan_to_num(spread) ** 2, 0.0).sum(axis=1)
    dof = k - 1 if corrected else k
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.sqrt(wsq / dof) if dof >= 1 else np.full(n, np.nan)
        scale = (np.sqrt(1 + 1 / k) if k > 0 else np.nan) if corrected else 1.0  # one model: no spread
        h_t = np.where(dof >= 1, _t(dof, p) * s * scale, np.inf)
        conf = _weighted_quantile(np.where(others, np.abs(e), np.inf), np.where(others, w[None, :], 0.0), level)
        h_m = np.where(np.isfinite(conf), np.maximum(h_t, conf), h_t)
        dof_all = n - 1 if corrected else n
        spread_all = r - (b_all if corrected else 0.0)
        s_all = np.sqrt((w * spread_all**2).sum() / dof_all) if dof_all >= 1 else np.nan
        h_all_t = float(_t(dof_all, p) * s_all * (np.sqrt(1 + 1 / n) if corrected else 1.0)) if dof_all >= 1 else np.inf
        conf_all = float(_weighted_quantile(np.abs(e_all)[None, :], w[None, :], level)[0])
    h_all = max(h_all_t, conf_all) if np.isfinite(conf_all) and np.isfinite(h_all_t) else h_all_t
    if not corrected:
        b_m, b_all = np.zeros(n), 0.0
    min_models = 3 if corrected else 2
    h_m = np.where(n - 1 >= min_models, h_m, np.inf)
    h_all = h_all if n >= min_models else float("inf")
    return b_m, h_m, float(b_all), float(h_all)


@formula("IS = (u − l) + (2/α)·(l − y)⁺ + (2/α)·(y − u)⁺ in ln, α = 1 − level", "Gneiting & Raftery 2007, eq. 43")
def interval_score(low, high, true, *, level: float = LEVEL):
    """Interval score of [low, high] for ``true`` in log space (lower is better; NaN where a value is missing)."""
    lo, hi, y = (np.log(np.where(np.asarray(v, dtype=float) > 0, v, np.nan)) for v in (low, high, true))
    a = 1.0 - level
    with np.errstate(invalid="ignore"):
        return (hi - lo) + (2 / a) * np.maximum(lo - y, 0.0) + (2 / a) * np.maximum(y - hi, 0.0)


@formula("baseline = exp(mean of the others' ln true) · exp(±t_{(1+level)/2,k−1}·s·√(1+1/k))", "no-price baseline")
def baseline_interval(model_keys, true, *, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of an open model: the no-price prediction from the other open models' true values (centre, low, high);
    ``model_keys``: the unit left out (the architecture group in :func:`validate`: a twin's truth is the model's)."""
    names, y_m, row = model_means(model_keys, log_ratio(true, np.ones(len(model_keys))))
    centre, h, _, _ = left_out(y_m, level=level, corrected=True)
    mine = row >= 0
    c = np.where(mine, centre[np.maximum(row, 0)] if len(names) else np.nan, np.nan)
    w = np.where(mine, h[np.maximum(row, 0)] if len(names) else np.nan, np.nan)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.exp(c), np.exp(c - w), np.exp(c + w)


@formula("e = |median held-out log ratio| of the truth's predictor", "econ validation (a truth that is a prediction)")
def shared_truth_error_log(median_log_ratio: float | None) -> float:
    """The error a predicted truth makes on every model alike, in log: its median log ratio on data it did not fit,
    in size (0 where it is not measured)."""
    if median_log_ratio is None or not np.isfinite(median_log_ratio):
        return 0.0
    return float(abs(median_log_ratio))


@formula("h' = √(h² + e²), e = the truth's shared log error", "independent errors add in quadrature")
def widened(half_log, truth_error_log):
    """The log half-width of an interval for the real quantity, when the truth it was validated against is a
    prediction that is off by ``truth_error_log`` (in log) on every model alike (0 for a true value from the
    architecture)."""
    return np.sqrt(np.square(half_log) + np.square(truth_error_log))


@formula("covered = x_lo ≤ true ≤ x_hi", "econ validation")
def covers(low, high, true):
    """Whether the interval covers the true value (False where there is none)."""
    lo, hi, y = (np.asarray(v, dtype=float) for v in (low, high, true))
    with np.errstate(invalid="ignore"):
        return np.isfinite(y) & (lo <= y) & (y <= hi)


@formula("falsified when b is significant and |b| exceeds the median own half-width on its side", "econ validation")
def hypothesis_verdict(implied, own_low, own_high, bias, significant: bool) -> str | None:
    """``falsified`` or ``consistent``: does the uncorrected value miss the truth beyond its own interval? The side
    that must reach the truth is the low one when the reading is above it (b > 0) and the high one below it; None
    where no row has an own interval (nothing to be consistent with)."""
    x = np.asarray(implied, dtype=float)
    side = np.asarray(own_low if bias > 0 else own_high, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.abs(np.log(np.where((side > 0) & (x > 0), side / x, np.nan)))
    half = half[np.isfinite(half)]
    if not half.size:
        return None
    return "falsified" if significant and abs(bias) > float(np.median(half)) else "consistent"


def _col(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


@formula("published = implied·exp(−b₋ₘ) for a reading with a significant bias, else implied; interval ±h₋ₘ", "module")
def validate(frame: pl.DataFrame, *, level: float = LEVEL, role: str = "reading") -> tuple[pl.DataFrame, dict]:
    """Correct, bound and score every row of one quantity, and the quantity's status (module docstring).

    ``frame``: one row per reading with ``model_key`` (the open model, or null for a row without truth),
    ``implied``, ``scenario_low``, ``scenario_high`` (the reading's own interval) and ``true`` (null for a closed
    model); an optional ``group_key`` (the model's architecture group, ``model_derived.architecture_group``) is the
    unit left out together and counted (default: the model). Returns the frame with ``group_key``,
    ``log_ratio``, ``correction_log``, ``corrected``, ``half_width_log``, ``validated_low``, ``validated_high``,
    ``covers_true``, ``baseline_value``, ``baseline_low``, ``baseline_high``, ``interval_score_log`` and
    ``baseline_interval_score_log``, and :func:`summary`'s dict. An optional ``truth_error_log`` (where the truth
    is a prediction: its error shared by every model, in log) widens both intervals (:func:`widened`).
    """
    if role not in ROLES:
        raise ValueError(f"role {role!r} is not one of {', '.join(ROLES)}")
    frame = with_groups(frame)
    keys = frame["group_key"].to_list()
    implied, true = _col(frame, "implied"), _col(frame, "true")
    r = log_ratio(implied, true)
    names, r_m, row = model_means(keys, r)
    n_models = frame.filter(pl.Series(row >= 0))["model_key"].n_unique()
    bias, t_stat, significant = bias_test(r_m)
    corrected = significant and role == "reading"
    mine = row >= 0
    b_m, h_m, b_all, h_all = left_out(r[mine], groups=row[mine], level=level, corrected=corrected)
    at = np.maximum(row, 0)
    correction = np.where(mine, b_m[at] if names else 0.0, b_all if names else 0.0)
    half = np.where(mine, h_m[at] if names else np.inf, h_all if names else np.inf)
    shared = np.nan_to_num(_col(frame, "truth_error_log"), nan=0.0) if "truth_error_log" in frame.columns else 0.0
    half = widened(half, shared)
    with np.errstate(over="ignore", invalid="ignore"):
        centre = implied * np.exp(-correction)
        low = np.where(np.isinf(half), 0.0, centre * np.exp(-half))
        high = np.where(np.isinf(half), np.inf, centre * np.exp(half))
    ok = np.isfinite(implied) & (implied > 0)
    low, high, centre = (np.where(ok, v, np.nan) for v in (low, high, centre))
    base, base_lo, base_hi = baseline_interval(keys, np.where(mine, true, np.nan), level=level)
    with np.errstate(divide="ignore", invalid="ignore"):
        base_half = widened(np.log(base_hi / base), shared)
        base_lo, base_hi = base * np.exp(-base_half), base * np.exp(base_half)
    out = frame.with_columns(
        pl.Series("log_ratio", r, dtype=pl.Float64),
        pl.Series("correction_log", correction, dtype=pl.Float64),
        pl.Series("corrected", centre, dtype=pl.Float64),
        pl.Series("half_width_log", half, dtype=pl.Float64),
        pl.Series("validated_low", low, dtype=pl.Float64),
        pl.Series("validated_high", high, dtype=pl.Float64),
        pl.Series("covers_true", covers(low, high, true) & mine, dtype=pl.Boolean),
        pl.Series("baseline_value", base, dtype=pl.Float64),
        pl.Series("baseline_low", base_lo, dtype=pl.Float64),
        pl.Series("baseline_high", base_hi, dtype=pl.Float64),
        pl.Series("interval_score_log", np.where(mine, interval_score(low, high, true, level=level), np.nan)),
        pl.Series("baseline_interval_score_log", interval_score(base_lo, base_hi, true, level=level)),
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
    verdict = hypothesis_verdict(
        implied[mine], _col(frame, "scenario_low")[mine], _col(frame, "scenario_high")[mine], bias, significant
    )
    facts = {
        "bias": bias,
        "t_stat": t_stat,
        "significant": significant,
        "corrected": corrected,
        "full_half_width": float(widened(h_all, np.max(shared, initial=0.0))),
        "full_correction": b_all,
        "hypothesis_status": verdict,
        "role": role,
    }
    return out, summary(out, n_models=n_models, n_groups=len(names), level=level, **facts)


def with_groups(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``group_key``: its own where given, else the row's model (null where there is no model)."""
    own = pl.col("group_key") if "group_key" in frame.columns else pl.lit(None, pl.String)
    return frame.with_columns(
        pl.when(pl.col("model_key").is_not_null()).then(own.fill_null(pl.col("model_key"))).alias("group_key")
    )


@formula("too_few_open_models (< 5 groups) | falsified | uninformative (no skill, or wider than 10x) | ok", "module")
def summary(validated: pl.DataFrame, *, n_models: int, n_groups: int, level: float = LEVEL, **facts) -> dict:
    """Per-quantity evidence and status (module docstring): coverage, bias, skill against the baseline, width, each
    architecture group weighing 1."""
    rows = validated.filter(pl.col("log_ratio").is_not_null() & pl.col("group_key").is_not_null())
    per_model = (  # sorted: sums over groups are the same to the last bit on every run
        rows.group_by("group_key")
        .agg(
            pl.col("covers_true").mean().alias("covered"),
            pl.col("interval_score_log").mean().alias("score"),
            pl.col("baseline_interval_score_log").mean().alias("baseline"),
        )
        .sort("group_key")
    )

    def mean(name):
        v = per_model[name].drop_nulls().to_numpy() if per_model.height else np.zeros(0)
        return float(v.mean()) if v.size else float("nan")

    score, base = mean("score"), mean("baseline")
    skill = 1.0 - score / base if np.isfinite(score) and np.isfinite(base) and base > 0 else float("nan")
    width = float(np.exp(2 * facts["full_half_width"])) if np.isfinite(facts["full_half_width"]) else float("inf")
    abs_r = np.abs(rows["log_ratio"].to_numpy()) if rows.height else np.zeros(0)
    median_abs = float(np.median(abs_r)) if abs_r.size else float("nan")
    if n_groups < MIN_MODELS:
        status = "too_few_open_models"
    elif facts["role"] == "hypothesis" and facts["hypothesis_status"] == "falsified":
        status = "falsified"
    elif not (np.isfinite(skill) and skill > 0) or width > MAX_WIDTH_RATIO:
        status = "uninformative"
    else:
        status = "ok"
    return {
        "n_models": n_models,
        "n_architecture_groups": n_groups,
        "n_rows": rows.height,
        "coverage_groups_frac": mean("covered"),
        "coverage_rows_frac": float(rows["covers_true"].mean()) if rows.height else float("nan"),
        "median_abs_log_ratio": median_abs,
        "median_error_factor_ratio": float(np.exp(median_abs)) if np.isfinite(median_abs) else float("nan"),
        "geometric_mean_ratio": float(np.exp(facts["bias"])) if np.isfinite(facts["bias"]) else float("nan"),
        "bias_t_stat": facts["t_stat"],
        "bias_significant": facts["significant"],
        "bias_corrected": facts["corrected"],
        "correction_factor_ratio": float(np.exp(-facts["full_correction"])),
        "interval_width_ratio": width,
        "interval_score_log": score,
        "baseline_interval_score_log": base,
        "skill_score_frac": skill,
        "level_frac": level,
        "hypothesis_status": facts["hypothesis_status"],
        "status": status,
    }
