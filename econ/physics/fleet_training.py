"""Training on a fleet, and how a fleet splits between serving and training (lecture e.2–e.4).

Pure numpy, broadcasting. Compute in FLOP (2 per multiply-add), time in chip-hours, energy in MWh.

    pre-training FLOP  = 6·N_act·D_pre                       (the "famous 6ND formula", e.2)
    RL FLOP            = c_RL·N_act·D_RL, run at η_RL of pre-training's efficiency (e.2)
    chip-hours         = FLOP / (F_peak · MFU · η) / 3,600
    days on N chips    = chip-hours / (N · 24)

Time-sharing ("serving by day, training by night"): a serving pool sized for its peak
(peak/mean = r) idles (r − 1)·mean chip-hours per hour on average; training can fill them,
so only the rest needs dedicated chips.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import fleet
from econ.units import SECONDS_PER_HOUR

PRETRAIN_FLOP_PER_PARAM_TOKEN = 6.0  # forward + backward (lecture e.2; Kaplan et al. 2020)
HOURS_PER_DAY = 24.0


def _f(x):
    return np.asarray(x, dtype=float)


@formula("C = c·N_act·D", "lecture e.2")
def training_flop(params_active, tokens, flop_per_param_token=PRETRAIN_FLOP_PER_PARAM_TOKEN):
    """Training compute [FLOP] = c·N_act·D (c = 6 for pre-training, c_RL ∈ [2, 6] for RL; lecture e.2)."""
    return _f(flop_per_param_token) * _f(params_active) * _f(tokens)


@formula("chip-hours = C / (F·MFU·η) / 3,600", "lecture e.2, a.4")
def chip_hours(flop, peak_flop_per_s, mfu, efficiency_ratio=1.0):
    """Chip-hours to run ``flop`` = FLOP / (F_peak · MFU · η) / 3,600 (η: efficiency relative to pre-training)."""
    return _f(flop) / (_f(peak_flop_per_s) * _f(mfu) * _f(efficiency_ratio)) / SECONDS_PER_HOUR


@formula("days = chip-hours / (N·24)", "fleet")
def days_on_chips(chip_hours_, chips):
    """Wall-clock days on N chips = chip-hours / (N · 24)."""
    return _f(chip_hours_) / (_f(chips) * HOURS_PER_DAY)


@formula("E = chip-hours · TDP · (server power/TDP) · PUE / 1e6", "fleet")
def energy_mwh(chip_hours_, tdp_w, server_power_ratio, pue_ratio):
    """Facility energy [MWh] = chip-hours · TDP · (server power / TDP) · PUE / 1e6 (one chip's facility power, for its
    hours)."""
    return fleet.energy_mwh(fleet.facility_power_w(1.0, tdp_w, server_power_ratio, pue_ratio), chip_hours_)


@formula("time-shared fleet = max(S, M + training chip-hours / T)", "lecture e.4 (training by night)")
def time_shared_fleet(serving_mean_chips, peak_to_mean_ratio, training_chip_hours, period_hours) -> dict:
    """Chips and chip-hour shares of a fleet that serves and trains over one period, with and without time-sharing.

    serving peak chips  S = r·M (the pool is sized for its peak; M chips' worth of work on average)
    idle serving hours  I = (S − M)·T  (nights and troughs)
    separate fleets     S + H/T                       (training on its own chips, H = training chip-hours)
    time-shared fleet   S + max(0, H − I)/T           (training fills the idle serving hours first)
    Shares are of the fleet's chip-hours: serving M·T, training H, the rest idle.

    Returns arrays: ``serving_peak_chips``, ``training_chips_separate``, ``fleet_chips_separate``,
    ``fleet_chips_time_shared``, ``training_on_idle_serving_frac`` (share of H done on idle serving chips),
    ``serving_share_separate_frac``, ``training_share_separate_frac``, ``serving_share_time_shared_frac``,
    ``training_share_time_shared_frac``.
    """
    m, r, h, t = _f(serving_mean_chips), _f(peak_to_mean_ratio), _f(training_chip_hours), _f(period_hours)
    peak = r * m
    idle_hours = (peak - m) * t
    on_idle = np.minimum(h, idle_hours)
    separate = peak + h / t
    shared = peak + (h - on_idle) / t
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "serving_peak_chips": peak,
            "training_chips_separate": h / t,
            "fleet_chips_separate": separate,
            "fleet_chips_time_shared": shared,
            "training_chips_time_shared": shared - peak,
            "training_on_idle_serving_frac": np.where(h > 0, on_idle / h, 0.0),
            "serving_share_separate_frac": m / separate,
            "training_share_separate_frac": (h / t) / separate,
            "serving_share_time_shared_frac": m / shared,
            "training_share_time_shared_frac": (h / t) / shared,
        }


@formula("$/FLOP = p / 3,600 / (F·MFU)", "lecture a.4, e.2")
def usd_per_flop(usd_per_chip_hour, peak_flop_per_s, mfu):
    """Dollars per FLOP of training at a rental price, a chip's peak and an MFU [USD/FLOP]."""
    return np.divide(usd_per_chip_hour, SECONDS_PER_HOUR) / np.multiply(peak_flop_per_s, mfu)


@formula("$ = FLOP · $/FLOP", "lecture e.2")
def usd_of_flop(flop, usd_per_flop_):
    """Dollars of a FLOP count at a price per FLOP [USD]."""
    return np.multiply(flop, usd_per_flop_)


@formula("$ = chip-hours · p", "lecture a.4")
def cost_usd(chip_hours_, usd_per_chip_hour):
    """Rental cost of a number of chip-hours [USD]."""
    return np.multiply(chip_hours_, usd_per_chip_hour)
