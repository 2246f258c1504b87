"""``fleet_plan``: the serving fleet of each scenario × deployment × rental price kind (lecture a.6–a.7, b, d).

Disaggregated prefill and decode pools (replicas, chips, nodes, racks, their ratio), power, $/hour and
$/day, cost per MTok of input and output, revenue at list prices and the gross margin, tokens per MWh.
Step times are roofline lower bounds, so chips and costs are lower bounds and margins upper bounds.
The arithmetic is :mod:`econ.physics.fleet`; ``econ fleet`` calls :func:`build_plan` on the same inputs.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import fleet_pools
from econ.analyses.fleet_inputs import (
    CASES_SQL,
    PRICES_SQL,
    SCENARIO_KIND,
    bucket_prices,
    cases_for,
    newest_rental,
    price_kinds,
    resolve_prices,
    with_formats,
)
from econ.analyses.fleet_plan_columns import FLEET_PLAN
from econ.analyses.pricing_inputs import PRICES_READ_SQL
from econ.analyses.scenario import Scenario
from econ.analyses.traffic import TrafficMix, traffic_mix
from econ.errors import EconError
from econ.load.ceilings import CHIPS
from econ.physics import fleet
from econ.units import HOURS_PER_DAY, SECONDS_PER_DAY

NAME = "fleet_plan"
INPUTS = (
    "deployments",
    "models",
    "model_derived",
    "hardware",
    "hardware_derived",
    "layouts",
    "rental_prices",
    "inference_prices",
    "model_catalog",
    "scenarios",
    "calibration_parameters",
)
READS = {"inference_prices": PRICES_READ_SQL}
TABLES = (FLEET_PLAN,)

LAYOUT_DEGREES = ("tensor_parallel", "attention_data_parallel", "pipeline_parallel")

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
    "tokens_per_s",
    "peak_flop_per_s",
    "weight_bytes_per_param",
    "max_position_embeddings",
)


def _arrays(cases: pl.DataFrame) -> dict[str, np.ndarray]:
    return {k: cases[k].cast(pl.Float64).fill_null(np.nan).to_numpy() for k in CASE_FLOATS}


def _row_max(x: np.ndarray) -> np.ndarray:
    """Each row's largest finite value (NaN for a row with none: a pool that could not be planned)."""
    finite = np.isfinite(x)
    return np.where(finite.any(axis=1), np.max(np.where(finite, x, -np.inf), axis=1), np.nan)


