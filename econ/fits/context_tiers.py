"""Long-context price tiers → what one more token of context costs, per price component (lecture f.1–f.2).

A tiered schedule bills the whole request at the tier's rate once the prompt exceeds the tier threshold. Read
backwards, each price component is a cost per token that grows with context,

    c(L) = a + k · L                                  (lecture f.1: memory cost rises linearly with L)

with each tier standing at the mean context of the requests it holds. Default rule ``power_law``: request density
∝ L^−α inside a tier (α = the scenario's ``tier_context_density_exponent_ratio``), the request-weighted mean E[L]
for output and the token-weighted mean E[L²]/E[L] for input and cache reads (:mod:`econ.physics.context_mix`;
why the means differ is there). ``midpoint`` (the even spread, α = 0), ``lower``, ``upper`` and ``geometric``
stay as sensitivity rules. The slope k is fitted with the guarded wrapper: two tiers are ``exact`` (no fit
interval), three or four (Qwen) are ``ok`` with a covariance interval.

What k means depends on the component; the readings are :mod:`econ.fits.context_readings`:

- output → KV (or indexer-key, window, state) bytes a decode step reads per context token;
- input → prefill attention FLOPs per prompt token per context token;
- cache read → a billing rule (a cached token's cost does not grow with context), no cost is read;
- the lecture's crossover reading (first threshold = L*) is kept as a labelled hypothesis.

Pooling: where one *relative* slope κ (fraction of the zero-context price added per
million context tokens) may hold for a provider's models — OpenAI's >272k tiers are
uniformly 2× input / 1.5× output — the provider's standard schedules are fitted together
with c_m(L) = a_m · (1 + κ·L), in the linear form y − 1 = κ · (L − y·L₀) with y the tier
price over the base-tier price and L₀ the base tier's representative context.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.tier_lines import LEVEL, fit_lines, joined, ols_slope, pack_left
from econ.fits.wrapper import FitResult, fit
from econ.formula import formula
from econ.physics.context_mix import MIN_PROMPT_TOKENS, tier_mean_context_tokens
from econ.units import MEGA

RULES = ("power_law", "midpoint", "lower", "upper", "geometric")
"""Representative context of a tier spanning [threshold, next threshold or max_input_tokens]: ``power_law`` the
mean under density ∝ L^−α (default; E[L] for output, E[L²]/E[L] for input and cache reads), ``midpoint``
(lo+hi)/2, ``lower`` lo, ``upper`` hi, ``geometric`` √(max(lo, 1,000)·hi)."""
DEFAULT_RULE = "power_law"
GEOMETRIC_FLOOR_TOKENS = MIN_PROMPT_TOKENS
"""Lower edge used by the ``geometric`` rule for the base tier (a prompt is at least a short system prompt)."""
TOKEN_WEIGHTED = ("input", "cache_read")
"""Components billed per prompt token: their tier context is the token-weighted mean under ``power_law``."""
EXPONENT_GRID = tuple(round(0.25 * i, 2) for i in range(13))
"""α values (0 … 3) at which every ``power_law`` slope is also fitted, for the scenario interval over α."""

COMPONENTS = {"input": "input_usd_per_mtok", "output": "output_usd_per_mtok", "cache_read": "cache_read_usd_per_mtok"}
POOL_PLAUSIBLE_SPREAD_RATIO = 1.25
"""A pool is called plausible when its members' own relative slopes differ by at most this factor."""

SCHEDULE_KEY = ("source", "provider", "model", "variant")


@formula(
    "tier context = mean under density ∝ L^−α (default); also (lo + hi)/2, lo, hi, √(max(lo, 1,000)·hi)", "econ rule"
)
def representative_contexts(tiers: pl.DataFrame, *, exponent: float = 0.0) -> pl.DataFrame:
    """Add ``tier_lower_tokens``, ``tier_upper_tokens`` and one ``context_<rule>_tokens`` column per rule, plus
    ``context_power_law_token_weighted_tokens`` (E[L²]/E[L] at α = ``exponent``).

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
    lows = out["tier_lower_tokens"].to_numpy()
    highs = out["tier_upper_tokens"].fill_null(np.nan).to_numpy()
    return out.with_columns(
        pl.Series("context_power_law_tokens", tier_mean_context_tokens(lows, highs, exponent), nan_to_null=True),
        pl.Series(
            "context_power_law_token_weighted_tokens",
            tier_mean_context_tokens(lows, highs, exponent, token_weighted=True),
            nan_to_null=True,
        ),
        ((lo_ + hi_) / 2).alias("context_midpoint_tokens"),
        lo_.alias("context_lower_tokens"),
        hi_.alias("context_upper_tokens"),
        (pl.max_horizontal(lo_, pl.lit(GEOMETRIC_FLOOR_TOKENS)) * hi_).sqrt().alias("context_geometric_tokens"),
    )


def context_column(rule: str, component: str) -> str:
    """The representative-context column a component's fit reads under a rule (module docstring)."""
    if rule == "power_law" and component in TOKEN_WEIGHTED:
        return "context_power_law_token_weighted_tokens"
    return f"context_{rule}_tokens"


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


