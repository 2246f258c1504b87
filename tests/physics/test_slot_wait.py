"""Waiting for a decode slot, against discrete-event simulations of the closed loop and SciPy's binomial."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from econ.physics import slot_wait


def test_the_wait_for_a_slot_is_what_a_simulated_closed_loop_gives():
    """C users, each sending its next request when the last ends, share K slots of service time S (uniform in
    [0.8, 1]: the benchmark's length spread); a discrete-event simulation's mean wait once past the first requests
    matches (C/K − 1)·S within 2%, and nobody waits when the slots outnumber the users."""
    rng = np.random.default_rng(0)
    for users, slots in ((10, 3), (64, 16), (5, 8)):
        free_at = [0.0] * slots  # when each slot is next free
        arrivals = [0.0] * users
        waits, services = [], []
        for _ in range(4000):
            arrival = min(arrivals)
            user = arrivals.index(arrival)
            start = max(arrival, heapq.heappop(free_at))
            service = rng.uniform(0.8, 1.0)
            heapq.heappush(free_at, start + service)
            waits.append(start - arrival)
            services.append(service)
            arrivals[user] = start + service
        mean_wait = float(np.mean(waits[1000:]))
        expected = float(slot_wait.slot_wait_s(0.0, np.mean(services), max(users / slots, 1.0) - 1.0))
        saturated = max(users / slots, 1.0) - 1.0  # one worker: whatever the lifetimes' spread (Little's law)
        for scv in (0.0, 1.0):
            assert float(slot_wait.routed_slot_wait(users, 1, slots, scv)) == pytest.approx(saturated)
        assert mean_wait == pytest.approx(expected, rel=0.02, abs=1e-9), (users, slots)


def test_a_slot_taken_after_the_prefill_waits_what_a_simulated_closed_loop_gives():
    """Disaggregated serving behind a prefill router: each of C users' requests is prefilled (T₁, on a pool that does
    not hold a decode slot) and only then asks for one of K slots, held for its decoding Z (uniform in [0.8, 1]·Z).
    A discrete-event simulation's mean wait for the slot matches (w·Z − T₁)⁺ with w = C/K − 1 (its prefill overlaps
    the queue), within 3% where users wait, and is far below w·(T₁ + Z), the wait of a slot held through the
    prefill; with short queues nobody waits."""
    rng = np.random.default_rng(1)
    for users, slots, prefill, wait_expected in ((12, 8, 1.0, True), (64, 16, 2.0, True), (9, 8, 2.0, False)):
        free_at = [0.0] * slots
        asks = [prefill] * users  # when each user's request, prefilled, asks for a slot
        waits, services = [], []
        for _ in range(6000):
            ask = min(asks)
            user = asks.index(ask)
            start = max(ask, heapq.heappop(free_at))
            service = 10.0 * rng.uniform(0.8, 1.0)
            heapq.heappush(free_at, start + service)
            waits.append(start - ask)
            services.append(service)
            asks[user] = start + service + prefill  # the next request is prefilled before it asks again
        mean_wait, z, w = float(np.mean(waits[2000:])), float(np.mean(services)), users / slots - 1.0
        expected = float(slot_wait.slot_wait_s(prefill, z, w, 1.0))
        assert expected == pytest.approx(max(w * z - prefill, 0.0))
        if wait_expected:
            assert mean_wait == pytest.approx(expected, rel=0.03), (users, slots)
            assert float(slot_wait.slot_wait_s(prefill, z, w, 0.0)) > 1.2 * mean_wait
        else:
            assert expected == 0.0 and mean_wait < 0.05 * z


def _routed_wait(users, workers, slots, spread, rng):
    """Mean wait for a slot [mean service times] of a closed loop of ``users`` (each sends its next request when the
    last ends) routed at random over ``workers`` of ``slots`` slots, service times from ``spread``(rng)."""
    free = [[0.0] * slots for _ in range(workers)]  # when each slot of each worker is next free
    arrivals, waits, services = [0.0] * users, [], []
    for _ in range(20000):
        arrival = min(arrivals)
        user = arrivals.index(arrival)
        worker = free[rng.integers(workers)]
        start = max(arrival, heapq.heappop(worker))
        service = spread(rng)
        heapq.heappush(worker, start + service)
        waits.append(start - arrival)
        services.append(service)
        arrivals[user] = start + service
    return float(np.mean(waits[2000:]) / np.mean(services))


@pytest.mark.parametrize(("users", "workers", "slots"), [(4, 4, 1), (7, 7, 1), (16, 4, 4), (8, 4, 2), (12, 2, 4)])
def test_users_routed_blind_to_load_wait_what_a_simulated_closed_loop_gives(users, workers, slots):
    """A discrete-event simulation of C users routed at random over W workers of K slots (an even spread, C ≤ W·K,
    would wait nothing): routed_slot_wait is the simulated wait of lifetimes as narrow as a benchmark's (uniform in
    [0.9, 1.1], their scv 0.0033) within 8%, and at one slot a worker that of exponential ones (scv 1) within 5%,
    where the arrival theorem is exact; the narrow wait is the smaller (the first slot frees sooner)."""
    narrow_scv = 0.2**2 / 12.0
    narrow = _routed_wait(users, workers, slots, lambda rng: rng.uniform(0.9, 1.1), np.random.default_rng(2))
    assert float(slot_wait.routed_slot_wait(users, workers, slots, narrow_scv)) == pytest.approx(narrow, rel=0.08)
    exponential = _routed_wait(users, workers, slots, lambda rng: rng.exponential(1.0), np.random.default_rng(1))
    formula = float(slot_wait.routed_slot_wait(users, workers, slots, 1.0))
    assert narrow < 0.97 * formula <= 1.05 * exponential
    if slots == 1:
        assert formula == pytest.approx(exponential, rel=0.05)


def test_a_benchmarks_lengths_vary_little():
    """InferenceX's client draws lengths uniformly from [0.8·L, L]: a million such draws vary with the scv
    uniform_length_scv states (0.0041, within 2%); fixed lengths vary not at all."""
    draws = np.random.default_rng(0).uniform(0.8, 1.0, 1_000_000)
    assert float(slot_wait.uniform_length_scv(0.8)) == pytest.approx(draws.var() / draws.mean() ** 2, rel=0.02)
    assert float(slot_wait.uniform_length_scv(0.8)) == pytest.approx(0.0041, abs=5e-5)
    assert slot_wait.uniform_length_scv(1.0) == 0.0


@pytest.mark.parametrize(("users", "workers", "slots"), [(400, 4, 96), (1000, 8, 120), (5000, 2, 2600), (300, 3, 90)])
def test_many_users_routed_blind_to_load_wait_the_binomials_exact_tail(users, workers, slots):
    """Past EXACT_USERS others the wait takes the binomial's normal approximation (erfc by Abramowitz & Stegun): it
    matches the exact E[(N + 1 - K)+]/K of SciPy's binomial within 3% of the wait (and 1e-4 lifetimes), and so
    with narrow lifetimes' saving, P(N ≥ K) continuity-corrected."""
    from scipy import stats

    n = users - 1
    k = np.arange(n + 1)
    pmf = stats.binom.pmf(k, n, 1.0 / workers)
    exact = float(np.sum(np.maximum(k + 1 - slots, 0) * pmf) / slots)
    assert users - 1 > slot_wait.EXACT_USERS
    assert float(slot_wait.routed_slot_wait(users, workers, slots, 1.0)) == pytest.approx(exact, rel=0.03, abs=1e-4)
    narrow = exact - (1.0 - 1.0 / workers) * float(np.sum(pmf[k >= slots])) * (1.0 / slots - 1.0 / (slots + 1.0))
    assert float(slot_wait.routed_slot_wait(users, workers, slots, 0.0)) == pytest.approx(narrow, rel=0.03, abs=1e-4)
