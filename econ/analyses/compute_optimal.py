"""``compute_optimal``: compute-optimal parameters and tokens for a training budget C = 6ND, per law.

Closed form (Hoffmann et al. 2022 App. D.2) next to a numerical solve (:mod:`econ.physics.scaling_laws`),
with the refit's bootstrap band (:func:`econ.fits.chinchilla.compute_optimal_band`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.scaling_law_tables import LAW, draws_of, laws_from_fits
from econ.fits import chinchilla
from econ.physics import scaling_laws as sl
from econ.physics import token_balance
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "compute_optimal"
INPUTS = ("scaling_law_fits", "scaling_law_bootstrap")

COMPUTE_GRID_FLOP = 10.0 ** np.arange(18.0, 27.05, 0.1)  # 1e18 … 1e27 FLOP, 10 points a decade

COMPUTE_OPTIMAL = ResultTable(
    name="compute_optimal",
    grain="law x compute budget",
    key=("law", "compute_flop"),
    description=(
        "Compute-optimal parameters and tokens for a training budget C = 6ND, closed form (Hoffmann et al. 2022 App. "
        "D.2) next to a numerical solve, with the refit's bootstrap band"
    ),
    columns=(
        LAW,
        C("compute_flop", "float", "FLOP", "key", "Training budget C"),
        C("params", "float", "params", "fit", "Compute-optimal N, closed form", sl.compute_optimal),
        C("tokens", "float", "tokens", "fit", "Compute-optimal D, closed form", sl.compute_optimal),
        C(
            "tokens_per_param_ratio",
            "float",
            "tokens/param",
            "fit",
            "D_opt / N_opt",
            token_balance.tokens_per_param_ratio,
        ),
        C(
            "params_numerical",
            "float",
            "params",
            "fit",
            "Compute-optimal N from a numerical root on the budget line",
            sl.compute_optimal_numerical,
        ),
        C(
            "tokens_numerical",
            "float",
            "tokens",
            "fit",
            "Compute-optimal D from the numerical solve",
            sl.compute_optimal_numerical,
        ),
        C(
            "numerical_rel_diff_frac",
            "float",
            "",
            "check",
            "Largest relative difference, closed form vs numerical",
            sl.closed_form_gap_frac,
        ),
        C("loss_nats_per_token", "float", "nats/token", "fit", "Loss at the optimum", sl.loss_nats_per_token),
        C(
            "params_low",
            "float",
            "params",
            "fit",
            "2.5th percentile of N_opt over the refit's bootstrap draws",
            chinchilla.compute_optimal_band,
        ),
        C(
            "params_high",
            "float",
            "params",
            "fit",
            "97.5th percentile of N_opt over the bootstrap draws",
            chinchilla.compute_optimal_band,
        ),
        C(
            "tokens_per_param_low_ratio",
            "float",
            "tokens/param",
            "fit",
            "2.5th percentile of D_opt/N_opt over the bootstrap draws",
            chinchilla.compute_optimal_band,
        ),
        C(
            "tokens_per_param_high_ratio",
            "float",
            "tokens/param",
            "fit",
            "97.5th percentile of D_opt/N_opt over the bootstrap draws",
            chinchilla.compute_optimal_band,
        ),
    ),
)
TABLES = (COMPUTE_OPTIMAL,)


def frame(laws: list[sl.ScalingLaw], bootstrap: pl.DataFrame, compute_flop: np.ndarray = COMPUTE_GRID_FLOP):
    frames = []
    for law in laws:
        n, d = sl.compute_optimal(law, compute_flop)
        n_num, d_num = sl.compute_optimal_numerical(law, compute_flop)
        band = chinchilla.compute_optimal_band(draws_of(bootstrap, law.name), compute_flop)
        frames.append(
            pl.DataFrame(
                {
                    "law": law.name,
                    "compute_flop": compute_flop,
                    "params": n,
                    "tokens": d,
                    "tokens_per_param_ratio": token_balance.tokens_per_param_ratio(d, n),
                    "params_numerical": n_num,
                    "tokens_numerical": d_num,
                    "numerical_rel_diff_frac": sl.closed_form_gap_frac(n, d, n_num, d_num),
                    "loss_nats_per_token": sl.loss_nats_per_token(law, n, d),
                    "params_low": band["params_low"],
                    "params_high": band["params_high"],
                    "tokens_per_param_low_ratio": band["tokens_per_param_low"],
                    "tokens_per_param_high_ratio": band["tokens_per_param_high"],
                }
            ).fill_nan(None)
        )
    return pl.concat(frames) if frames else COMPUTE_OPTIMAL.empty_frame()


def run(ctx) -> None:
    laws = laws_from_fits(ctx.query("select * from scaling_law_fits order by rowid"))
    ctx.write(COMPUTE_OPTIMAL, frame(laws, ctx.query("select * from scaling_law_bootstrap")))
