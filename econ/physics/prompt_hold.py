"""How long an engine holds a new prompt back so that it prefills beside others: two of TensorRT-LLM's schedulers.

Both release the held prompts at a count of them or after a number of decode steps, whichever comes first; with
prompts arriving at ``λ = B/O`` a step (each request's prompt prefilled once over its ``O`` steps) a release ends a
renewal cycle, and the mean wait is the prompt-steps held over a cycle divided by the prompts it carries, with
``N_T ~ Poisson(λT)`` arrivals in ``T`` steps and ``∫₀^T P(N_t = m) dt = P(N_T ≥ m + 1)/λ``:

- **attention-DP balance** (:func:`balanced_prefill`): the cycle runs from the last release, so a prompt that finds
  nothing held waits what is left of it (half the timeout while prompts are rare);
- **batch waiting** (:func:`batch_wait_hold`): the count starts with the first prompt held, so a lone prompt waits
  the whole timeout.

A simulation of each scheduler's counter checks its form (tests/physics/test_prompt_hold.py). The launch settings
that switch them on are InferenceX's (:mod:`econ.analyses.launch_settings`).
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula

TAIL_SDS = 12.0
"""Arrivals counted past the mean of ``N_T``, in its standard deviations (plus 30): beyond them ``P(N_T ≥ m)`` is
below 1e-20 and the sums stop, so a release count of thousands costs no more than one of tens."""


def _f(x):
    return np.asarray(x, dtype=float)


def _at_least(x: np.ndarray, top: np.ndarray):
    """``(m, P(N ≥ m))`` for ``m = 1 … max(top)``, ``N ~ Poisson(x)``, each an array over rows (a loop over counts,
    vectorised over rows), stopping where every row's tail is negligible (:data:`TAIL_SDS`)."""
    last = np.max(np.where(np.isfinite(top), top, 1.0), initial=1.0)
    mean = np.max(x, initial=0.0)
    last = int(min(last, np.ceil(mean + TAIL_SDS * np.sqrt(mean) + 30.0)))
    pmf = np.exp(-x)
    cdf = pmf.copy()  # P(N ≤ m − 1)
    for m in range(1, last + 1):
        yield m, 1.0 - cdf
        pmf = pmf * x / m
        cdf = cdf + pmf


@formula(
    "h = Σ_{m<R} m·P(N ≥ m+1) / (λ·Σ_{m≤R} P(N ≥ m)),  n = Σ_{m≤R} P(N ≥ m)/(1 − e^(−λT)),  N ~ Poisson(λT)",
    "renewal cycles of TensorRT-LLM's PyExecutor._balance_adp_requests: a release at the R-th prompt or T steps",
)
def balanced_prefill(prompts_per_step, ranks, batch, timeout_steps):
    """(prompts prefilled together [prompts], mean decode steps a prompt is held [steps]) on a worker whose engine
    holds new prompts until every one of its ``R`` attention ranks has one or ``T`` steps have passed since the last
    release (TensorRT-LLM's ``attention_dp_config.enable_balance``, :data:`econ.analyses.launch_settings.
    ADP_BALANCE_TIMEOUT_ITERS`; NaN ``timeout_steps``: it does not hold).

    Prompts arrive at ``λ = B/O`` a step, spread over the ranks in turn, so every rank has one at the ``R``-th
    prompt since the last release. A release therefore ends a cycle of ``τ = min(T, S_R)`` steps, ``S_R`` the
    ``R``-th arrival, and carries ``N(τ) = min(N_T, R)`` prompts, ``N_T ~ Poisson(λT)``. The prompts held add up to
    ``∫₀^τ N(t) dt``, whose mean is ``(1/λ)·Σ_{m=1}^{R−1} m·P(N_T ≥ m + 1)`` (``N(t) < R`` before ``S_R``, and
    ``∫₀^T P(N_t = m) dt = P(N_T ≥ m + 1)/λ``); over ``E[N(τ)] = Σ_{m=1}^{R} P(N_T ≥ m)`` prompts a cycle, that is
    each prompt's mean wait, and a release that carries any carries ``E[N(τ)]/(1 − e^(−λT))``. It tends to ``T/2``
    steps while prompts are rare and to ``(R − 1)/(2λ)`` once every rank gets one well before the timeout; a
    simulation of the scheduler's counter checks it (tests/physics/test_prompt_hold.py). A worker with fewer sequences
    than ranks, or one rank, is not held (the scheduler releases while a rank has nothing to decode)."""
    lam, ranks = _f(prompts_per_step), _f(ranks)
    lam, ranks, timeout = np.broadcast_arrays(lam, ranks, _f(timeout_steps))
    held = np.isfinite(timeout) & (ranks > 1) & (_f(batch) >= ranks) & (lam > 0)
    x = np.where(held, lam * timeout, 0.0)
    per_cycle, held_sum = np.zeros(x.shape), np.zeros(x.shape)  # E[N(τ)], λ·E[∫ N dt]
    for m, at_least in _at_least(x, np.where(held, ranks, 1.0)):  # P(N_T ≥ m)
        per_cycle += np.where(m <= ranks, at_least, 0.0)
        held_sum += np.where(m <= ranks, (m - 1) * at_least, 0.0)  # (m − 1)·P(N_T ≥ m) for m = 2..R
    with np.errstate(invalid="ignore", divide="ignore"):
        wait = held_sum / (lam * per_cycle)
        group = per_cycle / -np.expm1(-x)
    return np.where(held, np.clip(group, 1.0, ranks), 1.0), np.where(held, wait, 0.0)


