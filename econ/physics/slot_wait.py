"""Waiting for a decode slot: a request admitted only when a decode worker has room waits whole request lifetimes.

A closed-loop benchmark keeps C users in flight; a decode worker runs at most K sequences (its KV cache or its
launch limit), so with W workers the users beyond W·K wait for a slot, and a router that does not look at the
workers' load makes some wait on a busy worker while another has room. The wait is counted in request lifetimes
(:func:`slot_wait_s`), how many of them by the arrival theorem (:func:`routed_slot_wait`), and how much sooner a
slot frees when lifetimes are as narrow as a benchmark's lengths make them (:func:`uniform_length_scv`).
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula


def _f(x):
    return np.asarray(x, dtype=float)


@formula(
    "W_slot = w·(T₁ + Z); taken after the prefill: (w·Z − T₁)⁺",
    "a wait of w lifetimes of a slot, held T₁ + Z, or Z where the prefill runs before the slot is taken",
)
def slot_wait_s(first_token_s, think_s, wait_lifetimes, after_prefill=0.0):
    """Mean wait for a decode slot [s]: ``wait_lifetimes`` (:func:`routed_slot_wait`) lifetimes of a slot.

    Each request holds a slot from admission to its last token, ``T₁ + Z`` (its time to first token once admitted,
    then ``Z = (O − 1)·TPOT`` of decoding). On one worker whose K slots are all busy they turn over ``K/(T₁ + Z)``
    requests per second, so each of C users cycles in ``C·(T₁ + Z)/K`` (Little's law), of which ``T₁ + Z`` is
    service: ``w = C/K − 1`` (Lazowska et al., *Quantitative System Performance*, ch. 3: a closed system without
    think time at saturation).

    Where the engine takes the slot only once the prompt is prefilled (``after_prefill`` 1: disaggregated serving
    behind Dynamo's prefill router, :data:`econ.analyses.launch_settings.SLOT_AFTER_PREFILL_ENGINES`) a slot is held
    for ``Z`` alone: the K slots turn over ``K/Z`` requests per second, a user cycles in ``C·Z/K = T₁ + W + Z``, and
    the prefill ``T₁`` it spends before asking for a slot is part of its wait: ``W = (w·Z − T₁)⁺``. InferenceX's
    TensorRT-LLM disaggregated runs that wait read their TTFT 1.37x too long in sample with the wait counted over
    ``T₁ + Z``, 0.96x with this one (113 runs)."""
    w, t1, z = _f(wait_lifetimes), _f(first_token_s), _f(think_s)
    return np.where(_f(after_prefill) > 0.0, np.maximum(w * z - t1, 0.0), w * (t1 + z))


def _upper_tail(mean, sd, threshold):
    """(E[(X − a)⁺], P(X > a)) of a normal X [same unit, frac]: σ·φ(z) + (μ − a)·(1 − Φ(z)) and 1 − Φ(z),
    z = (a − μ)/σ; Φ by Abramowitz & Stegun 7.1.26 (erfc to 1.5e-7), so that the serving path needs no SciPy."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        z = (threshold - mean) / sd
        x = np.abs(z) / np.sqrt(2.0)
        t = 1.0 / (1.0 + 0.3275911 * x)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        upper = 0.5 * poly * np.exp(-x * x)  # 1 − Φ(|z|)
        tail = np.where(z >= 0, upper, 1.0 - upper)  # 1 − Φ(z)
        return sd * np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi) + (mean - threshold) * tail, tail


@formula("scv = (1 − r)²/(3·(1 + r)²)", "squared coefficient of variation of a length uniform on [r·L, L]")
def uniform_length_scv(range_ratio):
    """Squared coefficient of variation of a length drawn uniformly from ``[r·L, L]`` [ratio]: variance
    ``((1 − r)·L)²/12`` over the squared mean ``((1 + r)·L/2)²``; 0.0041 at InferenceX's r = 0.8, 0 for fixed
    lengths. A request's lifetime is mostly its output's decoding, so it varies as much."""
    r = _f(range_ratio)
    return (1.0 - r) ** 2 / (3.0 * (1.0 + r) ** 2)


@formula(
    "w = E[(N + 1 − K)⁺]/K − (1 − scv)·(1 − 1/W)·P(N ≥ K)·(1/K − 1/(K + 1)),  N ~ Binomial(C − 1, 1/W)",
    "arrival theorem (Lazowska et al., Quantitative System Performance, ch. 6) with routing blind to load; the "
    "residual of narrow lifetimes",
)
def routed_slot_wait(users, workers, slots, lifetime_scv):
    """Request lifetimes a user waits for a decode slot [lifetimes] when C users are routed without regard to load
    over W decode workers of K slots each, their lifetimes' squared coefficient of variation ``lifetime_scv``.

    A router that does not look at the workers' load sends a request to a worker whatever it holds. By the arrival
    theorem a request finds the other C − 1 users spread over the W workers, N ~ Binomial(C − 1, 1/W) on its own;
    past K − 1 of them it queues behind the excess, each of the K slots freeing one request lifetime ``T₁ + Z`` at
    a time. With exponential lifetimes (scv 1) the first slot frees 1/K of a lifetime on, and the wait is
    E[(N + 1 − K)⁺]/K lifetimes (the binomial summed exactly up to :data:`EXACT_USERS` users, its normal
    approximation beyond): exact at one slot a worker. A benchmark's lifetimes are narrow (its lengths uniform on
    [0.8·L, L], scv 0.004, :func:`uniform_length_scv`): a request arriving from another worker finds the K
    requests ahead of it at independent phases, the first of them ending 1/(K + 1) of a lifetime on, not 1/K, and
    waits that much less where it waits at all (P(N ≥ K)); one arriving back at the worker it left (1/W of them)
    finds one slot just refilled and the others evenly spread, the exponential case's 1/K. Between the two the
    saving scales with ``1 − scv``. One worker gives (C/K − 1), the saturated closed system of :func:`slot_wait_s`,
    whatever the lifetimes; four users on four single-slot workers wait 0.75 of an exponential lifetime, 0.53 of a
    narrow one, where an even spread would not wait at all. A discrete-event simulation agrees
    (tests/physics/test_slot_wait.py): within 5% for exponential lifetimes at one slot a worker, and within 8% for
    narrow ones at one to eight slots but for waits near zero. InferenceX's TensorRT-LLM disaggregated runs of C
    users on as many single-slot decode workers measure waits of 0 (B200, 8 users) to 0.6 (GB200, 3 and 4)
    lifetimes: their routers differ. No slot limit (K infinite or NaN) waits nothing; an unknown spread (NaN scv)
    is read as exponential lifetimes', the longer wait."""
    c = np.maximum(np.nan_to_num(_f(users), nan=1.0), 1.0)
    w = np.maximum(np.nan_to_num(_f(workers), nan=1.0), 1.0)
    k = np.maximum(np.nan_to_num(_f(slots), nan=np.inf), 1.0)
    scv = np.clip(np.nan_to_num(_f(lifetime_scv), nan=1.0), 0.0, 1.0)
    c, w, k, scv = np.broadcast_arrays(c, w, k, scv)
    n, q = np.round(c - 1.0), 1.0 / w
    a = k - 1.0  # the others a request can find at its worker without waiting
    sd = np.sqrt(n * q * (1.0 - q))
    excess, waits = _upper_tail(n * q, sd, a)[0], _upper_tail(n * q, sd, a + 0.5)[1]  # P(N ≥ K), continuity-corrected
    excess = np.where(sd > 0, excess, np.maximum(n * q - a, 0.0))
    waits = np.where(sd > 0, waits, (n * q > a).astype(float))
    small = (sd > 0) & (n <= EXACT_USERS)
    if small.any():  # Σ_j (j − a)⁺·P(N = j) by the pmf's recursion P(j + 1) = P(j)·(n − j)/(j + 1)·q/(1 − q)
        ns, qs, as_ = n[small], q[small], a[small]
        pmf, exact, tail = (1.0 - qs) ** ns, np.zeros(ns.shape), np.zeros(ns.shape)
        for j in range(int(ns.max()) + 1):
            within = np.where(j <= ns, pmf, 0.0)
            exact += np.maximum(j - as_, 0.0) * within
            tail += np.where(j > as_, within, 0.0)
            pmf = pmf * np.maximum(ns - j, 0.0) / (j + 1.0) * qs / (1.0 - qs)
        excess[small], waits[small] = exact, tail
    with np.errstate(invalid="ignore"):  # K infinite: masked below
        saving = (1.0 - scv) * (1.0 - q) * waits * (1.0 / k - 1.0 / (k + 1.0))
        wait = np.maximum(excess, 0.0) / k - saving
    return np.where(np.isfinite(k), np.maximum(wait, 0.0), 0.0)


EXACT_USERS = 256
"""Up to this many other users :func:`routed_slot_wait` sums the binomial exactly (the normal approximation is 8%
high at four users on four workers, under 1% past a few hundred)."""
