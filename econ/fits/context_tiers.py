"""Long-context price tiers → the KV-cache cost they imply (lecture f.1–f.2).

A tiered schedule bills the whole request at the tier's rate once the prompt exceeds the
tier threshold. Read backwards, each price component (input, output, cache read) is a cost
per token that grows with context,

    c(L) = a + k · L                                  (lecture f.1: memory cost rises linearly with L)

with each tier standing at a representative context chosen by a stated rule
(:data:`RULES`; default ``midpoint``: for a cost linear in L and prompts spread evenly over
a tier, the tier's break-even price is the cost at the tier's midpoint). The slope k is
fitted with the guarded wrapper: two tiers are ``exact`` (no interval), three or four
(Qwen) are ``ok`` with a covariance interval.

Two readings turn the tiers into KV bytes per token:

(a) **slope** — in the memory-bound regime one more context token costs, per generated
    token, the time to read its KV:  ∂cost/∂L = p_chip · b_kv / (W · mbu)   (lecture a.4's
    KV term L·b_kv/W times $/chip-second; G cancels), and cost = price · (1 − margin), so

        b_kv = k · (1 − margin) · W · mbu / p_chip.

    The formula is decode's; for input and cache-read tiers it reads the slope as if the
    provider priced the context part of that component as KV reads at decode rates.

(b) **crossover** — the first tier threshold is the context L* where decode turns
    memory-bound (lecture f.1: "the bump is at 200k"): L* = b_w·N_act/(R·b_kv), so

        b_kv = b_w · N_act / (R · L*)       (200k, 1e11, R 300, 1 B/weight → 1,667 B/token)

    with N_act from the architecture for an open-weight model, else the scenario's
    ``frontier_active_params``.

Pooling: where one *relative* slope κ (fraction of the zero-context price added per
million context tokens) may hold for a provider's models — OpenAI's >272k tiers are
uniformly 2× input / 1.5× output — the provider's standard schedules are fitted together
with c_m(L) = a_m · (1 + κ·L), in the linear form y − 1 = κ · (L − y·L₀) with y the tier
price over the base-tier price and L₀ the base tier's representative context.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.wrapper import FitResult, fit
from econ.formula import formula
from econ.physics import roofline
from econ.units import MEGA

RULES = ("midpoint", "lower", "upper", "geometric")
"""Representative context of a tier spanning [threshold, next threshold or max_input_tokens]:
``midpoint`` (lo+hi)/2 (default), ``lower`` lo, ``upper`` hi, ``geometric`` √(max(lo, 1,000)·hi)."""
DEFAULT_RULE = "midpoint"
GEOMETRIC_FLOOR_TOKENS = 1_000.0
"""Lower edge used by the ``geometric`` rule for the base tier (a prompt is at least a short system prompt)."""

COMPONENTS = {"input": "input_usd_per_mtok", "output": "output_usd_per_mtok", "cache_read": "cache_read_usd_per_mtok"}
LEVEL = 0.9
POOL_PLAUSIBLE_SPREAD_RATIO = 1.25
"""A pool is called plausible when its members' own relative slopes differ by at most this factor."""

SCHEDULE_KEY = ("source", "provider", "model", "variant")


