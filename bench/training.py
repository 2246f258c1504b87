"""Benchmark: the Chinchilla refit (cold, 1,000 bootstrap resamples) and the training analyses, cold and warm.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/training.py

- ``chinchilla_refit_1000_bootstrap_time``: :func:`econ.fits.chinchilla.fit_chinchilla` on the 245 shipped
  points (4,500-start multi-start plus 1,000 resamples), best of 3;
- ``chinchilla_multistart_time``: the same without the bootstrap;
- ``training_analyses_cold_time``: the training analyses (``scaling_law_fits`` with ``N_BOOTSTRAP`` resamples,
  ``compute_optimal``, ``token_balance``, ``sardana_optimum``, ``overtraining``) on a database of the shipped
  data/, empty cache;
- ``training_analyses_warm_time`` and ``training_analyses_warm_status``: the same again with the cache from the
  cold run and nothing changed (``cached`` means the fit and bootstrap were skipped).

Targets (issue 5, 2-core machine): refit with 1,000 resamples < 15 s; warm rebuild skips the fit.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.analyses import compute_optimal, overtraining, sardana_optimum, scaling_law_fits, token_balance  # noqa: E402
from econ.analyses.runner import run_analyses  # noqa: E402
from econ.fits.chinchilla import fit_chinchilla  # noqa: E402

TRAINING = [scaling_law_fits, compute_optimal, token_balance, sardana_optimum, overtraining]


def main() -> None:
    with built(ROOT / "data") as con:
        points = con.sql("select * from scaling_law_points").pl()
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
            cache = Path(tmp) / "cache"
            times, status = [], []
            for _ in range(2):
                start = time.perf_counter()
                ran = run_analyses(con, TRAINING, as_of=AS_OF, cache_dir=cache, code_hash="bench")
                times.append(time.perf_counter() - start)
                status.append(ran[scaling_law_fits.NAME])
    print(f"training_analyses_cold_time: {times[0]:.2f} s (n_bootstrap {scaling_law_fits.N_BOOTSTRAP})")
    print(f"training_analyses_warm_time: {times[1]:.2f} s")
    print(f"training_analyses_warm_status: {status[1]}")
    assert np.isfinite(fit.objective)


if __name__ == "__main__":
    main()
