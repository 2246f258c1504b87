"""Fleet economics (lecture a.6–a.7, b, d, e): the chips, racks, megawatts and dollars that serve and train a scenario.

Reads ``deployments`` (how each scenario's traffic is served), ``models``, ``hardware``,
``rental_prices``, ``price_current``, ``scenarios`` and, when the training analysis wrote it,
``token_balance``; writes

- ``fleet_plan``: per scenario × deployment × rental price kind, the disaggregated prefill and
  decode pools (replicas, chips, nodes, racks, their ratio), power, $/hour and $/day, cost per
  MTok of input and output, revenue at list prices and the gross margin, tokens per MWh;
- ``fleet_pareto``: per model × chip × format, throughput per chip against per-user speed over
  1,026 decode batches, with $/MTok along it and the Pareto-optimal points across formats;
- ``training_fleet``: per scenario × deployment, chip-hours, days, energy and cost of
  pre-training and RL (the token balance) and of the reported pre-training, and how a fleet
  splits between serving and training with and without time-sharing.

A scenario without deployments of its own uses base's. ``token_balance`` is not among
``INPUTS``: it is a function of ``scenarios`` and the code, which key the cache already.
"""

from __future__ import annotations

import difflib
import math
from datetime import date
from pathlib import Path

import polars as pl

from econ.analyses import serving
from econ.analyses.fleet_plan import (
    SCENARIO_KIND,
    Traffic,
    bucket_prices,
    newest_rental,
    plan_core,
    price_kinds,
    resolve_prices,
    traffic_from_scenario,
    with_costs,
    with_formats,
)
from econ.analyses.fleet_tables import (
    PARETO_BATCH,
    PARETO_COLUMNS,
    TRAINING_COLUMNS,
    pareto_frame,
    token_ratios,
    training_frame,
)
from econ.analyses.scenario import load_scenarios
from econ.errors import EconError
from econ.load.ceilings import CHIPS
from econ.physics.catalog import load_chip

NAME = "fleet"
INPUTS = ("deployments", "models", "hardware", "rental_prices", "price_current", "scenarios")

CASES_SQL = """
select d.*, m.params_total, m.params_active, m.kv_bytes_per_token, m.kv_window_bytes_per_sequence,
       m.sliding_window_tokens, m.hf_repo, m.pretrain_tokens, m.max_position_embeddings, h.peak_bf16_flop_per_s,
       h.peak_fp8_flop_per_s,
       h.peak_fp4_flop_per_s, h.peak_int8_op_per_s, h.hbm_capacity_bytes, h.hbm_bandwidth_bytes_per_s,
       h.scale_up_domain_chips, h.chips_per_node, h.chips_per_rack, h.tdp_w
from {source} as d join models as m using (model) join hardware as h using (chip)
order by d.scenario, d.deployment
"""


def _cases_for(all_cases: pl.DataFrame, scenario: str) -> pl.DataFrame:
    """The scenario's own deployments, or base's relabelled (``deployment_scenario`` says whose)."""
    own = all_cases.filter(pl.col("scenario") == scenario)
    rows = own if own.height else all_cases.filter(pl.col("scenario") == "base")
    return rows.with_columns(pl.col("scenario").alias("deployment_scenario"), pl.lit(scenario).alias("scenario"))


