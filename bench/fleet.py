"""Benchmark: the fleet analyses' share of `econ build` (plans with their layout search, training fleet).

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/fleet.py [--data DIR]

- ``fleet_plan_analysis_time``: every scenario × deployment plan, including each pool's layout search over its
  candidate layouts and a fine batch grid, no cache;
- ``fleet_analyses_time``: plans and the training fleet;
- ``fleet_plan_deployments``: how many plans that is.

Best of three runs each; the machine is shared, so expect some noise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.analyses import fleet_plan, training_fleet  # noqa: E402
from econ.analyses.runner import run_analyses  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    args = parser.parse_args()
    with built(args.data) as con:
        plan_s, _ = best_of(lambda: run_analyses(con, [fleet_plan], as_of=AS_OF, cache_dir=None))
        both_s, _ = best_of(lambda: run_analyses(con, [fleet_plan, training_fleet], as_of=AS_OF, cache_dir=None))
        plans = con.sql("select count(distinct (scenario, deployment)) from fleet_plan").fetchall()[0][0]
    print(f"fleet_plan_deployments: {plans} plans")
    print(f"fleet_plan_analysis_time: {plan_s:.3f} s")
    print(f"fleet_analyses_time: {both_s:.3f} s  # {args.data}")


if __name__ == "__main__":
    main()
