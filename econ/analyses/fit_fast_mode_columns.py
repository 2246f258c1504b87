"""The columns only ``fit_fast_mode``, ``fit_fast_mode_explanations`` and ``fit_fast_mode_guides`` carry (the shared
ones are in ``fit_columns``)."""

from __future__ import annotations

from econ.analyses import fast_mode_search
from econ.analyses.fit_columns import vocabulary
from econ.fits import fast_mode, price_ratios
from econ.physics import fast_mode as physics_fast_mode
from econ.results import ResultColumn as C

_ALLOWED = (
    "Share of the reference architectures (the model's own for an open model, every deployed open model for a "
    "closed one) on which the deployment model reaches s x the baseline speed per user for a cost multiple the price "
    "multiple m explains at the scenario's margin range (m/rho_hi <= need <= m/rho_lo), {what}"
)
_DEAR = "Share of the reference architectures on which {what} needs more than m/rho_lo: too dear at any margin"
_CHEAP = (
    "Share of the reference architectures on which {what} needs less than m/rho_hi: the price multiple exceeds what "
    "any margin in the range explains"
)
_WHAT = {
    "smaller_batch": "a smaller batch on the same replica",
    "more_chips": "a wider replica",
    "speculation": "speculative decoding alone",
    "any_combination": "any combination",
}

columns = vocabulary(
    C(
        "user_speed_target_tokens_per_s",
        "float",
        "tokens/s",
        "assumption",
        "Speed per user the standard product is assumed to meet (scenario): the baseline is the cheapest point at it",
    ),
    C(
        "baseline_replica_chips",
        "float",
        "chips",
        "assumption",
        "Chips of the reference model's baseline replica (cheapest layout meeting the speed target)",
        fast_mode_search.points,
    ),
    C(
        "batch_ratio",
        "float",
        "",
        "derived",
        "B0/B1 = m*s on the same replica (lecture a.5; 6 x 2.5 = 15)",
        physics_fast_mode.batch_ratio,
    ),
    C(
        "context_used_tokens",
        "float",
        "tokens",
        "assumption",
        "Decode context the row is read at: max(the traffic mix's mean decode context, the row's tier threshold)",
        fast_mode.explain,
    ),
    C("input_price_ratio", "float", "", "derived", "Variant / standard input price", price_ratios.price_ratio),
    C(
        "output_price_ratio",
        "float",
        "",
        "derived",
        "m = variant / standard output price",
        price_ratios.price_ratio,
    ),
    C(
        "smaller_batch_allowed_frac",
        "float",
        "",
        "inference",
        _ALLOWED.format(what="with a smaller batch on the same replica (the lecture's a.5 reading)"),
        fast_mode.explain,
    ),
    C(
        "more_chips_allowed_frac",
        "float",
        "",
        "inference",
        _ALLOWED.format(what="with a wider replica (any layout of the search grid with at least the default's chips)"),
        fast_mode.explain,
    ),
    C(
        "speculation_allowed_frac",
        "float",
        "",
        "inference",
        _ALLOWED.format(what="with speculative decoding alone (1-3 draft tokens at the scenario's acceptance rate)"),
        fast_mode.explain,
    ),
    C(
        "any_combination_allowed_frac",
        "float",
        "",
        "inference",
        _ALLOWED.format(what="with any layout x batch x draft tokens"),
        fast_mode.explain,
    ),
    *(
        C(f"{e}_{what}_frac", "float", "", "inference", text.format(what=_WHAT[e]), fast_mode.explain)
        for e in _WHAT
        for what, text in (("too_dear", _DEAR), ("too_cheap", _CHEAP))
    ),
    C(
        "implied_markup_ratio",
        "float",
        "",
        "inference",
        "m / the cost multiple any combination needs: the fast mode's markup over standard (median over the "
        "reference architectures; per architecture and explanation in fit_fast_mode_explanations)",
        fast_mode.explain,
    ),
    C(
        "implied_markup_low_ratio",
        "float",
        "",
        "inference",
        "Lowest over the reference architectures",
        fast_mode.explain,
    ),
    C(
        "implied_markup_high_ratio",
        "float",
        "",
        "inference",
        "Highest over the reference architectures",
        fast_mode.explain,
    ),
    C(
        "verdict",
        "str",
        "",
        "inference",
        "explained, too dear (needs more than m/rho_lo), too cheap (less than m/rho_hi) or unreachable (no point "
        "that fast)",
        fast_mode.explain,
    ),
    C("reference_models", "int", "", "check", "Reference architectures the row was read against"),
    C(
        "explanations",
        "str",
        "",
        "label",
        "Which explanations the published (m, s) allow: '<explanation>: <allowed> of <reference architectures>'",
    ),
    C("speed_ratio", "float", "", "input", "Published speed multiple s (prices.speed_ratio)"),
    C("standard_input_usd_per_mtok", "float", "USD/MTok", "input", "Standard input price at that tier"),
    C("standard_output_usd_per_mtok", "float", "USD/MTok", "input", "Standard output price at that tier"),
    C(
        "standard_tier_min_prompt_tokens",
        "int",
        "tokens",
        "input",
        "Tier of the standard price used (largest <= the variant's)",
    ),
    C("reference_model", "str", "", "key", "Open model whose deployment the row is priced on (models.model)"),
    C(
        "explanation",
        "str",
        "",
        "key",
        "smaller_batch, more_chips, speculation or any_combination (econ.physics.fast_mode.EXPLANATIONS)",
    ),
    C(
        "speed_reach_ratio",
        "float",
        "",
        "inference",
        "Largest speed per user the explanation's points reach over the baseline's",
        physics_fast_mode.cost_multiple_for_speed,
    ),
    C(
        "cost_multiple_needed_ratio",
        "float",
        "",
        "inference",
        "Cheapest cost per token over the baseline's among the explanation's points at least s x faster (null: none)",
        physics_fast_mode.cost_multiple_for_speed,
    ),
    C("allowed", "bool", "", "inference", "m/rho_hi <= cost_multiple_needed_ratio <= m/rho_lo", fast_mode.explain),
    C(
        "baseline_batch_seqs",
        "float",
        "sequences",
        "assumption",
        "The reference model's baseline decode batch: the cheapest point without speculation meeting the speed target",
        fast_mode_search.points,
    ),
    C(
        "baseline_tokens_per_s_per_user",
        "float",
        "tokens/s",
        "bound",
        "The reference model's baseline decode speed per user (deployment model, scenario efficiencies)",
        fast_mode_search.points,
    ),
)
