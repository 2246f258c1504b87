"""Benchmark: time per price-inference family on the real data/ (bootstrap and Monte Carlo included).

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/fits.py

Target (issue 4, 2-core machine): all fits together add < 2 s to `econ build` — the `pricing_analysis`
line is the analysis as the build runs it (queries, every fit, writing the seven tables), no cache.
Each figure is the best of three runs.
"""

from __future__ import annotations

import sys
import time
from datetime import date
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from econ.analyses import pricing  # noqa: E402
from econ.analyses.runner import run_analyses  # noqa: E402
from econ.analyses.scenario import load_scenario  # noqa: E402
from econ.db import create_views, write_table  # noqa: E402
from econ.fits.assumptions import from_scenario  # noqa: E402
from econ.load.loader import load_all  # noqa: E402

AS_OF = date(2026, 11, 30)


def timed(fn, repeat: int = 3):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    con = duckdb.connect()
    for name, frame in load_all(ROOT / "data").items():
        write_table(con, name, frame, description=name, column_comments={})
    con.execute(f"set variable as_of = date '{AS_OF.isoformat()}'")
    create_views(con, ROOT / "queries")
    prices = con.sql("select * from price_current").pl()
    models = con.sql("select * from models").pl()
    tiers = con.sql("select * from memory_tiers").pl()
    hardware = con.sql("select * from hardware").pl()
    a = from_scenario(load_scenario(con, "base"), hardware)

    t, context = timed(lambda: pricing.context_tiers_table(prices, models, a))
    print(f"context_tiers: {t:.3f} s")
    print(f"context_tiers_rows: {context.height} rows")
    t, io = timed(lambda: pricing.io_prices_table(prices, models, a))
    print(f"io_prices: {t:.3f} s")
    print(f"io_prices_rows: {io.height} rows")
    t, (market, residuals) = timed(lambda: pricing.io_market_tables(prices, models, a))
    print(f"io_market: {t:.3f} s")
    print(f"io_market_price_rows: {residuals.height // 2} rows")
    t, (cache, _) = timed(lambda: pricing.cache_tables(prices, models, tiers, context, a))
    print(f"cache_tiers: {t:.3f} s")
    print(f"cache_tiers_rows: {cache.height} rows")
    t, fast = timed(lambda: pricing.fast_mode_table(prices, models, a))
    print(f"fast_mode: {t:.3f} s")
    print(f"fast_mode_rows: {fast.height} rows")
    t, _ = timed(lambda: pricing.tables(prices, models, tiers, a))
    print(f"all_fits: {t:.3f} s")
    t, _ = timed(lambda: run_analyses(con, [pricing], as_of=AS_OF, cache_dir=None))
    print(f"pricing_analysis: {t:.3f} s")


if __name__ == "__main__":
    main()
