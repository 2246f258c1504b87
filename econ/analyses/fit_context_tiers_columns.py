"""The columns only ``fit_context_tiers`` and ``fit_context_tier_steps`` carry (the shared ones are in
``fit_columns``)."""

from __future__ import annotations

from econ.analyses.fit_columns import vocabulary
from econ.analyses.validation_evidence import evidence_columns, evidence_names
from econ.fits import cache_tiers, context_readings, context_tiers, validation
from econ.physics import context_cost, kv_cache
from econ.results import ResultColumn as C


def _reading(name, unit, meaning, function, kind="inference"):
    return C(name, "float", unit, kind, meaning, function)


BYTES, FLOPS = "bytes/token per context token", "FLOP/token per context token"
EVIDENCE = {
    context_readings.QUANTITIES["output"]: evidence_names("kv_read", "bytes_per_context_token", ratio_stored=True),
    context_readings.QUANTITIES["input"]: evidence_names("attention", "flop_per_context_token", ratio_stored=True),
    context_readings.CROSSOVER: evidence_names("kv_crossover", "bytes_per_token", ratio_stored=True),
}
"""Each validated quantity's evidence columns (:mod:`econ.analyses.validation_evidence`), on its rows; the implied/true
ratios are the readings' own (``implied_over_true_ratio``, ``kv_crossover_over_true_ratio``)."""
LABELS = {
    context_readings.QUANTITIES["output"]: (
        "fit_context_tiers",
        "bytes/token",
        "output-price slope of the long-context tiers -> bytes a decode step reads per context token",
        "reading",
    ),
    context_readings.QUANTITIES["input"]: (
        "fit_context_tiers",
        "FLOP/token",
        "input-price slope of the long-context tiers -> prefill attention FLOPs per context token",
        "reading",
    ),
    context_readings.CROSSOVER: (
        "fit_context_tiers",
        "bytes/token",
        "first tier threshold taken as the roofline crossover L* -> KV bytes per token (lecture f.1)",
        "hypothesis",
    ),
}
"""quantity -> (table it is read in, unit, what is read from what, role): the labels of its
``fit_context_tier_quantities`` row."""
READINGS = (
    C(
        "quantity",
        "str",
        "",
        "label",
        "What the row's slope is read as: decode_kv_read_bytes_per_context_token (output), "
        "prefill_attention_flop_per_context_token (input), null (cache read: a billing rule)",
    ),
    _reading(
        "kv_read_bytes_per_context_token",
        BYTES,
        "Output rows: bytes a decode step reads per context token implied by the slope, b = k*(1-margin)/c_byte",
        context_readings.readings,
    ),
    _reading("kv_read_fit_low_bytes_per_context_token", BYTES, "Fit interval, low", context_readings.readings),
    _reading("kv_read_fit_high_bytes_per_context_token", BYTES, "Fit interval, high", context_readings.readings),
    _reading(
        "kv_read_scenario_low_bytes_per_context_token", BYTES, "Scenario interval, low", context_readings.readings
    ),
    _reading(
        "kv_read_scenario_high_bytes_per_context_token", BYTES, "Scenario interval, high", context_readings.readings
    ),
    _reading(
        "kv_read_published_bytes_per_context_token",
        BYTES,
        "The published reading (default rule): bias-corrected, x*exp(-b), where the bias b on open models is "
        "significant (b estimated with the row's own model left out), else the reading itself",
        validation.validate,
    ),
    _reading(
        "kv_read_validated_low_bytes_per_context_token",
        BYTES,
        "Validated interval, low: the published value's prediction interval from the spread of the other open "
        "models' errors (default rule; 0 where too few open models measure it)",
        validation.left_out,
    ),
    _reading(
        "kv_read_validated_high_bytes_per_context_token",
        BYTES,
        "Validated interval, high (inf where too few open models measure the error)",
        validation.left_out,
    ),
    *evidence_columns(EVIDENCE[context_readings.QUANTITIES["output"]], BYTES, "KV read reading"),
    _reading(
        "true_kv_read_bytes_per_context_token",
        BYTES,
        "Open models: the architecture's bytes read per context token, least squares of read(L) over the tiers' "
        "contexts at the scenario's KV format",
        context_cost.decode_kv_bytes_read,
        kind="derived",
    ),
    _reading(
        "attention_flop_per_context_token",
        FLOPS,
        "Input rows: prefill attention FLOPs per prompt token per context token implied by the slope, "
        "f = k*(1-margin)/c_flop",
        context_readings.readings,
    ),
    _reading("attention_fit_low_flop_per_context_token", FLOPS, "Fit interval, low", context_readings.readings),
    _reading("attention_fit_high_flop_per_context_token", FLOPS, "Fit interval, high", context_readings.readings),
    _reading(
        "attention_scenario_low_flop_per_context_token", FLOPS, "Scenario interval, low", context_readings.readings
    ),
    _reading(
        "attention_scenario_high_flop_per_context_token", FLOPS, "Scenario interval, high", context_readings.readings
    ),
    _reading(
        "attention_published_flop_per_context_token",
        FLOPS,
        "The published reading (default rule): bias-corrected where the bias on open models is significant",
        validation.validate,
    ),
    _reading(
        "attention_validated_low_flop_per_context_token",
        FLOPS,
        "Validated interval, low (default rule; the published value's left-out prediction interval)",
        validation.left_out,
    ),
    _reading(
        "attention_validated_high_flop_per_context_token",
        FLOPS,
        "Validated interval, high (default rule)",
        validation.left_out,
    ),
    *evidence_columns(EVIDENCE[context_readings.QUANTITIES["input"]], FLOPS, "Prefill attention reading"),
    _reading(
        "true_attention_flop_per_context_token",
        FLOPS,
        "Open models: the architecture's prefill attention FLOPs per prompt token per context token, least squares "
        "of A(L)/L over the tiers' contexts",
        context_cost.prefill_attention_flop_per_token,
        kind="derived",
    ),
    C(
        "implied_over_true_ratio",
        "float",
        "",
        "inference",
        "Open models: implied / true of the row's reading (= observed cost slope / the deployment model's)",
        context_readings.readings,
    ),
    C(
        "implied_over_true_scenario_low_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of implied/true, low",
        context_readings.readings,
    ),
    C(
        "implied_over_true_scenario_high_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of implied/true, high",
        context_readings.readings,
    ),
    C(
        "usd_per_kv_byte_read",
        "float",
        "USD/token per byte",
        "bound",
        "Output rows: marginal cost of one byte read per generated token, the deployment model's for open models, "
        "p/(W*mbu) for closed ones",
        context_readings.usd_per_token_per_kv_byte,
    ),
    C(
        "attention_flop_cost_usd_per_token",
        "float",
        "USD/token per FLOP",
        "bound",
        "Input rows: marginal prefill cost of one attention FLOP per prompt token, the deployment model's for open "
        "models, p/(F*mfu) for closed ones",
        context_readings.usd_per_token_per_flop,
    ),
    C(
        "deployment_cost_slope_usd_per_mtok_per_mtok_context",
        "float",
        "USD/MTok per MTok of context",
        "bound",
        "Open models: the deployment model's cost slope over the tiers' contexts (decode KV part, or prefill), "
        "the k the price would have at zero margin",
        context_readings.deployment_slopes,
    ),
    C(
        "cache_read_over_input_ratios",
        "str",
        "",
        "derived",
        "Cache-read rows: cache read / input price per tier, comma-separated",
        context_tiers.billing_rule,
    ),
    C("billing_rule", "str", "", "label", "Cache-read rows: what the cache-read tiers say", context_tiers.billing_rule),
    C(
        "kv_crossover_published_bytes_per_token",
        "float",
        "bytes/token",
        "inference",
        "The crossover hypothesis as published: never bias-corrected (a hypothesis is tested, not fitted)",
        validation.validate,
    ),
    C(
        "kv_crossover_validated_low_bytes_per_token",
        "float",
        "bytes/token",
        "inference",
        "Validated interval of the crossover hypothesis, low (default rule)",
        validation.left_out,
    ),
    C(
        "kv_crossover_validated_high_bytes_per_token",
        "float",
        "bytes/token",
        "inference",
        "Validated interval of the crossover hypothesis, high (default rule)",
        validation.left_out,
    ),
    *evidence_columns(EVIDENCE[context_readings.CROSSOVER], "bytes/token", "Crossover hypothesis"),
)

