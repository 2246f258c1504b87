"""Benchmark: `econ predict --points` on the 3,366 InferenceX runs, vectorised against a loop over rows.

Prints one figure a line as `name: value unit`. Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python bench/predict_points.py [--loop-rows N]

- ``predict_points_file_time``: the whole command's work (read and check the file, read the database, predict every
  row) on ``data/inferencex_train.csv``; ``predict_points_rows_per_s`` its rate (the issue asks >= 1,000 rows/s);
- ``vectorised_rows_per_s``: the prediction alone, every row in one call;
- ``per_row_loop_rows_per_s``: the same function called once per row, on the first N rows (default 200; the loop
  is too slow to run on all of them), measured in the same run;
- ``vectorised_over_loop_ratio``: the speed-up of the vectorised call.

Best of three runs each (the loop: one); the machine is shared, so expect some noise.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._db import best_of, built  # noqa: E402
from econ.analyses.predict_points import Calibrated, predict_frame, predict_points_file, read_points  # noqa: E402

POINTS = ROOT / "data" / "inferencex_train.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loop-rows", type=int, default=200)
    args = parser.parse_args()
    with built(ROOT / "data") as con:
        db = Path(
            con.sql("select path from duckdb_databases() where database_name = current_database()").fetchall()[0][0]
        )
        calibrated = Calibrated.read(con)
        con.close()
        rows = read_points(POINTS)
        t_file, out = best_of(lambda: predict_points_file(db, POINTS))
        print(f"predict_points_file_time: {t_file:.3f} s")
        print(f"predict_points_rows: {out.height} rows")
        print(f"predict_points_ok_rows: {int((out['status'] == 'ok').sum())} rows")
        print(f"predict_points_rows_per_s: {out.height / t_file:.0f} rows/s")
        t_vec, _ = best_of(lambda: predict_frame(rows, calibrated))
        n = min(args.loop_rows, rows.height)
        start = time.perf_counter()
        for i in range(n):
            predict_frame(rows.slice(i, 1), calibrated)
        t_loop = time.perf_counter() - start
        vec_rate, loop_rate = rows.height / t_vec, n / t_loop
        print(f"vectorised_rows_per_s: {vec_rate:.0f} rows/s")
        print(f"per_row_loop_rows_per_s: {loop_rate:.1f} rows/s  # first {n} rows")
        print(f"vectorised_over_loop_ratio: {vec_rate / loop_rate:.0f} x")


if __name__ == "__main__":
    main()
