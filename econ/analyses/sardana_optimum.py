"""``sardana_optimum``: the inference-aware optimum (Sardana et al. 2024) next to the lecture's equal-cost heuristic.

The (N, D_tr) reaching a target loss at least lifetime cost over an inference-demand grid, per law
(:func:`econ.physics.scaling_laws.inference_aware_optimum`, :func:`~econ.physics.scaling_laws.equal_cost_allocation`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.scaling_law_tables import laws_from_fits
from econ.analyses.token_balance import peak_flop_per_s
from econ.physics import fleet_training
from econ.physics import scaling_laws as sl
from econ.physics import token_balance as tb
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "sardana_optimum"
INPUTS = ("scaling_law_fits", "token_balance", "scenarios", "hardware")

INFERENCE_GRID_TOKENS = np.concatenate([[0.0], 10.0 ** np.arange(9.0, 16.01, 0.25)])  # 0 and 1e9 … 1e16 tokens
REFERENCE_PARAMS = (13e9, 70e9)  # Sardana et al.'s Fig. 1 model and Chinchilla itself

SARDANA = ResultTable(
    name="sardana_optimum",
    grain="law x form x method x reference model x inference demand",
    key=("law", "form", "method", "reference_params", "inference_tokens"),
    description=(
        "Inference-aware optimum (Sardana et al. 2024): the (N, D_tr) reaching a target loss at least lifetime cost, "
        "next to the lecture's equal-cost heuristic, over inference demand"
    ),
    columns=(
        C("law", "str", "", "key", "Law id used for the loss constraint"),
        C(
            "form",
            "str",
            "",
            "key",
            "compute (FLOPs, both phases weight 1) or cost (inference FLOPs / decode_efficiency_ratio)",
        ),
        C(
            "method",
            "str",
            "",
            "key",
            "optimum (Sardana et al., root of dCost/dlnN) or equal_cost (the lecture's "
            "heuristic with the scenario's exponent ratio)",
        ),
        C(
            "reference_params",
            "float",
            "params",
            "key",
            "Size whose compute-optimal loss is the target (13B: Sardana Fig. 1; 70B: Chinchilla; the scenario's "
            "frontier N_act)",
        ),
        C("target_loss_nats_per_token", "float", "nats/token", "fit", "Target loss", sl.loss_nats_per_token),
        C("inference_tokens", "float", "tokens", "key", "Lifetime inference demand D_inf"),
        C("demand_source", "str", "", "label", "grid, or scenario (the token_balance D_inf of scenario base)"),
        C("params", "float", "params", "derived", "Chosen N", sl.inference_aware_optimum),
        C("train_tokens", "float", "tokens", "derived", "Chosen D_tr", sl.inference_aware_optimum),
        C("tokens_per_param_ratio", "float", "tokens/param", "derived", "D_tr / N", tb.tokens_per_param_ratio),
        C("train_flop", "float", "FLOP", "derived", "6 N D_tr", sl.training_flop),
        C("inference_flop", "float", "FLOP", "derived", "2 N D_inf", sl.lifetime_cost_flop),
        C("total_flop", "float", "FLOP", "derived", "Training + inference FLOPs", sl.lifetime_cost_flop),
        C(
            "cost_pretrain_flop_equiv",
            "float",
            "pre-training FLOP equivalents",
            "derived",
            "Objective: train FLOPs + weight x inference FLOPs",
            sl.lifetime_cost_flop,
        ),
        C(
            "cost_usd",
            "float",
            "USD",
            "derived",
            "Objective in dollars at the scenario's $/chip-hour, pre-training MFU and cost_chip's BF16 peak",
            fleet_training.usd_of_flop,
        ),
        C(
            "inference_to_train_cost_ratio",
            "float",
            "",
            "derived",
            "Weighted inference cost over training cost",
            sl.inference_to_train_cost_ratio,
        ),
        C(
            "chinchilla_cost_pretrain_flop_equiv",
            "float",
            "pre-training FLOP equivalents",
            "derived",
            "Objective of the compute-optimal reference model serving the same demand",
            sl.lifetime_cost_flop,
        ),
        C(
            "saving_vs_chinchilla_frac",
            "float",
            "",
            "derived",
            "Saving against the Chinchilla-optimal model",
            sl.saving_frac,
        ),
        C(
            "excess_over_optimum_frac",
            "float",
            "",
            "derived",
            "Excess over the optimum (0 for the optimum)",
            sl.excess_over_optimum_frac,
        ),
        C("cost_chip", "str", "", "assumption", "Chip whose BF16 peak prices cost_usd"),
    ),
)
TABLES = (SARDANA,)


def frame(
    laws,
    *,
    reference_params,
    scenario_inference_tokens,
    decode_efficiency_ratio,
    exponent_ratio,
    usd_per_pretrain_flop,
    cost_chip,
) -> pl.DataFrame:
    demand = np.concatenate([INFERENCE_GRID_TOKENS, [scenario_inference_tokens]])
    source = ["grid"] * INFERENCE_GRID_TOKENS.size + ["scenario"]
    forms = {"compute": 1.0, "cost": 1.0 / decode_efficiency_ratio}
    frames = []
    for law in laws:
        ref = np.asarray(reference_params, dtype=float)
        target = sl.loss_nats_per_token(law, ref, sl.compute_optimal_tokens_for_params(law, ref))
        for form, w_inf in forms.items():
            shape = (ref.size, demand.size)
            ell = np.broadcast_to(target[:, None], shape)
            d_inf = np.broadcast_to(demand[None, :], shape)
            opt = sl.inference_aware_optimum(law, ell, d_inf, inference_weight=w_inf)
            heur = sl.equal_cost_allocation(law, ell, d_inf, inference_weight=w_inf, exponent_ratio=exponent_ratio)
            chin_n = np.broadcast_to(ref[:, None], shape)
            chin_cost = sl.lifetime_cost_flop(
                chin_n, sl.compute_optimal_tokens_for_params(law, chin_n), d_inf, inference_weight=w_inf
            )
            for method, res in (("optimum", opt), ("equal_cost", heur)):
                cost = res["cost_flop"]
                usd = (
                    fleet_training.usd_of_flop(cost, usd_per_pretrain_flop)
                    if usd_per_pretrain_flop
                    else np.full(cost.shape, np.nan)
                )
                frames.append(
                    pl.DataFrame(
                        {
                            "law": law.name,
                            "form": form,
                            "method": method,
                            "reference_params": chin_n.ravel(),
                            "target_loss_nats_per_token": ell.ravel(),
                            "inference_tokens": d_inf.ravel(),
                            "demand_source": np.tile(source, ref.size),
                            "params": res["params"].ravel(),
                            "train_tokens": res["train_tokens"].ravel(),
                            "tokens_per_param_ratio": res["tokens_per_param_ratio"].ravel(),
                            "train_flop": res["train_flop"].ravel(),
                            "inference_flop": res["inference_flop"].ravel(),
                            "total_flop": sl.lifetime_cost_flop(res["params"], res["train_tokens"], d_inf).ravel(),
                            "cost_pretrain_flop_equiv": cost.ravel(),
                            "cost_usd": usd.ravel(),
                            "inference_to_train_cost_ratio": sl.inference_to_train_cost_ratio(
                                res["inference_flop"], res["train_flop"], w_inf
                            ).ravel(),
                            "chinchilla_cost_pretrain_flop_equiv": chin_cost.ravel(),
                            "saving_vs_chinchilla_frac": sl.saving_frac(cost, chin_cost).ravel(),
                            "excess_over_optimum_frac": sl.excess_over_optimum_frac(cost, opt["cost_flop"]).ravel(),
                        }
                    ).fill_nan(None)
                )
    out = pl.concat(frames) if frames else SARDANA.empty_frame().drop("cost_chip")
    return out.with_columns(pl.lit(cost_chip, dtype=pl.String).alias("cost_chip"))


def run(ctx) -> None:
    s = ctx.scenario("base")
    laws = laws_from_fits(ctx.query("select * from scaling_law_fits order by rowid"))
    d_inf = ctx.query(
        "select central_value from token_balance where scenario = 'base' and quantity = 'inference_tokens'"
    )["central_value"][0]
    chip, peak = peak_flop_per_s(ctx, s)
    per_flop = fleet_training.usd_per_flop(s.usd_per_chip_hour, peak, s.pretrain_mfu_frac) if peak else None
    ctx.write(
        SARDANA,
        frame(
            laws,
            reference_params=REFERENCE_PARAMS + (s.frontier_active_params,),
            scenario_inference_tokens=float(d_inf),
            decode_efficiency_ratio=s.decode_efficiency_ratio,
            exponent_ratio=s.equal_cost_exponent_ratio,
            usd_per_pretrain_flop=per_flop,
            cost_chip=chip,
        ),
    )
