"""The lecture's token balance (§e) against its own worked numbers, a numerical optimiser, and directions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from econ.physics import token_balance as tb
from econ.units import SECONDS_PER_MONTH

LECTURE = dict(  # lecture-math §e.4 / §3.5 defaults
    tokens_served_per_s=5e8,
    deployment_s=2 * SECONDS_PER_MONTH,
    models_per_family=10,
    discard_probability=0.0,
    share_pretrain=1 / 3,
    share_rl=1 / 3,
    share_inference=1 / 3,
    rl_flop_per_param_token=4.0,
    rl_efficiency_ratio=0.45,
    decode_efficiency_ratio=0.33,
    tokens_per_param=20.0,
    active_params=1e11,
    exponent_ratio=1.0,
)


def test_the_lectures_chain():
    """5e8 tok/s × 2 months = 2.59e15 ("2.6e15"); /10 = 2.59e14 ("around two hundred trillion");
    N_act = 1e11 → Chinchilla 2e12; D_pre ≈ D_inf → ≈130× ("a factor of a hundred")."""
    lab = tb.inference_tokens_per_model(5e8, 2 * SECONDS_PER_MONTH, 1)
    assert lab == pytest.approx(2.592e15, rel=1e-12)  # Dwarkesh: 5e8 × 60 d × 86,400 s
    assert lab == pytest.approx(2.6e15, rel=0.01)
    out = tb.token_balance(**LECTURE)
    assert out["inference_tokens"] == pytest.approx(2.592e14, rel=1e-12)
    assert out["chinchilla_tokens"] == pytest.approx(2e12)
    assert tb.overtraining_factor(out["inference_tokens"], 1e11, 20) == pytest.approx(129.6, rel=1e-3)  # D_pre = D_inf
    assert out["overtraining_ratio"] == pytest.approx(131, rel=0.01)  # β = 1.01
    assert 100 / 1.5 < out["overtraining_ratio"] < 100 * 1.5  # "a factor of a hundred"
    assert tb.overtraining_factor(1.5e14, 1e11, 20) == pytest.approx(75)  # Dwarkesh's 150T → 75


@pytest.mark.parametrize(
    "c_rl, eta, expected",
    [
        (4, 0.45, 1.48),  # the final α ≈ 1.5
        (4, 0.30, 2.22),  # lecture-math e.3 alternatives
        (6, 0.30, 3.33),
        (2, 0.30, 1.11),  # forward only: not the on-air "1/10" (that multiplied by the efficiency)
    ],
)
def test_alpha(c_rl, eta, expected):
    assert tb.rl_cost_per_token_ratio(c_rl, eta) == pytest.approx(expected, abs=0.005)


@pytest.mark.parametrize("eta, expected", [(0.33, 1.01), (1 / 3, 1.0), (0.30, 1.11)])
def test_beta(eta, expected):
    assert tb.inference_cost_per_token_ratio(eta) == pytest.approx(expected, abs=0.005)


def test_thirds_give_the_lectures_token_ratios():
    """§e.3: with equal shares D_pre = α·D_RL = β·D_inf."""
    out = tb.token_balance(**LECTURE)
    assert out["pretrain_tokens"] == pytest.approx(out["alpha_ratio"] * out["rl_tokens"], rel=1e-12)
    assert out["pretrain_tokens"] == pytest.approx(out["beta_ratio"] * out["inference_tokens"], rel=1e-12)


def test_dwarkesh_50_50_split():
    """§e.3: pre = RL cost, inference = half → D_pre = α·D_RL and 2·D_pre = β·D_inf."""
    out = tb.token_balance(**(LECTURE | dict(share_pretrain=0.25, share_rl=0.25, share_inference=0.5)))
    assert out["pretrain_tokens"] == pytest.approx(out["alpha_ratio"] * out["rl_tokens"], rel=1e-12)
    assert 2 * out["pretrain_tokens"] == pytest.approx(out["beta_ratio"] * out["inference_tokens"], rel=1e-12)
    assert out["inference_cost_frac"] == pytest.approx(0.5)


def test_costs_reproduce_the_stated_shares():
    """Round trip: tokens from shares, costs from tokens, shares from costs."""
    shares = dict(share_pretrain=0.2, share_rl=0.3, share_inference=0.5)
    out = tb.token_balance(**(LECTURE | shares))
    got = (out["pretrain_cost_frac"], out["rl_cost_frac"], out["inference_cost_frac"])
    assert got == pytest.approx((0.2, 0.3, 0.5), rel=1e-12)


def test_active_params_disappear_from_the_token_ratios():
    """ "The number of activated parameters totally disappears" (§e.2): tokens do not depend on N_act."""
    out = tb.token_balance(**(LECTURE | dict(active_params=np.array([1e10, 1e11, 1e12]))))
    assert np.ptp(out["pretrain_tokens"]) == 0 and np.ptp(out["rl_tokens"]) == 0
    assert out["overtraining_ratio"] == pytest.approx(131 * np.array([10, 1, 0.1]), rel=0.01)


def test_discarded_models_derate_inference_tokens():
    assert tb.inference_tokens_per_model(5e8, 2 * SECONDS_PER_MONTH, 10, 0.5) == pytest.approx(1.296e14)


@pytest.mark.parametrize(
    "a, b, p, q", [(1, 1, 1, 1), (3, 2, 1, 2), (5, 0.1, 0.5, 1.5), (2, 7, 2, 0.34), (1e3, 1e-2, 0.28, 1)]
)
def test_equal_cost_knob_against_a_numerical_minimiser(a, b, p, q):
    """§e.1: minimise a·x^−p + b·x^q numerically; the falling/rising cost ratio at the minimum is q/p."""
    res = minimize_scalar(
        lambda u: a * np.exp(-p * u) + b * np.exp(q * u), bounds=(-60, 60), method="bounded", options={"xatol": 1e-12}
    )
    x_num = np.exp(res.x)
    ratio_num = (a * x_num**-p) / (b * x_num**q)
    x, ratio = tb.equal_cost_optimum(a, b, p, q)
    assert ratio_num == pytest.approx(q / p, rel=1e-4)
    assert ratio == pytest.approx(q / p, rel=1e-12)
    assert x == pytest.approx(x_num, rel=1e-4)


# assumption raised → direction of each quantity, as the module docstring and the lecture say
DIRECTIONS = [
    ("tokens_served_per_s", "overtraining_ratio", +1),
    ("deployment_s", "pretrain_tokens", +1),
    ("models_per_family", "inference_tokens", -1),
    ("discard_probability", "pretrain_tokens", -1),
    ("share_pretrain", "pretrain_tokens", +1),
    ("share_rl", "rl_tokens", +1),
    ("share_inference", "pretrain_tokens", -1),
    ("rl_flop_per_param_token", "alpha_ratio", +1),
    ("rl_flop_per_param_token", "rl_tokens", -1),
    ("rl_efficiency_ratio", "alpha_ratio", -1),
    ("rl_efficiency_ratio", "rl_tokens", +1),
    ("decode_efficiency_ratio", "beta_ratio", -1),
    ("decode_efficiency_ratio", "pretrain_tokens", -1),
    ("tokens_per_param", "overtraining_ratio", -1),
    ("active_params", "overtraining_ratio", -1),
    ("exponent_ratio", "pretrain_tokens", -1),
    ("exponent_ratio", "inference_cost_frac", +1),
]


@pytest.mark.parametrize("assumption, quantity, sign", DIRECTIONS)
def test_balance_responds_in_the_documented_direction(assumption, quantity, sign):
    base = LECTURE[assumption]
    values = np.array([0.8, 1.0, 1.25]) * base if base else np.array([0.0, 0.1, 0.2])
    out = tb.token_balance(**(LECTURE | {assumption: values}))[quantity]
    assert np.all(np.sign(np.diff(out)) == sign)
