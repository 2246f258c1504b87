"""Benchmark: the serving sweep, vectorised vs the same formulas in a per-point Python loop; the analysis wall time.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/sweep.py [--data DIR]

- ``sweep_vectorised_rate``: grid points per second of :func:`econ.physics.sweep.sweep_chunks` (all twelve
  outputs of every point: step times, bounds, tokens/s, $/MTok in and out, memory, fits), single process.
- ``sweep_loop_same_functions_rate``: the same points evaluated one at a time through the same physics
  functions (``econ.physics.roofline`` / ``memory``) — what a per-point loop over the library costs.
- ``sweep_loop_inline_python_rate``: the same formulas written out in plain Python floats per point —
  the fastest a per-point loop can be; the stricter comparison.
- ``serving_analysis_time``: the serving analysis (sweep streamed into DuckDB plus its other tables) on
  ``--data`` (default data/), re-run on a database built from it.

Targets (issue 3): >= 10 million points/s, >= 300x the per-point loop, analysis adds < 2 s to `econ build`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.physics import memory, roofline  # noqa: E402
from econ.physics.model import kv_window_bytes  # noqa: E402
from econ.physics.sweep import CASE_COLUMNS, sweep_chunks  # noqa: E402
from econ.units import MEGA, SECONDS_PER_HOUR  # noqa: E402

PRICE = 2.0


def synthetic_cases(n: int, seed: int = 0) -> dict:
    """n model x chip x format cases spanning real ranges (7B-2T params, H100- to B200-class chips)."""
    rng = np.random.default_rng(seed)
    total = 10 ** rng.uniform(9.8, 12.3, n)
    windowed = (
        rng.random(n) < 0.3
    )  # hybrid models: sliding-window layers hold 1 MB per sequence once 4,096 tokens fill them
    return {
        "params_total": total,
        "params_active": total * 10 ** rng.uniform(-1.6, 0, n),
        "weight_bytes_per_param": rng.choice([0.5, 1.0, 2.0], n),
        "kv_bytes_per_token": 10 ** rng.uniform(3.5, 6, n),
        "kv_window_bytes_per_sequence": np.where(windowed, 1e6, 0.0),
        "sliding_window_tokens": np.where(windowed, 4096.0, np.nan),
        "peak_flop_per_s": 10 ** rng.uniform(14.3, 16, n),
        "hbm_bandwidth_bytes_per_s": 10 ** rng.uniform(11.9, 12.9, n),
        "hbm_capacity_bytes": 10 ** rng.uniform(10.2, 11.5, n),
        "chips": 2.0 ** rng.integers(0, 6, n),
        "pipeline_stages": np.ones(n),
    }


def vectorised_rate(cases, batch, context, repeat=3) -> tuple[float, int]:
    best, points = float("inf"), 0
    for _ in range(repeat):
        start, points = time.perf_counter(), 0
        for index, _out in sweep_chunks(cases, batch, context, usd_per_chip_hour=PRICE):
            points += len(index) * len(batch) * len(context)
        best = min(best, time.perf_counter() - start)
    return points / best, points


def point_same_functions(c, b, ctx):
    """One grid point through the library's functions (the notebook path, minus dataclasses)."""
    window = kv_window_bytes(ctx, c["kv_window_bytes_per_sequence"], c["sliding_window_tokens"])
    compute = roofline.compute_time_s(b, 1.0, c["params_active"], c["chips"], c["peak_flop_per_s"])
    mem = roofline.memory_time_s(
        b,
        ctx,
        c["kv_bytes_per_token"],
        c["params_total"],
        c["weight_bytes_per_param"],
        c["chips"],
        c["hbm_bandwidth_bytes_per_s"],
        pipeline_stages=c["pipeline_stages"],
        kv_extra_bytes_per_sequence=window,
    )
    step = roofline.step_bounds(compute, mem)
    pre_compute = roofline.compute_time_s(b, ctx, c["params_active"], c["chips"], c["peak_flop_per_s"])
    pre = roofline.step_bounds(pre_compute, mem)
    required = memory.weight_bytes(c["params_total"], c["weight_bytes_per_param"]) + memory.kv_bytes(
        b, ctx, c["kv_bytes_per_token"], window
    )
    return (
        step.lower_bound_s,
        step.upper_bound_s,
        step.compute_bound,
        roofline.tokens_per_s(b, step.lower_bound_s),
        roofline.usd_per_token(step.lower_bound_s, b, c["chips"], PRICE) * MEGA,
        pre.lower_bound_s,
        pre.compute_bound,
        roofline.usd_per_token(pre.lower_bound_s, b * ctx, c["chips"], PRICE) * MEGA,
        required,
        required <= c["chips"] * c["hbm_capacity_bytes"],
    )


