"""Where to keep a KV cache between requests (lecture g.1–g.4): recompute, HBM, DDR, flash, disk.

Per token of context, each mechanism has a one-off **retrieve** cost and a **hold** cost per
second (lecture g.2), and the cost of keeping a token for T seconds is

    cost(T) = retrieve + hold · T

- recompute (remat): retrieve = (2·N_act / F) · p_chip (a forward pass), hold = 0;
- HBM: retrieve ≈ 0 (it is where decode reads it), hold = (b_kv / C_HBM) · p_chip;
- DDR, flash, disk: retrieve = (b_kv / W_tier) · p_tier (the share of the device's bandwidth
  the read takes), hold = (b_kv / C_tier) · p_tier (the share of its capacity).

Hold and retrieve of a tier cost the same at T = C/W, the tier's drain time (lecture g.4),
which is why the drain time names the hold time a tier is for. Prices in $/s.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.units import SECONDS_PER_HOUR

RECOMPUTE = "recompute"


@formula("retrieve = 2·N_act/(F·mfu) · p", "lecture g.2")
def recompute_usd_per_token(params_active, peak_flop_per_s, usd_per_chip_hour, *, mfu=1.0):
    """Retrieve cost of recomputing a token's KV [$/token] = 2·N_act/(F·mfu) · p (lecture g.2, "remat")."""
    return (
        2.0
        * np.divide(params_active, np.multiply(peak_flop_per_s, mfu))
        * np.divide(usd_per_chip_hour, SECONDS_PER_HOUR)
    )


@formula("hold = (b_kv / C) · p", "lecture g.2")
def hold_usd_per_token_s(kv_bytes_per_token, capacity_bytes, usd_per_hour):
    """Hold cost of one token's KV [$/(token·s)] = (b_kv / C) · p: the share of the device it occupies."""
    return np.divide(kv_bytes_per_token, capacity_bytes) * np.divide(usd_per_hour, SECONDS_PER_HOUR)


@formula("retrieve = (b_kv / W) · p", "lecture g.2")
def retrieve_usd_per_token(kv_bytes_per_token, bandwidth_bytes_per_s, usd_per_hour):
    """Retrieve cost of one token's KV from a tier [$/token] = (b_kv / W) · p: the device time the read takes."""
    return np.divide(kv_bytes_per_token, bandwidth_bytes_per_s) * np.divide(usd_per_hour, SECONDS_PER_HOUR)


@formula("retrieve = 0 for HBM, else (b_kv / W) · p", "lecture g.2")
def tier_retrieve_usd_per_token(tier, kv_bytes_per_token, bandwidth_bytes_per_s, usd_per_hour):
    """Retrieve cost per tier [$/token]: 0 for HBM ("already where inference happens", lecture g.2), else b_kv/W · p."""
    with np.errstate(invalid="ignore"):
        moved = retrieve_usd_per_token(kv_bytes_per_token, bandwidth_bytes_per_s, usd_per_hour)
    return np.where(np.asarray(tier) == "hbm", 0.0, moved)


@formula("cost(T) = retrieve + hold·T", "lecture g.2")
def tier_cost_usd_per_token(retrieve_usd, hold_usd_per_s, hold_time_s):
    """Cost of keeping a token for T seconds and reading it back once [$/token] = retrieve + hold · T."""
    return np.add(retrieve_usd, np.multiply(hold_usd_per_s, hold_time_s))


@formula("T = (r_b − r_a) / (h_a − h_b)", "lecture g.4")
def break_even_hold_time_s(retrieve_a_usd, hold_a_usd_per_s, retrieve_b_usd, hold_b_usd_per_s):
    """Hold time where two mechanisms cost the same [s]: (r_b − r_a) / (h_a − h_b); NaN if they never cross."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.subtract(retrieve_b_usd, retrieve_a_usd) / np.subtract(hold_a_usd_per_s, hold_b_usd_per_s)
    return np.where(np.isfinite(t) & (t > 0), t, np.nan)


@formula("argmin over mechanisms of retrieve + hold·T", "lecture g.2")
def cheapest_tier(retrieve_usd, hold_usd_per_s, hold_time_s, axis=-1):
    """Index of the cheapest mechanism along ``axis`` for each hold time (lecture g.2: argmin over tiers).

    ``retrieve_usd`` and ``hold_usd_per_s`` hold one entry per mechanism along ``axis``;
    ``hold_time_s`` broadcasts against them (add a trailing axis to sweep hold times).
    Returns (index, cost [$/token]) of the cheapest.
    """
    cost = tier_cost_usd_per_token(retrieve_usd, hold_usd_per_s, hold_time_s)
    index = np.argmin(cost, axis=axis)
    return index, np.take_along_axis(cost, np.expand_dims(index, axis), axis=axis).squeeze(axis)


@formula("cheapest = (cost = min over mechanisms)", "lecture g.2")
def cheapest_mask(cost_usd, axis=-1):
    """True for every mechanism whose cost equals the cheapest along ``axis`` (ties all count)."""
    cost = np.asarray(cost_usd, dtype=float)
    return cost == cost.min(axis=axis, keepdims=True)
