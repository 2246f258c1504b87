"""The prompt holds of econ.physics.prompt_hold against step-by-step simulations of the schedulers they describe."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ.physics import prompt_hold


def _balanced_scheduler(prompts_per_step, ranks, timeout, steps, seed):
    """TensorRT-LLM's attention-DP balance as PyExecutor._balance_adp_requests runs it, step by step: prompts arrive
    (Poisson) and go to the ranks in turn; a step where every rank holds one releases them all and restarts the
    count, any other step counts one, and the count reaching the timeout releases whatever is held. Returns (mean
    steps a prompt was held, mean prompts per release that carried any)."""
    arrivals = np.random.default_rng(seed).poisson(prompts_per_step, steps)
    pending = [[] for _ in range(ranks)]
    turn = count = 0
    waits, groups = [], []
    for t, n in enumerate(arrivals):
        for _ in range(n):
            pending[turn % ranks].append(t)
            turn += 1
        count = 0 if all(pending) else count + 1
        if count == 0 or count >= timeout:
            count = 0
            held = [a for rank in pending for a in rank]
            if held:
                groups.append(len(held))
                waits += [t - a for a in held]
                for rank in pending:
                    rank.clear()
    return np.mean(waits), np.mean(groups)


@pytest.mark.parametrize(
    ("prompts_per_step", "ranks", "timeout"),
    [(0.01, 8, 60), (0.05, 8, 60), (0.14, 8, 60), (0.3, 8, 60), (0.02, 2, 50), (0.1, 4, 50), (0.2, 16, 60)],
)
def test_a_held_prompt_waits_what_a_simulation_of_the_scheduler_gives(prompts_per_step, ranks, timeout):
    """The renewal-cycle form of balanced_prefill against a step-by-step simulation of TensorRT-LLM's scheduler, from
    rare prompts (held to the timeout) to every rank filling well before it: the mean wait within 15% and the
    prompts released together within 10% (the simulation's arrivals come in whole steps, the formula's in
    continuous time)."""
    wait_sim, group_sim = _balanced_scheduler(prompts_per_step, ranks, timeout, steps=60_000, seed=1)
    group, wait = prompt_hold.balanced_prefill(prompts_per_step, float(ranks), 64.0, float(timeout))
    assert float(wait) == pytest.approx(wait_sim, rel=0.15)
    assert float(group) == pytest.approx(group_sim, rel=0.10)


def test_a_worker_that_does_not_balance_its_ranks_holds_no_prompt():
    """No timeout stated (the engine does not balance), one rank, or fewer sequences than ranks (the scheduler
    releases while a rank has nothing to decode): nothing waits and each prompt is prefilled alone; prompts far
    rarer than the timeout wait half of it."""
    group, wait = prompt_hold.balanced_prefill(
        np.array([0.1, 0.1, 0.1, 1e-6]),
        np.array([8.0, 1.0, 8.0, 8.0]),
        np.array([64.0, 64.0, 4.0, 64.0]),
        np.array([np.nan, 60.0, 60.0, 60.0]),
    )
    assert list(group[:3]) == [1.0, 1.0, 1.0] and list(wait[:3]) == [0.0, 0.0, 0.0]
    assert group[3] == pytest.approx(1.0, rel=1e-3) and wait[3] == pytest.approx(30.0, rel=1e-3)


def _waiting_scheduler(prompts_per_step, prompt_tokens, decode_tokens, threshold, timeout, steps, seed):
    """TensorRT-LLM's batch waiting as PyExecutor._waiting_requests runs it, step by step: prompts arrive (Poisson)
    and are held; a step whose held prompts' tokens and the decode batch's reach the threshold, or whose count of
    steps held has reached the timeout, releases them all and restarts the count; any other step with a prompt
    held counts one (a step with none is not counted). Returns (mean steps a prompt was held, mean prompts a
    release)."""
    arrivals = np.random.default_rng(seed).poisson(prompts_per_step, steps)
    pending, count, waits, groups = [], 0, [], []
    for t, n in enumerate(arrivals):
        pending += [t] * n
        if not pending:
            continue
        if count >= timeout or len(pending) * prompt_tokens + decode_tokens >= threshold:
            groups.append(len(pending))
            waits += [t - a for a in pending]
            pending, count = [], 0
        else:
            count += 1
    return np.mean(waits), np.mean(groups)


@pytest.mark.parametrize(
    ("prompts_per_step", "prompt_tokens", "threshold", "timeout"),
    [
        (0.004, 920.0, 14746.0, 20),  # InferenceX's Llama-3.1-70B on TensorRT-LLM: 4 users, 1k/1k
        (0.14, 920.0, 14746.0, 20),  # 128 users: several prompts within the count
        (0.07, 920.0, 6554.0, 40),  # its DeepSeek-R1 FP8 script at 64 users
        (0.5, 920.0, 6554.0, 40),  # prompts reach the threshold well within the count
        (0.02, 7400.0, 14746.0, 20),  # two long prompts reach it
    ],
)
def test_a_waiting_prompt_is_held_what_a_simulation_of_the_scheduler_gives(
    prompts_per_step, prompt_tokens, threshold, timeout
):
    """The renewal-cycle form of batch_wait_hold against a step-by-step simulation of TensorRT-LLM's batch waiting,
    from a lone prompt held to the timeout to the threshold reached first: the mean wait and the prompts released
    together within 6% (the simulation counts whole steps, the formula continuous time; 3% apart at most)."""
    wait_sim, group_sim = _waiting_scheduler(prompts_per_step, prompt_tokens, 64.0, threshold, timeout, 200_000, 1)
    group, wait = prompt_hold.batch_wait_hold(prompts_per_step, prompt_tokens, 64.0, threshold, float(timeout))
    assert float(wait) == pytest.approx(wait_sim, rel=0.06)
    assert float(group) == pytest.approx(group_sim, rel=0.06)


def test_an_engine_that_does_not_wait_holds_no_prompt():
    """No timeout stated, a prompt that reaches the threshold alone, or no other request decoding: nothing waits;
    a lone prompt far rarer than the count waits all of it (not half, as under the attention-DP balance)."""
    group, wait = prompt_hold.batch_wait_hold(
        np.array([0.1, 0.1, 0.1, 1e-7]),
        np.array([920.0, 16_000.0, 920.0, 920.0]),
        np.array([64.0, 64.0, 0.0, 64.0]),
        14746.0,
        np.array([np.nan, 20.0, 20.0, 20.0]),
    )
    assert list(group[:3]) == [1.0, 1.0, 1.0] and list(wait[:3]) == [0.0, 0.0, 0.0]
    assert group[3] == pytest.approx(1.0, rel=1e-5) and wait[3] == pytest.approx(20.0, rel=1e-5)


@given(
    prompts_per_step=st.floats(1e-6, 50.0),
    prompt_tokens=st.floats(1.0, 200_000.0),
    decode_tokens=st.floats(0.0, 4096.0),
    threshold=st.floats(0.0, 1e6),
    timeout=st.floats(1.0, 500.0),
)
def test_a_held_prompt_never_waits_past_the_count(prompts_per_step, prompt_tokens, decode_tokens, threshold, timeout):
    """Whatever the inputs, a prompt waits between 0 and T steps and a release carries at least one prompt and no
    more than reach the threshold: finite, never NaN."""
    group, wait = prompt_hold.batch_wait_hold(prompts_per_step, prompt_tokens, decode_tokens, threshold, timeout)
    assert np.isfinite(group) and np.isfinite(wait)
    assert 0.0 <= float(wait) <= timeout * (1 + 1e-9)
    release = max(np.ceil((threshold - decode_tokens) / prompt_tokens), 1.0)
    assert 1.0 <= float(group) <= release * (1 + 1e-9)
