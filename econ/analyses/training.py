"""Training economics (lecture §e): Chinchilla refit, compute optimum, the token balance, Sardana, over-training.

Reads ``scaling_law_points`` (the Chinchilla Figure 4 points), ``scenarios`` (every
scenario; ``base`` for the defaults), ``models`` (reported pre-training tokens) and
``hardware`` (peak BF16 FLOP/s of the scenario's chip, for dollar figures), and writes

- ``scaling_law_fits``: published constants (Besiroglu et al. 2024, Hoffmann et al. 2022
  rounded and unrounded) and our refit of each study with bootstrap SEs and intervals;
- ``scaling_law_residuals``: every point under every law (the fitted surface's residuals);
- ``compute_optimal``: N, D and tokens/param over a compute grid, closed form and numerical;
- ``token_balance``: the lecture's chain per scenario, central value and interval;
- ``token_balance_sensitivity``: each quantity at each assumption's low and high (tornado);
- ``sardana_optimum``: the inference-aware optimum and the equal-cost heuristic vs demand;
- ``overtraining``: reported pre-training tokens per active and total parameter, factor over k.

The bootstrap runs once per cold build (``N_BOOTSTRAP`` resamples, fixed ``SEED``: the
result is deterministic); the runner's cache skips it when no input changed.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import training_tables as tt
from econ.analyses.scenario import load_scenarios
from econ.analyses.training_balance import ASSUMPTIONS as BALANCE_ASSUMPTIONS
from econ.analyses.training_balance import balance_frames, evaluate
from econ.fits.chinchilla import DROP_HIGHEST_LOSS, HUBER_DELTA, fit_chinchilla
from econ.physics import scaling_laws as sl
from econ.units import SECONDS_PER_HOUR

NAME = "training"
INPUTS = ("scaling_law_points", "scenarios", "models", "hardware")
N_BOOTSTRAP = 400  # ~0.4 s on 2 cores; SE of an SE ≈ 1/√(2·400) ≈ 4 %. bench/training.py times 1,000.
SEED = 42
CHIP_ASSUMPTIONS = ("training_chip", "serving_chip")  # first one the scenario has names the chip for $ figures


def _peak_flop_per_s(ctx, scenario) -> tuple[str | None, float | None]:
    for name in CHIP_ASSUMPTIONS:
        a = scenario.assumptions.get(name)
        if a is not None and a.text:
            row = ctx.query("select peak_bf16_flop_per_s from hardware where chip = ?", [a.text])
            if row.height and row[0, 0] is not None:
                return a.text, float(row[0, 0])
    return None, None


def run(ctx) -> None:
    points = ctx.query(
        "select study, params, training_flop, loss_nats_per_token, source_url "
        "from scaling_law_points order by study, params, training_flop"
    )
    refits, bootstraps = {}, {}
    for study in points["study"].unique(maintain_order=True).to_list():
        pts = points.filter(pl.col("study") == study)
        n, c = pts["params"].to_numpy().astype(float), pts["training_flop"].to_numpy().astype(float)
        fit = fit_chinchilla(
            n,
            c / (sl.TRAIN_FLOP_PER_PARAM_TOKEN * n),
            pts["loss_nats_per_token"].to_numpy(),
            n_bootstrap=N_BOOTSTRAP,
            seed=SEED,
        )
        name = f"refit_{study}"
        refits[name] = (study, fit, pts)
        bootstraps[name] = fit.bootstrap
    published = sl.PUBLISHED_LAWS
    # downstream tables use a refit only when it is identified and converged ("fits say when they cannot know")
    laws = list(published) + [fit.law(name) for name, (_s, fit, _p) in refits.items() if fit.status == "ok"]

    fits = tt.fits_frame(published, {sl.BESIROGLU_2024.name: sl.BESIROGLU_2024_SE}, refits)
    if refits:
        first = next(iter(refits.values()))[2]
        objectives = {
            law.name: tt.huber_objective(law, first, drop_highest=DROP_HIGHEST_LOSS, delta=HUBER_DELTA)
            for law in published
        }
        fits = fits.with_columns(
            pl.coalesce(pl.col("huber_objective"), pl.col("law").replace_strict(objectives, default=None))
        )
    ctx.write(
        "scaling_law_fits",
        fits,
        "Chinchilla loss law L(N,D) = E + A/N^alpha + B/D^beta: published constants and our "
        "refit (Besiroglu et al. 2024 method) with bootstrap uncertainty. Grain: one row per law.",
        FIT_COLUMNS,
    )
    if refits:
        ctx.write(
            "scaling_law_residuals",
            pl.concat(
                [tt.residuals_frame(laws, pts, drop_highest=DROP_HIGHEST_LOSS) for _s, _f, pts in refits.values()]
            ),
            "Every scaling-law data point under every law: predicted loss and log residual. "
            "Grain: one row per law x data point.",
            RESIDUAL_COLUMNS,
        )
    ctx.write(
        "compute_optimal",
        tt.compute_optimal_frame(laws, bootstraps),
        "Compute-optimal parameters and tokens for a training budget C = 6ND, closed form (Hoffmann et al. 2022 "
        "App. D.2) next to a numerical solve. Grain: one row per law x compute budget.",
        OPTIMAL_COLUMNS,
    )

    scenarios = load_scenarios(ctx.con)
    base = scenarios["base"]
    chip, peak = _peak_flop_per_s(ctx, base)
    balances, sensitivities = [], []
    for name in sorted(scenarios, key=lambda s: (s != "base", s)):
        b, s = balance_frames(scenarios[name], _peak_flop_per_s(ctx, scenarios[name])[1])
        balances.append(b)
        sensitivities.append(s)
    ctx.write(
        "token_balance",
        pl.concat(balances, how="diagonal_relaxed"),
        "The lecture's pre-training / RL / inference token balance (section e) under each scenario: central value and "
        "the min/max over every corner of the assumption ranges. Grain: one row per scenario x quantity.",
        BALANCE_COLUMNS,
    )
    ctx.write(
        "token_balance_sensitivity",
        pl.concat(sensitivities, how="diagonal_relaxed"),
        "Each token-balance quantity with one assumption at its low and at its high end, the others central "
        "(for a tornado chart). Grain: one row per scenario x assumption x quantity.",
        SENSITIVITY_COLUMNS,
    )

    central = evaluate({n: np.array([base[n]]) for n in BALANCE_ASSUMPTIONS}, None)
    usd_per_flop = None
    if peak and base.get("gpu_usd_per_hour") and base.get("mfu_pretrain"):
        usd_per_flop = base["gpu_usd_per_hour"] / SECONDS_PER_HOUR / (peak * base["mfu_pretrain"])
    sardana = tt.sardana_frame(
        laws,
        reference_params=tt.REFERENCE_PARAMS + (base["frontier_active_params"],),
        scenario_inference_tokens=float(central["inference_tokens"][0]),
        decode_efficiency_ratio=base["decode_efficiency_ratio"],
        exponent_ratio=base["equal_cost_exponent_ratio"],
        usd_per_pretrain_flop=usd_per_flop,
    )
    ctx.write(
        "sardana_optimum",
        sardana.with_columns(pl.lit(chip, dtype=pl.String).alias("cost_chip")),
        "Inference-aware optimum (Sardana et al. 2024): the (N, D_tr) reaching a target loss at least lifetime cost, "
        "next to the lecture's equal-cost heuristic, over inference demand. Grain: one row per law x form x method x "
        "reference model x inference demand.",
        SARDANA_COLUMNS,
    )

    models = ctx.query(
        "select model, lab, params_total, params_active, pretrain_tokens, pretrain_tokens_source_url from models"
    )
    k = (base["chinchilla_tokens_per_param"], *base.range("chinchilla_tokens_per_param"))
    refit_ok = [fit.law(n) for n, (_s, fit, _p) in refits.items() if fit.status == "ok"]
    ctx.write(
        "overtraining",
        tt.overtraining_frame(models, tokens_per_param=k, law=refit_ok[0] if refit_ok else None),
        "Reported pre-training tokens of open models against their active and total parameters, and the factor over "
        "Chinchilla's tokens per parameter (scenario base). Grain: one row per model with reported tokens.",
        OVERTRAINING_COLUMNS,
    )


_EST = {
    "e_nats_per_token": "Irreducible loss E [nats/token]",
    "a_coef": "Model-size coefficient A [nats/token * params^alpha]",
    "b_coef": "Data coefficient B [nats/token * tokens^beta]",
    "alpha_exponent": "Model-size exponent alpha [dimensionless]",
    "beta_exponent": "Data exponent beta [dimensionless]",
}
FIT_COLUMNS = {
    "law": "Law id: besiroglu_2024, hoffmann_2022 (paper, rounded), hoffmann_2022_unrounded, refit_<study> (ours)",
    "kind": "published or refit",
    **_EST,
    **{c + "_se": d.replace(" [", " bootstrap standard error [") for c, d in _EST.items()},
    **{c + "_low": d.replace(" [", " 2.5th bootstrap percentile [") for c, d in _EST.items()},
    **{c + "_high": d.replace(" [", " 97.5th bootstrap percentile [") for c, d in _EST.items()},
    "n_points": "Points used in the refit, after dropping the highest-loss ones [points]",
    "n_dropped_points": "Highest-loss points dropped before fitting (Epoch: 5) [points]",
    "n_bootstrap": "Bootstrap resamples of the refit (Epoch used 4,000; the build uses fewer to stay fast) [resamples]",
    "n_bootstrap_converged": "Resamples whose refit converged (the SEs and intervals use these) [resamples]",
    "huber_delta": "Huber threshold on the log-loss residual [dimensionless]",
    "huber_objective": "Summed Huber loss of the law on the refit study's kept points (lower fits better) "
    "[dimensionless]",
    "method": "How the constants were obtained",
    "status": "ok, underdetermined, rank_deficient, not_converged (refits; only ok refits feed the other tables) or "
    "published",
    "status_detail": "Why the status, or the source note of published constants",
    "data_study": "The scaling_law_points study a refit used",
    "source_url": "Where the constants (or the refit's data) come from",
    "optimal_params_exponent": "a = beta/(alpha+beta): N_opt grows as C^a [dimensionless]",
    "optimal_tokens_exponent": "b = alpha/(alpha+beta): D_opt grows as C^b [dimensionless]",
}
RESIDUAL_COLUMNS = {
    "law": "Law id (see scaling_law_fits)",
    "data_study": "Study the point belongs to",
    "params": "Model size N [params]",
    "training_flop": "Training compute C [FLOP]",
    "tokens": "Training tokens D = C/(6N) [tokens]",
    "loss_nats_per_token": "Reported final loss [nats/token]",
    "predicted_loss_nats_per_token": "Loss the law predicts at (N, D) [nats/token]",
    "log_residual_ratio": "ln(predicted) - ln(reported) [dimensionless]",
    "used_in_fit": "False for the highest-loss points the refit drops",
}
OPTIMAL_COLUMNS = {
    "law": "Law id (see scaling_law_fits)",
    "compute_flop": "Training budget C [FLOP]",
    "params": "Compute-optimal N, closed form [params]",
    "tokens": "Compute-optimal D, closed form [tokens]",
    "tokens_per_param_ratio": "D_opt / N_opt [tokens/param]",
    "params_numerical": "Compute-optimal N from a numerical root of dL/dlnN on the budget line [params]",
    "tokens_numerical": "Compute-optimal D from the numerical solve [tokens]",
    "numerical_rel_diff_frac": "Largest relative difference between closed form and numerical N or D [frac]",
    "loss_nats_per_token": "Loss at the optimum [nats/token]",
    "params_low": "2.5th percentile of N_opt over the refit's bootstrap draws [params]",
    "params_high": "97.5th percentile of N_opt over the refit's bootstrap draws [params]",
    "tokens_per_param_low_ratio": "2.5th percentile of D_opt/N_opt over the bootstrap draws [tokens/param]",
    "tokens_per_param_high_ratio": "97.5th percentile of D_opt/N_opt over the bootstrap draws [tokens/param]",
}
BALANCE_COLUMNS = {
    "scenario": "Scenario name",
    "quantity": "Derived quantity (its unit is in unit)",
    "unit": "Unit of the three values",
    "central_value": "Value with every assumption central [unit]",
    "low_value": "Minimum over every corner of the assumption ranges [unit]",
    "high_value": "Maximum over every corner of the assumption ranges [unit]",
    "lecture_value": "The lecture's number for this quantity, where it gives one [unit]",
    "formula": "Formula (lecture-math.md notation)",
    "lecture_section": "Section of lecture-math.md",
}
SENSITIVITY_COLUMNS = {
    "scenario": "Scenario name",
    "assumption": "Assumption moved to its low and high end",
    "assumption_unit": "Unit of the assumption",
    "assumption_value": "Central value [assumption_unit]",
    "assumption_low": "Low end [assumption_unit]",
    "assumption_high": "High end [assumption_unit]",
    "quantity": "Derived quantity",
    "quantity_unit": "Unit of the quantity",
    "central_value": "Quantity with every assumption central [quantity_unit]",
    "value_at_low": "Quantity with this assumption at its low end [quantity_unit]",
    "value_at_high": "Quantity with this assumption at its high end [quantity_unit]",
    "swing_decades": "|log10(value_at_high / value_at_low)| (tornado bar length) [decades]",
    "direction": "Whether the quantity increases, decreases or does not move as the assumption rises",
}
SARDANA_COLUMNS = {
    "law": "Law id used for the loss constraint",
    "form": "compute (FLOPs, both phases weight 1) or cost (inference FLOPs / decode_efficiency_ratio)",
    "method": "optimum (Sardana et al., SciPy root of dCost/dlnN) or equal_cost (the lecture's heuristic with the "
    "scenario's exponent ratio)",
    "reference_params": "Size whose compute-optimal loss is the target (13B: Sardana Fig. 1; 70B: Chinchilla; the "
    "scenario's frontier N_act) [params]",
    "target_loss_nats_per_token": "Target loss [nats/token]",
    "inference_tokens": "Lifetime inference demand D_inf [tokens]",
    "demand_source": "grid, or scenario (the token_balance D_inf of scenario base)",
    "params": "Chosen N [params]",
    "train_tokens": "Chosen D_tr [tokens]",
    "tokens_per_param_ratio": "D_tr / N [tokens/param]",
    "train_flop": "6 N D_tr [FLOP]",
    "inference_flop": "2 N D_inf [FLOP]",
    "total_flop": "Training + inference [FLOP]",
    "cost_pretrain_flop_equiv": "Objective: train FLOPs + weight x inference FLOPs [pre-training FLOP equivalents]",
    "cost_usd": "Objective in dollars at the scenario's $/GPU-hour, MFU and cost_chip's BF16 peak [USD]",
    "inference_to_train_cost_ratio": "Weighted inference cost / training cost at the chosen point [ratio]",
    "chinchilla_cost_pretrain_flop_equiv": "Objective of the compute-optimal reference model serving the same demand "
    "[pre-training FLOP equivalents]",
    "saving_vs_chinchilla_frac": "1 - cost / Chinchilla-optimal model's cost [frac]",
    "excess_over_optimum_frac": "cost / optimum's cost - 1 (0 for the optimum) [frac]",
    "cost_chip": "Chip whose BF16 peak prices cost_usd",
}
OVERTRAINING_COLUMNS = {
    "model": "Model",
    "lab": "Lab",
    "params_total": "Total parameters [params]",
    "params_active": "Active parameters [params]",
    "pretrain_tokens": "Reported pre-training tokens [tokens]",
    "is_moe": "Active < total parameters",
    "tokens_per_active_param_ratio": "Pre-training tokens / active parameters [tokens/param]",
    "tokens_per_total_param_ratio": "Pre-training tokens / total parameters [tokens/param]",
    "chinchilla_tokens_per_param_ratio": "k, scenario base's Chinchilla tokens per parameter [tokens/param]",
    "overtraining_active_ratio": "D / (k N_active) [ratio]",
    "overtraining_active_low_ratio": "D / (k_high N_active) [ratio]",
    "overtraining_active_high_ratio": "D / (k_low N_active) [ratio]",
    "overtraining_total_ratio": "D / (k N_total) [ratio]",
    "training_flop": "6 N_active D [FLOP]",
    "law": "Refit law used for law_optimal_tokens_per_param_ratio",
    "law_optimal_tokens_per_param_ratio": "Compute-optimal D/N of the refit law at this model's training FLOP "
    "[tokens/param]",
    "caveat": "Dense vs MoE caveat",
    "pretrain_tokens_source_url": "Where the token count was reported",
}
