"""The names of the serving regimes a measured run's TTFT and TPOT are banded in, and their families.

A regime is the pool that sets the time (``agg``, ``disagg_prefill``, ``disagg_decode``, ``batch_1``), then what a
run adds to it: :data:`UNSTATED_WORKERS` where its row states no worker counts that one launch settles, then
:data:`SLOT_WAIT` where users wait for a decode slot (``econ.analyses.calibration_tables.regimes`` names them). A
regime without those is its family (:func:`regime_family`): a band too thin to stand on its own rows takes at least
its family's (``econ.fits.error_bands.claimed_band``, ``econ.analyses.calibration_bands``).
"""

from __future__ import annotations

import numpy as np

UNSTATED_WORKERS = "_unstated_workers"
"""A disaggregated run whose worker counts are assumed by rule or chosen among several launches."""
SLOT_WAIT = "_slot_wait"
"""A run whose users the model has wait for a decode slot."""


def regime_family(regime: np.ndarray) -> np.ndarray:
    """Each regime's family: the regime with :data:`UNSTATED_WORKERS` and :data:`SLOT_WAIT` taken off
    (``disagg_prefill_unstated_workers`` and ``disagg_prefill_slot_wait`` are ``disagg_prefill``'s,
    ``agg_slot_wait`` is ``agg``'s)."""
    out = np.asarray(regime, dtype=str)
    for suffix in (UNSTATED_WORKERS, SLOT_WAIT):
        out = np.char.replace(out, suffix, "")
    return out