def build_plan(
    cases: pl.DataFrame, t: Traffic, rental_newest: pl.DataFrame, prices_current: pl.DataFrame
) -> pl.DataFrame:
    """``fleet_plan`` rows of one scenario from its deployment cases (``tokens_per_s`` set per case)."""
    cases = with_formats(cases, t).with_columns(
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
    core = plan_core(cases, t, bucket_prices(cases, tiers, t.contexts))
    mapping = (
        tiers.group_by("scenario", "deployment", maintain_order=True)
        .first()
        .select("scenario", "deployment", "price_source", "price_provider", "price_model", "price_match")
    )
    core = core.join(mapping, on=["scenario", "deployment"], how="left")
    kinds = price_kinds(cases, rental_newest, t)
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


def run(ctx) -> None:
    scenarios = load_scenarios(ctx.con)
    all_cases = ctx.query(CASES_SQL.format(source="deployments"))
    rental = newest_rental(ctx.query("select * from rental_prices"), ctx.as_of)
    prices = ctx.query("select * from price_current")
    has_balance = ctx.query("select count(*) as n from duckdb_tables() where table_name = 'token_balance'")["n"][0] > 0
    balance = ctx.query("select scenario, quantity, central_value from token_balance") if has_balance else None
    rental_range = rental.group_by("chip").agg(
        pl.col("usd_per_chip_hour").min().alias("usd_low"), pl.col("usd_per_chip_hour").max().alias("usd_high")
    )
    plans, trainings = [], []
    for name in sorted(scenarios, key=lambda s: (s != "base", s)):
        s = scenarios[name]
        cases = _cases_for(all_cases, name)
        if not cases.height:
            continue
        t = traffic_from_scenario(s)
        cases = cases.with_columns((pl.col("traffic_share_frac") * t.tokens_served_per_s).alias("tokens_per_s"))
        plan = build_plan(cases, t, rental, prices)
        plans.append(plan)
        per_deployment = (
            plan.filter(pl.col("price_kind") == SCENARIO_KIND)
            .select("scenario", "deployment", "model", "chip", "tokens_per_s", "serving_mean_chips")
            .join(
                cases.select("deployment", "params_active", "pretrain_tokens", "peak_bf16_flop_per_s", "tdp_w"),
                on="deployment",
            )
        )
        trainings.append(training_frame(per_deployment, s, token_ratios(s, balance), rental_range))
    base = traffic_from_scenario(scenarios["base"])
    if plans:
        ctx.write(
            "fleet_plan",
            pl.concat(plans, how="diagonal_relaxed"),
            "Serving fleet per scenario x deployment x rental price kind: disaggregated prefill and decode pools "
            "(replicas, chips, nodes, racks) from the roofline lower bound, power (TDP x server factor x PUE), $/hour "
            "and $/day, cost per MTok of input and output, revenue at list prices and gross margin, tokens per MWh "
            "(lecture a.6-a.7, b, d; scaling book applied-inference). Step times are roofline lower bounds, so "
            "chips and costs are lower bounds and margins upper bounds. Grain: one row per scenario x deployment x "
            "price kind.",
            PLAN_COLUMNS,
        )
        ctx.write(
            "training_fleet",
            pl.concat(trainings, how="diagonal_relaxed"),
            "Training the deployed models on their chips: chip-hours, days on the scenario's training fleet, energy "
            "and cost of pre-training and RL (token balance, lecture e.2-e.4) and of the reported pre-training; how a "
            "fleet splits between serving and training with and without time-sharing. Grain: one row per scenario x "
            "deployment x phase.",
            TRAINING_COLUMNS,
        )
    models = serving.with_kv_format(ctx.query("select * from models order by model"), base.kv_format)
    cases = serving.cases(models, ctx.query("select * from hardware order by chip"))
    ctx.write(
        "fleet_pareto",
        pareto_frame(cases, base),
        f"Cost-speed frontier: throughput per chip against per-user speed over {len(PARETO_BATCH):,} decode batches "
        f"(1-65,536; the batches that fit in the replica's HBM are kept) for every model x chip x number format, "
        f"on the replica the fleet plan would use, at the base scenario's mean decode context "
        f"({base.decode_context_tokens:,.0f} tokens) and ${base.usd_per_chip_hour:g}/chip-hour, mfu {base.mfu:g}, "
        f"mbu {base.mbu:g}, KV at {base.kv_format} (lecture a.3-a.4). Grain: one row per model x chip x format x "
        "batch.",
        PARETO_COLUMNS,
    )


# ---------------------------------------------------------------------------- econ fleet


def _known(con, table: str, column: str, value: str) -> None:
    known = [r[0] for r in con.sql(f"select {column} from {table} order by 1").fetchall()]
    if value not in known:
        close = difflib.get_close_matches(value, known, n=1, cutoff=0.4)
        hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(known)}"
        raise EconError(f"unknown {column} {value!r} (not in {table})", hint)


