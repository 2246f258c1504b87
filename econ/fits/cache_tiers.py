"""Prompt-cache prices → the memory tier behind them (lecture g.1–g.4).

A cache write costs more than plain input because the provider must *hold* the prompt's
KV for the cache duration T; a cache read is cheap because retrieving stored KV is cheaper
than recomputing it (lecture g.1). So the write premium over input, spread over T, is an
implied hold price, and Gemini-style storage prices are one directly:

    hold price [$/(token·h)] = (write_T − input) / T        (T = 5 min, 1 h, 12 h)
                             = storage price                (per token-hour, published)
    hold cost               = hold price × (1 − margin)
    per GB-hour              = hold cost / b_kv

b_kv comes from the architecture (open-weight models), or from the long-context fit
(``econ.fits.context_tiers``): the crossover reading b_w·N_act/(R·L*) at the model's first
tier threshold (or the lecture's L* = 200k when it has none) with the scenario's
``frontier_active_params``, and the slope reading of the model's input tiers where it has
them. ``kv_method`` says which; a closed model gets one row per available reading.

Each priced duration is compared with every memory tier (``memory_tiers`` rows) and with
recomputation, using :mod:`econ.physics.memory_tiers`: the cost of holding one token for T
and reading it back once is retrieve + hold·T. What the user pays the provider for that
service is the write premium plus the cache-read price. ``cheapest_tier`` is the argmin of
cost over tiers and recompute (lecture g.2); ``margin_over_cheapest_frac`` = 1 − its cost /
the cache price; ``fastest_covered_tier`` is the fastest stored tier whose cost the price
covers at the scenario's margin; ``drain_time_tier`` is the tier whose drain time C/W is
closest to T in log terms (lecture g.4: "the drain time of the memory tier … equal to five
minutes").
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.context_readings import kv_bytes_at_crossover, kv_bytes_from_slope
from econ.formula import formula
from econ.physics import memory_tiers
from econ.physics.hardware import drain_time_s
from econ.units import MEGA, SECONDS_PER_HOUR

ITEMS = {
    "write_5m": ("cache_write_5m_usd_per_mtok", 300.0),
    "write_1h": ("cache_write_1h_usd_per_mtok", 3_600.0),
    "write_12h": ("cache_write_12h_usd_per_mtok", 43_200.0),
    "storage_1h": ("cache_storage_usd_per_mtok_hour", 3_600.0),
}
"""Priced cache durations: price column and hold time T [s] (storage is priced per token-hour: one hour)."""

LECTURE_CROSSOVER_TOKENS = 200_000.0
"""L* used by the crossover reading for a model without long-context tiers (lecture f.1: "the bump is at 200k")."""

TIER_SPEED_ORDER = ("hbm", "ddr", "flash", "disk")
KV_METHODS = ("architecture", "crossover", "slope")


@formula("hold price = (write − input)/T, or the storage price per token-hour", "lecture g.3")
def cache_items(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per price row × priced cache duration: premium per token held for T and the hold price per hour.

    ``rows``: price rows (base tier) with ``input_usd_per_mtok``, ``cache_read_usd_per_mtok`` and the columns of
    :data:`ITEMS`. A write not dearer than input implies no hold price (``status = write_not_above_input``).
    """
    parts = []
    for item, (column, hold_s) in ITEMS.items():
        if column not in rows.columns:
            continue
        price = pl.col(column).cast(pl.Float64)
        premium = (
            price * (hold_s / SECONDS_PER_HOUR) if item.startswith("storage") else price - pl.col("input_usd_per_mtok")
        )
        parts.append(
            rows.filter(pl.col(column).is_not_null()).with_columns(
                pl.lit(item).alias("cache_item"),
                pl.lit(hold_s).alias("hold_time_s"),
                price.alias("item_price_usd_per_mtok"),
                premium.alias("premium_usd_per_mtok"),
            )
        )
    if not parts:
        return pl.DataFrame()
    out = pl.concat(parts, how="diagonal_relaxed")
    return out.with_columns(
        pl.when(pl.col("premium_usd_per_mtok") > 0)
        .then(pl.lit("ok"))
        .otherwise(pl.lit("write_not_above_input"))
        .alias("status"),
        pl.when(pl.col("premium_usd_per_mtok") > 0)
        .then(pl.col("premium_usd_per_mtok") / (pl.col("hold_time_s") / SECONDS_PER_HOUR))
        .alias("hold_price_usd_per_mtok_hour"),
        (
            pl.when(pl.col("premium_usd_per_mtok") > 0).then(pl.col("premium_usd_per_mtok"))
            + pl.col("cache_read_usd_per_mtok").cast(pl.Float64).fill_null(0.0)
        ).alias("cache_price_usd_per_mtok"),
    )


