"""Prompt-cache prices → the cost of holding a prompt's KV → which memory tiers are consistent with it (lecture g).

A cache write costs more than plain input because the provider must *hold* the prompt's KV for the duration T it
sells (lecture g.1); across the durations a provider sells, the premium over input is a one-off part and a part
that grows with T (lecture g.2: cost = retrieve + hold·T):

    premium(T) = write_T − input = w + h·T          fitted over the durations sold (5 min, 1 h, 12 h: least squares)
    h = the storage price per token-hour            where one is published (Gemini-style)

Two durations identify w and h (``exact``; three: ``ok``); one duration alone bounds the hold price by
premium/T (w ≥ 0: ``one_duration``, the interval is [0, premium/T]); a write no dearer than input prices no hold.
The hold price becomes a cost per GB-hour with the KV bytes a token of the prompt holds:

    hold cost [$/GB-h] = h · (1 − margin) / b_held           b_held: the KV bytes a prompt token holds — the
                                                              architecture's (open models), or the range the open
                                                              models span (closed models: not known)

and is compared with each memory tier's cost of holding a GB for an hour on **one cost basis**: its rental-equivalent
$/GB-hour (``memory_tiers.rental_usd_per_gb_hour``: HBM at the chip's rental over its capacity, host memory at a
cloud's memory price, flash and disk at a cloud's SSD and HDD volume prices; a tier without one falls back to device
$/h over capacity, and says so); recompute holds nothing and is not a tier here. A tier is **consistent** when its
holding cost lies inside the interval of the implied hold cost — the box over the margin range, the hold interval
and the KV interval — and **identified** only when exactly one tier is consistent; otherwise the status says which
remain (or that the price is above, or below, every tier's cost). The drain-time rule (lecture g.4, C/W closest to
T) is reported beside it for each duration sold. How firm the verdict is: the tier whose cost is nearest the implied one
(in ratio) and the factor the price would have to move to cross the boundary to the next tier (boundaries at the
geometric midpoints between adjacent tiers' costs).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.formula import formula
from econ.physics.hardware import drain_time_s
from econ.units import MEGA, SECONDS_PER_HOUR

WRITES = {
    "5m": ("cache_write_5m_usd_per_mtok", 300.0),
    "1h": ("cache_write_1h_usd_per_mtok", 3_600.0),
    "12h": ("cache_write_12h_usd_per_mtok", 43_200.0),
}
"""Cache-write durations a provider may sell: price column and hold time T [s]."""
STORAGE = "cache_storage_usd_per_mtok_hour"
TIER_SPEED_ORDER = ("hbm", "ddr", "flash", "disk")


def _joined(flags: pl.DataFrame, labels: list[str]) -> pl.Series:
    """The labels whose flag is set, comma-separated, per row (null where none is)."""
    text = flags.select(
        pl.concat_list(pl.when(pl.col(c)).then(pl.lit(c)).otherwise(pl.lit(None, pl.String)) for c in labels)
        .list.drop_nulls()
        .list.join(",")
        .alias("joined")
    )["joined"]
    return text.replace("", None)


def _col(frame: pl.DataFrame, name: str) -> np.ndarray:
    return (
        frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
        if name in frame.columns
        else np.full(frame.height, np.nan)
    )


@formula(
    "premium(T) = w + h·T, least squares over the durations sold; h = storage price where published", "lecture g.2"
)
def fit_premiums(rows: pl.DataFrame) -> pl.DataFrame:
    """Per price row: ``durations_sold``, ``premium_fit_status``, ``write_usd_per_mtok`` (w), the hold price
    ``hold_price_usd_per_mtok_hour`` (h) and its interval ``hold_price_low/high_usd_per_mtok_hour``.

    ``rows``: price rows with ``input_usd_per_mtok`` and the columns of :data:`WRITES` / :data:`STORAGE` (missing
    ones count as not sold). Vectorised: the least-squares sums run over the (up to three) durations at once.
    """
    inp = _col(rows, "input_usd_per_mtok")
    t_h = np.array([t for _, t in WRITES.values()]) / SECONDS_PER_HOUR
    prem = np.column_stack([_col(rows, c) - inp for c, _ in WRITES.values()])
    sold = np.isfinite(prem)
    n = sold.sum(axis=1)
    tt = np.where(sold, t_h[None, :], 0.0)
    pp = np.where(sold, prem, 0.0)
    st, sp, stt, stp = tt.sum(1), pp.sum(1), (tt * tt).sum(1), (tt * pp).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        h_fit = (n * stp - st * sp) / (n * stt - st * st)
        w_fit = (sp - h_fit * st) / n
        one_t = np.where(n == 1, st, np.nan)
        one_p = np.where(n == 1, sp, np.nan)
    storage = _col(rows, STORAGE)
    has_storage = np.isfinite(storage) & (storage > 0)
    status = np.select(
        [has_storage, n >= 2, (n == 1) & (one_p > 0), n >= 1],
        ["storage_price", np.where(n == 2, "exact", "ok"), "one_duration", "write_not_above_input"],
        default="no_cache_price",
    )
    hold = np.select(
        [status == "storage_price", np.isin(status, ("exact", "ok")), status == "one_duration"],
        [storage, h_fit, one_p / one_t],
        default=np.nan,
    )
    low = np.where(status == "one_duration", 0.0, hold)
    bad = np.isin(status, ("exact", "ok")) & ~(h_fit > 0)
    status = np.where(bad, "hold_not_positive", status)
    hold, low = np.where(bad, np.nan, hold), np.where(bad, np.nan, low)
    shortest = np.where(sold, prem, np.inf).min(axis=1)  # the shortest duration's premium is the most one-off
    write = np.select(
        [status == "storage_price", np.isin(status, ("exact", "ok")), status == "one_duration"],
        [np.where(np.isfinite(shortest), np.maximum(shortest, 0.0), 0.0), w_fit, 0.0],
        default=np.nan,
    )
    flags = pl.DataFrame({**{label: sold[:, i] for i, label in enumerate(WRITES)}, "storage": has_storage})
    return rows.with_columns(
        _joined(flags, list(flags.columns)).alias("durations_sold"),
        pl.Series("premium_fit_status", status, dtype=pl.String),
        pl.Series("write_usd_per_mtok", write, nan_to_null=True),
        pl.Series("hold_price_usd_per_mtok_hour", hold, nan_to_null=True),
        pl.Series("hold_price_low_usd_per_mtok_hour", low, nan_to_null=True),
        pl.Series("hold_price_high_usd_per_mtok_hour", hold, nan_to_null=True),
    )


@formula("hold cost = h·(1 − margin)/b_held per GB-hour; box over margin, hold and KV intervals", "lecture g.2–g.3")
def hold_costs(frame: pl.DataFrame, *, margin: float, margin_range: tuple[float, float]) -> pl.DataFrame:
    """Add the implied hold cost per GB-hour and its interval (the box over ``margin_range``, the hold interval and
    ``kv_low/high_bytes_per_token``) to rows with ``hold_price_*`` and ``kv_bytes_per_token_used``."""
    h, h_lo, h_hi = (_col(frame, f"hold_price{s}_usd_per_mtok_hour") for s in ("", "_low", "_high"))
    kv, kv_lo, kv_hi = (
        _col(frame, n) for n in ("kv_bytes_per_token_used", "kv_low_bytes_per_token", "kv_high_bytes_per_token")
    )
    m_lo, m_hi = margin_range

    def per_gb(hold, m, b):
        with np.errstate(invalid="ignore", divide="ignore"):
            return hold / MEGA * (1.0 - m) / b * 1e9

    return frame.with_columns(
        pl.Series("hold_cost_usd_per_gb_hour", per_gb(h, margin, kv), nan_to_null=True),
        pl.Series("hold_cost_low_usd_per_gb_hour", per_gb(h_lo, m_hi, kv_hi), nan_to_null=True),
        pl.Series("hold_cost_high_usd_per_gb_hour", per_gb(h_hi, m_lo, kv_lo), nan_to_null=True),
    )


@formula("tier hold cost = rental $/GB-hour, else device $/h / capacity [GB]", "lecture g.2")
def tier_hold_usd_per_gb_hour(usd_per_hour, capacity_bytes, rental_usd_per_gb_hour=None):
    """What holding one GB for an hour costs in a device [$/GB-hour]: its rental-equivalent price where given, else
    its share of the device's $/hour."""
    share = np.divide(usd_per_hour, np.divide(capacity_bytes, 1e9))
    if rental_usd_per_gb_hour is None:
        return share
    rent = np.asarray(rental_usd_per_gb_hour, dtype=float)
    return np.where(np.isfinite(rent) & (rent > 0), rent, share)