@formula(
    "h = Σ_{k<R} k·P(N ≥ k) / (λ·n),  n = 1 + Σ_{k<R} P(N ≥ k),  R = ⌈(θ − g)/I⌉,  N ~ Poisson(λT)",
    "renewal cycles of TensorRT-LLM's PyExecutor._waiting_requests: a release at θ scheduled tokens or T steps",
)
def batch_wait_hold(prompts_per_step, prompt_tokens, decode_tokens, threshold_tokens, timeout_steps):
    """(prompts prefilled together [prompts], mean decode steps a prompt is held [steps]) on a worker whose engine
    holds new prompts until the step's scheduled tokens (the held prompts' ``I`` each and the decode batch's ``g``)
    reach ``θ`` or ``T`` steps have passed with a prompt held (TensorRT-LLM's ``batch_wait_max_tokens_ratio``
    times ``max_num_tokens`` and ``batch_wait_timeout_iters``, :data:`econ.analyses.launch_settings.BATCH_WAIT`;
    NaN ``timeout_steps``: it does not hold).

    ``R = ⌈(θ − g)/I⌉`` prompts reach the threshold. A cycle starts with one prompt held and ends at ``τ = min(T,
    S_{R−1})``, ``S_{R−1}`` the (R − 1)-th arrival after it, carrying ``1 + min(N_T, R − 1)`` prompts. The prompts
    held add up to ``∫₀^τ (1 + N_t) dt``, whose mean is ``(1/λ)·Σ_{k=1}^{R−1} k·P(N_T ≥ k)``; over the mean count a
    cycle carries, that is each prompt's mean wait. It tends to ``T`` steps while prompts are rare (the lone prompt
    waits out the count) and to ``(R − 1)/(2λ)`` once R of them arrive well within it. One prompt that reaches the
    threshold alone is not held, nor one that finds no other request decoding (the engine then does not wait)."""
    lam, tokens, timeout = np.broadcast_arrays(_f(prompts_per_step), _f(prompt_tokens), _f(timeout_steps))
    with np.errstate(invalid="ignore", divide="ignore"):
        release = np.ceil((_f(threshold_tokens) - _f(decode_tokens)) / tokens)
    release = np.broadcast_to(release, lam.shape)
    held = np.isfinite(timeout) & (release > 1) & (lam > 0) & (_f(decode_tokens) >= 1.0)
    x = np.where(held, lam * timeout, 0.0)
    per_cycle, held_sum = np.ones(x.shape), np.zeros(x.shape)  # E[prompts a cycle], λ·E[∫ (1 + N) dt]
    for k, at_least in _at_least(x, np.where(held, release - 1.0, 0.0)):
        inside = k <= release - 1.0
        per_cycle += np.where(inside, at_least, 0.0)
        held_sum += np.where(inside, k * at_least, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        wait = held_sum / (lam * per_cycle)
    return np.where(held, per_cycle, 1.0), np.where(held, wait, 0.0)
