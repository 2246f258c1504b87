"""Chinchilla law, compute optimum and Sardana's inference-aware optimum, against independent numbers."""

from __future__ import annotations

import numpy as np
import pytest

from econ.physics import scaling_laws as sl

LAWS = [sl.BESIROGLU_2024, sl.HOFFMANN_2022, sl.HOFFMANN_2022_UNROUNDED]
CHINCHILLA_FLOP = 6 * 70e9 * 1.4e12  # Chinchilla: 70B parameters on 1.4T tokens (Hoffmann et al. 2022)


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.name)
@pytest.mark.parametrize("compute_flop", [1e18, 1e21, CHINCHILLA_FLOP, 1e26, 1e29])
def test_closed_form_and_numerical_optimum_agree(law, compute_flop):
    n, d = sl.compute_optimal(law, compute_flop)
    n_num, d_num = sl.compute_optimal_numerical(law, compute_flop)
    assert n_num == pytest.approx(n, rel=1e-6)
    assert d_num == pytest.approx(d, rel=1e-6)
    assert 6 * n * d == pytest.approx(compute_flop, rel=1e-12)


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.name)
def test_optimum_is_the_lowest_loss_on_the_budget_line(law):
    """Brute force over 20,001 splits of the Chinchilla budget: no split beats the closed form."""
    n_opt, d_opt = sl.compute_optimal(law, CHINCHILLA_FLOP)
    n_grid = n_opt * np.exp(np.linspace(-2, 2, 20_001))
    loss = law.E + law.A / n_grid**law.alpha + law.B / (CHINCHILLA_FLOP / (6 * n_grid)) ** law.beta
    best = n_grid[np.argmin(loss)]
    assert best == pytest.approx(n_opt, rel=2e-4)


@pytest.mark.parametrize(
    "law, expected_n, tokens_per_param",
    [
        (sl.BESIROGLU_2024, 70e9, (15, 25)),  # Epoch: consistent with ~20 tokens/param at Chinchilla scale
    ],
)
def test_chinchilla_scale_gives_about_20_tokens_per_param(law, expected_n, tokens_per_param):
    n, d = sl.compute_optimal(law, CHINCHILLA_FLOP)
    assert n == pytest.approx(expected_n, rel=0.1)
    assert tokens_per_param[0] < d / n < tokens_per_param[1]


def test_hoffmann_parametric_law_disagrees_with_its_own_20_tokens_per_param():
    """Besiroglu et al.'s point: Hoffmann's Approach-3 constants imply far more than 20 tokens/param."""
    n, d = sl.compute_optimal(sl.HOFFMANN_2022, CHINCHILLA_FLOP)
    assert d / n > 50


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.name)
def test_loss_constraint_round_trips(law):
    n = np.array([1e9, 1e10, 1e11])
    d = np.array([1e11, 3e12, 2e13])
    loss = sl.loss_nats_per_token(law, n, d)
    assert sl.tokens_for_loss(law, n, loss) == pytest.approx(d, rel=1e-9)
    assert sl.params_for_loss(law, d, loss) == pytest.approx(n, rel=1e-9)
    assert np.isnan(sl.tokens_for_loss(law, 1e9, law.E + law.A / 1e9**law.alpha * 0.5))  # out of reach at that size


def brute_force_optimum(law, loss, inference_tokens, inference_weight=1.0, points=400_001):
    """Independent: scan N on a fine log grid, D from the loss constraint written out here."""
    n_min = (law.A / (loss - law.E)) ** (1 / law.alpha)
    n = n_min * np.exp(np.linspace(1e-6, np.log(1e5), points))
    d = (law.B / (loss - law.E - law.A / n**law.alpha)) ** (1 / law.beta)
    cost = 6 * n * d + inference_weight * 2 * n * inference_tokens
    i = np.argmin(cost)
    return n[i], d[i], cost[i]


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.name)
@pytest.mark.parametrize("inference_tokens, weight", [(1e11, 1.0), (2e12, 1.0), (2.6e14, 1.0), (2.6e14, 1 / 0.33)])
def test_sardana_optimum_matches_brute_force(law, inference_tokens, weight):
    loss = sl.loss_nats_per_token(law, 13e9, sl.compute_optimal_tokens_for_params(law, 13e9))
    opt = sl.inference_aware_optimum(law, loss, inference_tokens, inference_weight=weight)
    n_bf, d_bf, cost_bf = brute_force_optimum(law, loss, inference_tokens, weight)
    assert bool(opt["converged"])
    assert opt["params"] == pytest.approx(n_bf, rel=1e-3)
    assert opt["cost_flop"] == pytest.approx(cost_bf, rel=1e-8)
    assert opt["cost_flop"] <= cost_bf * (1 + 1e-12)


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.name)
def test_sardana_without_inference_is_the_compute_optimal_model(law):
    """D_inf = 0 is Chinchilla's problem seen from the other side: min 6ND at fixed loss."""
    n_ref = np.array([1e9, 13e9, 70e9])
    d_ref = sl.compute_optimal_tokens_for_params(law, n_ref)
    opt = sl.inference_aware_optimum(law, sl.loss_nats_per_token(law, n_ref, d_ref), 0.0)
    assert opt["params"] == pytest.approx(n_ref, rel=1e-6)
    assert opt["train_tokens"] == pytest.approx(d_ref, rel=1e-6)
    n_c, _ = sl.compute_optimal(law, 6 * n_ref * d_ref)
    assert n_c == pytest.approx(n_ref, rel=1e-9)


