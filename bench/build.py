"""Benchmark: cold `econ build` wall time and the LiteLLM import time.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/build.py

Targets (issue 2, 2-core machine): full build < 5 s, LiteLLM import < 2 s.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LITELLM = ROOT / "tests" / "fixtures" / "external" / "litellm_model_prices.json"  # vendored: see its README


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def cold_build_s(tmp: Path, *, report: bool) -> float:
    """`econ build` in a fresh process with an empty analysis cache (what a new clone sees)."""
    cache = tmp / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    args = [
        sys.executable,
        "-m",
        "econ",
        "build",
        "--db",
        str(tmp / "bench.duckdb"),
        "--cache",
        str(cache),
        "--reports",
        str(tmp / "reports"),
    ]
    if not report:
        args.append("--no-report")
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def warm_build_s(tmp: Path) -> float:
    args = [
        sys.executable,
        "-m",
        "econ",
        "build",
        "--db",
        str(tmp / "bench.duckdb"),
        "--cache",
        str(tmp / "cache"),
        "--no-report",
    ]
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from econ.load.importers import import_file

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)

        def fresh_import():  # into an empty folder each time (a repeat into the same folder only compares bytes)
            data = Path(tempfile.mkdtemp(dir=tmp))
            import_file("litellm", LITELLM, data_dir=data, as_of=date(2026, 11, 20))

        litellm_s = timed(fresh_import)
        print(f"litellm_import_time: {litellm_s:.3f} s")
        print(f"build_cold_no_report_time: {min(cold_build_s(tmp, report=False) for _ in range(3)):.3f} s")
        print(f"build_warm_no_report_time: {min(warm_build_s(tmp) for _ in range(3)):.3f} s")
        print(f"build_cold_time: {min(cold_build_s(tmp, report=True) for _ in range(2)):.3f} s")


if __name__ == "__main__":
    main()
