"""The broadcast sweep against the notebook API evaluated point by point (a second code path)."""

from __future__ import annotations

import numpy as np
import pytest

from econ.physics import Chip, Model, decode_step, prefill_step
from econ.physics.sweep import CASE_COLUMNS, OUTPUT_COLUMNS, sweep, sweep_chunks

CASES = [  # (model, chip, weight bytes, chips, stages)
    (Model("moe", 671e9, 37e9, 70_272.0), Chip("H100", 80e9, 3.35e12, peak_bf16_flop_per_s=989e12), 2.0, 32, 4),
    (
        Model(
            "hybrid", 116.8e9, 5.1e9, 36_864.0, kv_window_bytes_per_sequence=128 * 36_864.0, sliding_window_tokens=128
        ),
        Chip("B200", 180e9, 7.7e12, peak_fp4_flop_per_s=9e15),
        0.5,
        1,
        1,
    ),
    (Model("dense", 70.6e9, 70.6e9, 327_680.0), Chip("v5e", 16e9, 8.19e11, peak_bf16_flop_per_s=1.97e14), 2.0, 16, 1),
]
FORMAT = {2.0: "bf16", 0.5: "fp4"}
BATCH = np.array([1.0, 7.0, 256.0, 65536.0])
CONTEXT = np.array([1.0, 100.0, 8192.0, 1_048_576.0])


def case_arrays():
    rows = []
    for model, chip, b_w, chips, stages in CASES:
        rows.append(
            dict(
                params_total=model.params_total,
                params_active=model.params_active,
                weight_bytes_per_param=b_w,
                kv_bytes_per_token=model.kv_bytes_per_token,
                kv_window_bytes_per_sequence=model.kv_window_bytes_per_sequence,
                sliding_window_tokens=np.nan if model.sliding_window_tokens is None else model.sliding_window_tokens,
                peak_flop_per_s=chip.peak_flop_per_s(FORMAT[b_w]),
                hbm_bandwidth_bytes_per_s=chip.hbm_bandwidth_bytes_per_s,
                hbm_capacity_bytes=chip.hbm_capacity_bytes,
                chips=chips,
                pipeline_stages=stages,
            )
        )
    return {k: np.array([r[k] for r in rows], dtype=float) for k in CASE_COLUMNS}


def test_sweep_matches_decode_and_prefill_steps():
    out = sweep(
        case_arrays(),
        BATCH,
        CONTEXT,
        usd_per_chip_hour=2.0,
        decode_mfu=0.6,
        decode_mbu=0.9,
        prefill_mfu=0.6,
        prefill_mbu=0.9,
    )
    assert set(out) == set(OUTPUT_COLUMNS)
    for i, (model, chip, b_w, chips, stages) in enumerate(CASES):
        kw = dict(
            number_format=FORMAT[b_w], chips=chips, pipeline_stages=stages, mfu=0.6, mbu=0.9, usd_per_chip_hour=2.0
        )
        d = decode_step(model, chip, batch=BATCH[:, None], context_tokens=CONTEXT[None, :], **kw)
        p = prefill_step(model, chip, batch=BATCH[:, None], prompt_tokens=CONTEXT[None, :], **kw)
        np.testing.assert_allclose(out["decode_compute_time_s"][i], d.compute_time_s, rtol=1e-12)
        np.testing.assert_allclose(out["decode_memory_time_s"][i], d.memory_time_s, rtol=1e-12)
        np.testing.assert_allclose(out["decode_step_time_s"][i], d.step_time_s, rtol=1e-12)
        np.testing.assert_allclose(out["decode_upper_bound_time_s"][i], d.upper_bound_s, rtol=1e-12)
        np.testing.assert_array_equal(out["decode_compute_bound"][i], d.bound == "compute")
        np.testing.assert_allclose(out["decode_tokens_per_s"][i], d.tokens_per_s, rtol=1e-12)
        np.testing.assert_allclose(out["output_usd_per_mtok"][i], d.usd_per_mtok, rtol=1e-12)
        np.testing.assert_allclose(out["prefill_step_time_s"][i], p.step_time_s, rtol=1e-12)
        np.testing.assert_array_equal(out["prefill_compute_bound"][i], p.bound == "compute")
        np.testing.assert_allclose(out["input_usd_per_mtok"][i], p.usd_per_mtok, rtol=1e-12)


def test_fits_in_memory_flag():
    out = sweep(case_arrays(), BATCH, CONTEXT, usd_per_chip_hour=2.0)
    dense = out["memory_required_bytes"][2]
    assert dense[0, 0] == pytest.approx(70.6e9 * 2 + 327_680.0)
    np.testing.assert_array_equal(out["fits_in_memory"][2], dense <= 16 * 16e9)
    assert out["fits_in_memory"][2, 0, 0] and not out["fits_in_memory"][2, -1, -1]


def test_chunks_cover_every_case_once_in_order():
    cases = {k: np.tile(v, 5) for k, v in case_arrays().items()}  # 15 cases
    whole = sweep(cases, BATCH, CONTEXT, usd_per_chip_hour=2.0)
    seen, parts = [], []
    for index, out in sweep_chunks(cases, BATCH, CONTEXT, usd_per_chip_hour=2.0, max_points=40):  # 2 cases a chunk
        assert len(index) <= 2 and out["decode_step_time_s"].shape == (len(index) * 16,)
        seen.extend(index.tolist())
        parts.append(out["decode_step_time_s"])
    assert seen == list(range(15))
    np.testing.assert_array_equal(np.concatenate(parts), whole["decode_step_time_s"].reshape(-1))
