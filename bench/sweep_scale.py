"""Benchmark: a declared sweep's points/s with 1 and 2 workers on each backend, and peak memory per worker.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/sweep_scale.py              # ~4e7 points per configuration: local and Ray, 1 and 2 workers
    python bench/sweep_scale.py --billion    # the 10^9-point sweep that keeps frontiers (local, 2 workers)

The spec (written to a temporary folder, printed) sweeps the decode pool of every model of the shipped data on
H100, H200, B200 and GB200 in FP8 over the layout search grid, 15 batches (1 … 16,384) and 8 contexts (1k … 128k),
with Monte Carlo draws over every base-scenario assumption with a range, keeping each draw × context's frontier
and argmin. Figures:

- ``sweep_<backend>_<n>w_rate``: points/s of the sweep's own run (planning, partitions, writing Parquet);
- ``sweep_<backend>_<n>w_peak_worker``: the largest peak RSS of one worker process (``VmHWM``), each worker's
  peak in the comment;
- ``sweep_driver_peak``: the driver's peak RSS (the database read, the plan, the writes);
- with ``--billion``: ``sweep_billion_time`` and ``sweep_billion_peak_total`` (driver + every worker's peak).

Ray is skipped (and said so) where it is not installed (``pip install 'econ[ray]'``).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import resource
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._db import AS_OF  # noqa: E402
from econ.build import build  # noqa: E402
from econ.sweep.run import load_plan, sweep  # noqa: E402
from econ.sweep.spec import read_spec  # noqa: E402

SPEC = """
keep = ["frontier", "argmin"]

[select]
chips = ["H100", "H200", "B200", "GB200"]
formats = ["fp8"]

[grid]
batch = {{ min = 1, max = 16384, points = 15 }}
context_tokens = {{ min = 1024, max = 131072, points = 8 }}

[draws]
count = {draws}
per_partition = {block}
seed = 0

[limits]
memory_per_worker_mb = 256
"""


def spec_for(folder: Path, db: Path, points: float, block: int) -> tuple[Path, int]:
    """A spec of at least ``points`` points (draws added until it reaches them)."""
    probe = folder / "probe.toml"
    probe.write_text(SPEC.format(draws=1, block=1), encoding="utf-8")
    per_draw = load_plan(read_spec(probe), db).points()
    draws = max(1, math.ceil(points / per_draw))
    path = folder / f"sweep_{draws}.toml"
    path.write_text(SPEC.format(draws=draws, block=min(block, draws)), encoding="utf-8")
    return path, draws * per_draw


def mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--billion", action="store_true", help="run the 10^9-point sweep instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        db = folder / "econ.duckdb"
        build(data_dir=ROOT / "data", db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
        if args.billion:
            spec, points = spec_for(folder, db, 1e9, 64)
            print(f"sweep_billion_spec: {points:,} points  # {spec.read_text().strip()!r}")
            r = sweep(spec, db_path=db, out_dir=folder / "billion", workers=2)
            total = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 + sum(r.worker_peaks.values())
            print(f"sweep_billion_time: {r.elapsed_s:.1f} s  # {r.partitions} partitions, 2 local workers")
            print(f"sweep_billion_rate: {r.points_run / r.elapsed_s:.4g} points/s")
            print(f"sweep_billion_rows: {r.rows}")
            size = sum(p.stat().st_size for p in (folder / "billion").rglob("*.parquet"))
            print(f"sweep_billion_output: {mb(size)}  # Parquet, zstd")
            each = ", ".join(mb(v) for _, v in sorted(r.worker_peaks.items()))
            print(f"sweep_billion_peak_worker: {mb(max(r.worker_peaks.values()))}  # each: {each}")
            print(f"sweep_billion_peak_total: {mb(total)}  # driver + {len(r.worker_peaks)} workers")
            return
        spec, points = spec_for(folder, db, 4e7, 64)
        print(f"sweep_points: {points:,} points per configuration")
        backends = ["local"] + (["ray"] if importlib.util.find_spec("ray") else [])
        if "ray" not in backends:
            print("sweep_ray: skipped  # Ray is not installed (pip install 'econ[ray]')")
        for backend in backends:
            for workers in (1, 2):
                r = sweep(spec, db_path=db, out_dir=folder / f"{backend}{workers}", backend=backend, workers=workers)
                rate = r.points_run / r.elapsed_s
                print(f"sweep_{backend}_{workers}w_rate: {rate:.4g} points/s  # {r.elapsed_s:.1f} s")
                each = ", ".join(mb(v) for _, v in sorted(r.worker_peaks.items()))
                print(f"sweep_{backend}_{workers}w_peak_worker: {mb(max(r.worker_peaks.values()))}  # each: {each}")
        print(f"sweep_driver_peak: {mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)}")


if __name__ == "__main__":
    main()
