"""Benchmark: `econ refresh` with one changed snapshot, and a rebuild when nothing changed.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/refresh.py

Targets (issue 7, 2-core machine): refresh with one changed snapshot < 5 s; rebuild with no change < 2 s.
Both include writing the report. The changed snapshot is the real LiteLLM map with one price cut,
dated one day after the shipped snapshot.
"""

from __future__ import annotations

import json
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


def econ(*args: str, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "econ", *args], cwd=cwd, check=True, capture_output=True, env=USER_ENV)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        shutil.copytree(ROOT / "data", tmp / "data")
        common = [
            "--data",
            str(tmp / "data"),
            "--db",
            str(tmp / "econ.duckdb"),
            "--cache",
            str(tmp / "cache"),
            "--reports",
            str(tmp / "reports"),
        ]
        econ("build", *common, cwd=ROOT)  # warm the caches, as a user's checkout has them
        prices = json.loads(LITELLM.read_text())
        prices["gemini/gemini-2.5-pro"]["input_cost_per_token"] *= 0.8
        changed = tmp / "litellm_2026-11-21.json"
        changed.write_text(json.dumps(prices))
        refresh_s = econ("refresh", str(changed), "--source", "litellm", *common, cwd=ROOT)
        print(f"refresh_one_changed_snapshot_time: {refresh_s:.3f} s")
        print(f"rebuild_no_change_time: {min(econ('build', *common, cwd=ROOT) for _ in range(3)):.3f} s")
        again_s = econ("refresh", str(changed), "--source", "litellm", *common, cwd=ROOT)
        print(f"refresh_same_snapshot_again_time: {again_s:.3f} s")


if __name__ == "__main__":
    main()
