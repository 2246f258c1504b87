"""Benchmark: the cost–speed frontier for every model × chip × format, and the fleet analysis's share of `econ build`.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/fleet.py [--data DIR]

- ``fleet_pareto_cases`` / ``fleet_pareto_batches_per_case`` / ``fleet_pareto_points``: the frontier's size
  (every model with KV bytes × every chip × every format the chip has a peak for, 1,026 batches each).
- ``fleet_pareto_compute_time``: :func:`econ.physics.fleet.frontier` over all of them (numpy, one call).
- ``fleet_pareto_table_time``: the ``fleet_pareto`` table end to end: cases, frontier, Pareto mask across
  formats, and the write into DuckDB — what the frontier adds to `econ build`.
- ``fleet_pareto_per_model_chip_time``: that time divided by the model × chip pairs.
- ``fleet_analysis_time``: the whole fleet analysis (plans, frontier, training fleet), no cache.

Target (issue 8): the frontier for every model × chip (>= 1,000 batch points each) adds < 1 s to `econ build`.
Best of three runs each; the machine is shared, so expect some noise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402

from econ.analyses import fleet, serving, training  # noqa: E402
from econ.analyses.fleet_plan import traffic_from_scenario  # noqa: E402
from econ.analyses.fleet_tables import PARETO_BATCH, pareto_frame  # noqa: E402
from econ.analyses.runner import run_analyses  # noqa: E402
from econ.analyses.scenario import load_scenario  # noqa: E402
from econ.build import build  # noqa: E402
from econ.db import write_table  # noqa: E402
from econ.physics import fleet as physics  # noqa: E402

AS_OF = date(2026, 11, 30)


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        db = Path(name) / "b.duckdb"
        with mock.patch("econ.build.ANALYSES", [training]):  # training writes token_balance, which the fleet reads
            build(data_dir=args.data, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
        with duckdb.connect(str(db)) as con:
            con.execute(f"set variable as_of = date '{AS_OF.isoformat()}'")
            base = traffic_from_scenario(load_scenario(con, "base"))

            def cases():
                models = serving.with_kv_format(con.sql("select * from models order by model").pl(), base.kv_format)
                return serving.cases(models, con.sql("select * from hardware order by chip").pl())

            frame = cases().filter(__import__("polars").col("kv_bytes_per_token").is_not_null())
            pairs = frame.select("model", "chip").unique().height
            a = {
                k: frame[k].cast(float).fill_null(float("nan")).to_numpy()
                for k in (
                    "params_total",
                    "params_active",
                    "weight_bytes_per_param",
                    "kv_bytes_per_token",
                    "peak_flop_per_s",
                    "hbm_bandwidth_bytes_per_s",
                    "hbm_capacity_bytes",
                    "chips",
                    "pipeline_stages",
                )
            }
            compute = best_of(
                lambda: physics.frontier(
                    batch=PARETO_BATCH,
                    context_tokens=base.decode_context_tokens,
                    usd_per_chip_hour=2.0,
                    mfu=base.mfu,
                    mbu=base.mbu,
                    **a,
                )
            )
            rows = 0

            def table():
                nonlocal rows
                out = pareto_frame(cases(), base)
                rows = write_table(con, "fleet_pareto_bench", out, description="bench")

            table_s = best_of(table)
            analysis_s = best_of(lambda: run_analyses(con, [fleet], as_of=AS_OF, cache_dir=None))
    print(f"fleet_pareto_cases: {frame.height} cases")
    print(f"fleet_pareto_model_chip_pairs: {pairs} pairs")
    print(f"fleet_pareto_batches_per_case: {len(PARETO_BATCH)} batches")
    print(f"fleet_pareto_points: {frame.height * len(PARETO_BATCH)} points")
    print(f"fleet_pareto_rows_written: {rows} rows")
    print(f"fleet_pareto_compute_time: {compute:.3f} s")
    print(f"fleet_pareto_table_time: {table_s:.3f} s")
    print(f"fleet_pareto_per_model_chip_time: {table_s / pairs * 1e3:.2f} ms")
    print(f"fleet_analysis_time: {analysis_s:.3f} s  # {args.data}")


if __name__ == "__main__":
    main()
