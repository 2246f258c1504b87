"""The lecture's pre-training / RL / inference token balance, in closed form (§e.1–e.4).

Pure and vectorised: every argument may be a float or a numpy array (they broadcast), so
one call evaluates a whole sensitivity grid. Costs are in pre-training-FLOP equivalents:
a phase that runs at a fraction η of pre-training's efficiency costs 1/η as much per FLOP.

The chain (lecture §e, [R] = a reconstruction, not said on air):

    C_pre = 6·N·D_pre,  C_RL = c_RL·N·D_RL/η_RL,  C_inf = 2·N·D_inf/η_dec       (§e.2)
    α = (c_RL/6)/η_RL,  β = (2/6)/η_dec            (§e.3; per-token cost relative to pre-training)
    D_inf = r_tok·T_deploy·(1 − p_discard)/n_family                              (§e.4, §e.1 derating)
    D_pre : D_RL : D_inf = s_pre : s_RL/α : s_inf/β                               (§e.3)
    OT = D_pre/(k_chin·N_act)                                                     (§e.4)

η's are ratios to pre-training's efficiency (η_pre = 1). The equal-cost knob r = q/p
(§e.1): for f(x) = a·x^−p + b·x^q the optimum has (a·x^−p)/(b·x^q) = q/p, so equal costs
are exact only when p = q. Here x = D_pre: inference (and RL) cost falls as pre-training
grows and pre-training cost rises, so at the optimum C_inf/C_pre = r·(s_inf/s_pre) — r > 1
means fewer pre-training tokens than the equal-cost heuristic gives. RL is paid up front
like pre-training, so the knob scales D_RL the same way (C_inf/C_RL = r·(s_inf/s_RL)).
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula

PRETRAIN_FLOP_PER_PARAM_TOKEN = 6.0  # "the famous 6ND formula" (§e.2)
INFERENCE_FLOP_PER_PARAM_TOKEN = 2.0  # "inference is just 2" (§e.2)


def _f(x):
    return np.asarray(x, dtype=float)


@formula("D_inf = r_tok·T_deploy·(1 − p_discard) / n_family", "lecture e.4, e.1")
def inference_tokens_per_model(tokens_served_per_s, deployment_s, models_per_family, discard_probability=0.0):
    """D_inf = r_tok·T_deploy·(1 − p_discard)/n_family [tokens] (§e.4; derating §e.1).

    Parameters
    ----------
    tokens_served_per_s : a lab's total serving rate r_tok [tokens/s].
    deployment_s : how long a model is served before it is obsolete, T_deploy [s].
    models_per_family : models sharing that traffic, n_family [models].
    discard_probability : chance the model is never deployed as a frontier model, p_discard [frac].
    """
    return _f(tokens_served_per_s) * _f(deployment_s) * (1.0 - _f(discard_probability)) / _f(models_per_family)


@formula("α = (c_RL/6) / η_RL", "lecture e.3")
def rl_cost_per_token_ratio(rl_flop_per_param_token, rl_efficiency_ratio):
    """α = (c_RL/6)/η_RL: an RL token's cost over a pre-training token's (§e.3; 4 and 0.45 → 1.48)."""
    return _f(rl_flop_per_param_token) / PRETRAIN_FLOP_PER_PARAM_TOKEN / _f(rl_efficiency_ratio)


@formula("β = (2/6) / η_dec", "lecture e.3")
def inference_cost_per_token_ratio(decode_efficiency_ratio):
    """β = (2/6)/η_dec: an inference token's cost over a pre-training token's (§e.3; 0.33 → 1.01)."""
    return INFERENCE_FLOP_PER_PARAM_TOKEN / PRETRAIN_FLOP_PER_PARAM_TOKEN / _f(decode_efficiency_ratio)


@formula("C_pre = 6·N·D_pre; C_RL = c_RL·N·D_RL/η_RL; C_inf = 2·N·D_inf/η_dec", "lecture e.2")
def phase_costs_flop(
    active_params,
    pretrain_tokens,
    rl_tokens,
    inference_tokens,
    *,
    rl_flop_per_param_token,
    rl_efficiency_ratio,
    decode_efficiency_ratio,
):
    """(C_pre, C_RL, C_inf) in pre-training-FLOP equivalents (§e.2).

    C_pre = 6·N·D_pre; C_RL = c_RL·N·D_RL/η_RL; C_inf = 2·N·D_inf/η_dec.
    """
    n = _f(active_params)
    c_pre = PRETRAIN_FLOP_PER_PARAM_TOKEN * n * _f(pretrain_tokens)
    c_rl = _f(rl_flop_per_param_token) * n * _f(rl_tokens) / _f(rl_efficiency_ratio)
    c_inf = INFERENCE_FLOP_PER_PARAM_TOKEN * n * _f(inference_tokens) / _f(decode_efficiency_ratio)
    return c_pre, c_rl, c_inf


@formula("share = C_phase / (C_pre + C_RL + C_inf)", "lecture e.2")
def cost_shares(c_pre, c_rl, c_inf):
    """Each phase's share of the total cost: (C_pre, C_RL, C_inf)/ΣC [frac]."""
    c_pre, c_rl, c_inf = _f(c_pre), _f(c_rl), _f(c_inf)
    total = c_pre + c_rl + c_inf
    return c_pre / total, c_rl / total, c_inf / total


@formula("D_pre = (s_pre/s_inf)·β·D_inf / r", "lecture e.3–e.4")
def pretrain_tokens_from_inference(inference_tokens, share_pretrain, share_inference, beta, exponent_ratio=1.0):
    """D_pre = (s_pre/s_inf)·β·D_inf/r [tokens] (§e.4, with the §e.1 exactness knob r = q/p)."""
    return _f(share_pretrain) / _f(share_inference) * _f(beta) * _f(inference_tokens) / _f(exponent_ratio)


