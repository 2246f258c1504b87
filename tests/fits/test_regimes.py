"""A regime's family is the pool that sets its time, whatever the run adds to it."""

from __future__ import annotations

import polars as pl

from econ.analyses.calibration_tables import regimes
from econ.fits.regimes import regime_family


def test_every_regime_the_runs_are_named_with_has_its_pool_as_family():
    """Every regime ``calibration_tables.regimes`` names, over each mode, concurrency, assumed workers and wait,
    belongs to the family of the pool that sets its time, spelled out here."""
    frame = pl.DataFrame(
        {
            "mode": ["agg", "agg", "agg", "disagg", "disagg", "disagg", "disagg"],
            "users": [1.0, 64.0, 64.0, 64.0, 64.0, 64.0, 1.0],
            "assumed": [False, False, False, False, True, True, False],
            "waits": [False, False, True, False, False, True, False],
        }
    )
    expected = {
        "ttft": ["batch_1", "agg", "agg", "disagg_prefill", "disagg_prefill", "disagg_prefill", "batch_1"],
        "tpot": ["batch_1", "agg", "agg", "disagg_decode", "disagg_decode", "disagg_decode", "batch_1"],
    }
    for target, families in expected.items():
        named = frame.select(
            regimes(pl.col("mode"), pl.col("users"), pl.col("assumed"), pl.col("waits"), target)
        ).to_series()
        assert named[5] == f"{families[5]}_unstated_workers_slot_wait" and named[2] == "agg_slot_wait"
        assert list(regime_family(named.to_numpy())) == families
