"""The lecture's token balance under a scenario: central value, interval, one-at-a-time sensitivity.

Every case (the central one, each assumption at its low and high, every corner of the
ranges) is a column of one set of arrays, evaluated with a single call of
:func:`econ.physics.token_balance.token_balance`.

Intervals: the chain is monotone in every assumption, so the extremes over the box of
ranges lie at its corners; ``low_value``/``high_value`` are the min/max over all 2^k
corners (k = ranged assumptions). The cost shares enter only through their ratios, so
they act as weights and need not sum to 1 at a corner.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from econ.analyses.scenario import Scenario
from econ.physics.token_balance import token_balance
from econ.units import SECONDS_PER_HOUR, SECONDS_PER_MONTH

ASSUMPTIONS = {  # scenario name -> (argument of token_balance, factor to base units)
    "tokens_served_per_s": ("tokens_served_per_s", 1.0),
    "deployment_months": ("deployment_s", SECONDS_PER_MONTH),
    "models_per_family": ("models_per_family", 1.0),
    "model_discard_probability": ("discard_probability", 1.0),
    "cost_share_pretrain": ("share_pretrain", 1.0),
    "cost_share_rl": ("share_rl", 1.0),
    "cost_share_inference": ("share_inference", 1.0),
    "rl_flop_per_param_token": ("rl_flop_per_param_token", 1.0),
    "rl_efficiency_ratio": ("rl_efficiency_ratio", 1.0),
    "decode_efficiency_ratio": ("decode_efficiency_ratio", 1.0),
    "chinchilla_tokens_per_param": ("tokens_per_param", 1.0),
    "frontier_active_params": ("active_params", 1.0),
    "equal_cost_exponent_ratio": ("exponent_ratio", 1.0),
}
USD_ASSUMPTIONS = ("gpu_usd_per_hour", "mfu_pretrain")

# quantity -> (unit, lecture's value or None, formula, lecture section)
QUANTITIES = {
    "lab_inference_tokens": ("tokens", 2.6e15, "r_tok · T_deploy", "e.4"),
    "inference_tokens": ("tokens", 2.6e14, "r_tok · T_deploy · (1 − p_discard) / n_family", "e.4, e.1"),
    "pretrain_tokens": ("tokens", 2.6e14, "(s_pre/s_inf) · β · D_inf / r", "e.3–e.4"),
    "rl_tokens": ("tokens", None, "(s_RL/s_inf) · (β/α) · D_inf / r", "e.3"),
    "alpha_ratio": ("ratio", 1.5, "(c_RL/6) / η_RL", "e.3"),
    "beta_ratio": ("ratio", 1.0, "(2/6) / η_dec", "e.3"),
    "pretrain_cost_frac": ("frac", 1 / 3, "C_pre / (C_pre + C_RL + C_inf)", "e.2"),
    "rl_cost_frac": ("frac", 1 / 3, "C_RL / (C_pre + C_RL + C_inf)", "e.2"),
    "inference_cost_frac": ("frac", 1 / 3, "C_inf / (C_pre + C_RL + C_inf)", "e.2"),
    "pretrain_cost_flop": ("FLOP", None, "6 · N_act · D_pre", "e.2"),
    "rl_cost_flop": ("pre-training FLOP equivalents", None, "c_RL · N_act · D_RL / η_RL", "e.2"),
    "inference_cost_flop": ("pre-training FLOP equivalents", None, "2 · N_act · D_inf / η_dec", "e.2"),
    "active_params": ("params", 1e11, "N_act (assumption)", "e.4"),
    "chinchilla_tokens": ("tokens", 2e12, "k · N_act", "e.4, X.3"),
    "overtraining_ratio": ("ratio", 100.0, "D_pre / (k · N_act)", "e.4"),
    "pretrain_tokens_per_active_param_ratio": ("tokens/param", None, "D_pre / N_act", "e.4"),
    "pretrain_cost_usd": ("USD", None, "6·N_act·D_pre · ($/h / 3600) / (F_peak,bf16 · MFU_pre)", "e.2, a.4"),
    "lifetime_cost_usd": ("USD", None, "(C_pre + C_RL + C_inf) · ($/h / 3600) / (F_peak,bf16 · MFU_pre)", "e.2, a.4"),
}


def assumption_table(scenario: Scenario, *, usd: bool) -> dict[str, tuple[float, float, float, str]]:
    """name -> (value, low, high, unit) of every assumption the balance reads (USD ones when ``usd``)."""
    names = list(ASSUMPTIONS) + (list(USD_ASSUMPTIONS) if usd else [])
    out = {}
    for name in names:
        a = scenario.assumption(name)
        value = scenario[name]
        low, high = a.range
        out[name] = (value, low, high, a.unit)
    return out


def evaluate(cases: dict[str, np.ndarray], peak_flop_per_s: float | None) -> dict[str, np.ndarray]:
    """Every quantity of :data:`QUANTITIES` for arrays of assumption values (scenario names, scenario units)."""
    kwargs = {arg: np.asarray(cases[name], dtype=float) * factor for name, (arg, factor) in ASSUMPTIONS.items()}
    out = token_balance(**kwargs)
    out["lab_inference_tokens"] = kwargs["tokens_served_per_s"] * kwargs["deployment_s"]
    out["active_params"] = kwargs["active_params"] * np.ones_like(out["inference_tokens"])
    if peak_flop_per_s and all(n in cases for n in USD_ASSUMPTIONS):
        usd_per_flop = (
            np.asarray(cases["gpu_usd_per_hour"])
            / SECONDS_PER_HOUR
            / (peak_flop_per_s * np.asarray(cases["mfu_pretrain"]))
        )
        out["pretrain_cost_usd"] = out["pretrain_cost_flop"] * usd_per_flop
        out["lifetime_cost_usd"] = (
            out["pretrain_cost_flop"] + out["rl_cost_flop"] + out["inference_cost_flop"]
        ) * usd_per_flop
    return {q: out[q] for q in QUANTITIES if q in out}


def balance_frames(scenario: Scenario, peak_flop_per_s: float | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(token_balance rows, token_balance_sensitivity rows) of one scenario."""
    usd = peak_flop_per_s is not None and all(scenario.get(n) is not None for n in USD_ASSUMPTIONS)
    table = assumption_table(scenario, usd=usd)
    names = list(table)
    central = np.array([table[n][0] for n in names])
    ranged = [i for i, n in enumerate(names) if table[n][1] != table[n][2]]
    # columns: 0 = central; then low/high of each ranged assumption; then the 2^k corners
    one_at_a_time = np.repeat(central[:, None], 2 * len(ranged), axis=1)
    for j, i in enumerate(ranged):
        one_at_a_time[i, 2 * j], one_at_a_time[i, 2 * j + 1] = table[names[i]][1], table[names[i]][2]
    corners = np.repeat(central[:, None], 2 ** len(ranged), axis=1)
    for c, pick in enumerate(itertools.product((1, 2), repeat=len(ranged))):
        for i, side in zip(ranged, pick):
            corners[i, c] = table[names[i]][side]
    grid = np.concatenate([central[:, None], one_at_a_time, corners], axis=1)
    result = evaluate({n: grid[k] for k, n in enumerate(names)}, peak_flop_per_s if usd else None)
    n_oat = 1 + 2 * len(ranged)
    balance_rows, sens_rows = [], []
    for q, values in result.items():
        unit, lecture, formula, section = QUANTITIES[q]
        box = values[n_oat:]
        balance_rows.append(
            {
                "scenario": scenario.name,
                "quantity": q,
                "unit": unit,
                "central_value": values[0],
                "low_value": box.min(),
                "high_value": box.max(),
                "lecture_value": lecture,
                "formula": formula,
                "lecture_section": section,
            }
        )
        for j, i in enumerate(ranged):
            at_low, at_high = values[1 + 2 * j], values[2 + 2 * j]
            with np.errstate(divide="ignore", invalid="ignore"):
                swing = abs(np.log10(at_high / at_low)) if at_low > 0 and at_high > 0 else np.nan
            sens_rows.append(
                {
                    "scenario": scenario.name,
                    "assumption": names[i],
                    "assumption_unit": table[names[i]][3],
                    "assumption_value": table[names[i]][0],
                    "assumption_low": table[names[i]][1],
                    "assumption_high": table[names[i]][2],
                    "quantity": q,
                    "quantity_unit": unit,
                    "central_value": values[0],
                    "value_at_low": at_low,
                    "value_at_high": at_high,
                    "swing_decades": swing,
                    "direction": "increases"
                    if at_high > at_low * (1 + 1e-12)
                    else "decreases"
                    if at_high < at_low * (1 - 1e-12)
                    else "none",
                }
            )
    return (
        pl.DataFrame(balance_rows, infer_schema_length=None).fill_nan(None),
        pl.DataFrame(sens_rows, infer_schema_length=None).fill_nan(None),
    )
