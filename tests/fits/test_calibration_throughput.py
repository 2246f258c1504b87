"""The published points' predicted throughput: the batch each regime takes, checked against a brute-force search and
against a step whose time is known in closed form."""

from __future__ import annotations

import numpy as np
import pytest

from econ.fits import calibration as cal
from econ.fits.calibration_features import Points, Step
from econ.fits.calibration_throughput import best_batch, predict_points

BATCHES = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0])


def test_the_batch_taken_is_the_cheapest_within_the_limit_else_the_fastest_that_fits():
    rng = np.random.default_rng(7)
    cost, step = rng.uniform(0.1, 2.0, (200, 9)), rng.uniform(0.001, 0.1, (200, 9))
    fits = rng.random((200, 9)) < 0.8
    limit = rng.uniform(0.0, 0.1, (200, 1))
    got, pick, met = best_batch(cost, step, fits, limit)
    for i in range(200):  # the same choice by a loop over each row's cells
        within = [j for j in range(9) if fits[i, j] and step[i, j] <= limit[i, 0]]
        fitting = [j for j in range(9) if fits[i, j]]
        if not fitting:
            assert got[i] == np.inf
            continue
        j = min(within, key=lambda j: cost[i, j]) if within else min(fitting, key=lambda j: step[i, j])
        assert (pick[i], bool(met[i]), got[i]) == (j, bool(within), cost[i, j])


def _decode_point(weights_s: float, cache_s_per_sequence: float, chips: float, limit_s: float) -> Points:
    """One decode point whose step at peak reads the weights in ``weights_s`` and each sequence's cache in
    ``cache_s_per_sequence``: at the ideal parameters a step of batch B takes ``weights_s + B·cache_s_per_sequence``."""
    zeros = np.zeros((1, BATCHES.size))
    decode = Step(
        dense_s=zeros,
        expert_s=zeros,
        imbalance=zeros + 1.0,
        attention_s=zeros,
        dense_mem_s=zeros + weights_s,
        expert_mem_s=zeros,
        kv_mem_s=cache_s_per_sequence * BATCHES[None, :],
        comm_s=zeros,
        hops=zeros,
        layers=zeros + 1.0,
        sequences=BATCHES[None, :],
        overlap=zeros,
        balanced=zeros,
    )
    one = np.ones(1)
    return Points(
        regime=np.array(["decode"]),
        decode=decode,
        prefill=decode,
        decode_tokens=BATCHES[None, :],
        prefill_tokens=BATCHES[None, :],
        decode_fits=np.ones((1, BATCHES.size), bool),
        prefill_fits=np.ones((1, BATCHES.size), bool),
        decode_chips=np.array([[chips]]),
        prefill_chips=np.array([[chips]]),
        decode_limit_s=np.array([[limit_s]]),
        prefill_limit_s=np.array([[np.inf]]),
        input_tokens=one * 1000.0,
        output_tokens=one * 100.0,
        decode_share=one * 0.5,
        log_measured=one * 0.0,
    )


@pytest.mark.parametrize(
    ("limit_s", "batch", "met"),
    [
        (np.inf, 256.0, True),  # no limit: tokens per chip-second grow with the batch, so the largest
        (0.011, 64.0, True),  # 10 ms of weights + 0.01 ms a sequence: 64 sequences take 10.64 ms, 128 take 11.28
        (0.009, 1.0, False),  # no step is that fast: the fastest, batch 1, with the limit not met
    ],
)
def test_a_decode_point_takes_the_largest_batch_its_step_limit_allows(limit_s, batch, met):
    point = _decode_point(weights_s=0.010, cache_s_per_sequence=1e-5, chips=8.0, limit_s=limit_s)
    out = predict_points(cal.ideal_parameters(1), point)
    step_s = 0.010 + batch * 1e-5
    assert out["decode_step_time_s"][0] == pytest.approx(step_s, rel=1e-12)
    assert out["value"][0] == pytest.approx(batch / (step_s * 8.0), rel=1e-12)  # tokens/s per chip
    assert bool(out["limit_met"][0]) is met