def plan_for(
    db_path: Path,
    *,
    model: str,
    chip: str,
    tokens_per_s: float,
    scenario: str = "base",
    batch_policy: str = "balance_multiple",
    number_format: str | None = None,
    replica_chips: int | None = None,
    as_of: date | None = None,
) -> tuple[list[str], list[tuple]]:
    """The plan of one model on one chip serving ``tokens_per_s`` under a scenario, as (quantity, value, unit) rows.

    Reads the built database read-only; the list price is matched by ``models.hf_repo``.
    """
    from econ.db import connect_read_only

    if not (math.isfinite(tokens_per_s) and tokens_per_s > 0):
        raise EconError(
            f"--tokens-per-s must be a positive number (got {tokens_per_s:g})", "give the traffic in tokens per second"
        )
    if replica_chips is not None and not 1 <= replica_chips <= CHIPS.value:
        raise EconError(
            f"--replica-chips must be between 1 and {CHIPS.value:g} (got {replica_chips:g})",
            f"give the chips per replica, or leave it out to size the replica for the batch ({CHIPS.why})",
        )
    with connect_read_only(Path(db_path), current=True) as con:
        if as_of is not None:
            con.execute(f"set variable as_of = date '{as_of.isoformat()}'")
        _known(con, "models", "model", model)
        _known(con, "hardware", "chip", chip)
        scenarios = load_scenarios(con)
        if scenario not in scenarios:
            raise EconError(f"no scenario {scenario!r}", f"known scenarios: {', '.join(sorted(scenarios))}")
        t = traffic_from_scenario(scenarios[scenario])
        formats = load_chip(chip, con).formats()
        if (number_format or t.weight_format) not in formats:
            raise EconError(
                f"{chip} has no {number_format or t.weight_format} peak"
                + ("" if number_format else f" (scenario {scenario}'s weight_format)"),
                f"pass --number-format {' or '.join(formats)}",
            )
        one = (
            "select ? as scenario, 'cli' as deployment, ? as model, ? as chip, ?::varchar as number_format, "
            "?::bigint as replica_chips, ? as batch_policy, null::double as traffic_share_frac, null::varchar as "
            "price_source, "
            "null::varchar as price_provider, null::varchar as price_model"
        )
        cases = con.sql(
            CASES_SQL.format(source=f"({one})"),
            params=[scenario, model, chip, number_format, replica_chips, batch_policy],
        ).pl()
        cases = cases.with_columns(
            pl.lit(float(tokens_per_s)).alias("tokens_per_s"), pl.lit(scenario).alias("deployment_scenario")
        )
        as_of_used = as_of or con.sql("select coalesce(getvariable('as_of')::date, current_date)").fetchall()[0][0]
        rental = newest_rental(con.sql("select * from rental_prices").pl(), as_of_used)
        plan = build_plan(cases, t, rental, con.sql("select * from price_current").pl())
    return ["quantity", "value", "unit"], plan_rows(plan)


PLAN_SUMMARY = (  # (column, label, unit, scale)
    ("model", "model", "", None),
    ("chip", "chip", "", None),
    ("number_format", "number format", "", None),
    ("scenario", "scenario", "", None),
    ("batch_policy", "batch policy", "", None),
    ("batch_status", "batch", "", None),
    ("tokens_per_s", "traffic", "tokens/s", 1),
    ("input_tokens_per_s", "input", "tokens/s", 1),
    ("output_tokens_per_s", "output", "tokens/s", 1),
    ("requests_per_s", "requests", "requests/s", 1),
    ("mean_prompt_tokens", "mean prompt", "tokens", 1),
    ("output_tokens_per_request", "output per request", "tokens", 1),
    ("decode_context_tokens", "decode context", "tokens", 1),
    ("replica_chips", "chips per replica", "chips", 1),
    ("pipeline_stages", "pipeline stages", "", 1),
    ("balance_batch_seqs", "balance batch B*0", "sequences", 1),
    ("decode_batch_seqs", "decode batch", "sequences", 1),
    ("decode_step_time_s", "decode step (lower bound)", "ms", 1e3),
    ("tokens_per_s_per_user", "speed per user", "tokens/s", 1),
    ("decode_tokens_per_s_per_replica", "decode throughput per replica", "tokens/s", 1),
    ("prefill_tokens_per_s_per_replica", "prefill throughput per replica (uncached)", "tokens/s", 1),
    ("prefill_replicas", "prefill replicas", "replicas", 1),
    ("decode_replicas", "decode replicas", "replicas", 1),
    ("prefill_decode_replica_ratio", "prefill : decode replicas", "ratio", 1),
    ("chips", "chips", "chips", 1),
    ("nodes", "nodes", "nodes", 1),
    ("racks", "racks", "racks", 1),
    ("facility_power_w", "facility power", "MW", 1e-6),
    ("energy_mwh_per_day", "energy", "MWh/day", 1),
    ("tokens_per_mwh", "tokens per MWh", "tokens/MWh", 1),
    ("price_provider", "sold by", "", None),
    ("price_model", "sold as", "", None),
    ("list_input_usd_per_mtok", "list input price", "USD/MTok", 1),
    ("list_output_usd_per_mtok", "list output price", "USD/MTok", 1),
    ("revenue_usd_per_day", "revenue at list prices", "USD/day", 1),
)
PLAN_PER_KIND = (
    ("usd_per_chip_hour", "price", "USD/chip-hour"),
    ("usd_per_day", "cost", "USD/day"),
    ("input_usd_per_mtok", "input cost", "USD/MTok"),
    ("output_usd_per_mtok", "output cost", "USD/MTok"),
    ("gross_margin_frac", "gross margin", "frac"),
)