def with_kv_methods(items: pl.DataFrame, slope: pl.DataFrame | None) -> pl.DataFrame:
    """One row per item × available KV reading (``kv_method``), with the inputs each reading needs.

    ``items`` carries the architecture columns and ``tier_threshold_tokens`` (first long-context threshold or
    null); ``slope`` (optional) maps ``name_key`` → ``slope_usd_per_mtok_per_mtok_context`` (+ fit low/high).
    """
    if items.height == 0:  # keep the column, so rows of other statuses can be stacked under it
        return items.with_columns(pl.lit(None, pl.String).alias("kv_method"))
    has_arch = pl.col("kv_bytes_per_token").is_not_null() & pl.col("params_active").is_not_null()
    arch = items.filter(has_arch).with_columns(pl.lit("architecture").alias("kv_method"))
    closed = items.filter(~has_arch)
    cross = closed.with_columns(
        pl.lit("crossover").alias("kv_method"),
        pl.col("tier_threshold_tokens").cast(pl.Float64).fill_null(LECTURE_CROSSOVER_TOKENS).alias("crossover_tokens"),
        pl.when(pl.col("tier_threshold_tokens").is_null())
        .then(pl.lit("lecture L* = 200k (no tiers)"))
        .otherwise(pl.lit("model's first tier threshold"))
        .alias("crossover_source"),
    )
    frames = [arch, cross]
    if slope is not None and slope.height:
        frames.append(closed.join(slope, on="name_key", how="inner").with_columns(pl.lit("slope").alias("kv_method")))
    return pl.concat(frames, how="diagonal_relaxed")


def _kv(cols, hw, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac, frontier_active_params):
    """b_kv [bytes/token] per row by its method code (0 architecture, 1 crossover, 2 slope)."""
    arch = cols["kv"] * hw["kv_scale"]
    cross = kv_bytes_at_crossover(
        hw["critical_batch_ratio"], hw["weight_bytes_per_param"], frontier_active_params, cols["crossover"]
    )
    slope = kv_bytes_from_slope(
        cols["slope"], gross_margin_frac, usd_per_chip_hour, hw["hbm_bandwidth_bytes_per_s"], decode_mbu_frac
    )
    return np.where(cols["method"] == 0, arch, np.where(cols["method"] == 1, cross, slope))


