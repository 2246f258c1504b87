"""``overtraining``: reported pre-training tokens of open models against Chinchilla's tokens per parameter (§e.4).

The factor over k tokens per parameter is :func:`econ.physics.token_balance.overtraining_factor`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.scaling_law_tables import laws_from_fits
from econ.physics import scaling_laws as sl
from econ.physics import token_balance as tb
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "overtraining"
INPUTS = ("models", "scaling_law_fits", "scenarios")

MOE_CAVEAT = (
    "MoE: Chinchilla's N is a dense parameter count. The factor over active parameters is the lecture's "
    "simplification; a dense-equivalent size lies between active and total (Clark et al. 2022: 64 experts at "
    "370M active ~ 1.3B dense), so the true factor lies between the active and total columns"
)
DENSE_NOTE = "dense model: Chinchilla's N applies as is"

OVERTRAINING = ResultTable(
    name="overtraining",
    grain="model with reported pre-training tokens",
    key=("model",),
    description=(
        "Reported pre-training tokens of open models against their active and total parameters, and the factor over "
        "Chinchilla's tokens per parameter (scenario base)"
    ),
    columns=(
        C("model", "str", "", "key", "Model"),
        C("lab", "str", "", "input", "Lab"),
        C("params_total", "float", "params", "input", "Total parameters"),
        C("params_active", "float", "params", "input", "Active parameters"),
        C("pretrain_tokens", "float", "tokens", "input", "Reported pre-training tokens"),
        C("is_moe", "bool", "", "label", "Active < total parameters"),
        C(
            "tokens_per_active_param_ratio",
            "float",
            "tokens/param",
            "derived",
            "Pre-training tokens / active params",
            tb.tokens_per_param_ratio,
        ),
        C(
            "tokens_per_total_param_ratio",
            "float",
            "tokens/param",
            "derived",
            "Pre-training tokens / total params",
            tb.tokens_per_param_ratio,
        ),
        C(
            "chinchilla_tokens_per_param_ratio",
            "float",
            "tokens/param",
            "assumption",
            "k, scenario base's chinchilla_tokens_per_param",
        ),
        C(
            "overtraining_active_ratio",
            "float",
            "",
            "derived",
            "Over-training factor on active parameters",
            tb.overtraining_factor,
        ),
        C("overtraining_active_low_ratio", "float", "", "derived", "The same at k's high end", tb.overtraining_factor),
        C("overtraining_active_high_ratio", "float", "", "derived", "The same at k's low end", tb.overtraining_factor),
        C(
            "overtraining_total_ratio",
            "float",
            "",
            "derived",
            "Over-training factor on total parameters",
            tb.overtraining_factor,
        ),
        C("training_flop", "float", "FLOP", "derived", "6 N_active D", sl.training_flop),
        C("law", "str", "", "label", "Refit law used for law_optimal_tokens_per_param_ratio"),
        C(
            "law_optimal_tokens_per_param_ratio",
            "float",
            "tokens/param",
            "fit",
            "Compute-optimal D/N of the refit law at this model's training FLOP",
            sl.compute_optimal,
        ),
        C("caveat", "str", "", "label", "Dense vs MoE caveat"),
        C("pretrain_tokens_source_url", "str", "", "input", "Where the token count was reported"),
    ),
)
TABLES = (OVERTRAINING,)


def frame(models: pl.DataFrame, *, tokens_per_param: tuple[float, float, float], law: sl.ScalingLaw | None):
    k, k_low, k_high = tokens_per_param
    m = models.filter(pl.col("pretrain_tokens").is_not_null()).sort("model")
    n_act, n_tot, d = (m[c].to_numpy().astype(float) for c in ("params_active", "params_total", "pretrain_tokens"))
    flop = sl.training_flop(n_act, d)
    if law is not None and m.height:
        n_opt, d_opt = sl.compute_optimal(law, flop)
        law_tpp, law_name = tb.tokens_per_param_ratio(d_opt, n_opt), law.name
    else:
        law_tpp, law_name = np.full(m.height, np.nan), None
    return pl.DataFrame(
        {
            "model": m["model"],
            "lab": m["lab"],
            "params_total": n_tot,
            "params_active": n_act,
            "pretrain_tokens": d,
            "is_moe": n_act < n_tot,
            "tokens_per_active_param_ratio": tb.tokens_per_param_ratio(d, n_act),
            "tokens_per_total_param_ratio": tb.tokens_per_param_ratio(d, n_tot),
            "chinchilla_tokens_per_param_ratio": np.full(m.height, k),
            "overtraining_active_ratio": tb.overtraining_factor(d, n_act, k),
            "overtraining_active_low_ratio": tb.overtraining_factor(d, n_act, k_high),
            "overtraining_active_high_ratio": tb.overtraining_factor(d, n_act, k_low),
            "overtraining_total_ratio": tb.overtraining_factor(d, n_tot, k),
            "training_flop": flop,
            "law": law_name,
            "law_optimal_tokens_per_param_ratio": law_tpp,
            "caveat": [MOE_CAVEAT if moe else DENSE_NOTE for moe in (n_act < n_tot)],
            "pretrain_tokens_source_url": m["pretrain_tokens_source_url"],
        },
        schema_overrides={"law": pl.String},
    ).fill_nan(None)


def run(ctx) -> None:
    s = ctx.scenario("base")
    fits = ctx.query("select * from scaling_law_fits order by rowid")
    refit = laws_from_fits(fits.filter(pl.col("kind") == "refit"))
    models = ctx.query(
        "select model, lab, params_total, params_active, pretrain_tokens, pretrain_tokens_source_url from models"
    )
    k = (s.chinchilla_tokens_per_param, *s.range("chinchilla_tokens_per_param"))
    ctx.write(OVERTRAINING, frame(models, tokens_per_param=k, law=refit[0] if refit else None))
