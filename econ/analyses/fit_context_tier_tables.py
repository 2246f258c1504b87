"""The tables ``fit_context_tiers`` writes (its fits, the tier steps the Context pricing page draws, the validated
quantities' status) and which of their columns hold each validated quantity."""

from __future__ import annotations

from econ.analyses.fit_columns import INTERVALS
from econ.analyses.fit_context_tiers_columns import EVIDENCE, columns
from econ.analyses.pricing_inputs import ARCH_KEEP
from econ.analyses.validation_evidence import quantities_table
from econ.fits import context_readings, context_tiers
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAMES = (
    "usd_per_chip_hour",
    "gross_margin_frac",
    "decode_mbu_frac",
    "prefill_mfu_frac",
    "frontier_active_params",
    "tier_context_density_exponent_ratio",
)
"""The scenario assumptions a reading depends on (their values are columns of each row)."""
VALIDATED = {  # quantity -> (implied, scenario low, scenario high, true, validated low, validated high) columns
    context_readings.QUANTITIES["output"]: (
        "kv_read_bytes_per_context_token",
        "kv_read_scenario_low_bytes_per_context_token",
        "kv_read_scenario_high_bytes_per_context_token",
        "true_kv_read_bytes_per_context_token",
        "kv_read_validated_low_bytes_per_context_token",
        "kv_read_validated_high_bytes_per_context_token",
    ),
    context_readings.QUANTITIES["input"]: (
        "attention_flop_per_context_token",
        "attention_scenario_low_flop_per_context_token",
        "attention_scenario_high_flop_per_context_token",
        "true_attention_flop_per_context_token",
        "attention_validated_low_flop_per_context_token",
        "attention_validated_high_flop_per_context_token",
    ),
    context_readings.CROSSOVER: (
        "kv_crossover_bytes_per_token",
        "kv_crossover_scenario_low_bytes_per_token",
        "kv_crossover_scenario_high_bytes_per_token",
        "kv_true_bytes_per_token",
        "kv_crossover_validated_low_bytes_per_token",
        "kv_crossover_validated_high_bytes_per_token",
    ),
}
"""Each validated quantity's columns in this table (the crossover is read once per schedule, on its input row)."""
PUBLISHED = {  # quantity -> published value column
    context_readings.QUANTITIES["output"]: "kv_read_published_bytes_per_context_token",
    context_readings.QUANTITIES["input"]: "attention_published_flop_per_context_token",
    context_readings.CROSSOVER: "kv_crossover_published_bytes_per_token",
}
"""Each validated quantity's published value (bias-corrected where its bias is significant); its evidence columns are
:data:`econ.analyses.fit_context_tiers_columns.EVIDENCE`, its status ``fit_context_tier_quantities``."""
ROLES = {
    context_readings.QUANTITIES["output"]: "reading",
    context_readings.QUANTITIES["input"]: "reading",
    context_readings.CROSSOVER: "hypothesis",
}
"""Whether a quantity is a reading (corrected for a significant bias) or the lecture's hypothesis (never corrected:
falsified when it misses beyond its own interval; :mod:`econ.fits.validation`)."""