@formula("hold cost = hold price·(1 − margin), per GB-hour = cost / (b_kv·T)", "lecture g.2–g.3")
def implied_hold_costs(frame: pl.DataFrame, assumptions) -> pl.DataFrame:
    """Add b_kv, hold cost per token-hour and per GB-hour with fit (slope reading) and scenario intervals."""
    if frame.height == 0:
        return frame
    a, c = assumptions, assumptions.central

    def arr(name):
        return (
            frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
            if name in frame.columns
            else np.full(frame.height, np.nan)
        )

    method = (
        frame["kv_method"].replace_strict({m: i for i, m in enumerate(KV_METHODS)}, return_dtype=pl.Float64).to_numpy()
    )
    cols = {
        "method": method,
        "kv": arr("kv_bytes_per_token"),
        "crossover": arr("crossover_tokens"),
        "slope": arr("slope_usd_per_mtok_per_mtok_context"),
        "hold": arr("hold_price_usd_per_mtok_hour"),
    }
    names = ("usd_per_chip_hour", "gross_margin_frac", "decode_mbu_frac", "frontier_active_params")

    def kv(hw, cols, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac, frontier_active_params):
        return _kv(cols, hw, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac, frontier_active_params)

    def per_gb(hw, cols, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac, frontier_active_params):
        b = _kv(cols, hw, usd_per_chip_hour, gross_margin_frac, decode_mbu_frac, frontier_active_params)
        return cols["hold"] * (1.0 - gross_margin_frac) / MEGA / b * 1e9

    kv_mc = a.propagate_rows(kv, names, cols)
    gb_mc = a.propagate_rows(per_gb, names, cols)
    cost_mc = a.propagate_rows(
        lambda hw, cols, gross_margin_frac: cols["hold"] * (1.0 - gross_margin_frac),
        ("gross_margin_frac",),
        cols,
        hardware=False,
    )
    # fit interval: only the slope reading carries one (from the long-context fit of the model's input tiers)
    hold_cost = cols["hold"] * (1.0 - c["gross_margin_frac"])
    hw0 = a.central_hardware
    with np.errstate(invalid="ignore", divide="ignore"):
        kv_lo, kv_hi = (
            kv_bytes_from_slope(
                arr(n),
                c["gross_margin_frac"],
                c["usd_per_chip_hour"],
                hw0["hbm_bandwidth_bytes_per_s"],
                c["decode_mbu_frac"],
            )
            for n in ("slope_fit_low_usd_per_mtok_per_mtok_context", "slope_fit_high_usd_per_mtok_per_mtok_context")
        )
        gb_fit_lo = np.where(method == 2, hold_cost / MEGA / kv_hi * 1e9, np.nan)
        gb_fit_hi = np.where(method == 2, hold_cost / MEGA / np.where(kv_lo > 0, kv_lo, 0.0) * 1e9, np.nan)
    f = pl.Series
    return frame.with_columns(
        f("kv_bytes_per_token_used", np.asarray(kv_mc.central, dtype=float)),
        f("kv_scenario_low_bytes_per_token", kv_mc.low),
        f("kv_scenario_high_bytes_per_token", kv_mc.high),
        f("hold_cost_usd_per_mtok_hour", hold_cost),
        f("hold_cost_scenario_low_usd_per_mtok_hour", cost_mc.low),
        f("hold_cost_scenario_high_usd_per_mtok_hour", cost_mc.high),
        f("hold_cost_usd_per_gb_hour", np.asarray(gb_mc.central, dtype=float)),
        f("hold_cost_fit_low_usd_per_gb_hour", gb_fit_lo),
        f("hold_cost_fit_high_usd_per_gb_hour", gb_fit_hi),
        f("hold_cost_scenario_low_usd_per_gb_hour", gb_mc.low),
        f("hold_cost_scenario_high_usd_per_gb_hour", gb_mc.high),
        f(
            "fit_interval_kind",
            np.where(
                method == 2,
                frame["fit_interval_kind"].fill_null("none").to_numpy()
                if "fit_interval_kind" in frame.columns
                else "none",
                "not a fit",
            ),
        ),
    ).with_columns(pl.col(pl.Float64).fill_nan(None))


