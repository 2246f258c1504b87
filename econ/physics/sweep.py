"""The serving sweep: every case (model × chip × format × replica) over a batch × context grid, by broadcasting.

One call evaluates ``n_cases × n_batch × n_context`` points with array operations (no Python
loop per point); :func:`sweep_chunks` yields the grid a few cases at a time so a grid larger
than memory can be streamed to the database. The formulas are those of
:mod:`econ.physics.roofline` (lecture a.2, a.4, f.3, d.4, d.6), written out once here so the
grid evaluates with the fewest full-size temporaries:

- decode (ℓ = 1):  t_c = 2·B·N_act/(G·F·mfu),   t_m = (P·N_tot·b_w + B·kv(L))/(G·W·mbu)
- prefill of B prompts of L tokens (ℓ = L, nothing cached):  t_c = 2·B·L·N_act/(G·F·mfu), same t_m
  (weights once, the prompt's KV written once)
- kv(L) = L·b_kv + window_bytes·min(L/window, 1)  (sliding-window layers stop growing at the window;
  :func:`econ.physics.model.kv_window_bytes`)
- step = max(t_c, t_m) (lower bound), cost per token = step·G·p/tokens, fits = N_tot·b_w + B·kv(L) ≤ G·C_HBM
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from econ.physics.model import kv_window_bytes
from econ.units import MEGA, SECONDS_PER_HOUR

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


def sweep(cases: dict, batch, context_tokens, *, usd_per_chip_hour: float, mfu: float = 1.0, mbu: float = 1.0) -> dict:
    """Evaluate the serving roofline on the full grid cases × batch × context.

    Parameters
    ----------
    cases : mapping of each name in :data:`CASE_COLUMNS` to a 1-D array (one entry per case).
    batch : 1-D array of decode batches (sequences) / prefill prompts per pass.
    context_tokens : 1-D array of contexts (decode: cached tokens; prefill: prompt length).
    usd_per_chip_hour : rental price p [$/chip-hour].
    mfu, mbu : achieved fraction of peak FLOP/s (compute terms) and of HBM bandwidth (memory terms).

    Returns
    -------
    dict of :data:`OUTPUT_COLUMNS` -> arrays of shape (n_cases, n_batch, n_context): times [s],
    bounds (True = compute-bound), tokens/s per replica, $/MTok, bytes, fits flag.
    """
    col = {k: np.asarray(cases[k], dtype=float)[:, None, None] for k in CASE_COLUMNS}
    b = np.asarray(batch, dtype=float)[None, :, None]
    ctx = np.asarray(context_tokens, dtype=float)[None, None, :]
    g = col["chips"]
    flop = g * col["peak_flop_per_s"] * mfu
    bandwidth = g * col["hbm_bandwidth_bytes_per_s"] * mbu
    weight_bytes = col["params_total"] * col["weight_bytes_per_param"]
    compute_per_token = 2.0 * col["params_active"] / flop  # s per token, (n,1,1)
    kv_seq = ctx * col["kv_bytes_per_token"] + kv_window_bytes(
        ctx, col["kv_window_bytes_per_sequence"], col["sliding_window_tokens"]
    )
    weight_time = col["pipeline_stages"] * weight_bytes / bandwidth  # (n,1,1)
    kv_time = kv_seq / bandwidth  # (n,1,nc)
    usd_per_mtok_s = g * (usd_per_chip_hour / SECONDS_PER_HOUR * MEGA)  # $/MTok per (s per token)

    decode_compute = np.broadcast_to(compute_per_token * b, (g.shape[0], b.shape[1], ctx.shape[2]))
    memory = b * kv_time
    memory += weight_time
    step = np.maximum(decode_compute, memory)
    prefill_compute = (compute_per_token * b) * ctx
    prefill_step = np.maximum(prefill_compute, memory)
    required = b * kv_seq
    required += weight_bytes
    return {
        "decode_compute_time_s": decode_compute,
        "decode_memory_time_s": memory,
        "decode_step_time_s": step,
        "decode_upper_bound_time_s": decode_compute + memory,
        "decode_compute_bound": decode_compute >= memory,
        "decode_tokens_per_s": b / step,
        "output_usd_per_mtok": step * (usd_per_mtok_s / b),
        "prefill_step_time_s": prefill_step,
        "prefill_compute_bound": prefill_compute >= memory,
        "input_usd_per_mtok": prefill_step * (usd_per_mtok_s / b) / ctx,
        "memory_required_bytes": required,
        "fits_in_memory": required <= g * col["hbm_capacity_bytes"],
    }


def sweep_chunks(
    cases: dict,
    batch,
    context_tokens,
    *,
    usd_per_chip_hour: float,
    mfu: float = 1.0,
    mbu: float = 1.0,
    max_points: int = 65_536,
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
        out = sweep(chunk, batch, context_tokens, usd_per_chip_hour=usd_per_chip_hour, mfu=mfu, mbu=mbu)
        yield index, {k: np.ascontiguousarray(v).reshape(-1) for k, v in out.items()}