@formula("D_RL = (s_RL/s_inf)·(β/α)·D_inf / r", "lecture e.3")
def rl_tokens_from_inference(inference_tokens, share_rl, share_inference, alpha, beta, exponent_ratio=1.0):
    """D_RL = (s_RL/s_inf)·(β/α)·D_inf/r [tokens] (§e.3: D_RL ∝ s_RL/α; RL, like pre-training, is paid up front)."""
    return _f(share_rl) / _f(share_inference) * _f(beta) / _f(alpha) * _f(inference_tokens) / _f(exponent_ratio)


@formula("D_chin = k·N_act", "lecture e.4; Hoffmann et al. 2022")
def chinchilla_tokens(active_params, tokens_per_param):
    """D_chin = k·N_act [tokens] (§X.3: k ≈ 20; Pope applies it to active parameters)."""
    return _f(tokens_per_param) * _f(active_params)


@formula("OT = D_pre / (k·N_act)", "lecture e.4")
def overtraining_factor(pretrain_tokens, active_params, tokens_per_param):
    """OT = D_pre/(k·N_act) [ratio] (§e.4; 2.59e14/(20·1e11) ≈ 130, "a factor of a hundred")."""
    return _f(pretrain_tokens) / chinchilla_tokens(active_params, tokens_per_param)


@formula("a·x^−p + b·x^q is minimal where the cost ratio = q/p", "lecture e.1")
def equal_cost_optimum(a, b, p, q):
    """Minimiser and cost ratio of f(x) = a·x^−p + b·x^q (a, b, p, q > 0).

    f'(x) = 0 ⇔ p·a·x^−p = q·b·x^q ⇒ x* = (p·a/(q·b))^(1/(p+q)), and the falling term over
    the rising one is (a·x*^−p)/(b·x*^q) = q/p: equal only when p = q (§e.1, [R]).

    Returns
    -------
    (x*, cost ratio falling/rising [ratio]).
    """
    a, b, p, q = _f(a), _f(b), _f(p), _f(q)
    x = (p * a / (q * b)) ** (1.0 / (p + q))
    return x, (a * x**-p) / (b * x**q)


@formula("D_pre : D_RL : D_inf = s_pre : s_RL/α : s_inf/β", "lecture e.3")
def token_balance(
    *,
    tokens_served_per_s,
    deployment_s,
    models_per_family,
    discard_probability,
    share_pretrain,
    share_rl,
    share_inference,
    rl_flop_per_param_token,
    rl_efficiency_ratio,
    decode_efficiency_ratio,
    tokens_per_param,
    active_params,
    exponent_ratio=1.0,
):
    """The whole §e chain for broadcastable inputs; returns a dict of arrays.

    Keys (units in the names): ``inference_tokens``, ``pretrain_tokens``, ``rl_tokens``,
    ``alpha_ratio``, ``beta_ratio``, ``pretrain_cost_flop``, ``rl_cost_flop``,
    ``inference_cost_flop``, ``pretrain_cost_frac``, ``rl_cost_frac``,
    ``inference_cost_frac``, ``chinchilla_tokens``, ``overtraining_ratio``,
    ``pretrain_tokens_per_active_param_ratio``. The cost shares are recomputed from the
    three cost terms, so with r = 1 they return the stated shares (a consistency check);
    with r ≠ 1 they show the shares the knob implies.
    """
    alpha = rl_cost_per_token_ratio(rl_flop_per_param_token, rl_efficiency_ratio)
    beta = inference_cost_per_token_ratio(decode_efficiency_ratio)
    d_inf = inference_tokens_per_model(tokens_served_per_s, deployment_s, models_per_family, discard_probability)
    d_pre = pretrain_tokens_from_inference(d_inf, share_pretrain, share_inference, beta, exponent_ratio)
    d_rl = rl_tokens_from_inference(d_inf, share_rl, share_inference, alpha, beta, exponent_ratio)
    c_pre, c_rl, c_inf = phase_costs_flop(
        active_params,
        d_pre,
        d_rl,
        d_inf,
        rl_flop_per_param_token=rl_flop_per_param_token,
        rl_efficiency_ratio=rl_efficiency_ratio,
        decode_efficiency_ratio=decode_efficiency_ratio,
    )
    s_pre, s_rl, s_inf = cost_shares(c_pre, c_rl, c_inf)
    d_chin = chinchilla_tokens(active_params, tokens_per_param)
    return {
        "inference_tokens": d_inf,
        "pretrain_tokens": d_pre,
        "rl_tokens": d_rl,
        "alpha_ratio": alpha,
        "beta_ratio": beta,
        "pretrain_cost_flop": c_pre,
        "rl_cost_flop": c_rl,
        "inference_cost_flop": c_inf,
        "pretrain_cost_frac": s_pre,
        "rl_cost_frac": s_rl,
        "inference_cost_frac": s_inf,
        "chinchilla_tokens": d_chin,
        "overtraining_ratio": overtraining_factor(d_pre, active_params, tokens_per_param),
        "pretrain_tokens_per_active_param_ratio": d_pre / _f(active_params),
    }


@formula("D / N_act", "lecture e.4")
def tokens_per_param_ratio(tokens, params_active):
    """Training tokens per active parameter [tokens/param] (Chinchilla's ≈ 20 is compute-optimal)."""
    return np.divide(np.asarray(tokens, dtype=float), params_active)


@formula("r_tok·T_deploy", "lecture e.4")
def lab_inference_tokens(tokens_served_per_s, deployment_s):
    """Tokens a lab serves over a model's deployment, all models together [tokens]."""
    return np.multiply(tokens_served_per_s, deployment_s)