def plan_core(
    cases: pl.DataFrame,
    s: Scenario,
    t: TrafficMix,
    prices_by_context: dict[str, np.ndarray],
    models: pl.DataFrame,
    layouts: pl.DataFrame,
) -> pl.DataFrame:
    """Pools, hardware, power and revenue of every case (one row per scenario × deployment, before price kinds)."""
    a = _arrays(cases)
    n = cases.height
    inp, out = fleet.split_traffic(a["tokens_per_s"], s.input_output_token_ratio)
    l_bar, n_out, l_dec = t.mean_prompt_tokens, t.output_tokens_per_request, t.decode_context_tokens
    requests = inp / l_bar
    max_chips = int(s.max_replica_chips)
    dec_rows = fleet_pools.candidates(cases, models, layouts, "decode", max_chips)
    pre_rows = fleet_pools.candidates(cases, models, layouts, "prefill", max_chips)
    for pool, rows in (("decode", dec_rows), ("prefill", pre_rows)):
        if not rows.height:
            raise EconError(
                f"no {pool} layout to plan: none of the search's layouts has the stated {pool} replica and degrees",
                f"give --{pool}-chips with the degrees, or leave some out to let the layout search choose",
            )
    dec = fleet_pools.decode_choice(dec_rows, s, t, n)
    pre = fleet_pools.prefill_choice(pre_rows, s, t, n)
    planned = ~np.isnan(dec["batch"]) & (pre["row"] >= 0)

    def layout_of(rows: pl.DataFrame, index: np.ndarray, column: str) -> np.ndarray:
        values = rows[column].to_numpy()
        return np.where(index >= 0, values[np.maximum(index, 0)], None if values.dtype == object else np.nan)

    dec_chips = layout_of(dec_rows, dec["row"], "replica_chips").astype(float)
    pre_chips = layout_of(pre_rows, pre["row"], "replica_chips").astype(float)
    dec_needed = np.where(planned, fleet.decode_replicas_needed(out, dec["tokens_per_s_per_replica"]), np.nan)
    pre_needed = np.where(
        planned,
        fleet.prefill_replicas_needed(
            requests, t.shares_frac[None, :], pre["pass_time_by_context"], pre["prompts_by_context"]
        ),
        np.nan,
    )
    hw_pre = fleet.pool_hardware(pre_needed, pre_chips, a["chips_per_node"], a["chips_per_rack"])
    hw_dec = fleet.pool_hardware(dec_needed, dec_chips, a["chips_per_node"], a["chips_per_rack"])
    power_pre = fleet.facility_power_w(hw_pre["chips"], a["tdp_w"], s.server_power_ratio, s.pue_ratio)
    power_dec = fleet.facility_power_w(hw_dec["chips"], a["tdp_w"], s.server_power_ratio, s.pue_ratio)
    power = power_pre + power_dec
    contexts = t.contexts_tokens[None, :]
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
    totals = fleet.combine_pools(hw_pre, hw_dec, pre_needed, dec_needed, pre_chips, dec_chips)
    uncached = requests * np.sum(t.shares_frac * t.contexts_tokens) * (1.0 - s.prompt_cache_hit_frac)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_prompts = fleet.request_weighted_mean(pre["prompts_by_context"], t.shares_frac[None, :])
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
            "critical_batch_ratio": dec["critical_batch_ratio"],
            "balance_batch_seqs": dec["balance_batch"],
            "batch_target_seqs": dec["target"],
            "decode_replica_chips": dec_chips,
            **{f"decode_{k}": layout_of(dec_rows, dec["row"], k).astype(float) for k in LAYOUT_DEGREES},
            "memory_max_batch_seqs": dec["memory_max_batch"],
            "decode_batch_seqs": np.where(planned, dec["batch"], np.nan),
            "decode_step_time_s": np.where(planned, dec["step_time_s"], np.nan),
            "decode_compute_time_s": np.where(planned, dec["compute_time_s"], np.nan),
            "decode_memory_time_s": np.where(planned, dec["memory_time_s"], np.nan),
            "decode_comm_time_s": np.where(planned, dec["comm_time_s"], np.nan),
            "decode_comm_exposed_time_s": np.where(planned, dec["comm_exposed_time_s"], np.nan),
            "tokens_per_s_per_user": np.where(planned, dec["tokens_per_s_per_user"], np.nan),
            "decode_tokens_per_s_per_replica": np.where(planned, dec["tokens_per_s_per_replica"], np.nan),
            "decode_tokens_per_s_per_chip": np.where(planned, dec["tokens_per_s_per_replica"] / dec_chips, np.nan),
            "decode_replicas_needed": dec_needed,
            **{f"decode_{k}": v for k, v in hw_dec.items()},
            "prefill_replica_chips": pre_chips,
            **{f"prefill_{k}": layout_of(pre_rows, pre["row"], k).astype(float) for k in LAYOUT_DEGREES},
            "prefill_prompts_per_pass_mean": np.where(planned, mean_prompts, np.nan),
            "prefill_ttft_max_s": np.where(planned, _row_max(pre["pass_time_by_context"]), np.nan),
            "prefill_tokens_per_s_per_replica": np.where(planned, uncached / pre_needed, np.nan),
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
    )
    prefill_status = np.where(
        pre["row"] < 0,
        "not planned: no prefill layout fits",
        np.where(pre["ttft_met"], "TTFT target met", "TTFT target unreachable: passes within 10% of the fastest"),
    )
    return frame.with_columns(
        pl.Series("decode_layout", layout_of(dec_rows, dec["row"], "layout"), dtype=pl.String),
        pl.Series("prefill_layout", layout_of(pre_rows, pre["row"], "layout"), dtype=pl.String),
        pl.Series("batch_status", dec["status"].astype(str), dtype=pl.String),
        pl.Series("prefill_status", prefill_status, dtype=pl.String),
        *(pl.Series(k, np.asarray(v, dtype=float), dtype=pl.Float64, nan_to_null=True) for k, v in columns.items()),
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
    models: pl.DataFrame,
    layouts: pl.DataFrame,
) -> pl.DataFrame:
    """``fleet_plan`` rows of one scenario from its deployment cases (``tokens_per_s`` set per case)."""
    t = traffic_mix(s)
    cases = with_formats(cases, s, hardware_derived)
    tiers = resolve_prices(cases, prices_current)
    core = plan_core(cases, s, t, bucket_prices(cases, tiers, t.contexts_tokens), models, layouts)
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
    prices = ctx.query(PRICES_SQL)
    hardware_derived = ctx.query("select * from hardware_derived")
    models = ctx.query("select * from model_derived")
    layouts = ctx.query("select * from layouts order by layout")
    out = []
    scenarios = ctx.scenarios_with_calibrated
    for name in sorted(scenarios, key=lambda n: (n != "base", n)):
        s = scenarios[name]
        cases = cases_for(all_cases, name)
        if cases.height:
            cases = cases.with_columns((pl.col("traffic_share_frac") * s.tokens_served_per_s).alias("tokens_per_s"))
            plan = build_plan(cases, s, rental, prices, hardware_derived, models, layouts)
            _check_ceiling(plan, name)
            out.append(plan.with_columns(pl.lit(s.efficiency_basis).alias("efficiency_basis")))
    return pl.concat(out, how="diagonal_relaxed") if out else FLEET_PLAN.empty_frame()


def _check_ceiling(plan: pl.DataFrame, scenario: str) -> None:
    """A deployment whose plan needs more chips than :data:`~econ.load.ceilings.CHIPS` is an error naming it: the
    inputs are each within their own ceilings, but their product (the scenario's traffic x the deployment's share /
    one replica's throughput) is not a fleet anyone can build (and its power and cost would follow it)."""
    over = plan.filter(pl.col("chips") > CHIPS.value).sort("chips", descending=True)
    if over.height:
        row = over.row(0, named=True)
        raise EconError(
            f"deployment {row['deployment']} of scenario {scenario} needs {row['chips']:,.0f} chips, above the ceiling "
            f"of {CHIPS.value:,.0f} ({CHIPS.why})",
            "lower the scenario's tokens_served_per_s (data/scenarios.csv) or the deployment's traffic_share_frac "
            "(data/deployments.csv)",
        )


def run(ctx) -> None:
    ctx.write(FLEET_PLAN, plans(ctx))
