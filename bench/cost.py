"""Benchmark: `econ cost` (the bill with the sellers' billing rules, one price per seller, refusals).

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/cost.py [--data DIR]

- ``cost_one_request_time``: one request of claude-sonnet-4.5 at every seller, from the database (read the prices,
  the rules and bill), what ``econ cost`` does;
- ``cost_bill_one_request_time``: the bill alone, the tables already read;
- ``cost_workload_time``: a workload of 10,000 request shapes (10,000 × 2,000 tokens each varied, a time of day on
  each) at every seller of deepseek-v4-pro; ``cost_workload_rows_per_s``: request × price-row pairs billed per second.

Best of three runs each; the machine is shared, so expect some noise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from bench._db import AS_OF, best_of  # noqa: E402
from econ.analyses.billing import bill  # noqa: E402
from econ.analyses.cost_command import cost_for, read_billing, single_request  # noqa: E402
from econ.build import build  # noqa: E402

SHAPES = 10_000


def workload() -> pl.DataFrame:
    start = datetime(2026, 11, 30, tzinfo=UTC)
    return pl.DataFrame(
        {
            "request": range(SHAPES),
            "input_tokens": [1_000 + 37 * i for i in range(SHAPES)],
            "cached_input_tokens": [(i * 53) % 50_000 for i in range(SHAPES)],
            "cache_write_tokens": [(i * 7) % 5_000 for i in range(SHAPES)],
            "output_tokens": [200 + i % 2_000 for i in range(SHAPES)],
            "cache_ttl": ["5m"] * SHAPES,
            "cache_storage_hours": [0.0] * SHAPES,
            "requests": [1 + i % 10 for i in range(SHAPES)],
            "at": [start + timedelta(minutes=7 * i) for i in range(SHAPES)],
        },
        schema_overrides={"at": pl.Datetime("us", "UTC")},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    args = parser.parse_args()
    one = single_request(input_tokens=250_000, output_tokens=2_000, cached_input_tokens=50_000)
    with tempfile.TemporaryDirectory() as name:
        db = Path(name) / "bench.duckdb"
        build(data_dir=args.data, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
        full_s, _ = best_of(lambda: cost_for(db, model="claude-sonnet-4.5", requests=one))
        tables = read_billing(db).on(AS_OF)
    bill_s, _ = best_of(lambda: bill(tables, model="claude-sonnet-4.5", requests=one))
    shapes = workload()
    work_s, result = best_of(lambda: bill(tables, model="deepseek-v4-pro", requests=shapes))
    rows = tables.prices.filter(pl.col("canonical_model") == "deepseek-v4-pro").height
    print(f"cost_one_request_time: {full_s * 1e3:.1f} ms")
    print(f"cost_bill_one_request_time: {bill_s * 1e3:.1f} ms")
    print(f"cost_workload_time: {work_s:.3f} s  # {SHAPES:,} shapes, {result.schedules.height} schedules")
    print(f"cost_workload_rows_per_s: {SHAPES * rows / work_s:.3g} pairs/s  # {args.data}")


if __name__ == "__main__":
    main()
