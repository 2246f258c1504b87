"""econ.analyses.calibration_runs: the steps of a measured run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ.analyses import calibration_runs as cr


@given(
    batch=st.floats(1.0, 4096.0),
    output_tokens=st.floats(1.0, 65_536.0),
    prompt_tokens=st.floats(1.0, 200_000.0),
    chunk_tokens=st.floats(64.0, 65_536.0),
)
def test_the_steps_that_carry_chunks_carry_every_prompt_token(batch, output_tokens, prompt_tokens, chunk_tokens):
    """The share c of steps that carry a chunk, each with (B/O)/c prompts, prefills B/O prompts a step: every
    prompt token once, at least a whole chunk in each step that carries one, and a step with a chunk in it every
    step once the prompts arrive faster than one chunk a step."""
    chunk = min(chunk_tokens, prompt_tokens)
    per_step = batch / output_tokens
    c = cr.chunk_share(per_step, prompt_tokens, chunk)
    assert 0.0 < c <= 1.0
    carried = per_step / c * prompt_tokens  # prompt tokens in a step that carries a chunk
    assert c * carried == pytest.approx(per_step * prompt_tokens, rel=1e-12)
    assert carried >= chunk * (1 - 1e-12)
    assert (c == 1.0) == (per_step * prompt_tokens >= chunk)


def test_an_engine_that_prefills_a_whole_prompt_carries_one_prompt_in_a_step_in_every_so_many():
    """Four users of 8,192-token prompts and 1,024-token outputs (mean lengths 0.9x of those), a prompt at a time: one
    step in 230.4 carries a whole prompt; at 1,024 users every step carries 4.4 prompts' worth."""
    c = cr.chunk_share(np.array([4.0, 1024.0]) / 921.6, 7372.8, 7372.8)
    assert c[0] == pytest.approx(1 / 230.4) and c[1] == 1.0


@given(
    prompts_per_step=st.floats(1e-4, 10.0),
    ranks=st.sampled_from([2.0, 4.0, 8.0, 16.0]),
    timeout=st.floats(1.0, 200.0),
)
def test_prompts_held_for_every_attention_rank_are_released_together_or_at_the_timeout(
    prompts_per_step, ranks, timeout
):
    """TensorRT-LLM's attention-DP balance: a release carries the prompts that arrived since the last one, at most one
    per rank while they arrive slower than a rank's worth a step, and comes when every rank has one or at the
    timeout; a prompt waits half the time between releases."""
    group, wait = cr.balanced_prefill(prompts_per_step, ranks, 64.0, timeout)
    assert 1.0 <= group <= ranks
    assert 0.0 < wait <= timeout / 2.0
    window = 2.0 * wait
    assert group == pytest.approx(min(max(prompts_per_step * window, 1.0), ranks))
    if prompts_per_step * timeout >= ranks:  # every rank gets a prompt before the timeout
        assert group == pytest.approx(ranks) and window == pytest.approx(ranks / prompts_per_step)
    else:
        assert window == pytest.approx(timeout)


def test_a_worker_that_does_not_balance_its_ranks_holds_no_prompt():
    """No timeout stated (the engine does not balance), one rank, or fewer sequences than ranks (the scheduler
    releases while a rank has nothing to decode): nothing waits, and each prompt is prefilled alone."""
    group, wait = cr.balanced_prefill(
        np.full(4, 0.1),
        np.array([8.0, 1.0, 8.0, 8.0]),
        np.array([64.0, 64.0, 4.0, 64.0]),
        np.array([np.nan, 60.0, 60.0, 60.0]),
    )
    assert list(group[:3]) == [1.0, 1.0, 1.0] and list(wait[:3]) == [0.0, 0.0, 0.0]
    assert group[3] == 6.0 and wait[3] == 30.0  # 0.1 prompts a step: six by the 60-step timeout
