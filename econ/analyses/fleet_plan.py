"""The serving fleet plan of the fleet analysis: traffic from a scenario, deployments in, ``fleet_plan`` rows out.

Frames in, frames out; the arithmetic is :mod:`econ.physics.fleet`. One plan row per
scenario × deployment × rental price kind (the hardware counts repeat across price kinds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.analyses.scenario import Scenario
from econ.analyses.serving import format_assumption
from econ.errors import EconError
from econ.physics import fleet, memory, roofline
from econ.physics.hardware import FORMATS, PEAK_COLUMN, bytes_per_value
from econ.physics.model import kv_window_bytes
from econ.units import BYTES_PER_VALUE, SECONDS_PER_DAY

CONTEXT_SHARE = re.compile(r"^context_share_(\d+)_tokens_frac$")
SOURCE_RANK = {"hand": 0, "litellm": 1, "openrouter": 2}
SCENARIO_KIND = "scenario"
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


@dataclass(frozen=True)
class Traffic:
    """What a scenario says about the traffic and the fleet that serves it (scenario units, see data/README.md)."""

    scenario: str
    tokens_served_per_s: float
    input_output_ratio: float
    cache_hit_frac: float
    contexts: np.ndarray  # representative prompt lengths [tokens]
    shares: np.ndarray  # share of requests at each [frac]
    batch_multiple: float
    speed_target: float
    mfu: float
    mbu: float
    pue: float
    server_ratio: float
    usd_per_chip_hour: float
    weight_format: str
    kv_format: str
    peak_to_mean: float
    notes: tuple[str, ...] = ()
    weight_format_basis: str = "the scenario's weight_format"

    @property
    def mean_prompt_tokens(self) -> float:
        return float(fleet.mean_prompt_tokens(self.contexts, self.shares))

    @property
    def output_tokens_per_request(self) -> float:
        return self.mean_prompt_tokens / self.input_output_ratio

    @property
    def decode_context_tokens(self) -> float:
        return float(fleet.decode_context_tokens(self.mean_prompt_tokens, self.output_tokens_per_request))


def traffic_from_scenario(s: Scenario) -> Traffic:
    """The scenario's traffic mix and fleet assumptions; missing optional ones fall back and are named in ``notes``."""
    notes = []
    mix = sorted(
        (int(m.group(1)), a.value)
        for name, a in s.assumptions.items()
        if (m := CONTEXT_SHARE.match(name)) and a.value is not None
    )
    if mix:
        total = sum(w for _, w in mix)
        if abs(total - 1.0) > 1e-3:
            raise EconError(
                f"the context_share_*_tokens_frac assumptions of scenario {s.name!r} add up to {total:g}",
                "make the shares of the prompt-length mix add up to 1 in data/scenarios.csv",
            )
        contexts, shares = np.array([c for c, _ in mix], float), np.array([w for _, w in mix], float)
    else:
        contexts, shares = np.array([s["context_tokens"]]), np.array([1.0])
        notes.append("no context_share_* mix in the scenario: every prompt at context_tokens")
    mfu, mbu = s.get("prefill_mfu"), s.get("decode_mbu")
    if mfu is None or mbu is None:
        notes.append("prefill_mfu/decode_mbu missing: the pure roofline (1.0) where absent")
    weight_format = format_assumption(s, "weight_format", "bf16")
    given = s.assumptions.get("weight_format") is not None and s.assumptions["weight_format"].text is not None
    kv_format = format_assumption(s, "kv_cache_format", "bf16", tuple(BYTES_PER_VALUE))
    hit = s["prompt_cache_hit_frac"]
    if not 0.0 <= hit <= 1.0:
        raise EconError(f"prompt_cache_hit_frac of scenario {s.name!r} is {hit:g}", "give a fraction between 0 and 1")
    return Traffic(
        s.name,
        s["tokens_served_per_s"],
        s["input_output_token_ratio"],
        hit,
        contexts,
        shares,
        s["batch_multiple_over_balance"],
        s["user_speed_target_tokens_per_s"],
        1.0 if mfu is None else mfu,
        1.0 if mbu is None else mbu,
        s["pue_ratio"],
        s["server_power_ratio"],
        s["gpu_usd_per_hour"],
        weight_format,
        kv_format,
        s["serving_peak_to_mean_ratio"],
        tuple(notes),
        "the scenario's weight_format" if given else "the default (the scenario has no weight_format)",
    )