@formula("tier context = (lo + hi)/2 (midpoint; also lo, hi, √(max(lo, 1,000)·hi))", "econ rule")
def representative_contexts(tiers: pl.DataFrame) -> pl.DataFrame:
    """Add ``tier_lower_tokens``, ``tier_upper_tokens`` and one ``context_<rule>_tokens`` column per rule.

    ``tiers``: one row per schedule (``SCHEDULE_KEY``) × tier with ``tier_min_prompt_tokens`` and
    ``max_input_tokens``. The top tier's upper edge is ``max_input_tokens``; where that is missing or not
    above the threshold the rules that need it give null (and the fit says it has too few points).
    """
    key = list(SCHEDULE_KEY)
    lo = pl.col("tier_min_prompt_tokens").cast(pl.Float64)
    nxt = lo.shift(-1).over(key, order_by="tier_min_prompt_tokens")
    hi = pl.coalesce(nxt, pl.col("max_input_tokens").cast(pl.Float64))
    out = tiers.with_columns(lo.alias("tier_lower_tokens"), pl.when(hi > lo).then(hi).alias("tier_upper_tokens"))
    lo_, hi_ = pl.col("tier_lower_tokens"), pl.col("tier_upper_tokens")
    return out.with_columns(
        ((lo_ + hi_) / 2).alias("context_midpoint_tokens"),
        lo_.alias("context_lower_tokens"),
        hi_.alias("context_upper_tokens"),
        (pl.max_horizontal(lo_, pl.lit(GEOMETRIC_FLOOR_TOKENS)) * hi_).sqrt().alias("context_geometric_tokens"),
    )


def _line(x, p):
    return p[0] + p[1] * x[:, 0]


def _through_origin(x, p):
    return p[0] * x[:, 0]


class _Memo:
    """Fits identical normalised problems once (linear least squares is equivariant under y → c·y)."""

    def __init__(self):
        self.cache: dict = {}

    def fit(self, model, x: np.ndarray, y: np.ndarray, p0, names, bounds) -> FitResult:
        key = (model.__name__, x.round(12).tobytes(), y.round(12).tobytes(), x.shape)
        if key not in self.cache:
            self.cache[key] = fit(model, x, y, p0, names=names, bounds=bounds, linear=True, level=LEVEL, seed=0)
        return self.cache[key]


def _fit_schedule(memo: _Memo, contexts_tokens: np.ndarray, prices: np.ndarray) -> dict:
    """One schedule × component × rule: the line through (L/1e6, p/p_base); returns slope/intercept in $/MTok units."""
    keep = np.isfinite(contexts_tokens) & np.isfinite(prices)
    x = contexts_tokens[keep] / MEGA
    base = prices[0] if prices.size and np.isfinite(prices[0]) and prices[0] > 0 else np.nan
    y = prices[keep] / base
    if not np.isfinite(base):
        return {
            "status": "not_fitted",
            "fit_interval_kind": "none",
            "n_points": int(keep.sum()),
            "fit_message": "no positive base-tier price",
        }
    r = memo.fit(_line, x[:, None], y, [1.0, 0.0], ("intercept", "slope"), ([0.0, 0.0], [np.inf, np.inf]))
    lo, hi = r.interval("slope")
    return {
        "status": r.status,
        "fit_interval_kind": r.interval_kind,
        "n_points": r.n_points,
        "fit_message": r.message,
        "intercept_usd_per_mtok": base * r["intercept"],
        "slope_usd_per_mtok_per_mtok_context": base * r["slope"],
        "slope_fit_low_usd_per_mtok_per_mtok_context": base * lo,
        "slope_fit_high_usd_per_mtok_per_mtok_context": base * hi,
        "uplift_per_mtok_context_frac": r["slope"] / r["intercept"] if r["intercept"] > 0 else np.nan,
        "max_abs_residual_frac": float(np.max(np.abs(r.residuals))) if r.residuals.size else np.nan,
    }


