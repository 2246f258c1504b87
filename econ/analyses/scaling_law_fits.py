"""``scaling_law_fits``, ``scaling_law_bootstrap``, ``scaling_law_residuals``, ``scaling_law_isoflops``.

The Chinchilla loss law L(N, D) = E + A/N^α + B/D^β: published constants (Besiroglu et al. 2024,
Hoffmann et al. 2022 rounded and unrounded) and our refit of each study (Epoch's method,
:func:`econ.fits.chinchilla.fit_chinchilla`) with its bootstrap draws; every point under every law;
and the law on isoFLOP slices for the report. The bootstrap runs once per cold build (fixed seed).
"""

from __future__ import annotations

import polars as pl

from econ.analyses.scaling_law_tables import (
    BOOTSTRAP,
    FITS,
    ISOFLOPS,
    RESIDUALS,
    bootstrap_frame,
    fits_frame,
    isoflop_frame,
    laws_from_fits,
    residuals_frame,
)
from econ.fits import chinchilla
from econ.physics import scaling_laws as sl

NAME = "scaling_law_fits"
INPUTS = ("scaling_law_points",)
TABLES = (FITS, BOOTSTRAP, RESIDUALS, ISOFLOPS)

N_BOOTSTRAP = 400  # ~0.4 s on 2 cores; SE of an SE ≈ 1/√(2·400) ≈ 4 %. bench/training.py times 1,000.
SEED = 42


def run(ctx) -> None:
    points = ctx.query(
        "select study, params, training_flop, loss_nats_per_token, source_url "
        "from scaling_law_points order by study, params, training_flop"
    )
    refits = {}
    for study in points["study"].unique(maintain_order=True).to_list():
        pts = points.filter(pl.col("study") == study)
        n, c = pts["params"].to_numpy().astype(float), pts["training_flop"].to_numpy().astype(float)
        fit = chinchilla.fit_chinchilla(
            n, sl.tokens_from_flop(n, c), pts["loss_nats_per_token"].to_numpy(), n_bootstrap=N_BOOTSTRAP, seed=SEED
        )
        refits[f"refit_{study}"] = (study, fit, pts)
    fits = fits_frame(sl.PUBLISHED_LAWS, {sl.BESIROGLU_2024.name: sl.BESIROGLU_2024_SE}, refits)
    ctx.write(FITS, fits)
    ctx.write(BOOTSTRAP, bootstrap_frame({name: fit.bootstrap for name, (_s, fit, _p) in refits.items()}))
    laws = laws_from_fits(fits)
    ctx.write(
        RESIDUALS,
        pl.concat(
            [residuals_frame(laws, pts, drop_highest=chinchilla.DROP_HIGHEST_LOSS) for _s, _f, pts in refits.values()]
        )
        if refits
        else RESIDUALS.empty_frame(),
    )
    ctx.write(ISOFLOPS, isoflop_frame(laws, points) if points.height else ISOFLOPS.empty_frame())
