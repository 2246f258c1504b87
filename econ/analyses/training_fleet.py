"""``training_fleet``: training the deployed models on their chips, and how a fleet splits between serving and training.

Per scenario × deployment × phase: chip-hours, days on the scenario's training fleet, energy and cost of
pre-training and RL (the token balance for this deployment's traffic, lecture e.2–e.4) and of the reported
pre-training; the split of the fleet with and without time-sharing (:mod:`econ.physics.fleet_training`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fleet_inputs import SCENARIO_KIND, newest_rental
from econ.physics import fleet_training as ft
from econ.physics import token_balance as tb
from econ.results import ResultColumn as C
from econ.results import ResultTable
from econ.units import SECONDS_PER_HOUR, SECONDS_PER_MONTH

NAME = "training_fleet"
INPUTS = ("fleet_plan", "models", "hardware", "rental_prices", "scenarios", "calibration_parameters")

SHARED = (
    "serving_peak_chips",
    "training_chips_separate",
    "fleet_chips_separate",
    "fleet_chips_time_shared",
    "training_chips_time_shared",
    "training_on_idle_serving_frac",
    "serving_share_separate_frac",
    "training_share_separate_frac",
    "serving_share_time_shared_frac",
    "training_share_time_shared_frac",
)

TRAINING_FLEET = ResultTable(
    name="training_fleet",
    grain="scenario x deployment x phase",
    key=("scenario", "deployment", "phase"),
    description=(
        "Training the deployed models on their chips: chip-hours, days on the scenario's training fleet, energy and "
        "cost of pre-training and RL (token balance of this deployment's traffic, lecture e.2-e.4) and of the "
        "reported pre-training; how a fleet splits between serving and training with and without time-sharing"
    ),
    columns=(
        C("scenario", "str", "", "key", "Scenario"),
        C("deployment", "str", "", "key", "Deployment whose model is trained (deployments.deployment)"),
        C("model", "str", "", "input", "Model (its active parameters N_act)"),
        C("chip", "str", "", "input", "Chip it is trained on (the deployment's chip)"),
        C(
            "phase",
            "str",
            "",
            "key",
            "pretrain and rl: the token balance's D_pre and D_RL for this deployment's traffic; pretrain_reported: the "
            "model's reported pre-training tokens",
        ),
        C("tokens_source", "str", "", "label", "Where the token count comes from"),
        C("tokens", "float", "tokens", "derived", "Training tokens D", tb.pretrain_tokens_from_inference),
        C(
            "flop_per_param_token",
            "float",
            "FLOP/(param*token)",
            "assumption",
            "FLOP per active parameter per token c (6 for pre-training, c_RL for RL; lecture e.2)",
        ),
        C("flop", "float", "FLOP", "derived", "Training compute", ft.training_flop),
        C(
            "efficiency_ratio",
            "float",
            "",
            "assumption",
            "Efficiency relative to pre-training (1; eta_RL for RL, lecture e.2-e.3)",
        ),
        C(
            "chip_hours",
            "float",
            "chip-hours",
            "bound",
            "Chip-hours at the bf16 peak and the pre-training MFU",
            ft.chip_hours,
        ),
        C(
            "days_on_training_fleet",
            "float",
            "days",
            "bound",
            "Days on the scenario's training fleet",
            ft.days_on_chips,
        ),
        C("energy_mwh", "float", "MWh", "bound", "Facility energy", ft.energy_mwh),
        C("cost_usd", "float", "USD", "bound", "Chip-hours at the scenario's usd_per_chip_hour", ft.cost_usd),
        C(
            "cost_low_usd",
            "float",
            "USD",
            "bound",
            "Chip-hours at the lowest newest rental quote per kind for the chip (null: no quote)",
            ft.cost_usd,
        ),
        C(
            "cost_high_usd",
            "float",
            "USD",
            "bound",
            "Chip-hours at the highest newest rental quote per kind",
            ft.cost_usd,
        ),
        C(
            "inference_tokens",
            "float",
            "tokens",
            "derived",
            "Tokens this deployment serves over one deployment period, derated by model_discard_frac",
            tb.inference_tokens_per_model,
        ),
        C("serving_peak_chips", "float", "chips", "bound", "Serving chips sized for the peak", ft.time_shared_fleet),
        C(
            "training_chips_separate",
            "float",
            "chips",
            "bound",
            "Chips that finish pre-training + RL (token balance) within one deployment period",
            ft.time_shared_fleet,
        ),
        C(
            "fleet_chips_separate",
            "float",
            "chips",
            "bound",
            "Serving at peak + training on its own chips",
            ft.time_shared_fleet,
        ),
        C(
            "fleet_chips_time_shared",
            "float",
            "chips",
            "bound",
            "Serving at peak + training chips beyond what the idle serving hours absorb ('training by night')",
            ft.time_shared_fleet,
        ),
        C(
            "training_chips_time_shared",
            "float",
            "chips",
            "bound",
            "Training chips the time-shared fleet adds beyond the serving peak",
            ft.time_shared_fleet,
        ),
        C(
            "training_on_idle_serving_frac",
            "float",
            "",
            "bound",
            "Share of the training chip-hours run on idle serving chips",
            ft.time_shared_fleet,
        ),
        C(
            "serving_share_separate_frac",
            "float",
            "",
            "bound",
            "Serving's share of the separate fleet's chip-hours (mean load)",
            ft.time_shared_fleet,
        ),
        C(
            "training_share_separate_frac",
            "float",
            "",
            "bound",
            "Training's share of the separate fleet's chip-hours",
            ft.time_shared_fleet,
        ),
        C(
            "serving_share_time_shared_frac",
            "float",
            "",
            "bound",
            "Serving's share of the time-shared fleet's chip-hours",
            ft.time_shared_fleet,
        ),
        C(
            "training_share_time_shared_frac",
            "float",
            "",
            "bound",
            "Training's share of the time-shared fleet's chip-hours",
            ft.time_shared_fleet,
        ),
        C("pretrain_mfu_frac", "float", "", "assumption", "Scenario pretrain_mfu_frac (relative to the bf16 peak)"),
        C("training_fleet_chips", "float", "chips", "assumption", "Scenario training_fleet_chips"),
        C("usd_per_chip_hour", "float", "USD/chip-hour", "assumption", "Scenario usd_per_chip_hour"),
        C("deployment_months", "float", "months", "assumption", "Scenario deployment_months"),
    ),
)
TABLES = (TRAINING_FLEET,)


def _np(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def training_frame(plans: pl.DataFrame, s, rental_range: pl.DataFrame) -> pl.DataFrame:
    """Rows of one scenario: per deployment, pre-training and RL of its model and its reported pre-training.

    ``plans``: one row per deployment with model, chip, params_active, pretrain_tokens (reported),
    peak_bf16_flop_per_s, tdp_w, tokens_per_s, serving_mean_chips; ``rental_range``: chip, usd_low, usd_high.
    """
    period_s = s.deployment_months * SECONDS_PER_MONTH
    inference = tb.inference_tokens_per_model(_np(plans, "tokens_per_s"), period_s, 1.0, s.model_discard_frac)
    alpha = tb.rl_cost_per_token_ratio(s.rl_flop_per_param_token, s.rl_efficiency_ratio)
    beta = tb.inference_cost_per_token_ratio(s.decode_efficiency_ratio)
    r = s.equal_cost_exponent_ratio
    balance = "token balance of this deployment's traffic (lecture e.3)"
    n = _np(plans, "params_active")
    phases = {
        "pretrain": (
            tb.pretrain_tokens_from_inference(
                inference, s.cost_share_pretrain_frac, s.cost_share_inference_frac, beta, r
            ),
            ft.PRETRAIN_FLOP_PER_PARAM_TOKEN,
            1.0,
            balance,
        ),
        "rl": (
            tb.rl_tokens_from_inference(inference, s.cost_share_rl_frac, s.cost_share_inference_frac, alpha, beta, r),
            s.rl_flop_per_param_token,
            s.rl_efficiency_ratio,
            balance,
        ),
        "pretrain_reported": (
            _np(plans, "pretrain_tokens"),
            ft.PRETRAIN_FLOP_PER_PARAM_TOKEN,
            1.0,
            "models.pretrain_tokens (reported)",
        ),
    }
    peak = _np(plans, "peak_bf16_flop_per_s")
    hours = {
        name: ft.chip_hours(ft.training_flop(n, tok, c), peak, s.pretrain_mfu_frac, eff)
        for name, (tok, c, eff, _) in phases.items()
    }
    shared = ft.time_shared_fleet(
        _np(plans, "serving_mean_chips"),
        s.serving_peak_to_mean_ratio,
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
            "flop": ft.training_flop(n, tokens, c),
            "efficiency_ratio": np.full(plans.height, float(eff)),
            "chip_hours": h,
            "days_on_training_fleet": ft.days_on_chips(h, s.training_fleet_chips),
            "energy_mwh": ft.energy_mwh(h, _np(plans, "tdp_w"), s.server_power_ratio, s.pue_ratio),
            "cost_usd": ft.cost_usd(h, s.usd_per_chip_hour),
            "cost_low_usd": ft.cost_usd(h, low),
            "cost_high_usd": ft.cost_usd(h, high),
            "inference_tokens": inference,
            **{k: shared[k] for k in SHARED},
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
        pl.lit(s.pretrain_mfu_frac).alias("pretrain_mfu_frac"),
        pl.lit(s.training_fleet_chips).alias("training_fleet_chips"),
        pl.lit(s.usd_per_chip_hour).alias("usd_per_chip_hour"),
        pl.lit(s.deployment_months).alias("deployment_months"),
    )


def run(ctx) -> None:
    plans = ctx.query(
        "select p.scenario, p.deployment, p.model, p.chip, p.tokens_per_s, p.serving_mean_chips, m.params_active, "
        "m.pretrain_tokens, h.peak_bf16_flop_per_s, h.tdp_w from fleet_plan as p join models as m using (model) "
        "join hardware as h using (chip) where p.price_kind = ? order by p.scenario, p.deployment",
        [SCENARIO_KIND],
    )
    rental = newest_rental(ctx.query("select * from rental_prices"), ctx.as_of)
    rental_range = rental.group_by("chip").agg(
        pl.col("usd_per_chip_hour").min().alias("usd_low"), pl.col("usd_per_chip_hour").max().alias("usd_high")
    )
    scenarios = ctx.scenarios_with_calibrated
    frames = [
        training_frame(plans.filter(pl.col("scenario") == name), scenarios[name], rental_range)
        for name in plans["scenario"].unique(maintain_order=True).to_list()
    ]
    ctx.write(TRAINING_FLEET, pl.concat(frames) if frames else TRAINING_FLEET.empty_frame())