@pytest.mark.parametrize("law", LAWS, ids=lambda law: law.name)
@pytest.mark.parametrize("weight", [1.0, 1 / 0.33])
def test_more_inference_demand_means_a_smaller_model_trained_longer(law, weight):
    """Sardana et al.'s direction: N* falls and tokens/param rises as demand grows."""
    loss = sl.loss_nats_per_token(law, 70e9, sl.compute_optimal_tokens_for_params(law, 70e9))
    demand = np.logspace(9, 16, 29)
    opt = sl.inference_aware_optimum(law, loss, demand, inference_weight=weight)
    assert np.all(np.diff(opt["params"]) < 0)
    assert np.all(np.diff(opt["tokens_per_param_ratio"]) > 0)
    assert np.all(opt["params"] < 70e9)


def test_sardana_figure_1_with_hoffmanns_constants():
    """Sardana et al. 2024 Fig. 1: a 13B Chinchilla-quality model with 2T inference tokens is cheaper as a
    ~7B model trained longer, saving 1.7e22 FLOPs (17%). Reproduced with Hoffmann's unrounded constants."""
    law = sl.HOFFMANN_2022_UNROUNDED
    d_13b = sl.compute_optimal_tokens_for_params(law, 13e9)
    loss = sl.loss_nats_per_token(law, 13e9, d_13b)
    opt = sl.inference_aware_optimum(law, loss, 2e12)
    chinchilla_cost = sl.lifetime_cost_flop(13e9, d_13b, 2e12)
    saving = chinchilla_cost - opt["cost_flop"]
    assert opt["params"] == pytest.approx(7e9, rel=0.05)
    assert saving == pytest.approx(1.7e22, rel=0.05)
    assert saving / chinchilla_cost == pytest.approx(0.17, abs=0.01)


def test_weighted_inference_equals_scaled_demand():
    """Second method for the cost form: weight w on inference is the compute form with w·D_inf."""
    law = sl.BESIROGLU_2024
    loss = 2.2
    a = sl.inference_aware_optimum(law, loss, 1e13, inference_weight=3.0)
    b = sl.inference_aware_optimum(law, loss, 3e13)
    assert a["params"] == pytest.approx(b["params"], rel=1e-9)


@pytest.mark.parametrize("ratio", [0.5, 1.0, 2.0])
def test_equal_cost_allocation_sets_the_cost_ratio(ratio):
    law = sl.BESIROGLU_2024
    res = sl.equal_cost_allocation(law, 2.2, 1e13, inference_weight=3.0, exponent_ratio=ratio)
    assert 3.0 * res["inference_flop"] / res["train_flop"] == pytest.approx(ratio, rel=1e-12)
    assert sl.loss_nats_per_token(law, res["params"], res["train_tokens"]) == pytest.approx(2.2, rel=1e-12)
    opt = sl.inference_aware_optimum(law, 2.2, 1e13, inference_weight=3.0)
    assert res["cost_flop"] >= opt["cost_flop"] * (1 - 1e-12)


def test_unreachable_target_is_nan_not_a_number():
    law = sl.BESIROGLU_2024
    opt = sl.inference_aware_optimum(law, np.array([law.E - 0.1, 2.2]), 1e12)
    assert np.isnan(opt["params"][0]) and not bool(opt["converged"][0])
    assert np.isfinite(opt["params"][1])
