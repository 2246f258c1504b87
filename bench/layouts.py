"""Benchmark: the layout evaluation (vectorised vs the same functions per point) and the layout search's time.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/layouts.py

- ``layouts_vectorised_rate``: decode points per second of :func:`econ.physics.deployment.decode_terms` over
  every model × chip × format × grid layout × batch of the shipped data (one call per chunk of cases, as
  ``serving_layouts`` runs it), every term of every point;
- ``layouts_loop_same_functions_rate``: the same points through the same function one at a time;
- ``layouts_speedup``: their ratio, measured side by side in this run;
- ``serving_layouts_analysis_time``: the ``serving_layouts`` analysis end to end (both pools, the frontier, the
  search's marks, the thinning and the write into DuckDB), with the points it evaluates and the rows it stores.

Targets (issue 13): >= 1e7 points/s, >= 300x the per-point loop, the search adds <= 3 s to a cold `econ build`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.analyses import deployment_inputs as inputs  # noqa: E402
from econ.analyses import serving_layouts  # noqa: E402
from econ.analyses.runner import run_analyses  # noqa: E402
from econ.analyses.scenario import load_scenario  # noqa: E402
from econ.analyses.traffic import traffic_mix  # noqa: E402
from econ.physics import deployment  # noqa: E402


def main() -> None:
    with built(ROOT / "data") as con:
        s = load_scenario(con, "base")
        cases = (
            con.sql(inputs.CASES_SQL).pl().filter(pl.col("number_format").is_in(list(s.alternatives("weight_format"))))
        )
        cases = cases.with_columns(pl.int_range(pl.len()).alias("_case"))
        named = con.sql("select * from layouts order by layout").pl()
        rows = inputs.layouts_for(cases, named, "decode", int(s.max_replica_chips))
        context = traffic_mix(s).decode_context_tokens
        batch = serving_layouts.DECODE_BATCH

        def col(values):
            return np.asarray(values, dtype=float)[:, None]

        model = {k: col(v) for k, v in inputs.model_arrays(rows).items()}
        chip = {k: col(v) for k, v in inputs.chip_arrays(rows).items()}
        layout = {k: rows[k].to_numpy()[:, None] for k in deployment.LAYOUT_KEYS}
        run = inputs.settings(s, "decode", col(rows["weight_bytes_per_param"].to_numpy()))
        points = rows.height * batch.size

        def vectorised():
            return deployment.decode_terms(model, chip, layout, batch[None, :], context, settings=run)

        seconds, _ = best_of(vectorised)
        sample = np.random.default_rng(0).choice(rows.height, size=200, replace=False)

        def one_by_one():
            for i in sample:
                m = {k: v[i, 0] for k, v in model.items()}
                c = {k: v[i, 0] for k, v in chip.items()}
                lay = {k: v[i, 0] for k, v in layout.items()}
                settings = {k: (v[i, 0] if np.ndim(v) else v) for k, v in run.items()}
                for b in batch:
                    deployment.decode_terms(m, c, lay, b, context, settings=settings)

        start = time.perf_counter()
        one_by_one()
        loop_rate = sample.size * batch.size / (time.perf_counter() - start)
        analysis_s, _ = best_of(lambda: run_analyses(con, [serving_layouts], as_of=AS_OF, cache_dir=None))
        stored = con.sql("select count(*) from serving_layouts").fetchall()[0][0]
        prefill = inputs.layouts_for(cases, named, "prefill", int(s.max_replica_chips)).height
        evaluated = points + prefill * serving_layouts.PREFILL_BATCH.size
    rate = points / seconds
    print(
        f"layouts_grid_points: {points} points  # {cases.height} cases x {rows.height // cases.height} layouts avg x "
        f"{batch.size} batches"
    )
    print(f"layouts_vectorised_rate: {rate:.4g} points/s")
    print(f"layouts_loop_same_functions_rate: {loop_rate:.4g} points/s")
    print(f"layouts_speedup: {rate / loop_rate:.0f} ratio")
    print(
        f"serving_layouts_analysis_time: {analysis_s:.3f} s  # both pools: {evaluated} points evaluated, {stored} rows "
        "stored (the answers and the thinned grid)"
    )


if __name__ == "__main__":
    main()
