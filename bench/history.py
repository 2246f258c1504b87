"""Benchmark: refresh and rebuild as the price history grows, side by side with the dependency import.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/history.py [--snapshots 300] [--repeat 3]

A copy of data/ (the vendored histories: 265 commits of genai-prices and llm-prices, plus the LiteLLM and
OpenRouter snapshot files) is grown to ``--snapshots`` snapshots by adding daily llm-prices snapshots after its last
commit, each cutting one price by 1% (in-process, through the history store); the build cache is warmed with one
``econ build``. Then, in fresh processes as a user runs them:

* ``refresh_one_snapshot_time``: ``econ refresh`` of one more llm-prices snapshot (a historical-v1.json of the newest
  state with one price cut): import, rebuild, report, diff (best of ``--repeat``, each from the state before it);
* ``rebuild_no_change_time``: ``econ build`` when nothing changed (best of 3);
* ``import_dependencies_time``: ``python -c "import polars, duckdb, scipy.optimize, altair"`` (best of 5),

the two ratios (issue 28's targets: refresh <= 2x, no-change rebuild <= 1.5x the import), the load time of the
history alone, and the sizes of the database and the report; beside each, the same run on data/ without the
histories (three snapshot files, refreshed with a LiteLLM map with one price cut, as bench/refresh.py does).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A user's Python keeps the compiled modules between runs; a shell with PYTHONDONTWRITEBYTECODE set would have every
# process compile econ's ~240 modules again (~0.4 s), which no user pays after the first run.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
sys.path.insert(0, str(ROOT))

from econ.load import history as h  # noqa: E402
from econ.load.loader import load_all  # noqa: E402

IMPORTS = "import polars, duckdb, scipy.optimize, altair"


def wall_s(args: list[str], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, cwd=ROOT, check=True, capture_output=True, env=USER_ENV)
        best = min(best, time.perf_counter() - start)
    return best


def published(state) -> dict:
    """The newest llm-prices state as its published historical-v1.json (one record per row; a tier's id and name say
    its threshold, as llm-prices writes them)."""
    records = []
    for row in state.iter_rows(named=True):
        vendor, model_id = row["source_key"].split(":", 1)
        tier = row["tier_min_prompt_tokens"]
        records.append(
            {
                "id": model_id,
                "vendor": vendor,
                "name": model_id + (f" >{tier // 1000}k" if tier else ""),
                "input": row["input_usd_per_mtok"],
                "output": row["output_usd_per_mtok"],
                "input_cached": row["cache_read_usd_per_mtok"],
                "from_date": row["declared_from_date"].isoformat() if row["declared_from_date"] else None,
                "to_date": row["declared_to_date"].isoformat() if row["declared_to_date"] else None,
            }
        )
    return {"prices": records}


def grow(data: Path, target: int) -> tuple[int, datetime]:
    """Add llm-prices snapshots (one price cut 1% each, a day apart) until data/ holds ``target`` snapshots."""
    present = load_all(data)["price_snapshots"].height
    store = h.read_store(data, "llm_prices")
    when = datetime.fromisoformat(store.commits["committed_at"][-1].replace("Z", "+00:00"))
    state = h.state_at(store, store.size - 1)
    import polars as pl

    for i in range(max(target - present, 0)):
        when += timedelta(days=1)
        row = i % state.height
        state = state.with_columns(
            pl.when(pl.int_range(pl.len()) == row)
            .then(pl.col("input_usd_per_mtok") * 0.99)
            .otherwise(pl.col("input_usd_per_mtok"))
            .round_sig_figs(12)
        )
        store, _ = h.append(store, h.Snapshot(f"{i:040x}", when, "bench", f"{i:064x}", "bench", state))
    commits, changes = h.store_paths(data, "llm_prices")
    commits.write_bytes(h.write_csv(store.commits))
    changes.write_bytes(h.write_csv(store.changes))
    return load_all(data)["price_snapshots"].height, when


def scenario(tmp: Path, data: Path, new_snapshot: Path, source: str, repeat: int) -> tuple[float, float, int, int]:
    """(refresh time, no-change rebuild time, database bytes, report bytes) of ``data`` in fresh processes, the build
    cache warmed first. The refresh is the best of ``repeat``, each from the state the build left (restored at the same
    paths: the build cache keys a parsed file by the path its messages show)."""
    common = ["--data", str(data), "--db", str(tmp / "econ.duckdb"), "--cache", str(tmp / "cache"),
              "--reports", str(tmp / "reports")]  # fmt: skip
    econ = [sys.executable, "-m", "econ"]
    subprocess.run([*econ, "build", *common], cwd=ROOT, check=True, capture_output=True, env=USER_ENV)
    before = tmp.with_name(f"{tmp.name}.before")
    shutil.copytree(tmp, before, symlinks=True)
    refresh_s = float("inf")
    for i in range(repeat):
        if i:
            shutil.rmtree(tmp)
            shutil.copytree(before, tmp, symlinks=True)
        refresh_s = min(refresh_s, wall_s([*econ, "refresh", str(new_snapshot), "--source", source, *common]))
    shutil.rmtree(before)
    rebuild_s = wall_s([*econ, "build", *common], repeat=3)
    report = sum(p.stat().st_size for p in (tmp / "reports").rglob("*") if p.is_file())
    return refresh_s, rebuild_s, (tmp / "econ.duckdb").stat().st_size, report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapshots", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="refreshes timed, each from the same state (best)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        # without the histories: the three snapshot files, refreshed with a LiteLLM map with one price cut
        bare = tmp / "bare"
        shutil.copytree(ROOT / "data", bare / "data", ignore=shutil.ignore_patterns("history"))
        litellm = json.loads((ROOT / "tests" / "fixtures" / "external" / "litellm_model_prices.json").read_text())
        litellm["gemini/gemini-2.5-pro"]["input_cost_per_token"] *= 0.8
        litellm_file = tmp / "litellm_2026-11-21.json"
        litellm_file.write_text(json.dumps(litellm))
        bare_refresh, bare_rebuild, bare_db, bare_report = scenario(
            bare, bare / "data", litellm_file, "litellm", args.repeat
        )
        # with the histories grown to --snapshots, refreshed with one more llm-prices snapshot
        full = tmp / "full"
        data = full / "data"
        shutil.copytree(ROOT / "data", data)
        snapshots, last = grow(data, args.snapshots)
        start = time.perf_counter()
        load_all(data)
        load_s = time.perf_counter() - start
        store = h.read_store(data, "llm_prices")
        new = published(h.state_at(store, store.size - 1))
        new["prices"][0]["input"] = round(new["prices"][0]["input"] * 0.5, 9)
        day = (last + timedelta(days=1)).astimezone(UTC).date()
        path = tmp / f"historical-v1_{day.isoformat()}.json"
        path.write_text(json.dumps(new))
        refresh_s, rebuild_s, db_bytes, report_bytes = scenario(full, data, path, "llm_prices", args.repeat)
        import_s = wall_s([sys.executable, "-c", IMPORTS], repeat=5)
        print(f"snapshots: {snapshots + 1} snapshots")
        print(f"history_load_time: {load_s:.3f} s")
        print(f"import_dependencies_time: {import_s:.3f} s")
        print(f"refresh_one_snapshot_time_without_history: {bare_refresh:.3f} s")
        print(f"refresh_one_snapshot_time: {refresh_s:.3f} s")
        print(f"rebuild_no_change_time_without_history: {bare_rebuild:.3f} s")
        print(f"rebuild_no_change_time: {rebuild_s:.3f} s")
        print(f"refresh_over_import_ratio: {refresh_s / import_s:.2f} x")
        print(f"rebuild_over_import_ratio: {rebuild_s / import_s:.2f} x")
        print(f"database_size_without_history: {bare_db:,} bytes")
        print(f"database_size: {db_bytes:,} bytes")
        print(f"report_size_without_history: {bare_report:,} bytes")
        print(f"report_size: {report_bytes:,} bytes")
        history = sum(p.stat().st_size for p in (data / "history").glob("*.csv"))
        print(f"history_store_size: {history:,} bytes")


if __name__ == "__main__":
    main()