def point_inline(c, b, ctx):
    """One grid point in plain Python floats: the same formulas, no numpy."""
    w = c["sliding_window_tokens"]
    window = 0.0 if w != w else c["kv_window_bytes_per_sequence"] * min(ctx / w, 1.0)
    g = c["chips"]
    per_token = 2.0 * c["params_active"] / (g * c["peak_flop_per_s"])
    compute = per_token * b
    kv_seq = ctx * c["kv_bytes_per_token"] + window
    mem = (c["pipeline_stages"] * c["params_total"] * c["weight_bytes_per_param"] + b * kv_seq) / (
        g * c["hbm_bandwidth_bytes_per_s"]
    )
    step = compute if compute >= mem else mem
    pre_compute = compute * ctx
    pre = pre_compute if pre_compute >= mem else mem
    usd_s = g * PRICE / SECONDS_PER_HOUR * MEGA
    required = c["params_total"] * c["weight_bytes_per_param"] + b * kv_seq
    return (
        step,
        compute + mem,
        compute >= mem,
        b / step,
        step * usd_s / b,
        pre,
        pre_compute >= mem,
        pre * usd_s / (b * ctx),
        required,
        required <= g * c["hbm_capacity_bytes"],
    )


def loop_rate(fn, cases, batch, context, n_cases) -> float:
    rows = [{k: float(cases[k][i]) for k in CASE_COLUMNS} for i in range(n_cases)]
    start = time.perf_counter()
    for c in rows:
        for b in batch:
            for ctx in context:
                fn(c, float(b), float(ctx))
    return n_cases * len(batch) * len(context) / (time.perf_counter() - start)


def check_agreement(cases, batch, context) -> None:
    """The three paths agree on a sample before their speeds are compared."""
    first = next(sweep_chunks({k: v[:2] for k, v in cases.items()}, batch, context, usd_per_chip_hour=PRICE))[1]
    c = {k: float(cases[k][1]) for k in CASE_COLUMNS}
    i = len(batch) * len(context) + 5 * len(context) + 7  # case 1, batch index 5, context index 7
    for fn in (point_same_functions, point_inline):
        got = fn(c, float(batch[5]), float(context[7]))
        np.testing.assert_allclose(got[0], first["decode_step_time_s"][i], rtol=1e-12)
        np.testing.assert_allclose(got[4], first["output_usd_per_mtok"][i], rtol=1e-12)
        np.testing.assert_allclose(got[7], first["input_usd_per_mtok"][i], rtol=1e-12)


def analysis_time(data_dir: Path) -> tuple[float, str]:
    from econ.analyses import serving
    from econ.analyses.runner import run_analyses

    with built(data_dir) as con:
        seconds, _ = best_of(lambda: run_analyses(con, [serving], as_of=AS_OF, cache_dir=None))
        rows = con.execute("select count(*) from serving_curves").fetchone()[0]
    return seconds, f"{data_dir}, {rows} serving_curves rows"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--cases", type=int, default=20_000)
    args = parser.parse_args()

    batch = 2.0 ** np.arange(0, 17)  # the analysis grid: 17 batches x 11 contexts per case
    context = 2.0 ** np.arange(10, 21)
    cases = synthetic_cases(args.cases)
    check_agreement(cases, batch, context)
    vec, points = vectorised_rate(cases, batch, context)
    same = loop_rate(point_same_functions, cases, batch, context, n_cases=20)
    inline = loop_rate(point_inline, cases, batch, context, n_cases=200)
    print(f"sweep_grid_points: {points} points")
    print(f"sweep_vectorised_rate: {vec:.4g} points/s")
    print(f"sweep_loop_same_functions_rate: {same:.4g} points/s")
    print(f"sweep_loop_inline_python_rate: {inline:.4g} points/s")
    print(f"sweep_speedup_vs_same_functions: {vec / same:.0f} ratio")
    print(f"sweep_speedup_vs_inline_python: {vec / inline:.0f} ratio")
    seconds, note = analysis_time(args.data)
    print(f"serving_analysis_time: {seconds:.3f} s  # {note}")


if __name__ == "__main__":
    main()