columns = vocabulary(
    C("base_price_usd_per_mtok", "float", "USD/MTok", "input", "Base-tier price of the component"),
    C(
        "crossover_threshold_tokens",
        "float",
        "tokens",
        "input",
        "First threshold above the base tier: the crossover reading's L*",
    ),
    C("default_rule", "bool", "", "check", "True on the default rule's rows (power_law)"),
    C(
        "intercept_usd_per_mtok",
        "float",
        "USD/MTok",
        "fit",
        "Fitted a of c(L) = a + k*L",
        context_tiers.fit_schedules,
    ),
    C(
        "kv_crossover_bytes_per_token",
        "float",
        "bytes/token",
        "inference",
        "The lecture's crossover hypothesis b_kv = b_w*N_act/(R*L*) with L* = first threshold; biased low by orders "
        "of magnitude on open models (inference_quantities), never a headline",
        context_readings.kv_bytes_at_crossover,
    ),
    C(
        "kv_crossover_over_true_ratio",
        "float",
        "",
        "inference",
        "Crossover reading / architecture's KV bytes (reported, not tuned)",
        context_readings.readings,
    ),
    C(
        "kv_crossover_over_true_scenario_high_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of crossover/true, high",
        context_readings.readings,
    ),
    C(
        "kv_crossover_over_true_scenario_low_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of crossover/true, low",
        context_readings.readings,
    ),
    C(
        "kv_crossover_scenario_high_bytes_per_token",
        "float",
        "bytes/token",
        "inference",
        "Scenario interval of the crossover reading, high",
        context_readings.kv_bytes_at_crossover,
    ),
    C(
        "kv_crossover_scenario_low_bytes_per_token",
        "float",
        "bytes/token",
        "inference",
        "Scenario interval of the crossover reading, low",
        context_readings.kv_bytes_at_crossover,
    ),
    C(
        "kv_true_bytes_per_token",
        "float",
        "bytes/token",
        "derived",
        "Architecture's KV bytes per token at the scenario's KV format (open-weight models)",
        kv_cache.kv_bytes_in_format,
    ),
    C(
        "max_abs_residual_frac",
        "float",
        "",
        "fit",
        "Largest |fitted - observed| tier price over the base price",
        context_tiers.fit_schedules,
    ),
    C("n_tiers", "int", "", "check", "Tiers in the schedule"),
    C("pool_model_count", "int", "", "check", "Models in the pool"),
    C("pool_models", "str", "", "input", "Members of the pool (price keys)"),
    C(
        "pool_plausible",
        "bool",
        "",
        "check",
        "True where the members' relative slopes differ by at most 1.25x: one slope is plausible",
    ),
    C(
        "pool_spread_ratio",
        "float",
        "",
        "fit",
        "Max/min of the members' own relative slopes",
        context_tiers.fit_pools,
    ),
    C("pooled", "bool", "", "key", "True on pooled rows (one relative slope for a provider's standard schedules)"),
    *READINGS,
    C(
        "representative_contexts_tokens",
        "str",
        "tokens",
        "derived",
        "Each tier's representative context under the rule, comma-separated",
        context_tiers.representative_contexts,
    ),
    C(
        "rule",
        "str",
        "",
        "key",
        "Representative-context rule: power_law (default: the mean under density L^-alpha, E[L] for output, "
        "E[L^2]/E[L] for input and cache reads), midpoint, lower, upper or geometric (econ.fits.context_tiers.RULES)",
    ),
    C(
        "slope_fit_high_usd_per_mtok_per_mtok_context",
        "float",
        "USD/MTok per MTok of context",
        "fit",
        "Fit interval of k, high",
        context_tiers.fit_schedules,
    ),
    C(
        "slope_fit_low_usd_per_mtok_per_mtok_context",
        "float",
        "USD/MTok per MTok of context",
        "fit",
        "Fit interval of k, low",
        context_tiers.fit_schedules,
    ),
    C(
        "slope_usd_per_mtok_per_mtok_context",
        "float",
        "USD/MTok per MTok of context",
        "fit",
        "Fitted k: price added per million context tokens",
        context_tiers.fit_schedules,
    ),
    C(
        "tier_thresholds_tokens",
        "str",
        "tokens",
        "inference",
        "Tier thresholds, comma-separated",
        cache_tiers.compare_tiers,
    ),
    C(
        "uplift_fit_high_per_mtok_context_frac",
        "float",
        "",
        "fit",
        "Fit interval of the pooled kappa, high",
        context_tiers.fit_pools,
    ),
    C(
        "uplift_fit_low_per_mtok_context_frac",
        "float",
        "",
        "fit",
        "Fit interval of the pooled kappa, low",
        context_tiers.fit_pools,
    ),
    C(
        "uplift_per_mtok_context_frac",
        "float",
        "",
        "fit",
        "Relative slope k/a (pooled rows: the common kappa): "
        "fraction of the zero-context price added per million "
        "context tokens",
        context_tiers.fit_schedules,
    ),
)
