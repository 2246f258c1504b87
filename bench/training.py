"""Benchmark: the Chinchilla refit (cold, 1,000 bootstrap resamples) and the training analysis, cold and warm.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/training.py

- ``chinchilla_refit_1000_bootstrap_time``: :func:`econ.fits.chinchilla.fit_chinchilla` on the 245 shipped
  points (4,500-start multi-start plus 1,000 resamples), best of 3;
- ``chinchilla_multistart_time``: the same without the bootstrap;
- ``training_analysis_cold_time``: the whole training analysis (``N_BOOTSTRAP`` resamples, all seven tables)
  on a database of the shipped data/, empty cache;
- ``training_analysis_warm_time`` and ``training_analysis_warm_status``: the same again with the cache from
  the cold run and nothing changed (``cached`` means the fit and bootstrap were skipped).

Targets (issue 5, 2-core machine): refit with 1,000 resamples < 15 s; warm rebuild skips the fit.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402

from econ.analyses import training  # noqa: E402
from econ.analyses.runner import run_analyses  # noqa: E402
from econ.db import create_views, write_table  # noqa: E402
from econ.fits.chinchilla import fit_chinchilla  # noqa: E402
from econ.load.loader import load_all  # noqa: E402

AS_OF = date(2026, 11, 30)


def best_of(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    frames = load_all(ROOT / "data")
    points = frames["scaling_law_points"]
    n = points["params"].to_numpy()
    d = points["training_flop"].to_numpy() / (6 * n)
    loss = points["loss_nats_per_token"].to_numpy()

    t_multi, _ = best_of(lambda: fit_chinchilla(n, d, loss, n_bootstrap=0))
    t_fit, fit = best_of(lambda: fit_chinchilla(n, d, loss, n_bootstrap=1000))
    print(f"chinchilla_multistart_time: {t_multi:.2f} s")
    print(f"chinchilla_refit_1000_bootstrap_time: {t_fit:.2f} s")
    print(f"chinchilla_refit_status: {fit.status} ({fit.n_bootstrap_converged}/1000 resamples converged)")
    for p in ("E", "A", "B", "alpha", "beta"):
        print(f"chinchilla_refit_{p}: {fit.estimates[p]:.4g} ± {fit.std_errors[p]:.3g}")

    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect()
        for name, frame in frames.items():
            write_table(con, name, frame)
        create_views(con, ROOT / "queries")
        cache = Path(tmp) / "cache"
        times, status = [], []
        for _ in range(2):
            start = time.perf_counter()
            status.append(run_analyses(con, [training], as_of=AS_OF, cache_dir=cache, code_hash="bench")[training.NAME])
            times.append(time.perf_counter() - start)
        con.close()
    print(f"training_analysis_cold_time: {times[0]:.2f} s (n_bootstrap {training.N_BOOTSTRAP}, status {status[0]})")
    print(f"training_analysis_warm_time: {times[1]:.2f} s")
    print(f"training_analysis_warm_status: {status[1]}")
    assert np.isfinite(fit.objective)


if __name__ == "__main__":
    main()
