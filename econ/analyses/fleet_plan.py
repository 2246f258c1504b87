"""``fleet_plan``: the serving fleet of each scenario × deployment × rental price kind (lecture a.6–a.7, b, d).

Disaggregated prefill and decode pools (replicas, chips, nodes, racks, their ratio), power, $/hour and
$/day, cost per MTok of input and output, revenue at list prices and the gross margin, tokens per MWh.
Step times are roofline lower bounds, so chips and costs are lower bounds and margins upper bounds.
The arithmetic is :mod:`econ.physics.fleet`; ``econ fleet`` calls :func:`build_plan` on the same inputs.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fleet_inputs import (
    CASES_SQL,
    SCENARIO_KIND,
    bucket_prices,
    cases_for,
    newest_rental,
    price_kinds,
    resolve_prices,
    with_formats,
)
from econ.analyses.fleet_plan_columns import FLEET_PLAN
from econ.analyses.scenario import Scenario
from econ.analyses.traffic import TrafficMix, traffic_mix
from econ.physics import fleet, memory, roofline
from econ.physics.model import kv_window_bytes
from econ.units import HOURS_PER_DAY, SECONDS_PER_DAY

NAME = "fleet_plan"
INPUTS = (
    "deployments",
    "models",
    "model_derived",
    "hardware",
    "hardware_derived",
    "rental_prices",
    "price_current",
    "scenarios",
)
TABLES = (FLEET_PLAN,)

CASE_FLOATS = (
    "params_total",
    "params_active",
    "kv_bytes_per_token",
    "kv_window_bytes_per_sequence",
    "sliding_window_tokens",
    "hbm_capacity_bytes",
    "hbm_bandwidth_bytes_per_s",
    "scale_up_domain_chips",
    "chips_per_node",
    "chips_per_rack",
    "tdp_w",
    "replica_chips",
    "tokens_per_s",
    "peak_flop_per_s",
    "weight_bytes_per_param",
    "max_position_embeddings",
)


def _arrays(cases: pl.DataFrame) -> dict[str, np.ndarray]:
    return {k: cases[k].cast(pl.Float64).fill_null(np.nan).to_numpy() for k in CASE_FLOATS}


def plan_core(
    cases: pl.DataFrame, s: Scenario, t: TrafficMix, prices_by_context: dict[str, np.ndarray]
) -> pl.DataFrame:
    """Pools, hardware, power and revenue of every case (one row per scenario × deployment, before price kinds)."""
    a = _arrays(cases)
    n = cases.height
    speed_policy = (cases["batch_policy"] == "speed_target").to_numpy()
    inp, out = fleet.split_traffic(a["tokens_per_s"], s.input_output_token_ratio)
    l_bar, n_out, l_dec = t.mean_prompt_tokens, t.output_tokens_per_request, t.decode_context_tokens
    requests = inp / l_bar
    b_w, b_kv, window_ctx = a["weight_bytes_per_param"], a["kv_bytes_per_token"], a["sliding_window_tokens"]
    window = kv_window_bytes(l_dec, a["kv_window_bytes_per_sequence"], window_ctx)
    ratio = roofline.critical_batch_ratio(a["peak_flop_per_s"], a["hbm_bandwidth_bytes_per_s"], b_w)
    b0 = roofline.balance_batch(ratio, a["params_total"], a["params_active"])
    balance_target = np.maximum(np.round(fleet.balance_multiple_batch(b0, s.batch_multiple_over_balance_ratio)), 1.0)
    domain = np.nan_to_num(a["scale_up_domain_chips"], nan=1.0)
    default_g, default_p = fleet.replica_for_batch(
        a["params_total"], b_w, balance_target, l_dec, b_kv, a["hbm_capacity_bytes"], domain, window
    )
    given = ~np.isnan(a["replica_chips"])
    chips = np.where(given, a["replica_chips"], default_g)
    stages = np.where(given, np.maximum(np.ceil(chips / domain), 1.0), default_p)
    fits = memory.max_batch(chips, a["hbm_capacity_bytes"], a["params_total"], b_w, l_dec, b_kv, window)
    speed_batch = fleet.max_batch_for_speed(
        s.user_speed_target_tokens_per_s,
        chips,
        a["peak_flop_per_s"],
        a["hbm_bandwidth_bytes_per_s"],
        a["params_active"],
        a["params_total"],
        b_w,
        l_dec,
        b_kv,
        mfu=s.decode_mfu_frac,
        mbu=s.decode_mbu_frac,
        pipeline_stages=stages,
        kv_extra_bytes_per_sequence=window,
    )
    unreachable = speed_policy & (speed_batch < 1)
    target = np.where(speed_policy, np.where(unreachable, 1.0, speed_batch), balance_target)
    batch = np.where(fits >= 1, np.minimum(target, fits), 0.0)
    status = np.select(
        [np.isnan(b_kv), fits < 1, unreachable, fits < target, speed_policy],
        [
            "no KV bytes for this architecture: not planned",
            "the weights and one sequence at the decode context do not fit in the replica: not planned",
            "speed target unreachable (slower latency floor): served at batch 1",
            "capped by memory at the decode context",
            "speed target",
        ],
        default="balance multiple",
    )
    batch = np.where(np.isnan(b_kv), 0.0, batch)

    dec = fleet.decode_pool(
        output_tokens_per_s=out,
        batch=batch,
        context_tokens=l_dec,
        params_total=a["params_total"],
        params_active=a["params_active"],
        weight_bytes_per_param=b_w,
        kv_bytes_per_token=b_kv,
        chips=chips,
        peak_flop_per_s=a["peak_flop_per_s"],
        hbm_bandwidth_bytes_per_s=a["hbm_bandwidth_bytes_per_s"],
        mfu=s.decode_mfu_frac,
        mbu=s.decode_mbu_frac,
        pipeline_stages=stages,
        kv_extra_bytes_per_sequence=window,
    )

    def col(x):
        return x[:, None]

    contexts = t.contexts_tokens[None, :]
    window_k = kv_window_bytes(contexts, col(a["kv_window_bytes_per_sequence"]), col(window_ctx))
    fit_k = memory.max_batch(
        col(chips), col(a["hbm_capacity_bytes"]), col(a["params_total"]), col(b_w), contexts, col(b_kv), window_k
    )
    pre = fleet.prefill_pool(
        requests_per_s=requests,
        share_frac_by_context=t.shares_frac[None, :],
        prompt_tokens_by_context=contexts,
        cache_hit_frac=s.prompt_cache_hit_frac,
        tokens_per_pass_target=col(balance_target),
        max_prompts_by_context=fit_k,
        params_total=col(a["params_total"]),
        params_active=col(a["params_active"]),
        weight_bytes_per_param=col(b_w),
        kv_bytes_per_token=col(b_kv),
        chips=col(chips),
        peak_flop_per_s=col(a["peak_flop_per_s"]),
        hbm_bandwidth_bytes_per_s=col(a["hbm_bandwidth_bytes_per_s"]),
        mfu=s.prefill_mfu_frac,
        mbu=s.prefill_mbu_frac,
        pipeline_stages=col(stages),
        kv_extra_by_context=window_k,
    )
    planned = batch >= 1
    pre_needed = np.where(planned, pre["replicas_needed"], np.nan)
    dec_needed = np.where(planned, dec["replicas_needed"], np.nan)
    hw_pre = fleet.pool_hardware(pre_needed, chips, a["chips_per_node"], a["chips_per_rack"])
    hw_dec = fleet.pool_hardware(dec_needed, chips, a["chips_per_node"], a["chips_per_rack"])
    power_pre = fleet.facility_power_w(hw_pre["chips"], a["tdp_w"], s.server_power_ratio, s.pue_ratio)
    power_dec = fleet.facility_power_w(hw_dec["chips"], a["tdp_w"], s.server_power_ratio, s.pue_ratio)
    power = power_pre + power_dec
    revenue = fleet.revenue_usd_per_s(
        requests,
        t.shares_frac[None, :],
        contexts,
        s.prompt_cache_hit_frac,
        n_out,
        prices_by_context["input_usd_per_mtok"],
        prices_by_context["cache_read_usd_per_mtok"],
        prices_by_context["output_usd_per_mtok"],
    )
    totals = fleet.combine_pools(hw_pre, hw_dec, pre_needed, dec_needed, chips)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_prompts = fleet.request_weighted_mean(pre["prompts_per_pass"], t.shares_frac[None, :])
        columns = {
            "tokens_per_s": a["tokens_per_s"],
            "input_tokens_per_s": inp,
            "output_tokens_per_s": out,
            "requests_per_s": requests,
            "mean_prompt_tokens": np.full(n, l_bar),
            "output_tokens_per_request": np.full(n, n_out),
            "decode_context_tokens": np.full(n, l_dec),
            "prompt_cache_hit_frac": np.full(n, s.prompt_cache_hit_frac),
            "beyond_native_context_frac": fleet.share_beyond_context(
                t.shares_frac[None, :], contexts, n_out, a["max_position_embeddings"]
            ),
            "replica_chips": chips,
            "pipeline_stages": stages,
            "critical_batch_ratio": ratio,
            "balance_batch_seqs": b0,
            "batch_target_seqs": np.where(np.isnan(b_kv), np.nan, target),
            "memory_max_batch_seqs": fits,
            "decode_batch_seqs": np.where(planned, batch, np.nan),
            "decode_step_time_s": dec["step_time_s"],
            "decode_compute_time_s": np.where(planned, dec["compute_time_s"], np.nan),
            "decode_memory_time_s": np.where(planned, dec["memory_time_s"], np.nan),
            "tokens_per_s_per_user": dec["tokens_per_s_per_user"],
            "decode_tokens_per_s_per_replica": dec["tokens_per_s_per_replica"],
            "decode_tokens_per_s_per_chip": dec["tokens_per_s_per_chip"],
            "decode_replicas_needed": dec_needed,
            **{f"decode_{k}": v for k, v in hw_dec.items()},
            "prefill_prompts_per_pass_mean": np.where(planned, mean_prompts, np.nan),
            "prefill_tokens_per_s_per_replica": np.where(planned, pre["tokens_per_s_per_replica"], np.nan),
            "prefill_replicas_needed": pre_needed,
            **{f"prefill_{k}": v for k, v in hw_pre.items()},
            **totals,
            "power_per_chip_w": fleet.facility_power_w(1.0, a["tdp_w"], s.server_power_ratio, s.pue_ratio),
            "prefill_power_w": power_pre,
            "decode_power_w": power_dec,
            "facility_power_w": power,
            "energy_mwh_per_day": fleet.energy_mwh(power, HOURS_PER_DAY),
            "tokens_per_mwh": fleet.tokens_per_mwh(a["tokens_per_s"], power),
            "list_input_usd_per_mtok": prices_by_context["input_usd_per_mtok"][:, 0],
            "list_output_usd_per_mtok": prices_by_context["output_usd_per_mtok"][:, 0],
            "revenue_usd_per_day": revenue * SECONDS_PER_DAY,
        }
    frame = cases.select(
        "scenario",
        "deployment",
        "deployment_scenario",
        "model",
        "chip",
        "number_format",
        "batch_policy",
        "traffic_share_frac",
        "replica_basis",
    )
    return frame.with_columns(
        pl.Series("batch_status", status, dtype=pl.String),
        *(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in columns.items()),
    )


def with_costs(core: pl.DataFrame, kinds: pl.DataFrame) -> pl.DataFrame:
    """One row per price kind of the chip: $/hour, $/day, $/MTok input and output, gross margin at list prices."""
    frame = core.join(kinds, on="chip", how="left")
    p = frame["usd_per_chip_hour"].cast(pl.Float64).fill_null(np.nan).to_numpy()

    def arr(name):
        return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()

    pre, dec = fleet.usd_per_hour(arr("prefill_chips"), p), fleet.usd_per_hour(arr("decode_chips"), p)
    total = pre + dec
    revenue = arr("revenue_usd_per_day")
    pre_day, dec_day = fleet.usd_per_day(arr("prefill_chips"), p), fleet.usd_per_day(arr("decode_chips"), p)
    cost_day = pre_day + dec_day
    values = {
        "prefill_usd_per_hour": pre,
        "decode_usd_per_hour": dec,
        "usd_per_hour": total,
        "usd_per_day": cost_day,
        "prefill_usd_per_day": pre_day,
        "decode_usd_per_day": dec_day,
        "input_usd_per_mtok": fleet.usd_per_mtok(pre, arr("input_tokens_per_s")),
        "output_usd_per_mtok": fleet.usd_per_mtok(dec, arr("output_tokens_per_s")),
        "blended_usd_per_mtok": fleet.usd_per_mtok(total, arr("tokens_per_s")),
        "gross_margin_frac": fleet.gross_margin_frac(revenue, cost_day),
    }
    return frame.with_columns(*(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in values.items()))


def build_plan(
    cases: pl.DataFrame,
    s: Scenario,
    rental_newest: pl.DataFrame,
    prices_current: pl.DataFrame,
    hardware_derived: pl.DataFrame,
) -> pl.DataFrame:
    """``fleet_plan`` rows of one scenario from its deployment cases (``tokens_per_s`` set per case)."""
    t = traffic_mix(s)
    cases = with_formats(cases, s, hardware_derived).with_columns(
        pl.when(pl.col("replica_chips").is_null())
        .then(
            pl.lit(
                "default: weights + KV of the balance-multiple batch at the decode context, within one scale-up domain"
            )
        )
        .otherwise(pl.lit("deployments.replica_chips"))
        .alias("replica_basis")
    )
    tiers = resolve_prices(cases, prices_current)
    core = plan_core(cases, s, t, bucket_prices(cases, tiers, t.contexts_tokens))
    mapping = (
        tiers.group_by("scenario", "deployment", maintain_order=True)
        .first()
        .select("scenario", "deployment", "price_source", "price_provider", "price_model", "price_match")
    )
    core = core.join(mapping, on=["scenario", "deployment"], how="left")
    kinds = price_kinds(cases, rental_newest, s)
    quoted = set(rental_newest["chip"].to_list())
    plan = with_costs(core, kinds)
    traffic_note = "; ".join(t.notes)
    plan = plan.join(cases.select("scenario", "deployment", "format_note"), on=["scenario", "deployment"], how="left")
    notes = pl.concat_str(
        [
            pl.col("format_note"),
            pl.when(pl.col("revenue_usd_per_day").is_null()).then(pl.lit("no list price found: no revenue or margin")),
            pl.when(~pl.col("chip").is_in(list(quoted))).then(
                pl.lit("no rental quote for this chip: only the scenario price")
            ),
            pl.when(pl.col("racks").is_null() & pl.col("chips").is_not_null()).then(
                pl.lit("rack size not in hardware: no racks")
            ),
            pl.when(pl.col("beyond_native_context_frac") > 0).then(
                pl.format(
                    "{}% of requests (prompt + output) exceed the model's native context; planned as if served",
                    (pl.col("beyond_native_context_frac") * 100).round(1),
                )
            ),
            pl.lit(traffic_note) if traffic_note else pl.lit(None, dtype=pl.String),
        ],
        separator="; ",
        ignore_nulls=True,
    )
    return (
        plan.with_columns(notes.alias("notes"))
        .drop("format_note")
        .sort("scenario", "deployment", pl.col("price_kind") == SCENARIO_KIND, "price_kind")
    )


def plans(ctx) -> pl.DataFrame:
    """Every scenario's plan (a scenario without deployments of its own uses base's)."""
    all_cases = ctx.query(CASES_SQL.format(source="deployments"))
    rental = newest_rental(ctx.query("select * from rental_prices"), ctx.as_of)
    prices = ctx.query("select * from price_current")
    hardware_derived = ctx.query("select * from hardware_derived")
    out = []
    for name in sorted(ctx.scenarios, key=lambda n: (n != "base", n)):
        s = ctx.scenarios[name]
        cases = cases_for(all_cases, name)
        if cases.height:
            cases = cases.with_columns((pl.col("traffic_share_frac") * s.tokens_served_per_s).alias("tokens_per_s"))
            out.append(build_plan(cases, s, rental, prices, hardware_derived))
    return pl.concat(out, how="diagonal_relaxed") if out else FLEET_PLAN.empty_frame()


def run(ctx) -> None:
    ctx.write(FLEET_PLAN, plans(ctx))
