"""A prediction corrected by the calibration's measured runs of its own configuration or layout
(:mod:`econ.fits.neighbours`): the tiers of such runs, how the random folds hold them out, and how ``econ predict
--points`` applies them (docs/design-notes.md, "A configuration measured at other concurrencies corrects its own
prediction")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.analyses import calibration_runs as cr
from econ.analyses.calibration_bands import SPLITS
from econ.analyses.calibration_tables import configuration_key, layout_key, neighbour_key, regimes, workers_unstated
from econ.fits import calibration_cv as cv
from econ.fits.neighbours import interpolated_residual


@dataclass(frozen=True)
class Tier:
    """Measured runs that may correct a prediction (:mod:`econ.fits.neighbours`): the basis that measures it held out
    and its suffix in :func:`~econ.fits.calibration_cv.cross_validate`, the distance its bands are read at, the
    ``calibration_runs`` column and expression of its key, whether a run at the row's own concurrency counts, and the
    words of a prediction's note."""

    basis: str
    suffix: str
    distance: str
    column: str
    key: Callable[[], pl.Expr]
    same_x: bool
    whose: str
    other: str


TIERS = (
    Tier("neighbour_out", cv.NEIGHBOURS, "seen_configuration", "configuration_key", configuration_key, False,
         "this configuration's", "concurrencies"),
    Tier("lengths_out", cv.LENGTHS, "seen_layout", "layout_key", layout_key, True, "this layout's", "lengths"),
)  # fmt: skip
"""In turn: a configuration's runs at other concurrencies, then, where it has none, its layout's at other lengths (any
concurrency, its own included: the same system under the same load)."""


def neighbour_tiers(c: pl.DataFrame, extra: dict) -> dict[str, cv.Neighbours]:
    """The runs that may correct each run held out by random fold, by :data:`TIERS` in order, each in the target's
    regime (:func:`econ.fits.calibration_cv.cross_validate`)."""
    regime = run_regimes(c, extra)
    x = np.log(c["concurrency"].to_numpy().astype(float))
    out = {}
    for tier in TIERS:
        k = c.select(tier.key()).to_series()
        keys = {t: pl.select(neighbour_key(pl.lit(k), pl.lit(regime[t]))).to_series().to_numpy() for t in regime}
        out[tier.suffix] = cv.Neighbours(keys, x, tier.same_x)
    return out


def run_regimes(c: pl.DataFrame, extra: dict) -> dict[str, pl.Series]:
    """Each run's regime of TTFT and of TPOT (:func:`regimes`, as ``calibration_runs`` stores them)."""
    frame = c.select("mode", "concurrency", workers_unstated().alias("_unstated")).with_columns(
        pl.Series("_waits", cr.waits_for_slot(extra)), pl.Series("_limited", cr.slot_limited(extra))
    )
    users, assumed, mode = pl.col("concurrency"), pl.col("_unstated"), pl.col("mode")
    return {
        t: frame.select(regimes(mode, users, assumed, pl.col(w), t)).to_series()
        for t, w in (("ttft", "_waits"), ("tpot", "_limited"))
    }


HELD_BASES = ("model_out", "chip_out", "source_out", "random_out", *(tier.basis for tier in TIERS))
"""The held-out predictions ``calibration_runs`` keeps a ratio of: by model, by chip, by source, by random fold, and
by random fold corrected by the configuration's runs at other concurrencies or, where it has none, by its layout's
runs at other lengths (:data:`TIERS`)."""


MEASURED_SQL = (
    "select configuration_key, layout_key, regime_ttft, regime_tpot, concurrency, ln(predicted_ttft_s / "
    "measured_ttft_s) as ttft_log_ratio, ln(predicted_tpot_s / measured_tpot_s) as tpot_log_ratio "
    "from calibration_runs where included"
)
"""The calibration's runs as :func:`measured_correction` reads them: configuration, layout, regimes, concurrency,
in-sample residuals."""


def measured_correction(
    c: pl.DataFrame, regime: tuple, measured: pl.DataFrame | None, bands: pl.DataFrame | None
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """((TTFT factor, TPOT factor), the distance of each row corrected, '' where none): a row whose configuration
    (:func:`configuration_key`) the calibration measured at other concurrencies, or
    else whose layout (:func:`layout_key`) it measured at other lengths, in the same
    regime of a target (:func:`neighbour_key`), takes off the residuals of those runs,
    interpolated in log concurrency (:func:`econ.fits.neighbours.interpolated_residual`; the bases ``neighbour_out``
    and ``lengths_out`` measure it held out), where both targets have such runs and both its regimes have a band of
    such rows of their own (``calibration_bands`` distance ``seen_configuration`` or ``seen_layout``, not pooled): a
    correction whose error was not measured in its regime is not made (two held-out runs measure the first for
    users waiting for a decode slot, none at batch 1)."""
    factors, done = [np.ones(c.height), np.ones(c.height)], np.full(c.height, "", dtype=object)
    if measured is None or not measured.height or not c.height or bands is None:
        return tuple(factors), done
    x = np.log(c["concurrency"].cast(pl.Float64).to_numpy())
    x_known = np.log(measured["concurrency"].to_numpy().astype(float))
    banded = bands.filter(pl.col("engine_stated") & ~pl.col("pooled"), *(pl.col(split) == "" for split in SPLITS))
    for tier in TIERS:
        own = c.select(tier.key()).to_series()
        found, use = [], done == ""
        for target, reg in zip(("ttft", "tpot"), regime):
            key = pl.select(neighbour_key(pl.lit(own), pl.lit(pl.Series(reg, dtype=pl.String)))).to_series()
            known = measured.select(neighbour_key(pl.col(tier.column), pl.col(f"regime_{target}"))).to_series()
            r = measured[f"{target}_log_ratio"].to_numpy()
            corr, side = interpolated_residual(known, x_known, r, key, x, same_x=tier.same_x)
            ok = banded.filter((pl.col("distance") == tier.distance) & (pl.col("target") == target))["regime"]
            use &= (side > 0) & np.isin(np.asarray(reg, dtype=str), ok.to_numpy())
            found.append(np.exp(-corr))
        factors = [np.where(use, t, f) for t, f in zip(found, factors)]
        done = np.where(use, tier.distance, done)
    return tuple(factors), done
