"""The cost–speed frontier and the training fleet of the fleet analysis (frames in, frames out).

The arithmetic is :mod:`econ.physics.fleet` (frontier) and :mod:`econ.physics.fleet_training`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fleet_plan import Traffic
from econ.analyses.scenario import Scenario
from econ.physics import fleet, fleet_training, roofline
from econ.physics.model import kv_window_bytes
from econ.units import SECONDS_PER_HOUR, SECONDS_PER_MONTH

PARETO_BATCH = np.unique(np.concatenate([np.arange(1.0, 64.0), np.round(np.geomspace(64.0, 65_536.0, 1_000))]))
"""Decode batches of the frontier: every batch 1–63, then 1,000 log-spaced batches 64–65,536 rounded to whole
sequences (duplicates dropped): 1,026 points."""


def _np(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


# ---------------------------------------------------------------------------- fleet_pareto


def pareto_frame(cases: pl.DataFrame, t: Traffic, *, batch: np.ndarray = PARETO_BATCH) -> pl.DataFrame:
    """``fleet_pareto``: every model × chip × format (``cases`` as :func:`econ.analyses.serving.cases` builds them)
    over ``batch`` at the scenario's mean decode context, on the replica the fleet plan would use.

    Only the batches whose weights + KV fit in the replica are kept (the rest are not on any
    achievable frontier); ``pareto_optimal`` marks the points no other format of the model × chip beats.
    """
    cases = cases.filter(pl.col("kv_bytes_per_token").is_not_null())
    a = {
        k: _np(cases, k)
        for k in (
            "params_total",
            "params_active",
            "weight_bytes_per_param",
            "kv_bytes_per_token",
            "kv_window_bytes_per_sequence",
            "sliding_window_tokens",
            "peak_flop_per_s",
            "hbm_bandwidth_bytes_per_s",
            "hbm_capacity_bytes",
            "scale_up_domain_chips",
        )
    }
    context = t.decode_context_tokens
    window = kv_window_bytes(context, a["kv_window_bytes_per_sequence"], a["sliding_window_tokens"])
    b0 = roofline.balance_batch(
        roofline.critical_batch_ratio(
            a["peak_flop_per_s"], a["hbm_bandwidth_bytes_per_s"], a["weight_bytes_per_param"]
        ),
        a["params_total"],
        a["params_active"],
    )
    target = np.maximum(np.round(fleet.balance_multiple_batch(b0, t.batch_multiple)), 1.0)
    chips, stages = fleet.replica_for_batch(
        a["params_total"],
        a["weight_bytes_per_param"],
        target,
        context,
        a["kv_bytes_per_token"],
        a["hbm_capacity_bytes"],
        a["scale_up_domain_chips"],
        window,
    )
    out = fleet.frontier(
        batch=batch,
        context_tokens=context,
        params_total=a["params_total"],
        params_active=a["params_active"],
        weight_bytes_per_param=a["weight_bytes_per_param"],
        kv_bytes_per_token=a["kv_bytes_per_token"],
        chips=chips,
        peak_flop_per_s=a["peak_flop_per_s"],
        hbm_bandwidth_bytes_per_s=a["hbm_bandwidth_bytes_per_s"],
        hbm_capacity_bytes=a["hbm_capacity_bytes"],
        usd_per_chip_hour=t.usd_per_chip_hour,
        mfu=t.mfu,
        mbu=t.mbu,
        pipeline_stages=stages,
        kv_extra_bytes_per_sequence=window,
    )
    points = len(batch)
    fits = out["fits_in_memory"].ravel()
    index = np.repeat(np.arange(cases.height), points)[fits]
    keys = cases.select(
        pl.col("model").cast(pl.Categorical),
        pl.col("chip").cast(pl.Categorical),
        pl.col("number_format").cast(pl.Categorical),
    )[index]
    speed, throughput = out["tokens_per_s_per_user"].ravel()[fits], out["tokens_per_s_per_chip"].ravel()[fits]
    group = cases.select(pl.struct("model", "chip").rank("dense")).to_series().to_numpy()[index]
    return keys.with_columns(
        pl.Series("replica_chips", chips[index], dtype=pl.Int32),
        pl.Series("pipeline_stages", stages[index], dtype=pl.Int32),
        pl.Series("batch_seqs", np.tile(batch, cases.height)[fits], dtype=pl.Int32),
        pl.Series("tokens_per_s_per_user", speed),
        pl.Series("tokens_per_s_per_chip", throughput),
        pl.Series("usd_per_mtok", out["usd_per_mtok"].ravel()[fits]),
        pl.Series("compute_bound", out["compute_bound"].ravel()[fits]),
        pl.Series("pareto_optimal", fleet.pareto_optimal(group, speed, throughput)),
    )


PARETO_COLUMNS = {
    "model": "Model (models.model)",
    "chip": "Accelerator (hardware.chip)",
    "number_format": "Format of the math and the weights",
    "replica_chips": "Chips per replica G: weights + KV of the balance-multiple batch at the context, within one "
    "scale-up domain [chips]",
    "pipeline_stages": "Pipeline stages P (scale-up domains per replica)",
    "batch_seqs": "Decode batch B [sequences]",
    "tokens_per_s_per_user": "Per-user speed 1/t_step, t_step = max(2*B*N_act/(G*F*mfu), (P*N_tot*b_w + B*(L*b_kv + "
    "window))/(G*W*mbu)) "
    "(lower bound) [tokens/s/user]",
    "tokens_per_s_per_chip": "Throughput per chip B/(step*G) [tokens/s/chip]",
    "usd_per_mtok": "Decode cost step*G*p/B at the base scenario's gpu_usd_per_hour [USD/MTok]",
    "compute_bound": "True where compute time >= memory time",
    "pareto_optimal": "No point of the same model x chip (any format) is at least as fast per user with more "
    "throughput per "
    "chip (of identical points, one is marked)",
}


# ---------------------------------------------------------------------------- training_fleet


def token_ratios(s: Scenario, balance: pl.DataFrame | None) -> tuple[float, float, str]:
    """(D_pre/D_inf, D_RL/D_inf, where from): the token_balance table's central values when it has the scenario, else
    the lecture's closed form from the scenario (§e.3: D_pre = (s_pre/s_inf)·β·D_inf/r, D_RL =
    (s_RL/s_inf)·(β/α)·D_inf/r)."""
    if balance is not None:
        rows = dict(balance.filter(pl.col("scenario") == s.name).select("quantity", "central_value").iter_rows())
        if all(rows.get(q) for q in ("pretrain_tokens", "rl_tokens", "inference_tokens")):
            inf = rows["inference_tokens"]
            return rows["pretrain_tokens"] / inf, rows["rl_tokens"] / inf, "token_balance table (central value)"
    from econ.physics import token_balance as tb

    alpha = tb.rl_cost_per_token_ratio(s["rl_flop_per_param_token"], s["rl_efficiency_ratio"])
    beta = tb.inference_cost_per_token_ratio(s["decode_efficiency_ratio"])
    r = s.get("equal_cost_exponent_ratio", 1.0)
    pre = tb.pretrain_tokens_from_inference(1.0, s["cost_share_pretrain"], s["cost_share_inference"], beta, r)
    rl = tb.rl_tokens_from_inference(1.0, s["cost_share_rl"], s["cost_share_inference"], alpha, beta, r)
    return float(pre), float(rl), "scenario (lecture e.3 closed form; no token_balance table)"


def training_frame(
    plans: pl.DataFrame, s: Scenario, ratios: tuple[float, float, str], rental_range: pl.DataFrame
) -> pl.DataFrame:
    """``training_fleet`` rows of one scenario: per deployment, pre-training and RL of the model (token balance) and its
    reported pre-training, with the serving/training split of the fleet over one deployment period.

    ``plans``: one row per deployment with model, chip, params_active, pretrain_tokens (reported), peak_bf16_flop_per_s,
    tdp_w, tokens_per_s, serving_mean_chips; ``rental_range``: chip, usd_low, usd_high over the newest quote per kind.
    """
    pre_ratio, rl_ratio, origin = ratios
    period_s = s["deployment_months"] * SECONDS_PER_MONTH
    inference = _np(plans, "tokens_per_s") * period_s * (1.0 - s.get("model_discard_probability", 0.0))
    n = _np(plans, "params_active")
    phases = {
        "pretrain": (pre_ratio * inference, fleet_training.PRETRAIN_FLOP_PER_PARAM_TOKEN, 1.0, origin),
        "rl": (rl_ratio * inference, s["rl_flop_per_param_token"], s["rl_efficiency_ratio"], origin),
        "pretrain_reported": (
            _np(plans, "pretrain_tokens"),
            fleet_training.PRETRAIN_FLOP_PER_PARAM_TOKEN,
            1.0,
            "models.pretrain_tokens (reported)",
        ),
    }
    peak, mfu = _np(plans, "peak_bf16_flop_per_s"), s["mfu_pretrain"]
    hours = {
        name: fleet_training.chip_hours(fleet_training.training_flop(n, tok, c), peak, mfu, eff)
        for name, (tok, c, eff, _) in phases.items()
    }
    shared = fleet_training.time_shared_fleet(
        _np(plans, "serving_mean_chips"),
        s["serving_peak_to_mean_ratio"],
        hours["pretrain"] + hours["rl"],
        period_s / SECONDS_PER_HOUR,
    )
    ranges = plans.select("chip").join(rental_range, on="chip", how="left")
    low, high = _np(ranges, "usd_low"), _np(ranges, "usd_high")
    frames = []
    for name, (tokens, c, eff, source) in phases.items():
        h = hours[name]
        cols = {
            "tokens": tokens,
            "flop_per_param_token": np.full(plans.height, float(c)),
            "flop": fleet_training.training_flop(n, tokens, c),
            "efficiency_ratio": np.full(plans.height, float(eff)),
            "chip_hours": h,
            "days_on_training_fleet": fleet_training.days_on_chips(h, s["training_fleet_chips"]),
            "energy_mwh": fleet_training.energy_mwh(h, _np(plans, "tdp_w"), s["server_power_ratio"], s["pue_ratio"]),
            "cost_usd": h * s["gpu_usd_per_hour"],
            "cost_low_usd": h * low,
            "cost_high_usd": h * high,
            "inference_tokens": inference,
            **shared,
        }
        frames.append(
            plans.select("scenario", "deployment", "model", "chip").with_columns(
                pl.lit(name).alias("phase"),
                pl.lit(source).alias("tokens_source"),
                *(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in cols.items()),
            )
        )
    out = pl.concat(frames).filter(pl.col("tokens").is_not_null())
    return out.with_columns(
        pl.lit(mfu).alias("mfu_frac"),
        pl.lit(s["training_fleet_chips"]).alias("training_fleet_chips"),
        pl.lit(s["gpu_usd_per_hour"]).alias("usd_per_chip_hour"),
        pl.lit(s["deployment_months"]).alias("deployment_months"),
    )


TRAINING_COLUMNS = {
    "scenario": "Scenario",
    "deployment": "Deployment whose model is trained (deployments.deployment)",
    "model": "Model (its active parameters N_act)",
    "chip": "Chip it is trained on (the deployment's chip)",
    "phase": "pretrain and rl: the token balance's D_pre and D_RL for this deployment's traffic; pretrain_reported: "
    "the model's reported pre-training tokens",
    "tokens_source": "Where the token count comes from",
    "tokens": "Training tokens D [tokens]",
    "flop_per_param_token": "FLOP per active parameter per token c (6 for pre-training, c_RL for RL; lecture e.2)",
    "flop": "Training compute c*N_act*D [FLOP]",
    "efficiency_ratio": "Efficiency relative to pre-training (1; eta_RL for RL, lecture e.2-e.3)",
    "chip_hours": "FLOP/(F_peak,bf16 * MFU * efficiency)/3600 [chip-hours]",
    "days_on_training_fleet": "chip-hours / (training_fleet_chips * 24) [days]",
    "energy_mwh": "chip-hours * TDP * server_power_ratio * PUE / 1e6 [MWh]",
    "cost_usd": "chip-hours at the scenario's gpu_usd_per_hour [USD]",
    "cost_low_usd": "chip-hours at the lowest newest rental quote per kind for the chip (null: no quote) [USD]",
    "cost_high_usd": "chip-hours at the highest newest rental quote per kind for the chip [USD]",
    "inference_tokens": "Tokens this deployment serves over one deployment period, derated by "
    "model_discard_probability [tokens]",
    "serving_peak_chips": "Serving chips sized for the peak: serving_mean_chips * serving_peak_to_mean_ratio [chips]",
    "training_chips_separate": "Chips that finish pre-training + RL (token balance) within one deployment period "
    "[chips]",
    "fleet_chips_separate": "Serving at peak + training on its own chips [chips]",
    "fleet_chips_time_shared": "Serving at peak + training chips beyond what the idle serving hours absorb "
    "('training by night') [chips]",
    "training_on_idle_serving_frac": "Share of the training chip-hours run on idle serving chips [frac]",
    "serving_share_separate_frac": "Serving's share of the separate fleet's chip-hours (mean load) [frac]",
    "training_share_separate_frac": "Training's share of the separate fleet's chip-hours [frac]",
    "serving_share_time_shared_frac": "Serving's share of the time-shared fleet's chip-hours [frac]",
    "training_share_time_shared_frac": "Training's share of the time-shared fleet's chip-hours [frac]",
    "mfu_frac": "Scenario mfu_pretrain (relative to the bf16 peak)",
    "training_fleet_chips": "Scenario training_fleet_chips [chips]",
    "usd_per_chip_hour": "Scenario gpu_usd_per_hour [USD/chip-hour]",
    "deployment_months": "Scenario deployment_months [months]",
}