FIT_CONTEXT_TIERS = ResultTable(
    name="fit_context_tiers",
    grain="price source x provider x model x variant x component x rule, plus pooled rows per provider x component x "
    "rule",
    key=("source", "provider", "model", "variant", "component", "rule"),
    description=(
        "Long-context price tiers read backwards (lecture f.1-f.2): per schedule x price component x representative-"
        "context rule (default power_law: prompts with density L^-alpha inside a tier), the per-context-token cost "
        "slope of c(L) = a + k*L and what it says for its component: output -> bytes a decode step reads per "
        "context token, input -> prefill attention FLOPs per context token, cache read -> a billing rule (no cost); "
        "the lecture's crossover hypothesis b_kv = b_w*N_act/(R*L*) at the first threshold on every row (biased, "
        "never a headline). Open-weight models: one schedule per seller (provider_kind first_party or reseller), "
        "priced by the deployment model at the scenario chip, with the architecture's true value and implied/true. "
        "Closed models: one price source per model (hand, else litellm, else openrouter). Default-rule readings "
        "carry the validated interval (the bias-corrected value times exp(+-h), h the left-out prediction "
        "half-width of the open models' errors; inference_quantities). Pooled rows fit one relative slope per "
        "provider. " + INTERVALS
    ),
    columns=columns(
        "source",
        "provider",
        "model",
        "variant",
        "n_tiers",
        "tier_thresholds_tokens",
        "crossover_threshold_tokens",
        "component",
        "rule",
        "representative_contexts_tokens",
        "base_price_usd_per_mtok",
        "status",
        "fit_interval_kind",
        "n_points",
        "fit_message",
        "provider_kind",
        "intercept_usd_per_mtok",
        "slope_usd_per_mtok_per_mtok_context",
        "slope_fit_low_usd_per_mtok_per_mtok_context",
        "slope_fit_high_usd_per_mtok_per_mtok_context",
        "uplift_per_mtok_context_frac",
        "max_abs_residual_frac",
        "name_key",
        *ARCH_KEEP,
        "quantity",
        "kv_read_bytes_per_context_token",
        "kv_read_fit_low_bytes_per_context_token",
        "kv_read_fit_high_bytes_per_context_token",
        "kv_read_scenario_low_bytes_per_context_token",
        "kv_read_scenario_high_bytes_per_context_token",
        "kv_read_published_bytes_per_context_token",
        "kv_read_validated_low_bytes_per_context_token",
        "kv_read_validated_high_bytes_per_context_token",
        *EVIDENCE[context_readings.QUANTITIES["output"]].values(),
        "true_kv_read_bytes_per_context_token",
        "attention_flop_per_context_token",
        "attention_fit_low_flop_per_context_token",
        "attention_fit_high_flop_per_context_token",
        "attention_scenario_low_flop_per_context_token",
        "attention_scenario_high_flop_per_context_token",
        "attention_published_flop_per_context_token",
        "attention_validated_low_flop_per_context_token",
        "attention_validated_high_flop_per_context_token",
        *EVIDENCE[context_readings.QUANTITIES["input"]].values(),
        "true_attention_flop_per_context_token",
        "implied_over_true_ratio",
        "implied_over_true_scenario_low_ratio",
        "implied_over_true_scenario_high_ratio",
        "usd_per_kv_byte_read",
        "attention_flop_cost_usd_per_token",
        "deployment_cost_slope_usd_per_mtok_per_mtok_context",
        "cache_read_over_input_ratios",
        "billing_rule",
        "kv_crossover_bytes_per_token",
        "kv_crossover_scenario_low_bytes_per_token",
        "kv_crossover_scenario_high_bytes_per_token",
        "kv_crossover_published_bytes_per_token",
        "kv_crossover_validated_low_bytes_per_token",
        "kv_crossover_validated_high_bytes_per_token",
        *EVIDENCE[context_readings.CROSSOVER].values(),
        "params_active_used",
        "params_active_source",
        "kv_true_bytes_per_token",
        "kv_crossover_over_true_ratio",
        "kv_crossover_over_true_scenario_low_ratio",
        "kv_crossover_over_true_scenario_high_ratio",
        "pooled",
        "pool_models",
        "pool_model_count",
        "pool_spread_ratio",
        "pool_plausible",
        "uplift_fit_low_per_mtok_context_frac",
        "uplift_fit_high_per_mtok_context_frac",
        "default_rule",
        "chip",
        "number_format",
        "kv_cache_format",
        *NAMES,
        "scenario_interval",
        "assumptions_defaulted",
    ),
)
FIT_CONTEXT_TIER_STEPS = ResultTable(
    name="fit_context_tier_steps",
    grain="first-party standard schedule x kind (tier step or fitted line) x context",
    key=("provider", "model", "kind", "context_tokens"),
    description=(
        "The input-price tiers of each first-party standard schedule as steps, and the line c(L) = a + k*L fitted "
        "to them (default rule), from context 0 to the schedule's end: what the Context pricing page draws"
    ),
    columns=(
        C("provider", "str", "", "key", "Provider (prices.provider)"),
        C("model", "str", "", "key", "Price key (prices.model)"),
        C("kind", "str", "", "key", "tier (the published price from this context on) or fit (the fitted line)"),
        C("context_tokens", "float", "tokens", "key", "Context where the point sits"),
        C(
            "usd_per_mtok",
            "float",
            "USD/MTok",
            "fit",
            "Input price at this context (tier) or the fitted c(L) (fit)",
            context_tiers.tier_steps,
        ),
        C("tier_min_prompt_tokens", "int", "tokens", "input", "The tier's threshold (tier rows)"),
        C("status", "str", "", "check", "Fit status of the line (fit rows)"),
        C(
            "slope_usd_per_mtok_per_mtok_context",
            "float",
            "USD/MTok per MTok of context",
            "fit",
            "The fitted slope k (fit rows)",
            context_tiers.fit_schedules,
        ),
    ),
)
FIT_CONTEXT_TIER_QUANTITIES = quantities_table("fit_context_tier_quantities", "fit_context_tiers")
TABLES = (FIT_CONTEXT_TIERS, FIT_CONTEXT_TIER_STEPS, FIT_CONTEXT_TIER_QUANTITIES)
