"""The serving sweep: every case (model × chip × format × replica) over a batch × context grid, by broadcasting.

One call evaluates ``n_cases × n_batch × n_context`` points with array operations (no Python
loop per point): the step functions of :mod:`econ.physics.roofline` and :mod:`econ.physics.memory`
are called once on arrays shaped (cases, 1, 1), (1, batch, 1) and (1, 1, context), so the grid
uses the same formulas as a single step. :func:`sweep_chunks` yields the grid a few cases at a
time so a grid larger than memory can be streamed to the database.

- decode (ℓ = 1) and prefill of B prompts of L tokens (ℓ = L, nothing cached) share the memory
  term: the weights once and B·kv(L) of KV read or written;
- step = max(t_compute, t_mem) (lower bound), cost per token = step·G·p/tokens,
  fits = N_tot·b_w + B·kv(L) ≤ G·C_HBM.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from econ.physics import memory, roofline
from econ.physics.model import kv_window_bytes
from econ.units import MEGA

CASE_COLUMNS = (
    "params_total",
    "params_active",
    "weight_bytes_per_param",
    "kv_bytes_per_token",
    "kv_window_bytes_per_sequence",
    "sliding_window_tokens",
    "peak_flop_per_s",
    "hbm_bandwidth_bytes_per_s",
    "hbm_capacity_bytes",
    "chips",
    "pipeline_stages",
)
"""Per-case inputs of :func:`sweep` (1-D float arrays of equal length; NaN window = no window layers)."""

OUTPUT_COLUMNS = (
    "decode_compute_time_s",
    "decode_memory_time_s",
    "decode_step_time_s",
    "decode_upper_bound_time_s",
    "decode_compute_bound",
    "decode_tokens_per_s",
    "output_usd_per_mtok",
    "prefill_step_time_s",
    "prefill_compute_bound",
    "input_usd_per_mtok",
    "memory_required_bytes",
    "fits_in_memory",
)


def sweep(
    cases: dict,
    batch,
    context_tokens,
    *,
    usd_per_chip_hour: float,
    decode_mfu: float = 1.0,
    decode_mbu: float = 1.0,
    prefill_mfu: float = 1.0,
    prefill_mbu: float = 1.0,
) -> dict:
    """Evaluate the serving roofline on the full grid cases × batch × context.

    Parameters
    ----------
    cases : mapping of each name in :data:`CASE_COLUMNS` to a 1-D array (one entry per case).
    batch : 1-D array of decode batches (sequences) / prefill prompts per pass.
    context_tokens : 1-D array of contexts (decode: cached tokens; prefill: prompt length).
    usd_per_chip_hour : rental price p [$/chip-hour].
    decode_mfu, decode_mbu, prefill_mfu, prefill_mbu : achieved fractions of peak FLOP/s (compute terms) and of HBM
        bandwidth (memory terms) of decode steps and of prefill passes (1 = the pure roofline).

    Returns
    -------
    dict of :data:`OUTPUT_COLUMNS` -> arrays of shape (n_cases, n_batch, n_context): times [s],
    bounds (True = compute-bound), tokens/s per replica, $/MTok, bytes, fits flag.
    """
    col = {k: np.asarray(cases[k], dtype=float)[:, None, None] for k in CASE_COLUMNS}
    b = np.asarray(batch, dtype=float)[None, :, None]
    ctx = np.asarray(context_tokens, dtype=float)[None, None, :]
    g, peak, bandwidth = col["chips"], col["peak_flop_per_s"], col["hbm_bandwidth_bytes_per_s"]
    window = kv_window_bytes(ctx, col["kv_window_bytes_per_sequence"], col["sliding_window_tokens"])

    def mem(mbu):
        return roofline.memory_time_s(
            b,
            ctx,
            col["kv_bytes_per_token"],
            col["params_total"],
            col["weight_bytes_per_param"],
            g,
            bandwidth,
            mbu=mbu,
            pipeline_stages=col["pipeline_stages"],
            kv_extra_bytes_per_sequence=window,
        )

    decode_memory = mem(decode_mbu)
    prefill_memory = decode_memory if prefill_mbu == decode_mbu else mem(prefill_mbu)
    decode = roofline.step_bounds(
        roofline.compute_time_s(b, 1.0, col["params_active"], g, peak, mfu=decode_mfu), decode_memory
    )
    prefill = roofline.step_bounds(
        roofline.compute_time_s(b, ctx, col["params_active"], g, peak, mfu=prefill_mfu), prefill_memory
    )
    required = memory.weight_bytes(col["params_total"], col["weight_bytes_per_param"]) + memory.kv_bytes(
        b, ctx, col["kv_bytes_per_token"], window
    )
    return {
        "decode_compute_time_s": decode.compute_time_s,
        "decode_memory_time_s": decode.memory_time_s,
        "decode_step_time_s": decode.lower_bound_s,
        "decode_upper_bound_time_s": decode.upper_bound_s,
        "decode_compute_bound": decode.compute_bound,
        "decode_tokens_per_s": roofline.tokens_per_s(b, decode.lower_bound_s),
        "output_usd_per_mtok": MEGA * roofline.usd_per_token(decode.lower_bound_s, b, g, usd_per_chip_hour),
        "prefill_step_time_s": prefill.lower_bound_s,
        "prefill_compute_bound": prefill.compute_bound,
        "input_usd_per_mtok": MEGA * roofline.usd_per_token(prefill.lower_bound_s, b * ctx, g, usd_per_chip_hour),
        "memory_required_bytes": required,
        "fits_in_memory": required <= memory.replica_hbm_bytes(g, col["hbm_capacity_bytes"]),
    }


def sweep_chunks(
    cases: dict,
    batch,
    context_tokens,
    *,
    usd_per_chip_hour: float,
    max_points: int = 65_536,
    **efficiencies: float,
) -> Iterator[tuple[np.ndarray, dict]]:
    """Yield (case indices, flat outputs) a few cases at a time, at most ``max_points`` grid points each.

    The default keeps each temporary array within the CPU cache (about 3x faster than 1M-point chunks).

    Each chunk's outputs are 1-D, ordered case-major, then batch, then context (C order).
    """
    n_cases = len(np.asarray(cases[CASE_COLUMNS[0]]))
    per_case = len(batch) * len(context_tokens)
    step = max(1, max_points // max(per_case, 1))
    for start in range(0, n_cases, step):
        index = np.arange(start, min(start + step, n_cases))
        chunk = {k: np.asarray(cases[k], dtype=float)[index] for k in CASE_COLUMNS}
        out = sweep(chunk, batch, context_tokens, usd_per_chip_hour=usd_per_chip_hour, **efficiencies)
        yield index, {k: np.ascontiguousarray(v).reshape(-1) for k, v in out.items()}