# ---------------------------------------------------------------------------- inputs


def with_formats(cases: pl.DataFrame, traffic: Traffic) -> pl.DataFrame:
    """Resolve each case's number format (blank: the scenario's), its peak F, bytes per weight and KV at the cache
    format."""
    cases = cases.with_columns(
        pl.when(pl.col("number_format").is_null())
        .then(pl.lit(f"number format {traffic.weight_format}: {traffic.weight_format_basis}"))
        .alias("format_note"),
        pl.col("number_format").fill_null(traffic.weight_format),
    )
    bad = cases.filter(~pl.col("number_format").is_in(list(FORMATS)))
    if bad.height:
        raise EconError(
            f"deployment {bad['deployment'][0]}: unknown number format {bad['number_format'][0]!r}",
            f"use one of {', '.join(FORMATS)}",
        )
    peak = pl.lit(None, dtype=pl.Float64)
    for fmt in FORMATS:
        peak = pl.when(pl.col("number_format") == fmt).then(pl.col(PEAK_COLUMN[fmt]).cast(pl.Float64)).otherwise(peak)
    kv_scale = bytes_per_value(traffic.kv_format) / bytes_per_value("bf16")
    cases = cases.with_columns(
        peak.alias("peak_flop_per_s"),
        pl.col("number_format")
        .replace_strict({f: bytes_per_value(f) for f in FORMATS}, return_dtype=pl.Float64)
        .alias("weight_bytes_per_param"),
        pl.col("kv_bytes_per_token") * kv_scale,
        pl.col("kv_window_bytes_per_sequence").fill_null(0.0) * kv_scale,
    )
    missing = cases.filter(pl.col("peak_flop_per_s").is_null())
    if missing.height:
        r = missing.row(0, named=True)
        supported = [f for f in FORMATS if r.get(PEAK_COLUMN[f]) is not None]
        raise EconError(
            f"deployment {r['deployment']}: {r['chip']} has no {r['number_format']} peak",
            f"pick a format the chip has a peak for ({', '.join(supported)}) in data/deployments.csv",
        )
    return cases


def newest_rental(rental: pl.DataFrame, as_of) -> pl.DataFrame:
    """Per chip × price kind: the median of the newest date's quotes (on or before ``as_of``), with how many and from
    whom."""
    quotes = rental.filter(pl.col("as_of") <= as_of)
    newest = quotes.filter(pl.col("as_of") == pl.col("as_of").max().over("chip", "kind"))
    return (
        newest.group_by("chip", "kind")
        .agg(
            pl.col("usd_per_chip_hour").median(),
            pl.col("as_of").first().alias("price_as_of"),
            pl.len().alias("quotes"),
            pl.col("provider").sort().str.join("; ").alias("providers"),
        )
        .select(
            "chip",
            pl.col("kind").alias("price_kind"),
            "usd_per_chip_hour",
            "price_as_of",
            pl.format("median of {} quote(s) dated {}: {}", "quotes", "price_as_of", "providers").alias("price_basis"),
        )
        .sort("chip", "price_kind")
    )


def price_kinds(chips: pl.DataFrame, rental_newest: pl.DataFrame, traffic: Traffic) -> pl.DataFrame:
    """Every rental kind quoted for each chip, plus the scenario's $/chip-hour for every chip (said so in
    price_basis)."""
    scenario = (
        chips.select("chip")
        .unique()
        .with_columns(
            pl.lit(SCENARIO_KIND).alias("price_kind"),
            pl.lit(traffic.usd_per_chip_hour).alias("usd_per_chip_hour"),
            pl.lit(None, dtype=pl.Date).alias("price_as_of"),
            pl.lit(f"scenario {traffic.scenario} gpu_usd_per_hour (the lecture's $2/chip-hour in base)").alias(
                "price_basis"
            ),
        )
    )
    quoted = rental_newest.join(chips.select("chip").unique(), on="chip", how="semi")
    return pl.concat([quoted, scenario], how="vertical_relaxed").sort("chip", "price_kind")


