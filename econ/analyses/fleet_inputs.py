"""The inputs of the fleet tables: deployments joined to their architecture and chip, rental prices, list prices.

Selection, joins and price lookups only; the arithmetic of the plan is :mod:`econ.physics.fleet`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.pricing_inputs import PRICES_READ_SQL
from econ.analyses.scenario import Scenario
from econ.errors import EconError
from econ.formats import FORMATS
from econ.physics import kv_cache

SOURCE_RANK = {"hand": 0, "litellm": 1, "openrouter": 2}
SCENARIO_KIND = "scenario"
PRICES_SQL = f"""
select p.*, c.arch_model
from ({PRICES_READ_SQL}) as p left join model_catalog as c using (canonical_model)
"""
"""The prices a plan's list price is chosen from (:func:`resolve_prices`), each with the architecture of its canonical
model: of ``inference_prices`` what the price inferences read (``fleet_plan``'s ``READS``)."""

CASES_SQL = """
select d.*, m.params_total, m.params_active, md.kv_bytes_per_token, md.kv_window_bytes_per_sequence,
       m.sliding_window_tokens, m.hf_repo, m.pretrain_tokens, m.max_position_embeddings, h.peak_bf16_flop_per_s,
       h.hbm_capacity_bytes, h.hbm_bandwidth_bytes_per_s, h.scale_up_domain_chips, h.chips_per_node, h.chips_per_rack,
       h.tdp_w, h.scale_up_bandwidth_bytes_per_s, h.scale_out_bandwidth_bytes_per_s, h.peak_fp8_flop_per_s,
       h.architecture
from {source} as d join models as m using (model) join model_derived as md using (model) join hardware as h using (chip)
order by d.scenario, d.deployment
"""
"""Every deployment with its model's architecture and KV bytes (BF16) and its chip's hardware."""


def cases_for(all_cases: pl.DataFrame, scenario: str) -> pl.DataFrame:
    """The scenario's own deployments, or base's relabelled (``deployment_scenario`` says whose)."""
    own = all_cases.filter(pl.col("scenario") == scenario)
    rows = own if own.height else all_cases.filter(pl.col("scenario") == "base")
    return rows.with_columns(pl.col("scenario").alias("deployment_scenario"), pl.lit(scenario).alias("scenario"))


def with_formats(cases: pl.DataFrame, s: Scenario, hardware_derived: pl.DataFrame) -> pl.DataFrame:
    """Each case's number format (blank: the scenario's), its peak F and bytes per weight (``hardware_derived``),
    and its KV bytes at the scenario's cache format."""
    given = "weight_format" not in s.defaulted
    basis = "the scenario's weight_format" if given else "the default (the scenario has no weight_format)"
    cases = cases.with_columns(
        pl.when(pl.col("number_format").is_null())
        .then(pl.lit(f"number format {s.weight_format}: {basis}"))
        .alias("format_note"),
        pl.col("number_format").fill_null(s.weight_format),
    )
    bad = cases.filter(~pl.col("number_format").is_in(list(FORMATS)))
    if bad.height:
        raise EconError(
            f"deployment {bad['deployment'][0]}: unknown number format {bad['number_format'][0]!r}",
            f"use one of {', '.join(FORMATS)}",
        )
    peaks = hardware_derived.select("chip", "number_format", "peak_flop_per_s", "weight_bytes_per_param")
    cases = cases.join(peaks, on=["chip", "number_format"], how="left").with_columns(
        kv_cache.kv_bytes_in_format(pl.col("kv_bytes_per_token"), s.kv_cache_format),
        kv_cache.kv_bytes_in_format(pl.col("kv_window_bytes_per_sequence").fill_null(0.0), s.kv_cache_format),
    )
    missing = cases.filter(pl.col("peak_flop_per_s").is_null())
    if missing.height:
        r = missing.row(0, named=True)
        supported = hardware_derived.filter(pl.col("chip") == r["chip"])["number_format"].to_list()
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


def price_kinds(chips: pl.DataFrame, rental_newest: pl.DataFrame, s: Scenario) -> pl.DataFrame:
    """Every rental kind quoted for each chip, plus the scenario's $/chip-hour for every chip (said so in
    price_basis)."""
    scenario = (
        chips.select("chip")
        .unique()
        .with_columns(
            pl.lit(SCENARIO_KIND).alias("price_kind"),
            pl.lit(s.usd_per_chip_hour).alias("usd_per_chip_hour"),
            pl.lit(None, dtype=pl.Date).alias("price_as_of"),
            pl.lit(f"scenario {s.name} usd_per_chip_hour (the lecture's $2/chip-hour in base)").alias("price_basis"),
        )
    )
    quoted = rental_newest.join(chips.select("chip").unique(), on="chip", how="semi")
    return pl.concat([quoted, scenario], how="vertical_relaxed").sort("chip", "price_kind")


def resolve_prices(cases: pl.DataFrame, prices_current: pl.DataFrame) -> pl.DataFrame:
    """Per case: the standard-variant price rows (every tier) it is sold at, and how they were found.

    An explicit mapping (price_provider, price_model, optional price_source) is used as given; a blank
    one matches ``models.hf_repo`` to ``prices.hugging_face_id``, and where no price row names the repo (Meta's
    base repos; sellers list the instruct weights under their own keys), the case's model to the architecture of the
    rows' canonical model (``arch_model`` of :data:`PRICES_SQL`, ``model_catalog``), the first canonical model by name
    (the one ``econ cost --model`` bills for an architecture's name: ``llama-3.1-70b`` before
    ``llama-3.1-70b-instruct``). Where several sources price it, hand-kept rows win over LiteLLM over OpenRouter;
    free (zero-priced) rows are skipped.
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
    blank = cases.filter(pl.col("price_model").is_null())
    matched = (
        blank.filter(pl.col("hf_repo").is_not_null())
        .select(*keys, pl.col("hf_repo").str.to_lowercase().alias("_hf"))
        .join(priced, on="_hf", how="inner")
        .with_columns(
            pl.lit(1).alias("_how"), pl.lit("matched models.hf_repo to prices.hugging_face_id").alias("price_match")
        )
    )
    named = (
        blank.select(*keys, pl.col("model").alias("arch_model"))
        .join(priced.filter(pl.col("canonical_model").is_not_null()), on="arch_model", how="inner")
        .with_columns(
            pl.lit(2).alias("_how"),
            pl.col("canonical_model").alias("_canonical"),
            pl.format("matched models.model to the architecture of canonical model {}", "canonical_model").alias(
                "price_match"
            ),
        )
    )
    rows = pl.concat(
        [explicit.drop("_want_source").with_columns(pl.lit(0).alias("_how")), matched, named], how="diagonal_relaxed"
    )
    best = (
        rows.sort("_how", pl.col("_canonical").fill_null(""), "_rank", "provider", "model")
        .group_by(keys, maintain_order=True)
        .first()
        .select(*keys, "_how", "source", "provider", "model")
    )
    return (
        rows.join(best, on=[*keys, "_how", "source", "provider", "model"], how="semi")
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