def plan_rows(plan: pl.DataFrame) -> list[tuple]:
    """A plan (the rows of one deployment, one per price kind) as readable (quantity, value, unit) rows."""
    first = plan.row(0, named=True)
    rows = []
    for column, label, unit, scale in PLAN_SUMMARY:
        value = first.get(column)
        rows.append((label, value * scale if scale is not None and value is not None else value, unit))
    for kind in plan.iter_rows(named=True):
        for column, label, unit in PLAN_PER_KIND:
            rows.append((f"{label} ({kind['price_kind']})", kind[column], unit))
        rows.append((f"price basis ({kind['price_kind']})", kind["price_basis"], ""))
    rows.append(("notes", first.get("notes") or "", ""))
    return rows


PLAN_COLUMNS = {
    "scenario": "Scenario",
    "deployment": "Deployment (deployments.deployment)",
    "deployment_scenario": "Scenario whose deployments row this is (base where the scenario lists none of its own)",
    "model": "Model served",
    "chip": "Accelerator",
    "number_format": "Format of the math and the weights",
    "batch_policy": "balance_multiple or speed_target",
    "traffic_share_frac": "Share of the scenario's tokens_served_per_s",
    "replica_basis": "Where the replica size comes from",
    "batch_status": "How the decode batch was set (policy, or capped by memory, or not planned and why)",
    "tokens_per_s": "Traffic served, input + output [tokens/s]",
    "input_tokens_per_s": "T*rho/(1+rho) [tokens/s]",
    "output_tokens_per_s": "T/(1+rho) [tokens/s]",
    "requests_per_s": "Input tokens/s / mean prompt [requests/s]",
    "mean_prompt_tokens": "Mean prompt of the scenario's context mix [tokens]",
    "output_tokens_per_request": "Mean prompt / input_output_token_ratio [tokens]",
    "decode_context_tokens": "Mean context while decoding: mean prompt + output/2 [tokens]",
    "prompt_cache_hit_frac": "Share of prompt tokens read from the prompt cache, not prefilled [frac]",
    "beyond_native_context_frac": "Share of requests whose prompt + output exceed models.max_position_embeddings "
    "(still planned) [frac]",
    "replica_chips": "Chips per replica G, prefill and decode alike [chips]",
    "pipeline_stages": "Pipeline stages P",
    "critical_batch_ratio": "R = (F/2)*b_w/W of the chip and format (lecture b.1)",
    "balance_batch_seqs": "B*0 = R*N_tot/N_act [sequences]",
    "batch_target_seqs": "The policy's batch: batch_multiple_over_balance x B*0, or the largest batch meeting the "
    "speed target [sequences]",
    "memory_max_batch_seqs": "Largest batch whose weights + KV fit in the replica at the decode context [sequences]",
    "decode_batch_seqs": "Decode batch used: the target capped by memory [sequences]",
    "decode_step_time_s": "Decode step, lower bound max(compute, memory) [s]",
    "decode_compute_time_s": "2*B*N_act/(G*F*mfu) [s]",
    "decode_memory_time_s": "(P*N_tot*b_w + B*(L*b_kv + window))/(G*W*mbu) [s]",
    "tokens_per_s_per_user": "1/decode step [tokens/s]",
    "decode_tokens_per_s_per_replica": "B/step (lecture a.7) [tokens/s]",
    "decode_replicas_needed": "Output tokens/s / decode tokens/s per replica (fractional) [replicas]",
    "decode_replicas": "Whole decode replicas [replicas]",
    "decode_chips": "Decode replicas x G [chips]",
    "decode_nodes": "ceil(decode chips / chips_per_node) [nodes]",
    "decode_racks": "ceil(decode chips / chips_per_rack) [racks]",
    "prefill_prompts_per_pass_mean": "Prompts per prefill pass, request-weighted mean over the context mix",
    "prefill_tokens_per_s_per_replica": "Uncached prompt tokens/s one prefill replica processes [tokens/s]",
    "prefill_replicas_needed": "requests/s x sum_k share_k x pass time_k / prompts per pass_k (fractional) [replicas]",
    "prefill_replicas": "Whole prefill replicas [replicas]",
    "prefill_chips": "Prefill replicas x G [chips]",
    "prefill_nodes": "ceil(prefill chips / chips_per_node) [nodes]",
    "prefill_racks": "ceil(prefill chips / chips_per_rack) [racks]",
    "prefill_decode_replica_ratio": "Prefill replicas needed / decode replicas needed (disaggregation ratio) [ratio]",
    "chips": "Prefill + decode chips [chips]",
    "nodes": "Prefill + decode nodes [nodes]",
    "racks": "Prefill + decode racks (null where the rack size is unknown) [racks]",
    "serving_mean_chips": "Chips' worth of work: fractional replicas x G, both pools [chips]",
    "decode_utilization_frac": "Decode replicas needed / whole replicas [frac]",
    "prefill_utilization_frac": "Prefill replicas needed / whole replicas [frac]",
    "power_per_chip_w": "TDP x server_power_ratio x PUE [W]",
    "prefill_power_w": "Prefill chips x power per chip [W]",
    "decode_power_w": "Decode chips x power per chip [W]",
    "facility_power_w": "Both pools [W]",
    "energy_mwh_per_day": "Facility power x 24 h [MWh/day]",
    "tokens_per_mwh": "Tokens served per MWh of facility energy [tokens/MWh]",
    "list_input_usd_per_mtok": "List input price, base tier [USD/MTok]",
    "list_output_usd_per_mtok": "List output price, base tier [USD/MTok]",
    "revenue_usd_per_day": "Traffic at list prices: uncached input, cached input at the cache-read price, output; "
    "long-context tier by prompt [USD/day]",
    "price_source": "Source of the list price (hand, litellm, openrouter)",
    "price_provider": "prices.provider of the list price",
    "price_model": "prices.model of the list price",
    "price_match": "How the list price was found",
    "price_kind": "Rental price kind (rental_prices.kind), or 'scenario' for the scenario's gpu_usd_per_hour",
    "usd_per_chip_hour": "Rental price of this kind [USD/chip-hour]",
    "price_as_of": "Date of the newest quote of this kind",
    "price_basis": "Which quotes the price is the median of, or the scenario assumption",
    "prefill_usd_per_hour": "Prefill chips x price [USD/hour]",
    "decode_usd_per_hour": "Decode chips x price [USD/hour]",
    "usd_per_hour": "Both pools [USD/hour]",
    "usd_per_day": "Both pools x 24 [USD/day]",
    "input_usd_per_mtok": "Prefill pool cost per million input tokens (cached included) [USD/MTok]",
    "output_usd_per_mtok": "Decode pool cost per million output tokens [USD/MTok]",
    "blended_usd_per_mtok": "Fleet cost per million tokens, input + output [USD/MTok]",
    "gross_margin_frac": "(revenue - cost)/revenue at this price kind [frac]",
    "notes": "What the plan could not know or assumed",
}