def resolve_prices(cases: pl.DataFrame, prices_current: pl.DataFrame) -> pl.DataFrame:
    """Per case: the standard-variant price rows (every tier) it is sold at, and how they were found.

    An explicit mapping (price_provider, price_model, optional price_source) is used as given; a blank
    one matches ``models.hf_repo`` to ``prices.hugging_face_id``. Where several sources price it,
    hand-kept rows win over LiteLLM over OpenRouter; free (zero-priced) rows are skipped.
    """
    priced = prices_current.filter(
        (pl.col("variant") == "standard") & (pl.col("output_usd_per_mtok") > 0)
    ).with_columns(
        pl.col("source").replace_strict(SOURCE_RANK, default=9, return_dtype=pl.Int64).alias("_rank"),
        pl.col("hugging_face_id").str.to_lowercase().alias("_hf"),
    )
    keys = ["scenario", "deployment"]
    explicit = (
        cases.filter(pl.col("price_model").is_not_null())
        .select(
            *keys,
            pl.col("price_source").alias("_want_source"),
            pl.col("price_provider").alias("provider"),
            pl.col("price_model").alias("model"),
        )
        .join(priced, on=["provider", "model"], how="inner")
        .filter(pl.col("_want_source").is_null() | (pl.col("source") == pl.col("_want_source")))
        .with_columns(pl.lit("as mapped in deployments").alias("price_match"))
    )
    matched = (
        cases.filter(pl.col("price_model").is_null() & pl.col("hf_repo").is_not_null())
        .select(*keys, pl.col("hf_repo").str.to_lowercase().alias("_hf"))
        .join(priced, on="_hf", how="inner")
        .with_columns(pl.lit("matched models.hf_repo to prices.hugging_face_id").alias("price_match"))
    )
    rows = pl.concat([explicit.drop("_want_source"), matched], how="diagonal_relaxed")
    best = (
        rows.sort("_rank", "provider", "model")
        .group_by(keys, maintain_order=True)
        .first()
        .select(*keys, "source", "provider", "model")
    )
    return (
        rows.join(best, on=[*keys, "source", "provider", "model"], how="semi")
        .select(
            *keys,
            pl.col("source").alias("price_source"),
            pl.col("provider").alias("price_provider"),
            pl.col("model").alias("price_model"),
            "tier_min_prompt_tokens",
            "input_usd_per_mtok",
            "output_usd_per_mtok",
            "cache_read_usd_per_mtok",
            "price_match",
        )
        .sort(*keys, "tier_min_prompt_tokens")
    )


def bucket_prices(cases: pl.DataFrame, tiers: pl.DataFrame, contexts: np.ndarray) -> dict[str, np.ndarray]:
    """Input, cache-read and output price of each case at each prompt length (cases × buckets; NaN = unpriced).

    A prompt of L tokens is billed at the highest tier whose threshold it exceeds (tier 0 otherwise).
    """
    keys = ["scenario", "deployment"]
    buckets = pl.DataFrame({"_k": np.arange(len(contexts)), "_L": contexts.astype(float)})
    chosen = (
        tiers.join(buckets, how="cross")
        .filter((pl.col("tier_min_prompt_tokens") == 0) | (pl.col("_L") > pl.col("tier_min_prompt_tokens")))
        .sort("tier_min_prompt_tokens")
        .group_by([*keys, "_k"])
        .last()
    )
    grid = (
        cases.select(keys)
        .with_row_index("_i")
        .join(buckets, how="cross")
        .join(chosen, on=[*keys, "_k"], how="left")
        .sort("_i", "_k")
    )
    shape = (cases.height, len(contexts))
    return {
        name: grid[name].cast(pl.Float64).fill_null(np.nan).to_numpy().reshape(shape)
        for name in ("input_usd_per_mtok", "cache_read_usd_per_mtok", "output_usd_per_mtok")
    }