@formula(
    "nearest tier = argmin |ln(x/c_t)|; flip factor = distance to the geometric midpoints of its neighbours", "g.2"
)
def boundary_distance(implied, tier_costs) -> tuple[np.ndarray, np.ndarray]:
    """(index of the tier whose cost is nearest each implied cost in ratio, the factor ≥ 1 the implied cost can move
    before the nearest tier changes), over ``tier_costs`` (one per tier); NaN index → -1 where there is no cost."""
    x = np.asarray(implied, dtype=float)
    c = np.asarray(tier_costs, dtype=float)
    order = np.argsort(c)
    ln_c = np.log(c[order])
    ok = np.isfinite(x) & (x > 0)
    ln_x = np.log(np.where(ok, x, 1.0))
    nearest = np.argmin(np.abs(ln_x[:, None] - ln_c[None, :]), axis=1)
    mids = (ln_c[:-1] + ln_c[1:]) / 2.0
    lower = np.concatenate([[-np.inf], mids])[nearest]
    upper = np.concatenate([mids, [np.inf]])[nearest]
    factor = np.exp(np.minimum(ln_x - lower, upper - ln_x))
    return np.where(ok, order[nearest], -1), np.where(ok, factor, np.nan)


@formula("consistent = tier cost within [low, high]; identified = exactly one consistent tier", "lecture g.2, g.4")
def compare_tiers(frame: pl.DataFrame, tiers: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each row's implied hold cost against every memory-tier device (module docstring).

    ``frame``: :func:`hold_costs` output with a ``row_id``; ``tiers``: the ``memory_tiers`` table. Returns
    (``frame`` with ``consistent_tiers``, ``identified_tier``, ``tier_status``, ``drain_time_tiers``, one row per
    frame row × device).
    """
    names = tiers["tier"].to_numpy()
    devices = tiers["device"].to_numpy()
    rent = (
        tiers["rental_usd_per_gb_hour"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        if "rental_usd_per_gb_hour" in tiers.columns
        else None
    )
    cost = tier_hold_usd_per_gb_hour(tiers["usd_per_hour"].to_numpy(), tiers["capacity_bytes"].to_numpy(), rent)
    basis = np.where(np.isfinite(rent) & (rent > 0), "rental", "device share") if rent is not None else None
    lo = _col(frame, "hold_cost_low_usd_per_gb_hour")[:, None]
    hi = _col(frame, "hold_cost_high_usd_per_gb_hour")[:, None]
    central = _col(frame, "hold_cost_usd_per_gb_hour")[:, None]
    known = np.isfinite(lo) & np.isfinite(hi)
    inside = known & (cost[None, :] >= lo) & (cost[None, :] <= hi)
    order = [t for t in TIER_SPEED_ORDER if t in set(names)] + sorted(set(names) - set(TIER_SPEED_ORDER))
    by_tier = np.column_stack([inside[:, names == t].any(axis=1) for t in order]) if order else inside[:, :0]
    count = by_tier.sum(axis=1)
    consistent = _joined(pl.DataFrame({t: by_tier[:, i] for i, t in enumerate(order)}), order)
    above = known[:, 0] & (lo[:, 0] > cost.max())
    below = known[:, 0] & (hi[:, 0] < cost.min())
    identified = np.where(count == 1, np.array(order, dtype=object)[np.argmax(by_tier, axis=1)], None)
    status = np.select(
        [~known[:, 0], count == 1, count > 1, above, below],
        [
            "no hold cost (no hold price or no KV bytes)",
            "identified",
            "not identified: consistent with " + consistent.fill_null("").to_numpy().astype(object),
            "no tier consistent: the price is above every tier's holding cost",
            "no tier consistent: the price is below every tier's holding cost",
        ],
        default="no tier consistent: between tiers",
    )
    drain = drain_time_s(tiers["capacity_bytes"].to_numpy(), tiers["bandwidth_bytes_per_s"].to_numpy())
    hold_s = np.array([t for _, t in WRITES.values()])
    rule = names[np.argmin(np.abs(np.log(drain)[None, :] - np.log(hold_s)[:, None]), axis=1)]  # per duration
    rules = {f"{label}: {tier}": label for label, tier in zip(WRITES, rule)}
    sold = frame["durations_sold"].fill_null("")
    flags = pl.DataFrame({text: sold.str.contains(rf"(^|,){label}(,|$)") for text, label in rules.items()})
    drain_text = _joined(flags, list(rules)).str.replace_all(",", "; ")
    per_tier = {t: np.exp(np.mean(np.log(cost[names == t]))) for t in order}  # one cost per tier (its devices)
    near, flip = boundary_distance(central[:, 0], np.array([per_tier[t] for t in order]))
    verdict = frame.with_columns(
        pl.Series("nearest_tier", [order[i] if i >= 0 else None for i in near], dtype=pl.String),
        pl.Series("boundary_distance_ratio", flip, nan_to_null=True),
        consistent.alias("consistent_tiers"),
        pl.Series("identified_tier", identified.tolist(), dtype=pl.String),
        pl.Series("tier_status", status.tolist(), dtype=pl.String),
        drain_text.alias("drain_time_tiers"),
    )
    n, k = inside.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = central / cost[None, :]
    detail = pl.DataFrame(
        {
            "row_id": np.repeat(frame["row_id"].to_numpy(), k),
            "tier": np.tile(names, n),
            "device": np.tile(devices, n),
            "drain_time_s": np.tile(drain, n),
            "tier_hold_cost_usd_per_gb_hour": np.tile(cost, n),
            "tier_cost_basis": np.tile(basis if basis is not None else np.full(k, "device share"), n),
            "consistent_with_price": inside.ravel(),
            "implied_over_tier_hold_cost_ratio": ratio.ravel(),
        }
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
    return verdict, detail
