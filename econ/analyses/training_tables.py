"""Frame builders of the training analysis: scaling-law fits, compute optimum, Sardana optimum, over-training.

Pure: frames and laws in, polars frames out (the token balance is in ``training_balance``).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.chinchilla import PARAMETERS, ChinchillaFit, highest_loss_mask, objective_and_gradient
from econ.physics import scaling_laws as sl

ESTIMATE_COLUMNS = dict(zip(PARAMETERS, ("e_nats_per_token", "a_coef", "b_coef", "alpha_exponent", "beta_exponent")))
COMPUTE_GRID_FLOP = 10.0 ** np.arange(18.0, 27.05, 0.1)  # 1e18 … 1e27 FLOP, 10 points a decade
INFERENCE_GRID_TOKENS = np.concatenate([[0.0], 10.0 ** np.arange(9.0, 16.01, 0.25)])  # 0 and 1e9 … 1e16 tokens
REFERENCE_PARAMS = (13e9, 70e9)  # Sardana et al.'s Fig. 1 model and Chinchilla itself
MOE_CAVEAT = (
    "MoE: Chinchilla's N is a dense parameter count. The factor over active parameters is the lecture's "
    "simplification; a dense-equivalent size lies between active and total (Clark et al. 2022: 64 experts at "
    "370M active ~ 1.3B dense), so the true factor lies between the active and total columns"
)
DENSE_NOTE = "dense model: Chinchilla's N applies as is"


def _law_row(law: sl.ScalingLaw, kind: str) -> dict:
    row = {"law": law.name, "kind": kind}
    for p, col in ESTIMATE_COLUMNS.items():
        row[col] = float(getattr(law, p))
    return row


def fits_frame(
    published: tuple[sl.ScalingLaw, ...],
    published_se: dict[str, dict[str, float]],
    refits: dict[str, tuple[str, ChinchillaFit, pl.DataFrame]],
) -> pl.DataFrame:
    """One row per law: published constants (with SEs where published) and each refit with its bootstrap."""
    rows = []
    for law in published:
        row = _law_row(law, "published")
        for p, col in ESTIMATE_COLUMNS.items():
            row[col + "_se"] = published_se.get(law.name, {}).get(p)
            row[col + "_low"] = row[col + "_high"] = None
        row |= {
            "n_points": None,
            "n_dropped_points": None,
            "n_bootstrap": None,
            "n_bootstrap_converged": None,
            "huber_delta": None,
            "huber_objective": None,
            "method": "as published",
            "status": "published",
            "status_detail": law.note,
            "data_study": None,
            "source_url": law.source_url,
        }
        rows.append(row)
    for name, (study, fit, points) in refits.items():
        row = _law_row(fit.law(name), "refit")
        for p, col in ESTIMATE_COLUMNS.items():
            row[col + "_se"], row[col + "_low"], row[col + "_high"] = (
                fit.std_errors[p],
                fit.interval_low[p],
                fit.interval_high[p],
            )
        row |= {
            "n_points": fit.n_points,
            "n_dropped_points": fit.n_dropped,
            "n_bootstrap": fit.n_bootstrap,
            "n_bootstrap_converged": fit.n_bootstrap_converged,
            "huber_delta": fit.huber_delta,
            "huber_objective": fit.objective,
            "method": fit.method,
            "status": fit.status,
            "status_detail": fit.status_detail,
            "data_study": study,
            "source_url": points["source_url"][0] if points.height else None,
        }
        rows.append(row)
    ints = ("n_points", "n_dropped_points", "n_bootstrap", "n_bootstrap_converged")
    texts = ("law", "kind", "method", "status", "status_detail", "data_study", "source_url")
    schema = {c: pl.Int64 if c in ints else pl.String if c in texts else pl.Float64 for c in rows[0]}
    frame = pl.DataFrame(rows, schema=schema)
    return frame.with_columns(
        (pl.col("beta_exponent") / (pl.col("alpha_exponent") + pl.col("beta_exponent"))).alias(
            "optimal_params_exponent"
        ),
        (pl.col("alpha_exponent") / (pl.col("alpha_exponent") + pl.col("beta_exponent"))).alias(
            "optimal_tokens_exponent"
        ),
    )


def residuals_frame(laws: list[sl.ScalingLaw], points: pl.DataFrame, *, drop_highest: int) -> pl.DataFrame:
    """Every point of a study under every law: predicted loss, log residual, and whether the fit used it."""
    n, c, loss = (points[c].to_numpy().astype(float) for c in ("params", "training_flop", "loss_nats_per_token"))
    d = c / (sl.TRAIN_FLOP_PER_PARAM_TOKEN * n)
    kept = highest_loss_mask(loss, drop_highest)
    frames = []
    for law in laws:
        pred = sl.loss_nats_per_token(law, n, d)
        frames.append(
            pl.DataFrame(
                {
                    "law": law.name,
                    "data_study": points["study"],
                    "params": n,
                    "training_flop": c,
                    "tokens": d,
                    "loss_nats_per_token": loss,
                    "predicted_loss_nats_per_token": pred,
                    "log_residual_ratio": np.log(pred) - np.log(loss),
                    "used_in_fit": kept,
                }
            )
        )
    return pl.concat(frames)


def huber_objective(law: sl.ScalingLaw, points: pl.DataFrame, *, drop_highest: int, delta: float) -> float:
    """Epoch's summed Huber objective of a law on a study's kept points (lower = fits better)."""
    n, c, loss = (points[c].to_numpy().astype(float) for c in ("params", "training_flop", "loss_nats_per_token"))
    keep = highest_loss_mask(loss, drop_highest)
    theta = np.array([[np.log(law.A), np.log(law.B), np.log(law.E), law.alpha, law.beta]])
    d = c / (sl.TRAIN_FLOP_PER_PARAM_TOKEN * n)
    f, _ = objective_and_gradient(
        theta, np.log(n[keep]), np.log(d[keep]), np.log(loss[keep]), np.ones(int(keep.sum())), delta
    )
    return float(f[0])


def compute_optimal_frame(
    laws: list[sl.ScalingLaw], bootstraps: dict[str, np.ndarray], compute_flop: np.ndarray = COMPUTE_GRID_FLOP
) -> pl.DataFrame:
    """Compute-optimal N, D and tokens per parameter over a compute grid, closed form next to numerical.

    Rows of a refit also carry the 2.5/97.5 percentiles over its bootstrap draws (one closed
    form per draw, vectorised over draws × budgets).
    """
    frames = []
    for law in laws:
        n, d = sl.compute_optimal(law, compute_flop)
        n_num, d_num = sl.compute_optimal_numerical(law, compute_flop)
        frame = {
            "law": law.name,
            "compute_flop": compute_flop,
            "params": n,
            "tokens": d,
            "tokens_per_param_ratio": d / n,
            "params_numerical": n_num,
            "tokens_numerical": d_num,
            "numerical_rel_diff_frac": np.maximum(np.abs(n_num / n - 1), np.abs(d_num / d - 1)),
            "loss_nats_per_token": sl.loss_nats_per_token(law, n, d),
        }
        draws = bootstraps.get(law.name)
        low = high = tpp_low = tpp_high = np.full(compute_flop.shape, np.nan)
        if draws is not None and draws.shape[0] >= 2:
            e, a, b, al, be = (draws[:, i : i + 1] for i in range(5))  # one law per draw, broadcast against the budgets
            n_draw, d_draw = sl.compute_optimal(
                sl.ScalingLaw("draws", E=e, A=a, B=b, alpha=al, beta=be), compute_flop[None, :]
            )
            tpp = d_draw / n_draw
            low, high = np.percentile(n_draw, [2.5, 97.5], axis=0)
            tpp_low, tpp_high = np.percentile(tpp, [2.5, 97.5], axis=0)
        frame |= {
            "params_low": low,
            "params_high": high,
            "tokens_per_param_low_ratio": tpp_low,
            "tokens_per_param_high_ratio": tpp_high,
        }
        frames.append(pl.DataFrame(frame).fill_nan(None))
    return pl.concat(frames)


def sardana_frame(
    laws: list[sl.ScalingLaw],
    *,
    reference_params: tuple[float, ...],
    scenario_inference_tokens: float,
    decode_efficiency_ratio: float,
    exponent_ratio: float,
    usd_per_pretrain_flop: float | None,
) -> pl.DataFrame:
    """Sardana et al.'s optimum and the equal-cost heuristic over an inference-demand grid, per law and target.

    Target loss: the loss of a compute-optimal model of each ``reference_params`` size under
    that law. Forms: ``compute`` (FLOPs, both phases weighted 1) and ``cost`` (inference
    FLOPs weighted 1/η_dec, i.e. decode runs at η_dec of pre-training's efficiency; dollars
    via ``usd_per_pretrain_flop``). Everything is evaluated in one vectorised call per law.
    """
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
                            "total_flop": (res["train_flop"] + res["inference_flop"]).ravel(),
                            "cost_pretrain_flop_equiv": cost.ravel(),
                            "cost_usd": (cost * usd_per_pretrain_flop).ravel()
                            if usd_per_pretrain_flop
                            else np.full(cost.size, np.nan),
                            "inference_to_train_cost_ratio": (
                                w_inf * res["inference_flop"] / res["train_flop"]
                            ).ravel(),
                            "chinchilla_cost_pretrain_flop_equiv": chin_cost.ravel(),
                            "saving_vs_chinchilla_frac": (1.0 - cost / chin_cost).ravel(),
                            "excess_over_optimum_frac": (cost / opt["cost_flop"] - 1.0).ravel(),
                        }
                    ).fill_nan(None)
                )
    return pl.concat(frames)


def overtraining_frame(
    models: pl.DataFrame, *, tokens_per_param: tuple[float, float, float], law: sl.ScalingLaw | None
) -> pl.DataFrame:
    """Reported pre-training tokens against active and total parameters, and the factor over k tokens/param.

    ``tokens_per_param`` is (central, low, high) of the scenario's k; the factor's range
    divides by k's high and low. ``law`` (the refit) adds its compute-optimal tokens per
    parameter at the model's own training compute 6·N_act·D.
    """
    k, k_low, k_high = tokens_per_param
    m = models.filter(pl.col("pretrain_tokens").is_not_null()).sort("model")
    n_act, n_tot, d = (m[c].to_numpy().astype(float) for c in ("params_active", "params_total", "pretrain_tokens"))
    if law is not None and m.height:
        n_opt, d_opt = sl.compute_optimal(law, sl.training_flop(n_act, d))
        law_tpp, law_name = d_opt / n_opt, law.name
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
            "tokens_per_active_param_ratio": d / n_act,
            "tokens_per_total_param_ratio": d / n_tot,
            "chinchilla_tokens_per_param_ratio": np.full(m.height, k),
            "overtraining_active_ratio": d / (k * n_act),
            "overtraining_active_low_ratio": d / (k_high * n_act),
            "overtraining_active_high_ratio": d / (k_low * n_act),
            "overtraining_total_ratio": d / (k * n_tot),
            "training_flop": sl.training_flop(n_act, d),
            "law": law_name,
            "law_optimal_tokens_per_param_ratio": law_tpp,
            "caveat": [MOE_CAVEAT if moe else DENSE_NOTE for moe in (n_act < n_tot)],
            "pretrain_tokens_source_url": m["pretrain_tokens_source_url"],
        },
        schema_overrides={"law": pl.String},
    ).fill_nan(None)