@formula("c(L) = a + k·L fitted to the tier prices at their representative contexts", "lecture f.1")
def fit_schedules(tiers: pl.DataFrame, *, rules: tuple[str, ...] = RULES) -> pl.DataFrame:
    """The per-schedule fits: one row per schedule × component × rule (schedules with more than one tier).

    ``tiers`` as for :func:`representative_contexts` plus the price columns of :data:`COMPONENTS`. Components
    whose base-tier price is missing or not positive are skipped (free tiers, schedules without cache prices).
    """
    key = list(SCHEDULE_KEY)
    frame = representative_contexts(tiers).sort(*key, "tier_min_prompt_tokens")
    if frame.height == 0:
        return pl.DataFrame()
    ids = frame.select(pl.struct(key).rank("dense").alias("_id"))["_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], ids.size]
    labels = frame.select(key).rows()
    threshold = frame["tier_min_prompt_tokens"].to_numpy()
    price = {c: frame[col].cast(pl.Float64).fill_null(np.nan).to_numpy() for c, col in COMPONENTS.items()}
    context = {r: frame[f"context_{r}_tokens"].fill_null(np.nan).to_numpy() for r in rules}
    memo, rows = _Memo(), []
    for start, end in zip(starts, ends):
        if end - start < 2:
            continue
        head = {
            **dict(zip(key, labels[start])),
            "n_tiers": int(end - start),
            "tier_thresholds_tokens": ",".join(str(int(t)) for t in threshold[start:end]),
            "crossover_threshold_tokens": float(threshold[start + 1]),
        }
        for component in COMPONENTS:
            prices = price[component][start:end]
            if not (np.isfinite(prices[0]) and prices[0] > 0) or np.isfinite(prices).sum() < 2:
                continue
            for rule in rules:
                contexts = context[rule][start:end]
                rows.append(
                    {
                        **head,
                        "component": component,
                        "rule": rule,
                        "representative_contexts_tokens": ",".join(
                            "" if not np.isfinite(c) else str(int(round(c))) for c in contexts
                        ),
                        "base_price_usd_per_mtok": float(prices[0]),
                        **_fit_schedule(memo, contexts, prices),
                    }
                )
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


@formula("y − 1 = κ·(L − y·L₀), one κ per provider", "econ pooled reading of lecture f.1")
def fit_pools(
    tiers: pl.DataFrame, per_schedule: pl.DataFrame, *, rules: tuple[str, ...] = RULES, min_models: int = 2
) -> pl.DataFrame:
    """One pooled relative slope κ per provider × component × rule over the provider's standard tiered schedules.

    Returns rows with ``pool_models`` (members), ``pool_spread_ratio`` (max/min of the members' own relative
    slopes), ``pool_plausible`` (spread ≤ :data:`POOL_PLAUSIBLE_SPREAD_RATIO`) and the wrapper's fit of κ.
    """
    if per_schedule.height == 0:
        return pl.DataFrame()
    key = list(SCHEDULE_KEY)
    frame = (
        representative_contexts(tiers)
        .filter(pl.col("variant") == "standard")
        .filter(pl.col("model").n_unique().over("provider") >= min_models)
        .sort("provider", "source", "model", "variant", "tier_min_prompt_tokens")
    )
    if frame.height == 0:
        return pl.DataFrame()
    own = {
        (r["provider"], r["model"], r["component"], r["rule"]): r["uplift_per_mtok_context_frac"]
        for r in per_schedule.filter(pl.col("variant") == "standard")
        .select("provider", "model", "component", "rule", "uplift_per_mtok_context_frac")
        .iter_rows(named=True)
    }
    provider = frame["provider"].to_numpy()
    model = frame["model"].to_numpy()
    upper = (frame["tier_min_prompt_tokens"] > 0).to_numpy()
    bounds = np.flatnonzero(np.r_[True, provider[1:] != provider[:-1], True])
    memo, rows = _Memo(), []
    for component, column in COMPONENTS.items():
        for rule in rules:
            ctx = pl.col(f"context_{rule}_tokens")
            pts = frame.select(
                (pl.col(column).cast(pl.Float64) / pl.col(column).cast(pl.Float64).first().over(key)).alias("y"),
                ctx.alias("L"),
                ctx.first().over(key).alias("L0"),
            )
            y, big_l, l0 = (pts[c].fill_null(np.nan).to_numpy() for c in ("y", "L", "L0"))
            ok = upper & np.isfinite(y) & np.isfinite(big_l) & np.isfinite(l0)
            for start, end in zip(bounds[:-1], bounds[1:]):
                sel = np.flatnonzero(ok[start:end]) + start
                members = sorted(set(model[sel]))
                if len(members) < min_models:
                    continue
                kappas = np.array(
                    [own.get((provider[start], m, component, rule), np.nan) for m in members], dtype=float
                )
                kappas = kappas[np.isfinite(kappas)]
                spread = float(kappas.max() / kappas.min()) if kappas.size and kappas.min() > 0 else np.nan
                x = ((big_l[sel] - y[sel] * l0[sel]) / MEGA)[:, None]
                r = memo.fit(_through_origin, x, y[sel] - 1.0, [0.1], ("kappa",), ([0.0], [np.inf]))
                lo, hi = r.interval("kappa")
                rows.append(
                    {
                        "provider": provider[start],
                        "component": component,
                        "rule": rule,
                        "pool_models": ",".join(members),
                        "pool_model_count": len(members),
                        "pool_spread_ratio": spread,
                        "pool_plausible": bool(np.isfinite(spread) and spread <= POOL_PLAUSIBLE_SPREAD_RATIO),
                        "status": r.status,
                        "fit_interval_kind": r.interval_kind,
                        "n_points": r.n_points,
                        "fit_message": r.message,
                        "uplift_per_mtok_context_frac": r["kappa"],
                        "uplift_fit_low_per_mtok_context_frac": lo,
                        "uplift_fit_high_per_mtok_context_frac": hi,
                    }
                )
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


# ---------------------------------------------------------------------------- from slope to bytes


@formula("∂cost/∂b_kv = p / (W·mbu)", "lecture a.4")
def usd_per_token_per_kv_byte(usd_per_chip_hour, hbm_bandwidth_bytes_per_s, mbu):
    """What one byte of KV read per generated token costs [$/token per byte] = p / (W·mbu) (lecture a.4, G cancels).

    Evaluated with the roofline's own functions: the cost per token of a pass that reads one byte (B = 1,
    L = 1, b_kv = 1, no weights) on one chip.
    """
    t = roofline.memory_time_s(1.0, 1.0, 1.0, 0.0, 0.0, 1.0, hbm_bandwidth_bytes_per_s, mbu=mbu)
    return roofline.usd_per_token(t, 1.0, 1.0, usd_per_chip_hour)


@formula("b_kv = k·(1 − margin)·W·mbu / p", "lecture a.4, f.1")
def kv_bytes_from_slope(
    slope_usd_per_mtok_per_mtok_context, gross_margin_frac, usd_per_chip_hour, hbm_bandwidth_bytes_per_s, mbu
):
    """Method (a): b_kv = k · (1 − margin) · W · mbu / p  [bytes/token]; k converted from $/MTok per Mtok of context."""
    slope_usd_per_token_per_token = np.divide(slope_usd_per_mtok_per_mtok_context, MEGA * MEGA)
    cost = slope_usd_per_token_per_token * np.subtract(1.0, gross_margin_frac)
    return cost / usd_per_token_per_kv_byte(usd_per_chip_hour, hbm_bandwidth_bytes_per_s, mbu)


@formula("b_kv = b_w·N_act / (R·L*)", "lecture f.1")
def kv_bytes_at_crossover(critical_ratio, weight_bytes_per_param, params_active, crossover_tokens):
    """Method (b): b_kv = b_w · N_act / (R · L*)  [bytes/token] (lecture f.1).

    The roofline's L* = b_w·N_act/(R·b_kv) is symmetric in L* and b_kv, so it is evaluated by
    :func:`econ.physics.roofline.critical_context_tokens` with the threshold in b_kv's place.
    """
    return roofline.critical_context_tokens(critical_ratio, weight_bytes_per_param, params_active, crossover_tokens)


@formula("implied / true b_kv, with fit and scenario intervals", "econ validation against open models")
def implied_kv(fits: pl.DataFrame, assumptions) -> pl.DataFrame:
    """Add both readings' KV bytes per token, their fit and scenario intervals, and implied/true for open models.

    ``fits``: :func:`fit_schedules` rows joined with the architecture columns of
    :func:`econ.fits.price_selection.attach_architecture` (``params_active``, ``kv_bytes_per_token`` may be null).
    ``assumptions``: :class:`econ.fits.assumptions.Assumptions`.
    """
    if fits.height == 0:
        return fits
    a, hw = assumptions, assumptions.central_hardware
    c = a.central

    def col(name):
        return (
            fits[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
            if name in fits.columns
            else np.full(fits.height, np.nan)
        )

    slope, s_lo, s_hi = (
        col(n)
        for n in (
            "slope_usd_per_mtok_per_mtok_context",
            "slope_fit_low_usd_per_mtok_per_mtok_context",
            "slope_fit_high_usd_per_mtok_per_mtok_context",
        )
    )
    arch_n_act, arch_kv, threshold = col("params_active"), col("kv_bytes_per_token"), col("crossover_threshold_tokens")
    has_arch = np.isfinite(arch_n_act)

    def slope_kv(s, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac, bandwidth):
        return kv_bytes_from_slope(s, gross_margin_frac, usd_per_chip_hour, bandwidth, decode_mbu_frac)

    central_slope = slope_kv(
        slope, c["usd_per_chip_hour"], c["gross_margin_frac"], c["decode_mbu_frac"], hw["hbm_bandwidth_bytes_per_s"]
    )
    with np.errstate(invalid="ignore"):
        fit_lo = slope_kv(
            s_lo, c["usd_per_chip_hour"], c["gross_margin_frac"], c["decode_mbu_frac"], hw["hbm_bandwidth_bytes_per_s"]
        )
        fit_hi = slope_kv(
            s_hi, c["usd_per_chip_hour"], c["gross_margin_frac"], c["decode_mbu_frac"], hw["hbm_bandwidth_bytes_per_s"]
        )
    slope_names = ("usd_per_chip_hour", "gross_margin_frac", "decode_mbu_frac")
    cols = {"slope": slope, "n_act": arch_n_act, "kv": arch_kv, "threshold": threshold}

    def cross_kv(hw, cols, frontier_active_params):
        n_act = np.where(np.isfinite(cols["n_act"]), cols["n_act"], frontier_active_params)
        return kv_bytes_at_crossover(hw["critical_batch_ratio"], hw["weight_bytes_per_param"], n_act, cols["threshold"])

    def slope_mc(hw, cols, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac):
        return slope_kv(
            cols["slope"], usd_per_chip_hour, gross_margin_frac, decode_mbu_frac, hw["hbm_bandwidth_bytes_per_s"]
        )

    mc_slope = a.propagate_rows(slope_mc, slope_names, cols)
    mc_cross = a.propagate_rows(cross_kv, ("frontier_active_params",), cols)
    mc_slope_ratio = a.propagate_rows(
        lambda hw, cols, **kw: slope_mc(hw, cols, **kw) / (cols["kv"] * hw["kv_scale"]), slope_names, cols
    )
    mc_cross_ratio = a.propagate_rows(
        lambda hw, cols, **kw: cross_kv(hw, cols, **kw) / (cols["kv"] * hw["kv_scale"]),
        ("frontier_active_params",),
        cols,
    )
    true_kv = arch_kv * a.kv_scale

    def n_act(frontier_active_params):
        return np.where(has_arch, arch_n_act, frontier_active_params)

    f = pl.Series
    return fits.with_columns(
        f("kv_slope_bytes_per_token", central_slope),
        f("kv_slope_fit_low_bytes_per_token", fit_lo),
        f("kv_slope_fit_high_bytes_per_token", fit_hi),
        f("kv_slope_scenario_low_bytes_per_token", mc_slope.low),
        f("kv_slope_scenario_high_bytes_per_token", mc_slope.high),
        f("kv_crossover_bytes_per_token", np.asarray(mc_cross.central, dtype=float)),
        f("kv_crossover_scenario_low_bytes_per_token", mc_cross.low),
        f("kv_crossover_scenario_high_bytes_per_token", mc_cross.high),
        f("params_active_used", n_act(c["frontier_active_params"])),
        f("params_active_source", np.where(has_arch, "architecture", "scenario frontier_active_params")),
        f("kv_true_bytes_per_token", true_kv),
        f("kv_slope_over_true_ratio", central_slope / true_kv),
        f("kv_slope_over_true_scenario_low_ratio", mc_slope_ratio.low),
        f("kv_slope_over_true_scenario_high_ratio", mc_slope_ratio.high),
        f("kv_crossover_over_true_ratio", np.asarray(mc_cross.central, dtype=float) / true_kv),
        f("kv_crossover_over_true_scenario_low_ratio", mc_cross_ratio.low),
        f("kv_crossover_over_true_scenario_high_ratio", mc_cross_ratio.high),
    ).with_columns(pl.col(pl.Float64).fill_nan(None))


@formula("c(L) = a + k·L at L = 0 and at the schedule's end; the tier prices as steps", "lecture f.1")
def tier_steps(tiers: pl.DataFrame, fits: pl.DataFrame) -> pl.DataFrame:
    """Each schedule's tier prices as steps and its fitted line, from context 0 to the schedule's end.

    ``tiers``: provider, model, tier_min_prompt_tokens, input_usd_per_mtok, max_input_tokens; ``fits``: provider,
    model, status, intercept_usd_per_mtok (a), slope_usd_per_mtok_per_mtok_context (k). The end is the largest
    accepted prompt, or 1.25 x the highest threshold where that is not known.
    """
    key = ["provider", "model"]
    ends = tiers.group_by(key).agg(
        pl.max_horizontal(pl.col("max_input_tokens").max().fill_null(0), 1.25 * pl.col("tier_min_prompt_tokens").max())
        .cast(pl.Float64)
        .alias("end_tokens"),
        pl.col("input_usd_per_mtok").sort_by("tier_min_prompt_tokens").last().alias("last_usd_per_mtok"),
    )
    steps = tiers.select(
        *key,
        pl.lit("tier").alias("kind"),
        pl.col("tier_min_prompt_tokens").cast(pl.Float64).alias("context_tokens"),
        pl.col("input_usd_per_mtok").alias("usd_per_mtok"),
        "tier_min_prompt_tokens",
        pl.lit(None, pl.String).alias("status"),
        pl.lit(None, pl.Float64).alias("slope_usd_per_mtok_per_mtok_context"),
    )
    last = ends.select(
        *key,
        pl.lit("tier").alias("kind"),
        pl.col("end_tokens").alias("context_tokens"),
        pl.col("last_usd_per_mtok").alias("usd_per_mtok"),
        pl.lit(None, pl.Int64).alias("tier_min_prompt_tokens"),
        pl.lit(None, pl.String).alias("status"),
        pl.lit(None, pl.Float64).alias("slope_usd_per_mtok_per_mtok_context"),
    )
    line = fits.filter(pl.col("slope_usd_per_mtok_per_mtok_context").is_not_null()).join(ends, on=key)
    a, k = pl.col("intercept_usd_per_mtok"), pl.col("slope_usd_per_mtok_per_mtok_context")
    start = line.select(
        *key,
        pl.lit("fit").alias("kind"),
        pl.lit(0.0).alias("context_tokens"),
        a.alias("usd_per_mtok"),
        pl.lit(None, pl.Int64).alias("tier_min_prompt_tokens"),
        "status",
        k,
    )
    end = line.select(
        *key,
        pl.lit("fit").alias("kind"),
        pl.col("end_tokens").alias("context_tokens"),
        (a + k * pl.col("end_tokens") / MEGA).alias("usd_per_mtok"),
        pl.lit(None, pl.Int64).alias("tier_min_prompt_tokens"),
        "status",
        k,
    )
    return pl.concat([steps, last, start, end], how="vertical_relaxed").sort(*key, "kind", "context_tokens")
