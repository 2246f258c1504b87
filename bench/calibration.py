"""Benchmark: the calibration of the deployment model on the shipped measured points.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/calibration.py

``calibration_fit`` is one fit of every shared and per-family efficiency; ``calibration_cv`` the
leave-one-source-out cross-validation (one warm-started refit per source); ``calibration_analysis`` the whole
analysis as the build runs it (queries, prediction, fit, cross-validation, writing three tables). The error
figures are the build's own (table ``calibration_errors``), printed here so a change's speed and accuracy are
read side by side. Each time is the best of three runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.analyses import calibration  # noqa: E402
from econ.analyses.runner import run_analyses  # noqa: E402
from econ.fits import calibration as cal  # noqa: E402


def main() -> None:
    with built(ROOT / "data") as con:
        t, _ = best_of(lambda: run_analyses(con, [calibration], as_of=AS_OF, cache_dir=None))
        print(f"calibration_analysis: {t:.3f} s")
        included = con.sql("select count(*) from calibration_points where included").fetchall()[0][0]
        print(f"calibration_points_fitted: {included} points")
        frame = con.sql(
            "select p.*, h.architecture from calibration_points p join hardware h using (chip) where included"
        ).pl()
        base = (
            con.sql(calibration.POINTS_SQL)
            .pl()
            .join(
                con.sql(
                    "select chip, hbm_capacity_bytes, hbm_bandwidth_bytes_per_s, scale_up_domain_chips, "
                    "scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s from hardware"
                ).pl(),
                on="chip",
            )
        )
        base = base.filter(base["point_id"].is_in(frame["point_id"].to_list())).sort("point_id")
        models = con.sql("select * from model_derived where kv_bytes_per_token is not null").pl()
        reserve = con.sql("select value from scenarios where scenario = 'base' and name = 'hbm_reserve_frac'")
        pr = calibration.problem(base, models, float(reserve.fetchall()[0][0]))
        t, result = best_of(lambda: cal.fit_calibration(pr))
        print(f"calibration_fit: {t:.3f} s")
        t, cv = best_of(lambda: cal.cross_validate(pr, result), repeat=1)
        print(f"calibration_cv: {t:.3f} s")
        print(f"calibration_cv_median_abs_log_ratio: {float(np.median(np.abs(cv))):.3f} log")
        errors = con.sql(
            "select basis, error_factor, error_factor_p90 from calibration_errors where group_kind = 'overall'"
        ).fetchall()
        for basis, median, p90 in errors:
            print(f"{basis}_error_factor_median: {median:.3f} x")
            print(f"{basis}_error_factor_p90: {p90:.3f} x")


if __name__ == "__main__":
    main()
