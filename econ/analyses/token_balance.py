"""``token_balance`` and ``token_balance_sensitivity``: the lecture's pre-training / RL / inference balance (§e).

Every case (the central one, each assumption at its low and high, every corner of the ranges) is a
column of one set of arrays, evaluated with a single call of :func:`econ.physics.token_balance.token_balance`.
The chain is monotone in every assumption, so the extremes over the box of ranges lie at its corners;
``low_value``/``high_value`` are the min/max over all 2^k corners: a **bound** that sets every assumption to its
worst end at once, never a likely range. What the ranges make likely is ``p5_value``–``p95_value``: the 5th and
95th percentiles over :data:`DRAWS` independent draws of every assumption (:func:`econ.fits.propagate.draw`:
log-uniform over ranges wider than 3×, uniform otherwise), one vectorised call. The cost shares enter only through
their ratios, so they act as weights and need not sum to 1 at a corner.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from econ.fits.propagate import draw, propagate, swing_decades
from econ.formula import formula_of
from econ.physics import fleet_training
from econ.physics import token_balance as tb
from econ.results import ResultColumn as C
from econ.results import ResultTable
from econ.units import SECONDS_PER_MONTH

NAME = "token_balance"
INPUTS = ("scenarios", "hardware")

ASSUMPTIONS = {  # scenario field -> (argument of token_balance, factor to base units)
    "tokens_served_per_s": ("tokens_served_per_s", 1.0),
    "deployment_months": ("deployment_s", SECONDS_PER_MONTH),
    "models_per_family": ("models_per_family", 1.0),
    "model_discard_frac": ("discard_probability", 1.0),
    "cost_share_pretrain_frac": ("share_pretrain", 1.0),
    "cost_share_rl_frac": ("share_rl", 1.0),
    "cost_share_inference_frac": ("share_inference", 1.0),
    "rl_flop_per_param_token": ("rl_flop_per_param_token", 1.0),
    "rl_efficiency_ratio": ("rl_efficiency_ratio", 1.0),
    "decode_efficiency_ratio": ("decode_efficiency_ratio", 1.0),
    "chinchilla_tokens_per_param": ("tokens_per_param", 1.0),
    "frontier_active_params": ("active_params", 1.0),
    "equal_cost_exponent_ratio": ("exponent_ratio", 1.0),
}
USD_ASSUMPTIONS = ("usd_per_chip_hour", "pretrain_mfu_frac")
DRAWS = 4_000
"""Independent Monte Carlo draws of the assumption ranges per scenario (one vectorised evaluation)."""

QUANTITIES = {  # quantity -> (unit, the lecture's value or None, the function computing it)
    "lab_inference_tokens": ("tokens", 2.6e15, tb.lab_inference_tokens),
    "inference_tokens": ("tokens", 2.6e14, tb.inference_tokens_per_model),
    "pretrain_tokens": ("tokens", 2.6e14, tb.pretrain_tokens_from_inference),
    "rl_tokens": ("tokens", None, tb.rl_tokens_from_inference),
    "alpha_ratio": ("ratio", 1.5, tb.rl_cost_per_token_ratio),
    "beta_ratio": ("ratio", 1.0, tb.inference_cost_per_token_ratio),
    "pretrain_cost_frac": ("frac", 1 / 3, tb.cost_shares),
    "rl_cost_frac": ("frac", 1 / 3, tb.cost_shares),
    "inference_cost_frac": ("frac", 1 / 3, tb.cost_shares),
    "pretrain_cost_flop": ("FLOP", None, tb.phase_costs_flop),
    "rl_cost_flop": ("pre-training FLOP equivalents", None, tb.phase_costs_flop),
    "inference_cost_flop": ("pre-training FLOP equivalents", None, tb.phase_costs_flop),
    "active_params": ("params", 1e11, None),
    "chinchilla_tokens": ("tokens", 2e12, tb.chinchilla_tokens),
    "overtraining_ratio": ("ratio", 100.0, tb.overtraining_factor),
    "pretrain_tokens_per_active_param_ratio": ("tokens/param", None, tb.tokens_per_param_ratio),
    "pretrain_cost_usd": ("USD", None, fleet_training.usd_of_flop),
    "lifetime_cost_usd": ("USD", None, fleet_training.usd_of_flop),
}

BALANCE = ResultTable(
    name="token_balance",
    grain="scenario x quantity",
    key=("scenario", "quantity"),
    description=(
        "The lecture's pre-training / RL / inference token balance (section e) under each scenario: central value, "
        "the 5th-95th percentiles over independent Monte Carlo draws of the assumption ranges (what the ranges make "
        "likely), and the min/max over every corner of the ranges (a bound: every assumption at its worst end at once)"
    ),
    columns=(
        C("scenario", "str", "", "key", "Scenario name"),
        C("quantity", "str", "", "key", "Derived quantity (its unit is in unit)"),
        C("unit", "str", "", "label", "Unit of the three values"),
        C("central_value", "float", "", "derived", "Value with every assumption central [unit]", tb.token_balance),
        C(
            "p5_value",
            "float",
            "",
            "derived",
            "5th percentile over independent Monte Carlo draws of every assumption range [unit]",
            propagate,
        ),
        C("p50_value", "float", "", "derived", "Median over the draws [unit]", propagate),
        C("p95_value", "float", "", "derived", "95th percentile over the draws [unit]", propagate),
        C("draws", "int", "", "check", "Monte Carlo draws"),
        C(
            "low_value",
            "float",
            "",
            "bound",
            "Lower bound: minimum over every corner of the ranges, all assumptions at their worst ends at once [unit]",
            tb.token_balance,
        ),
        C(
            "high_value",
            "float",
            "",
            "bound",
            "Upper bound: maximum over every corner of the ranges [unit]",
            tb.token_balance,
        ),
        C("lecture_value", "float", "", "input", "The lecture's number for this quantity, where it gives one [unit]"),
        C("formula", "str", "", "label", "The formula of the function computing the quantity (econ.formula)"),
        C("lecture_section", "str", "", "label", "Where the formula comes from"),
    ),
)

SENSITIVITY = ResultTable(
    name="token_balance_sensitivity",
    grain="scenario x assumption x quantity",
    key=("scenario", "assumption", "quantity"),
    description=(
        "Each token-balance quantity with one assumption at its low and at its high end, the others central "
        "(for a tornado chart)"
    ),
    columns=(
        C("scenario", "str", "", "key", "Scenario name"),
        C("assumption", "str", "", "key", "Assumption moved to its low and high end (a scenarios.name)"),
        C("assumption_unit", "str", "", "label", "Unit of the assumption"),
        C("assumption_value", "float", "", "assumption", "Central value [assumption_unit]"),
        C("assumption_low", "float", "", "assumption", "Low end [assumption_unit]"),
        C("assumption_high", "float", "", "assumption", "High end [assumption_unit]"),
        C("quantity", "str", "", "key", "Derived quantity"),
        C("quantity_unit", "str", "", "label", "Unit of the quantity"),
        C(
            "central_value",
            "float",
            "",
            "derived",
            "Quantity with every assumption central [quantity_unit]",
            tb.token_balance,
        ),
        C(
            "value_at_low",
            "float",
            "",
            "derived",
            "Quantity with this assumption at its low end [quantity_unit]",
            tb.token_balance,
        ),
        C(
            "value_at_high",
            "float",
            "",
            "derived",
            "Quantity with this assumption at its high end [quantity_unit]",
            tb.token_balance,
        ),
        C("swing_decades", "float", "decades", "derived", "Tornado bar length", swing_decades),
        C(
            "direction",
            "str",
            "",
            "label",
            "Whether the quantity increases, decreases or does not move as the assumption rises",
        ),
    ),
)
TABLES = (BALANCE, SENSITIVITY)


def evaluate(cases: dict[str, np.ndarray], peak_flop_per_s: float | None) -> dict[str, np.ndarray]:
    """Every quantity of :data:`QUANTITIES` for arrays of assumption values (scenario field names and units)."""
    kwargs = {arg: np.asarray(cases[name], dtype=float) * factor for name, (arg, factor) in ASSUMPTIONS.items()}
    out = tb.token_balance(**kwargs)
    out["lab_inference_tokens"] = tb.lab_inference_tokens(kwargs["tokens_served_per_s"], kwargs["deployment_s"])
    out["active_params"] = kwargs["active_params"] * np.ones_like(out["inference_tokens"])
    if peak_flop_per_s and all(n in cases for n in USD_ASSUMPTIONS):
        per_flop = fleet_training.usd_per_flop(
            np.asarray(cases["usd_per_chip_hour"]), peak_flop_per_s, np.asarray(cases["pretrain_mfu_frac"])
        )
        out["pretrain_cost_usd"] = fleet_training.usd_of_flop(out["pretrain_cost_flop"], per_flop)
        out["lifetime_cost_usd"] = fleet_training.usd_of_flop(
            out["pretrain_cost_flop"] + out["rl_cost_flop"] + out["inference_cost_flop"], per_flop
        )
    return {q: out[q] for q in QUANTITIES if q in out}


def _assumption_table(s, *, usd: bool) -> dict[str, tuple[float, float, float, str]]:
    names = list(ASSUMPTIONS) + (list(USD_ASSUMPTIONS) if usd else [])
    unit = {n: (s.assumptions[n].unit if n in s.assumptions else "") for n in names}
    return {n: (float(getattr(s, n)), *s.range(n), unit[n]) for n in names}


def balance_frames(s, peak_flop_per_s: float | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(token_balance rows, token_balance_sensitivity rows) of one scenario."""
    usd = peak_flop_per_s is not None
    table = _assumption_table(s, usd=usd)
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
    sampled = draw({names[i]: table[names[i]][1:3] for i in ranged}, DRAWS, seed=0)
    mc = np.repeat(central[:, None], DRAWS, axis=1)
    for i in ranged:
        mc[i] = sampled[names[i]]
    grid = np.concatenate([central[:, None], one_at_a_time, corners, mc], axis=1)
    result = evaluate({n: grid[k] for k, n in enumerate(names)}, peak_flop_per_s if usd else None)
    n_oat = 1 + 2 * len(ranged)
    n_box = n_oat + corners.shape[1]
    balance_rows, sens_rows = [], []
    for q, values in result.items():
        unit, lecture, fn = QUANTITIES[q]
        f = formula_of(fn)
        box = values[n_oat:n_box]
        p5, p50, p95 = np.nanquantile(values[n_box:], [0.05, 0.5, 0.95])
        balance_rows.append(
            {
                "scenario": s.name,
                "quantity": q,
                "unit": unit,
                "central_value": values[0],
                "p5_value": p5,
                "p50_value": p50,
                "p95_value": p95,
                "draws": DRAWS,
                "low_value": box.min(),
                "high_value": box.max(),
                "lecture_value": lecture,
                "formula": f.text if f else "N_act (assumption)",
                "lecture_section": f.source if f else "lecture e.4",
            }
        )
        for j, i in enumerate(ranged):
            at_low, at_high = values[1 + 2 * j], values[2 + 2 * j]
            sens_rows.append(
                {
                    "scenario": s.name,
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
                    "swing_decades": float(swing_decades(at_low, at_high)),
                    "direction": "increases"
                    if at_high > at_low * (1 + 1e-12)
                    else "decreases"
                    if at_high < at_low * (1 - 1e-12)
                    else "none",
                }
            )
    return (
        pl.DataFrame(balance_rows, schema=BALANCE.schema).fill_nan(None),
        pl.DataFrame(sens_rows, schema=SENSITIVITY.schema).fill_nan(None),
    )


def peak_flop_per_s(ctx, s) -> tuple[str | None, float | None]:
    """The chip pricing training dollars (training_chip, else serving_chip) and its BF16 peak."""
    for chip in (s.training_chip, s.serving_chip):
        if chip:
            row = ctx.query("select peak_bf16_flop_per_s from hardware where chip = ?", [chip])
            if row.height and row[0, 0] is not None:
                return chip, float(row[0, 0])
    return None, None


def run(ctx) -> None:
    balances, sensitivities = [], []
    for name in sorted(ctx.scenarios, key=lambda n: (n != "base", n)):
        s = ctx.scenarios[name]
        b, t = balance_frames(s, peak_flop_per_s(ctx, s)[1])
        balances.append(b)
        sensitivities.append(t)
    ctx.write(BALANCE, pl.concat(balances))
    ctx.write(SENSITIVITY, pl.concat(sensitivities))