@formula("cheapest tier = argmin over tiers of retrieve + hold·T, against the price", "lecture g.2, g.4")
def compare_tiers(frame: pl.DataFrame, tiers: pl.DataFrame, assumptions) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Compare every priced duration with every memory tier and recompute (module docstring).

    ``frame``: :func:`implied_hold_costs` output (needs ``kv_bytes_per_token_used``, ``hold_time_s``,
    ``cache_price_usd_per_mtok``, ``params_active_used``). ``tiers``: the ``memory_tiers`` table.
    Returns (``frame`` with the tier verdicts, one row per frame row × tier).
    """
    if frame.height == 0:
        return frame, pl.DataFrame()
    a, c, hw = assumptions, assumptions.central, assumptions.central_hardware
    kv = frame["kv_bytes_per_token_used"].cast(pl.Float64).fill_null(np.nan).to_numpy()[:, None]
    hold_s = frame["hold_time_s"].to_numpy()[:, None]
    price = frame["cache_price_usd_per_mtok"].cast(pl.Float64).fill_null(np.nan).to_numpy()[:, None] / MEGA
    n_act = frame["params_active_used"].cast(pl.Float64).fill_null(np.nan).to_numpy()[:, None]
    names = ["recompute", *tiers["tier"].to_list()]
    devices = [f"{a.chip} forward pass ({a.number_format})", *tiers["device"].to_list()]
    cap = np.r_[np.nan, tiers["capacity_bytes"].to_numpy()][None, :]
    bw = np.r_[np.nan, tiers["bandwidth_bytes_per_s"].to_numpy()][None, :]
    usd = np.r_[np.nan, tiers["usd_per_hour"].to_numpy()][None, :]
    hold = np.where(np.arange(len(names)) == 0, 0.0, memory_tiers.hold_usd_per_token_s(kv, cap, usd))
    recompute = memory_tiers.recompute_usd_per_token(
        n_act, hw["peak_flop_per_s"], c["usd_per_chip_hour"], mfu=c["prefill_mfu_frac"]
    )
    retrieve = np.where(
        np.arange(len(names)) == 0,
        recompute,
        memory_tiers.tier_retrieve_usd_per_token(np.array(names)[None, :], kv, bw, usd),
    )
    cost = memory_tiers.tier_cost_usd_per_token(retrieve, hold, hold_s)
    valid = np.all(np.isfinite(cost), axis=1)
    index, cheapest = memory_tiers.cheapest_tier(np.where(np.isfinite(retrieve), retrieve, np.inf), hold, hold_s)
    budget = price * (1.0 - c["gross_margin_frac"])
    covered = cost <= budget
    speed = np.array([TIER_SPEED_ORDER.index(t) if t in TIER_SPEED_ORDER else 99 for t in names])
    stored = np.arange(len(names)) > 0
    fastest = np.where(covered & stored[None, :], speed[None, :], 99).min(axis=1)
    drain = np.r_[np.nan, drain_time_s(tiers["capacity_bytes"].to_numpy(), tiers["bandwidth_bytes_per_s"].to_numpy())]
    log_gap = np.abs(np.log(drain[None, 1:]) - np.log(hold_s))
    by_drain = np.argmin(log_gap, axis=1) + 1
    name_arr, dev_arr = np.array(names, dtype=object), np.array(devices, dtype=object)
    verdict = frame.with_columns(
        pl.Series("cheapest_tier", np.where(valid, name_arr[index], None), dtype=pl.Utf8),
        pl.Series("cheapest_tier_device", np.where(valid, dev_arr[index], None), dtype=pl.Utf8),
        pl.Series("cheapest_tier_cost_usd_per_mtok", np.where(valid, cheapest * MEGA, np.nan)),
        pl.Series("margin_over_cheapest_frac", np.where(valid, 1.0 - cheapest / price[:, 0], np.nan)),
        pl.Series("price_over_cheapest_cost_ratio", np.where(valid, price[:, 0] / cheapest, np.nan)),
        pl.Series(
            "fastest_covered_tier",
            np.where(
                valid & (fastest < 99), np.array(TIER_SPEED_ORDER + ("",), dtype=object)[np.minimum(fastest, 4)], None
            ),
            dtype=pl.Utf8,
        ),
        pl.Series("drain_time_tier", name_arr[by_drain], dtype=pl.Utf8),
        pl.Series("drain_time_tier_device", dev_arr[by_drain], dtype=pl.Utf8),
        pl.Series("drain_time_tier_s", drain[by_drain]),
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
    n, k = cost.shape
    key = frame.select("row_id")["row_id"].to_numpy()
    detail = pl.DataFrame(
        {
            "row_id": np.repeat(key, k),
            "tier": np.tile(name_arr, n),
            "device": np.tile(dev_arr, n),
            "drain_time_s": np.tile(drain, n),
            "tier_hold_cost_usd_per_mtok_hour": (np.broadcast_to(hold, cost.shape) * SECONDS_PER_HOUR * MEGA).ravel(),
            "tier_retrieve_cost_usd_per_mtok": (np.broadcast_to(retrieve, cost.shape) * MEGA).ravel(),
            "tier_cost_for_hold_time_usd_per_mtok": (cost * MEGA).ravel(),
            "covered_at_scenario_margin": covered.ravel(),
            "margin_over_tier_frac": (1.0 - cost / price).ravel(),
            "price_over_tier_cost_ratio": (price / cost).ravel(),
        }
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
    return verdict, detail
