"""The columns every price-inference table shares (price row keys, status, intervals, assumptions), and how a
table picks its columns by name from a vocabulary: one meaning, unit, kind and function per name.

Each ``fit_*`` analysis adds its own columns in ``fit_*_columns`` and picks from both (:func:`vocabulary`).
"""

from __future__ import annotations

from collections.abc import Callable

from econ.fits import cache_tiers, io_prices
from econ.results import ResultColumn as C

INTERVALS = (
    "Columns …_fit_low/high: the fitting wrapper's 90% interval (kind in fit_interval_kind; -inf/inf = "
    "not identified, e.g. an exact two-tier fit). Columns …_scenario_low/high: 90% Monte Carlo interval over "
    "the scenario's low/high ranges and chip/format alternatives (listed in scenario_interval), holding the "
    "fitted numbers at their estimates."
)


SHARED = {
    c.name: c
    for c in (
        C(
            "arch_match",
            "str",
            "",
            "input",
            "How the architecture was found: hugging_face_id, litellm_key or name (documented rule)",
        ),
        C("arch_model", "str", "", "input", "models.model behind the price row (null for closed models)"),
        C(
            "assumptions_defaulted",
            "str",
            "",
            "assumption",
            "Assumptions absent from the scenario that took the documented default (econ.fits.assumptions)",
        ),
        C("chip", "str", "", "assumption", "Serving chip assumed (scenario serving_chip)"),
        C(
            "component",
            "str",
            "",
            "key",
            "Price component: input, output or cache_read (fit_context_tiers); input or output (residuals)",
        ),
        C(
            "context_over_critical_ratio",
            "float",
            "",
            "derived",
            "L/L* at the scenario context (fast mode: at context_used_tokens; 0 where L* is unknown)",
            io_prices.model_ratios,
        ),
        C("context_tokens", "float", "tokens", "assumption", "Typical context L assumed (scenario context_tokens)"),
        C(
            "critical_context_source",
            "str",
            "",
            "input",
            "architecture, price_tier_threshold, or none (KV term dropped: B/B*0 is a lower bound)",
        ),
        C(
            "decode_mbu_frac",
            "float",
            "",
            "assumption",
            "Achieved fraction of HBM bandwidth in decode (scenario decode_mbu_frac)",
        ),
        C(
            "fit_interval_kind",
            "str",
            "",
            "check",
            "Kind of the …_fit_low/high interval: covariance, bootstrap, none (±inf: not identified), not a fit",
        ),
        C("fit_message", "str", "", "check", "The wrapper's message (degrees of freedom, what is at a bound, …)"),
        C(
            "frontier_active_params",
            "float",
            "params",
            "assumption",
            "N_act assumed for closed models (scenario frontier_active_params)",
        ),
        C(
            "gross_margin_frac",
            "float",
            "",
            "assumption",
            "Gross margin assumed: cost = price x (1 - margin) (scenario gross_margin_frac)",
        ),
        C("input_usd_per_mtok", "float", "USD/MTok", "input", "Input price"),
        C(
            "kv_bytes_per_token",
            "float",
            "bytes/token",
            "input",
            "Architecture's KV bytes per context token at BF16 (models.kv_bytes_per_token)",
        ),
        C(
            "kv_cache_format",
            "str",
            "",
            "assumption",
            "KV-cache format assumed (scenario kv_cache_format); models.kv_bytes_per_token is scaled to it",
        ),
        C("model", "str", "", "key", "Price key (prices.model); '(pooled)' on fit_context_tiers' pooled rows"),
        C("n_points", "int", "", "check", "Points in the fit"),
        C(
            "name_key",
            "str",
            "",
            "input",
            "Model identity across sources: last path segment, lower-case, '.'/'_' as '-' (econ.fits.price_selection)",
        ),
        C(
            "number_format",
            "str",
            "",
            "assumption",
            "Weight and math format assumed (scenario weight_format): b_w and F",
        ),
        C("output_usd_per_mtok", "float", "USD/MTok", "input", "Output price"),
        C("params_active", "float", "params", "input", "Architecture's active parameters N_act"),
        C("params_active_source", "str", "", "input", "architecture or scenario frontier_active_params"),
        C(
            "params_active_used",
            "float",
            "params",
            "input",
            "N_act used: the architecture's, else the scenario's frontier_active_params",
        ),
        C("params_total", "float", "params", "input", "Architecture's total parameters N_tot"),
        C(
            "prefill_mfu_frac",
            "float",
            "",
            "assumption",
            "Achieved fraction of peak FLOP/s in prefill (scenario prefill_mfu_frac)",
        ),
        C("provider", "str", "", "key", "Provider (prices.provider)"),
        C(
            "provider_kind",
            "str",
            "",
            "input",
            "first_party (the open model's own lab sells it), reseller (any other seller of the weights), null for a "
            "closed model (econ.fits.price_selection.LAB_PROVIDERS)",
        ),
        C(
            "tier_context_density_exponent_ratio",
            "float",
            "",
            "assumption",
            "alpha of the within-tier prompt density L^-alpha (scenario tier_context_density_exponent_ratio)",
        ),
        C(
            "scenario_interval",
            "str",
            "",
            "assumption",
            "What the …_scenario_low/high Monte Carlo interval varies (ranges, chip/format alternatives, draws)",
        ),
        C(
            "source",
            "str",
            "",
            "key",
            "Price source (prices.source): hand, litellm or openrouter; a fit reads one source per model "
            "(pooled rows: the sources pooled)",
        ),
        C(
            "status",
            "str",
            "",
            "check",
            "Fit status from the wrapper (ok, exact, underdetermined, rank_deficient, "
            "at_bound), not_fitted, or why no fit",
        ),
        C(
            "tier_min_prompt_tokens",
            "int",
            "tokens",
            "inference",
            "Context tier of the variant row",
            cache_tiers.compare_tiers,
        ),
        C(
            "tier_threshold_tokens",
            "float",
            "tokens",
            "inference",
            "First long-context threshold of the schedule (any variant), null without tiers",
            cache_tiers.compare_tiers,
        ),
        C(
            "usd_per_chip_hour",
            "float",
            "USD/chip-hour",
            "assumption",
            "Rental price p assumed (scenario usd_per_chip_hour)",
        ),
        C("variant", "str", "", "key", "standard, batch, flex, priority or fast"),
    )
}


def vocabulary(*own: C) -> Callable[..., tuple[C, ...]]:
    """A picker over the shared columns and ``own``: ``columns("model", "kv_slope", …)`` -> their declarations,
    in that order. A name declared twice is refused."""
    names = {c.name: c for c in own}
    if twice := sorted(set(names) & set(SHARED)):
        raise ValueError(f"declared twice: {', '.join(twice)}")
    merged = {**SHARED, **names}

    def columns(*picked: str) -> tuple[C, ...]:
        return tuple(merged[n] for n in picked)

    return columns
