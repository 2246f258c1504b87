"""The pools of a disaggregated run that states no worker counts: worked by hand from the rules of
econ.analyses.assumed_workers, on the layouts of InferenceX's GB200 runs that calibration_runs shows (the end-to-end
checks against measured TTFT and TPOT are in tests/analyses/test_predict_points.py)."""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.assumed_workers import LARGEST_PREFILL, LARGEST_SYSTEM, assume, holding_every_user

DEGREES = ("tensor_parallel", "attention_data_parallel", "expert_tensor_parallel", "expert_parallel", "workers")


def row(concurrency, input_tokens, assumed, decode, prefill) -> dict:
    """decode / prefill: (tp, attention dp, etp, ep, workers) of each pool."""
    out = {"chip": "GB200", "concurrency": float(concurrency), "input_tokens": float(input_tokens)}
    out["workers_assumed"] = assumed
    for pool, values in (("decode", decode), ("prefill", prefill)):
        out |= {f"{pool}_{k}": float(v) for k, v in zip(DEGREES, values, strict=True)}
    return out


def test_an_unstated_run_is_read_within_the_largest_stated_system_and_prefill_worker():
    largest = pl.DataFrame({"chip": ["GB200"], LARGEST_SYSTEM: [72.0], LARGEST_PREFILL: [8.0]})
    frame = pl.DataFrame(
        [
            # a stated system larger than the bound stays as stated
            row(4301, 1024, False, (16, 1, 4, 4, 5), (4, 1, 1, 4, 6)),
            # 4,301 users over decode tp 8: 64 a rank would take ceil(4301 / 64) = 68 workers; 72 chips hold
            # floor(72 / (8 x (1 + 0.2))) = 7, and prefill at 0.2 chips a decode chip round(0.2 x 7 x 8 / 4) = 3
            row(4301, 1024, True, (8, 1, 2, 4, 1), (4, 1, 1, 4, 1)),
            # the decode pool's dp 36 copied into the prefill pool: cut to the largest stated prefill worker, dp 8
            # and the experts over 8; one decode worker of 36 (floor(72 / 43.2) = 1), prefill round(0.2 x 36 / 8) = 1
            row(512, 1024, True, (1, 36, 1, 36, 1), (1, 36, 1, 36, 1)),
        ]
    )
    got = assume(frame, largest)
    pools = [
        [r["decode_workers"], r["prefill_workers"], r["prefill_attention_data_parallel"], r["prefill_expert_parallel"]]
        for r in got.iter_rows(named=True)
    ]
    assert pools == [[5, 6, 1, 4], [7, 3, 1, 4], [1, 1, 8, 8]]
    assert got["prefill_expert_tensor_parallel"].to_list() == [1, 1, 1]


def test_assumed_decode_workers_are_raised_until_their_caches_hold_every_user():
    workers = holding_every_user(
        np.array([1.0, 1.0, 2.0, 1.0]),
        users=np.array([1000.0, 1000.0, 100.0, 1000.0]),
        slots_per_worker=np.array([300.0, 300.0, 300.0, 0.5]),
        assumed=np.array([True, False, True, True]),
    )
    # ceil(1000 / 300) = 4; a stated count stays; enough already; a worker that holds no sequence is not multiplied
    assert workers.tolist() == [4.0, 1.0, 2.0, 1.0]
