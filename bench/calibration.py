"""Benchmark: the calibration of the serving model on the InferenceX runs and the published measured points.

Prints one figure a line as `name: value unit`. Run from the repository root:

    OPENBLAS_NUM_THREADS=1 python bench/calibration.py

``calibration_analysis`` is the whole analysis as the build runs it (reading the runs and points, the main fit, the
four grouped cross-validations, writing five tables); ``calibration_problem`` reading the problem;
``calibration_fit`` the main fit; ``calibration_cv_<basis>`` one grouped cross-validation (a warm-started
Gauss–Newton refit per group). ``fold_cap_vs_converged_ratio`` checks the fold cap
(:data:`econ.fits.calibration_cv.FOLD_ITERATIONS`): the leave-one-chip-out held-out TPOT and TTFT median and p90
errors at the cap over those of scipy's solver run to convergence from the same start (1.000: the cap leaks
nothing). The held-out error figures and band coverage are the build's own (table ``calibration_errors``), printed
so a change's speed and accuracy are read side by side. Each time is the best of three runs (the CV and the
converged folds: one).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.analyses import calibration  # noqa: E402
from econ.analyses import calibration_tables as tables  # noqa: E402
from econ.analyses.runner import BuildContext, _Scenarios, run_analyses  # noqa: E402
from econ.fits import calibration as cal  # noqa: E402
from econ.fits import calibration_cv as cv  # noqa: E402


def converged_folds(problem: cal.Problem, z: np.ndarray, groups: np.ndarray) -> dict[str, np.ndarray]:
    """Held-out log ratios of each group's runs from scipy's solver run to convergence without the group."""
    out = {k: np.full(problem.runs.n, np.nan) for k in ("ttft", "tpot")}
    for label in sorted({g for g in groups if g is not None}, key=str):
        held = groups == label
        fold = dataclasses.replace(problem, run_mask=~held)
        pred = cal.predict(cal.usable(cal.fit_calibration(fold, start_at=z), problem.levels), problem)
        for key, measured in (("ttft", problem.runs.log_ttft), ("tpot", problem.runs.log_tpot)):
            out[key][held] = (pred[key] - measured)[held]
    return out


def main() -> None:
    with built(ROOT / "data") as con:
        t, _ = best_of(lambda: run_analyses(con, [calibration], as_of=AS_OF, cache_dir=None))
        print(f"calibration_analysis: {t:.3f} s")
        ctx = BuildContext(con, AS_OF, _Scenarios(con))
        t, inputs = best_of(lambda: calibration.build_problem(ctx))
        print(f"calibration_problem: {t:.3f} s")
        problem = inputs.problem
        print(f"calibration_runs_fitted: {problem.runs.n} runs")
        print(f"calibration_points_fitted: {problem.points.n} points")
        print(f"calibration_coordinates: {len(cal.names(problem.levels))} parameters")
        t, result = best_of(lambda: cal.fit_calibration(problem))
        print(f"calibration_fit: {t:.3f} s")
        z = cal.usable(result, problem.levels)
        labels = tables.fold_labels(inputs.runs, inputs.points, inputs.groups)
        for basis in ("model_out", "chip_out", "source_out", "random_out"):
            t, _ = best_of(lambda b=basis: cv.cross_validate(problem, z, *labels[b]), repeat=1)
            print(f"calibration_cv_{basis}: {t:.3f} s")
        capped = cv.cross_validate(problem, z, *labels["chip_out"])
        t, full = best_of(lambda: converged_folds(problem, z, np.asarray(labels["chip_out"][0], dtype=object)), 1)
        print(f"calibration_cv_chip_out_converged: {t:.3f} s")
        for key in ("tpot", "ttft"):
            for name, q in (("", 0.5), ("_p90", 0.9)):
                ratio = np.exp(np.nanquantile(np.abs(capped[key]), q) - np.nanquantile(np.abs(full[key]), q))
                print(f"fold_cap_vs_converged_{key}{name}_ratio: {ratio:.4f} x")
        errors = con.sql(
            "select basis, target, error_factor, error_factor_p90, band_coverage_frac from calibration_errors "
            "where group_kind = 'overall' order by target, basis"
        ).fetchall()
        for basis, target, median, p90, coverage in errors:
            print(f"{target}_{basis}_error_factor_median: {median:.3f} x")
            print(f"{target}_{basis}_error_factor_p90: {p90:.3f} x")
            if coverage is not None:
                print(f"{target}_{basis}_p90_band_coverage: {coverage:.3f} fraction")


if __name__ == "__main__":
    main()
