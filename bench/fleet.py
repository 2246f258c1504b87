"""Benchmark: the cost–speed frontier for every model × chip × format, and the fleet analyses' share of `econ build`.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/fleet.py [--data DIR]

- ``fleet_pareto_cases`` / ``fleet_pareto_batches_per_case`` / ``fleet_pareto_points``: the frontier's size
  (every model with KV bytes × every chip × every format the chip has a peak for, 1,026 batches each).
- ``fleet_pareto_frame_time``: :func:`econ.analyses.fleet_pareto.pareto_frame` over all of them: replicas,
  frontier, Pareto mask across formats.
- ``fleet_pareto_analysis_time``: the ``fleet_pareto`` analysis end to end, including its write into DuckDB —
  what the frontier adds to `econ build`; ``fleet_pareto_per_model_chip_time``: that over the model × chip pairs.
- ``fleet_analyses_time``: the three fleet analyses (plans, training fleet, frontier), no cache.

Target (issue 8): the frontier for every model × chip (>= 1,000 batch points each) adds < 1 s to `econ build`.
Best of three runs each; the machine is shared, so expect some noise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.analyses import fleet_pareto, fleet_plan, training_fleet  # noqa: E402
from econ.analyses.inputs import (  # noqa: E402
    MODELS_SQL,  # noqa: E402
    cases_for,
    with_kv_format,
)
from econ.analyses.runner import run_analyses  # noqa: E402
from econ.analyses.scenario import load_scenario  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    args = parser.parse_args()
    with built(args.data) as con:
        base = load_scenario(con, "base")
        models = with_kv_format(con.sql(MODELS_SQL).pl(), base.kv_cache_format)
        cases = cases_for(models, con.sql("select * from hardware_derived order by chip, format_order").pl())
        measured = cases.filter(pl.col("kv_bytes_per_token").is_not_null())
        pairs = measured.select("model", "chip").unique().height
        frame_s, frame = best_of(lambda: fleet_pareto.pareto_frame(cases, base))
        analysis_s, _ = best_of(lambda: run_analyses(con, [fleet_pareto], as_of=AS_OF, cache_dir=None))
        fleet_s, _ = best_of(
            lambda: run_analyses(con, [fleet_plan, training_fleet, fleet_pareto], as_of=AS_OF, cache_dir=None)
        )
    batches = len(fleet_pareto.PARETO_BATCH)
    print(f"fleet_pareto_cases: {measured.height} cases")
    print(f"fleet_pareto_model_chip_pairs: {pairs} pairs")
    print(f"fleet_pareto_batches_per_case: {batches} batches")
    print(f"fleet_pareto_points: {measured.height * batches} points")
    print(f"fleet_pareto_rows_written: {frame.height} rows")
    print(f"fleet_pareto_frame_time: {frame_s:.3f} s")
    print(f"fleet_pareto_analysis_time: {analysis_s:.3f} s")
    print(f"fleet_pareto_per_model_chip_time: {analysis_s / pairs * 1e3:.2f} ms")
    print(f"fleet_analyses_time: {fleet_s:.3f} s  # {args.data}")


if __name__ == "__main__":
    main()