BILLING_RULE_RTOL = 0.01
"""Cache-read prices within 1 % of one fixed fraction of the input price in every tier are a billing rule."""


@formula("cache read / input per tier: one fraction in every tier is a billing rule, not a cost", "lecture g.1")
def billing_rule(input_prices: np.ndarray, cache_read_prices: np.ndarray) -> tuple[str, str]:
    """(the cache-read / input ratio of each tier, comma-separated; what it says).

    A cached token is read, not recomputed, so its cost does not grow with the context the way the input's
    attention does; a cache-read price that moves with the input price in every tier is the price list's rule
    (cache read = a fixed fraction of input), not a cost to read backwards.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = cache_read_prices / input_prices
    shown = ",".join("" if not np.isfinite(r) else f"{r:.4g}" for r in ratio)
    finite = ratio[np.isfinite(ratio)]
    if finite.size < 2:
        return shown, "not read: fewer than two tiers with both prices"
    if np.all(np.abs(finite / finite[0] - 1.0) <= BILLING_RULE_RTOL):
        return shown, f"billing rule: cache read = {finite[0]:.3g} x input in every tier (no cost is read from it)"
    return shown, "cache read / input changes across tiers: not one fraction (still no KV cost is read from it)"


@formula("c(L) = a + k·L fitted to the tier prices at their representative contexts", "lecture f.1")
def fit_schedules(tiers: pl.DataFrame, *, rules: tuple[str, ...] = RULES, exponent: float = 0.0) -> pl.DataFrame:
    """The per-schedule fits: one row per schedule × component × rule (schedules with more than one tier).

    ``tiers`` as for :func:`representative_contexts` plus the price columns of :data:`COMPONENTS`; ``exponent`` is
    α of the ``power_law`` rule. Components whose base-tier price is missing or not positive are skipped (free
    tiers, schedules without cache prices). Internal list columns (dropped before a table is written):
    ``_contexts`` (the tier contexts used), ``_slope_ratio_grid`` (the unbounded least-squares slope at each α of
    :data:`EXPONENT_GRID` over the one at ``exponent``; 1 for the other rules).
    """
    key = list(SCHEDULE_KEY)
    frame = representative_contexts(tiers, exponent=exponent).sort(*key, "tier_min_prompt_tokens")
    if frame.height == 0:
        return pl.DataFrame()
    ids = frame.select(pl.struct(key).rank("dense").alias("_id"))["_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    n_tiers = np.diff(np.r_[starts, ids.size])
    width = int(n_tiers.max())
    tier = np.arange(width)[None, :]
    present = tier < n_tiers[:, None]  # schedule x tier: the padded grid every array below is read on
    at = np.where(present, starts[:, None] + tier, 0)

    def grid(values: np.ndarray) -> np.ndarray:
        return np.where(present.reshape(present.shape + (1,) * (values.ndim - 1)), values[at], np.nan)

    lows = frame["tier_lower_tokens"].to_numpy().astype(float)
    highs = frame["tier_upper_tokens"].fill_null(np.nan).to_numpy()
    price = {c: grid(frame[col].cast(pl.Float64).fill_null(np.nan).to_numpy()) for c, col in COMPONENTS.items()}
    context = {
        name: grid(frame[name].fill_null(np.nan).to_numpy())
        for name in {context_column(r, c) for r in rules for c in COMPONENTS}
    }
    alphas = np.asarray(EXPONENT_GRID)
    blocks = []  # one per component x rule: the rows of the schedules that component is fitted for
    for order_component, component in enumerate(COMPONENTS):
        prices = price[component]
        keep = np.isfinite(prices)
        fitted = (n_tiers > 1) & np.isfinite(prices[:, 0]) & (prices[:, 0] > 0) & (keep.sum(axis=1) >= 2)
        weighted = component in TOKEN_WEIGHTED
        at_exponent = grid(tier_mean_context_tokens(lows, highs, exponent, token_weighted=weighted))
        at_alphas = grid(
            tier_mean_context_tokens(lows[:, None], highs[:, None], alphas[None, :], token_weighted=weighted)
        )
        ok = keep & np.isfinite(at_exponent) & np.all(np.isfinite(at_alphas), axis=2)
        x_ok, n_ok = pack_left(at_exponent, ok)
        y_ok, _ = pack_left(prices, ok)
        with np.errstate(invalid="ignore", divide="ignore"):
            slope_ratios = (
                ols_slope(
                    np.stack([pack_left(at_alphas[:, :, g], ok)[0] for g in range(alphas.size)], axis=1),
                    np.broadcast_to(y_ok[:, None, :], (y_ok.shape[0], alphas.size, width)),
                    np.broadcast_to(n_ok[:, None], (n_ok.size, alphas.size)),
                )
                / ols_slope(x_ok, y_ok, n_ok)[:, None]
            )
        for order_rule, rule in enumerate(rules):
            blocks.append(
                {
                    "schedule": np.flatnonzero(fitted),
                    "order": np.full(fitted.sum(), order_component * len(rules) + order_rule),
                    "component": component,
                    "rule": rule,
                    "contexts": context[context_column(rule, component)][fitted],
                    "prices": prices[fitted],
                    "ratio_grid": slope_ratios[fitted] if rule == "power_law" else np.ones((fitted.sum(), alphas.size)),
                }
            )
    schedule = np.concatenate([b["schedule"] for b in blocks])
    if schedule.size == 0:
        return pl.DataFrame()
    rows = np.lexsort((np.concatenate([b["order"] for b in blocks]), schedule))  # schedule, component, rule
    schedule = schedule[rows]
    component = np.concatenate([np.full(b["schedule"].size, b["component"], dtype=object) for b in blocks])[rows]
    rule = np.concatenate([np.full(b["schedule"].size, b["rule"], dtype=object) for b in blocks])[rows]
    contexts, prices, ratio_grid = (
        np.concatenate([b[name] for b in blocks])[rows] for name in ("contexts", "prices", "ratio_grid")
    )
    keep = np.isfinite(contexts) & np.isfinite(prices)
    x, count = pack_left(contexts / MEGA, keep)
    base = prices[:, 0]
    y, _ = pack_left(prices / base[:, None], keep)
    n = n_tiers[schedule]
    cache = component == "cache_read"
    said = np.full((starts.size, 2), None, dtype=object)  # per schedule: the cache-read ratios and what they say
    for s_ in np.unique(schedule[cache]):  # one formula call per schedule with cache prices (its text is per schedule)
        said[s_] = billing_rule(price["input"][s_, : n_tiers[s_]], price["cache_read"][s_, : n_tiers[s_]])
    said = np.where(cache[:, None], said[schedule], None)
    threshold = frame.select(pl.col("tier_min_prompt_tokens").cast(pl.Int64))["tier_min_prompt_tokens"].to_numpy()
    labels = frame.select(key)[starts[schedule].tolist()]
    in_row = tier < n[:, None]
    return labels.with_columns(
        pl.Series("n_tiers", n, dtype=pl.Int64),
        joined("tier_thresholds_tokens", grid(threshold.astype(float))[schedule], in_row),
        pl.Series("crossover_threshold_tokens", threshold[starts[schedule] + 1].astype(float)),
        pl.Series("component", component, dtype=pl.String),
        pl.Series("rule", rule, dtype=pl.String),
        joined("representative_contexts_tokens", contexts, in_row),
        pl.Series("base_price_usd_per_mtok", base),
        *(pl.Series(name, values) for name, values in fit_lines(x, y, count, base).items()),
        pl.Series("cache_read_over_input_ratios", said[:, 0].tolist(), dtype=pl.String),
        pl.Series("billing_rule", said[:, 1].tolist(), dtype=pl.String),
        pl.DataFrame({"row": np.nonzero(in_row)[0], "_contexts": contexts[in_row]})
        .group_by("row", maintain_order=True)
        .agg("_contexts")["_contexts"],
        pl.Series("_slope_ratio_grid", np.nan_to_num(ratio_grid, nan=1.0).tolist(), dtype=pl.List(pl.Float64)),
    )


@formula("y − 1 = κ·(L − y·L₀), one κ per provider", "econ pooled reading of lecture f.1")
def fit_pools(
    tiers: pl.DataFrame,
    per_schedule: pl.DataFrame,
    *,
    rules: tuple[str, ...] = RULES,
    min_models: int = 2,
    exponent: float = 0.0,
) -> pl.DataFrame:
    """One pooled relative slope κ per provider × component × rule over the provider's standard tiered schedules.

    Returns rows with ``pool_models`` (members), ``pool_spread_ratio`` (max/min of the members' own relative
    slopes), ``pool_plausible`` (spread ≤ :data:`POOL_PLAUSIBLE_SPREAD_RATIO`) and the wrapper's fit of κ.
    """
    if per_schedule.height == 0:
        return pl.DataFrame()
    key = list(SCHEDULE_KEY)
    frame = (
        representative_contexts(tiers, exponent=exponent)
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
            ctx = pl.col(context_column(rule, component))
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