# ---------------------------------------------------------------------------- the plan


def _arrays(cases: pl.DataFrame) -> dict[str, np.ndarray]:
    return {k: cases[k].cast(pl.Float64).fill_null(np.nan).to_numpy() for k in CASE_FLOATS}


def plan_core(cases: pl.DataFrame, t: Traffic, prices_by_context: dict[str, np.ndarray]) -> pl.DataFrame:
    """Pools, hardware, power and revenue of every case (one row per scenario × deployment, before price kinds)."""
    a = _arrays(cases)
    n = cases.height
    speed_policy = (cases["batch_policy"] == "speed_target").to_numpy()
    inp, out = fleet.split_traffic(a["tokens_per_s"], t.input_output_ratio)
    l_bar, n_out, l_dec = t.mean_prompt_tokens, t.output_tokens_per_request, t.decode_context_tokens
    requests = inp / l_bar
    b_w, b_kv, window_ctx = a["weight_bytes_per_param"], a["kv_bytes_per_token"], a["sliding_window_tokens"]
    window = kv_window_bytes(l_dec, a["kv_window_bytes_per_sequence"], window_ctx)
    ratio = roofline.critical_batch_ratio(a["peak_flop_per_s"], a["hbm_bandwidth_bytes_per_s"], b_w)
    b0 = roofline.balance_batch(ratio, a["params_total"], a["params_active"])
    balance_target = np.maximum(np.round(fleet.balance_multiple_batch(b0, t.batch_multiple)), 1.0)
    domain = np.nan_to_num(a["scale_up_domain_chips"], nan=1.0)
    default_g, default_p = fleet.replica_for_batch(
        a["params_total"], b_w, balance_target, l_dec, b_kv, a["hbm_capacity_bytes"], domain, window
    )
    given = ~np.isnan(a["replica_chips"])
    chips = np.where(given, a["replica_chips"], default_g)
    stages = np.where(given, np.maximum(np.ceil(chips / domain), 1.0), default_p)
    fits = memory.max_batch(chips, a["hbm_capacity_bytes"], a["params_total"], b_w, l_dec, b_kv, window)
    speed_batch = fleet.max_batch_for_speed(
        t.speed_target,
        chips,
        a["peak_flop_per_s"],
        a["hbm_bandwidth_bytes_per_s"],
        a["params_active"],
        a["params_total"],
        b_w,
        l_dec,
        b_kv,
        mfu=t.mfu,
        mbu=t.mbu,
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
        mfu=t.mfu,
        mbu=t.mbu,
        pipeline_stages=stages,
        kv_extra_bytes_per_sequence=window,
    )

    def col(x):
        return x[:, None]

    contexts = t.contexts[None, :]
    window_k = kv_window_bytes(contexts, col(a["kv_window_bytes_per_sequence"]), col(window_ctx))
    fit_k = memory.max_batch(
        col(chips), col(a["hbm_capacity_bytes"]), col(a["params_total"]), col(b_w), contexts, col(b_kv), window_k
    )
    pre = fleet.prefill_pool(
        requests_per_s=requests,
        share_frac_by_context=t.shares[None, :],
        prompt_tokens_by_context=contexts,
        cache_hit_frac=t.cache_hit_frac,
        tokens_per_pass_target=col(balance_target),
        max_prompts_by_context=fit_k,
        params_total=col(a["params_total"]),
        params_active=col(a["params_active"]),
        weight_bytes_per_param=col(b_w),
        kv_bytes_per_token=col(b_kv),
        chips=col(chips),
        peak_flop_per_s=col(a["peak_flop_per_s"]),
        hbm_bandwidth_bytes_per_s=col(a["hbm_bandwidth_bytes_per_s"]),
        mfu=t.mfu,
        mbu=t.mbu,
        pipeline_stages=col(stages),
        kv_extra_by_context=window_k,
    )
    planned = batch >= 1
    pre_needed = np.where(planned, pre["replicas_needed"], np.nan)
    dec_needed = np.where(planned, dec["replicas_needed"], np.nan)
    hw_pre = fleet.pool_hardware(pre_needed, chips, a["chips_per_node"], a["chips_per_rack"])
    hw_dec = fleet.pool_hardware(dec_needed, chips, a["chips_per_node"], a["chips_per_rack"])
    power_pre = fleet.facility_power_w(hw_pre["chips"], a["tdp_w"], t.server_ratio, t.pue)
    power_dec = fleet.facility_power_w(hw_dec["chips"], a["tdp_w"], t.server_ratio, t.pue)
    power = power_pre + power_dec
    revenue = fleet.revenue_usd_per_s(
        requests,
        t.shares[None, :],
        contexts,
        t.cache_hit_frac,
        n_out,
        prices_by_context["input_usd_per_mtok"],
        prices_by_context["cache_read_usd_per_mtok"],
        prices_by_context["output_usd_per_mtok"],
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_prompts = np.sum(t.shares[None, :] * np.nan_to_num(pre["prompts_per_pass"], nan=0.0), axis=-1)
        columns = {
            "tokens_per_s": a["tokens_per_s"],
            "input_tokens_per_s": inp,
            "output_tokens_per_s": out,
            "requests_per_s": requests,
            "mean_prompt_tokens": np.full(n, l_bar),
            "output_tokens_per_request": np.full(n, n_out),
            "decode_context_tokens": np.full(n, l_dec),
            "prompt_cache_hit_frac": np.full(n, t.cache_hit_frac),
            "beyond_native_context_frac": np.where(
                np.isnan(a["max_position_embeddings"]),
                np.nan,
                np.sum(t.shares[None, :] * (contexts + n_out > col(a["max_position_embeddings"])), axis=-1),
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
            "decode_replicas_needed": dec_needed,
            **{f"decode_{k}": v for k, v in hw_dec.items()},
            "prefill_prompts_per_pass_mean": np.where(planned, mean_prompts, np.nan),
            "prefill_tokens_per_s_per_replica": np.where(planned, pre["tokens_per_s_per_replica"], np.nan),
            "prefill_replicas_needed": pre_needed,
            **{f"prefill_{k}": v for k, v in hw_pre.items()},
            "prefill_decode_replica_ratio": pre_needed / dec_needed,
            "chips": hw_pre["chips"] + hw_dec["chips"],
            "nodes": hw_pre["nodes"] + hw_dec["nodes"],
            "racks": hw_pre["racks"] + hw_dec["racks"],
            "serving_mean_chips": (pre_needed + dec_needed) * chips,
            "decode_utilization_frac": dec_needed / hw_dec["replicas"],
            "prefill_utilization_frac": pre_needed / hw_pre["replicas"],
            "power_per_chip_w": fleet.facility_power_w(1.0, a["tdp_w"], t.server_ratio, t.pue),
            "prefill_power_w": power_pre,
            "decode_power_w": power_dec,
            "facility_power_w": power,
            "energy_mwh_per_day": fleet.energy_mwh(power, 24.0),
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
    cost_day = total * 24.0
    values = {
        "prefill_usd_per_hour": pre,
        "decode_usd_per_hour": dec,
        "usd_per_hour": total,
        "usd_per_day": cost_day,
        "input_usd_per_mtok": fleet.usd_per_mtok(pre, arr("input_tokens_per_s")),
        "output_usd_per_mtok": fleet.usd_per_mtok(dec, arr("output_tokens_per_s")),
        "blended_usd_per_mtok": fleet.usd_per_mtok(total, arr("tokens_per_s")),
        "gross_margin_frac": fleet.gross_margin_frac(revenue, cost_day),
    }
    return frame.with_columns(*(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in values.items()))
