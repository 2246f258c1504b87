"""Benchmark: time per price-inference family on the real data/ (bootstrap and Monte Carlo included).

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/fits.py

Target (issue 4, 2-core machine): all fits together add < 2 s to `econ build` — the `pricing_analyses`
line is the five analyses as the build runs them (queries, every fit, writing their tables), no cache.
Each figure is the best of three runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._db import AS_OF, best_of, built  # noqa: E402
from econ.analyses import fit_cache_tiers, fit_context_tiers, fit_fast_mode, fit_io_market, fit_io_prices  # noqa: E402
from econ.analyses.pricing_inputs import assumptions, inputs  # noqa: E402
from econ.analyses.runner import BuildContext, _Scenarios, run_analyses  # noqa: E402

PRICING = [fit_context_tiers, fit_io_prices, fit_io_market, fit_cache_tiers, fit_fast_mode]


def main() -> None:
    with built(ROOT / "data") as con:
        ctx = BuildContext(con=con, as_of=AS_OF, _scenarios=_Scenarios(con))
        prices, models = inputs(ctx)
        a = assumptions(ctx)
        tiers = con.sql("select * from memory_tiers order by tier, device").pl()

        t, context = best_of(lambda: fit_context_tiers.table(prices, models, a))
        print(f"context_tiers: {t:.3f} s")
        print(f"context_tiers_rows: {context.height} rows")
        t, io = best_of(lambda: fit_io_prices.table(prices, models, a))
        print(f"io_prices: {t:.3f} s")
        print(f"io_prices_rows: {io.height} rows")
        t, (_, residuals) = best_of(lambda: fit_io_market.tables(prices, models, a))
        print(f"io_market: {t:.3f} s")
        print(f"io_market_price_rows: {residuals.height // 2} rows")
        t, (cache, _) = best_of(lambda: fit_cache_tiers.tables(prices, models, tiers, context, a))
        print(f"cache_tiers: {t:.3f} s")
        print(f"cache_tiers_rows: {cache.height} rows")
        t, fast = best_of(lambda: fit_fast_mode.table(prices, models, a))
        print(f"fast_mode: {t:.3f} s")
        print(f"fast_mode_rows: {fast.height} rows")
        t, _ = best_of(lambda: run_analyses(con, PRICING, as_of=AS_OF, cache_dir=None))
        print(f"pricing_analyses: {t:.3f} s")


if __name__ == "__main__":
    main()
