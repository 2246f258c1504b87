"""Benchmark: `econ build` beside the bare import of its dependencies, measured side by side in one run (issue 22).

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/build.py [--repeat N]

Every figure is the best of N runs of a fresh process (the way a user runs econ), in this order, so the machine's
load at the time weighs on all of them alike:

- ``import_dependencies_s``: ``python -c "import polars, duckdb, scipy.optimize, altair"``, the floor;
- ``cold_build_s``: ``econ build`` with the report into new folders and an empty analysis cache (a fresh clone);
- ``warm_build_unchanged_s``: the same command again, nothing changed (econ.uptodate finds the outputs current);
- ``warm_build_cached_s``: ``econ build --force`` with every analysis in the cache (a rebuild that restores them);
- ``predict_one_point_s``: ``econ predict`` of one operating point on the built database;
- the ratio of each to the import (issue 22's targets: cold <= 3, warm <= 1.5, predict <= 1.5);
- ``litellm_import_s``: ``econ import litellm`` of the vendored map into an empty data folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A user's Python keeps the compiled modules between runs; a shell with PYTHONDONTWRITEBYTECODE set would have every
# process compile econ's ~240 modules again (~0.4 s), which no user pays after the first run.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
LITELLM = ROOT / "tests" / "fixtures" / "external" / "litellm_model_prices.json"  # vendored: see its README
IMPORTS = "import polars, duckdb, scipy.optimize, altair"
AS_OF = "2026-11-30"


def line(name: str, value: float, unit: str) -> None:
    print(f"{name}: {value:.3f} {unit}", flush=True)


def best_s(argv: list[str], repeat: int, *, before=None) -> float:
    """Best wall time of ``repeat`` runs of ``argv`` (which must succeed); ``before`` runs untimed before each."""
    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        started = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=USER_ENV)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    econ = [sys.executable, "-m", "econ"]
    with tempfile.TemporaryDirectory(prefix="econ-bench-build-") as name:
        tmp = Path(name)
        db, reports, cache = tmp / "econ.duckdb", tmp / "reports", tmp / "cache"
        build = [*econ, "build", "--db", str(db), "--reports", str(reports), "--cache", str(cache), "--as-of", AS_OF]

        def empty():
            for path in (db, reports, cache, db.with_name(f".{db.name}.built")):
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)

        import_s = best_s([sys.executable, "-c", IMPORTS], args.repeat)
        cold_s = best_s(build, args.repeat, before=empty)
        unchanged_s = best_s(build, args.repeat)
        cached_s = best_s([*build, "--force"], args.repeat)
        predict = [*econ, "predict", "--db", str(db), "--model", "Llama-3.1-70B", "--chip", "H100"]
        predict += ["--decode-chips", "4", "--input-tokens", "3000", "--output-tokens", "700", "--batch", "96"]
        predict_s = best_s(predict, args.repeat)
        data = tmp / "data"

        def fresh_data():
            shutil.rmtree(data, ignore_errors=True)
            data.mkdir()

        litellm_s = best_s(
            [*econ, "import", "litellm", str(LITELLM), "--data", str(data), "--as-of", "2026-11-20"],
            1,
            before=fresh_data,
        )
    line("import_dependencies_s", import_s, "s")
    line("cold_build_s", cold_s, "s")
    line("warm_build_unchanged_s", unchanged_s, "s")
    line("warm_build_cached_s", cached_s, "s")
    line("predict_one_point_s", predict_s, "s")
    line("cold_build_over_import_ratio", cold_s / import_s, "x")
    line("warm_build_unchanged_over_import_ratio", unchanged_s / import_s, "x")
    line("warm_build_cached_over_import_ratio", cached_s / import_s, "x")
    line("predict_over_import_ratio", predict_s / import_s, "x")
    line("litellm_import_s", litellm_s, "s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
