"""The columns only ``fit_io_prices``, ``fit_io_market`` and ``fit_io_market_residuals`` carry (the shared ones are in
``fit_columns``)."""

from __future__ import annotations

from econ.analyses.fit_columns import vocabulary
from econ.analyses.validation_evidence import evidence_columns, evidence_names
from econ.fits import io_market, io_prices, measured_decode, price_ratios, validation
from econ.physics import sharding, traffic_cost
from econ.results import ResultColumn as C

PREFILL_EVIDENCE = evidence_names("prefill_flop", "per_input_token", ratio_stored=True)  # prefill_flop_over_true_ratio
"""The prefill reading's validation evidence on ``fit_io_prices``' open rows
(:mod:`econ.analyses.validation_evidence`)."""

columns = vocabulary(
    C(
        "batch_multiple_over_balance_ratio",
        "float",
        "",
        "assumption",
        "Decode batch over the balance batch assumed, m = B/B*0 (scenario)",
    ),
    C(
        "batch_over_balance_ratio",
        "float",
        "",
        "inference",
        "Implied B/B*0 = 1/(rho*mbu/mfu - L/L*)",
        io_prices.implied_batch_over_balance,
    ),
    C(
        "batch_over_balance_scenario_high_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of B/B*0, high",
        io_prices.implied_batch_over_balance,
    ),
    C(
        "batch_over_balance_scenario_low_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of B/B*0, low",
        io_prices.implied_batch_over_balance,
    ),
    C(
        "critical_context_tokens",
        "float",
        "tokens",
        "derived",
        "L* from the architecture, b_w*N_act/(R*b_kv); null for a closed model (its KV term is dropped: the first "
        "tier threshold is not L*, see inference_quantities)",
        io_prices.critical_context,
    ),
    C("estimate", "float", "unit", "inference", "Central estimate", io_market.market_quantities),
    C("fit_high", "float", "unit", "inference", "Fit interval, high", io_market.market_quantities),
    C("fit_low", "float", "unit", "inference", "Fit interval, low", io_market.market_quantities),
    C(
        "implied_decode_mbu_check",
        "str",
        "",
        "check",
        "within 0-1; above 1: impossible (the prices and the roofline "
        "disagree at the scenario context and batch: filter these out "
        "before using the value as an efficiency); not identified (rho "
        "<= 1)",
    ),
    C(
        "implied_decode_mbu_frac",
        "float",
        "",
        "inference",
        "Decode bandwidth efficiency that makes rho hold at B = "
        "m*B*0: mfu*(1/m + L/L*)/rho; null where rho <= 1; above "
        "1 is impossible (see implied_decode_mbu_check) and kept "
        "as the factor by which the roofline over-prices decode",
        io_prices.implied_decode_mbu,
    ),
    C(
        "implied_decode_mbu_scenario_high_frac",
        "float",
        "",
        "inference",
        "Scenario interval of the implied mbu, high",
        io_prices.implied_decode_mbu,
    ),
    C(
        "implied_decode_mbu_scenario_low_frac",
        "float",
        "",
        "inference",
        "Scenario interval of the implied mbu, low",
        io_prices.implied_decode_mbu,
    ),
    C("interval_level_frac", "float", "", "check", "Two-sided level of every interval (0.9 = 5%-95%)"),
    C(
        "lecture_f3_check",
        "str",
        "",
        "check",
        "consistent; batch below the scenario's (f.3 inconsistency: implied "
        "B/B*0 below the scenario's lowest m); no batch fits (the KV read "
        "alone at the scenario context exceeds rho); or not identified (rho <= "
        "1)",
    ),
    C("meaning", "str", "", "input", "What the quantity is and how it is computed"),
    C("n_models", "int", "", "check", "Architectures in the regression"),
    C("n_price_rows", "int", "", "check", "Price rows in the regression"),
    C("n_providers", "int", "", "check", "Providers in the regression"),
    C(
        "observed_over_predicted_ratio",
        "float",
        "",
        "fit",
        "Published / predicted price",
        io_market.market_residuals,
    ),
    C("observed_usd_per_mtok", "float", "USD/MTok", "input", "Published price"),
    C(
        "output_over_input_ratio",
        "float",
        "",
        "derived",
        "rho = output price / input price",
        price_ratios.price_ratio,
    ),
    C(
        "predicted_output_over_input_ratio",
        "float",
        "",
        "bound",
        "rho the roofline predicts at the scenario batch "
        "and context: max(1, (mfu/mbu)*(1/m + L/L*)) "
        "(decode costs at least its compute, which is "
        "prefill's)",
        io_prices.price_ratio_roofline,
    ),
    C(
        "predicted_output_over_input_scenario_high_ratio",
        "float",
        "",
        "bound",
        "Scenario interval of the predicted rho, high",
        io_prices.price_ratio_roofline,
    ),
    C(
        "predicted_output_over_input_scenario_low_ratio",
        "float",
        "",
        "bound",
        "Scenario interval of the predicted rho, low",
        io_prices.price_ratio_roofline,
    ),
    C("predicted_usd_per_mtok", "float", "USD/MTok", "fit", "Regression's price", io_market.market_residuals),
    C("quantity", "str", "", "key", "Implied quantity (its unit in unit)"),
    C(
        "regime",
        "str",
        "",
        "check",
        "memory_bound, rho_at_most_1 (decode not dearer than prefill) or kv_alone_exceeds_rho",
    ),
    C("scenario_high", "float", "unit", "inference", "Scenario interval, high", io_market.market_quantities),
    C("scenario_low", "float", "unit", "inference", "Scenario interval, low", io_market.market_quantities),
    C("unit", "str", "", "input", "Unit of estimate and the interval columns"),
    C(
        "combined_high",
        "float",
        "unit",
        "inference",
        "Fit and scenario intervals combined in log quadrature, high",
        io_market.combined_interval,
    ),
    C(
        "combined_low",
        "float",
        "unit",
        "inference",
        "Fit and scenario intervals combined in log quadrature, low",
        io_market.combined_interval,
    ),
    C(
        "status_reason",
        "str",
        "",
        "check",
        "Why the status: the two chip-hour prices agree within their combined intervals, or by how much they do not",
        io_market.consistency,
    ),
    C(
        "check",
        "str",
        "",
        "check",
        "effective_batch_seqs: against measured systems (DeepSeek's decode replica); chip-hour rows: the agreement",
        measured_decode.batch_check,
    ),
    C(
        "decode_context_tokens",
        "float",
        "tokens",
        "assumption",
        "Mean decode context of the scenario's traffic mix, L_dec = mean prompt + n_out/2 (the fleet's)",
    ),
    C(
        "prompt_cache_hit_frac",
        "float",
        "",
        "assumption",
        "Share of prompt tokens served from the prompt cache (scenario prompt_cache_hit_frac): prefill runs the rest "
        "after the cached prefix",
    ),
    C(
        "prefill_flop_per_input_token",
        "float",
        "FLOP/token",
        "inference",
        "Input price read as prefill FLOPs per uncached prompt token: p_in*(1-margin)*F*mfu/p (compute-bound prefill)",
        io_prices.prefill_flop_from_price,
    ),
    C(
        "prefill_flop_scenario_low_per_input_token",
        "float",
        "FLOP/token",
        "inference",
        "Scenario interval of the prefill reading, low",
        io_prices.prefill_flop_from_price,
    ),
    C(
        "prefill_flop_scenario_high_per_input_token",
        "float",
        "FLOP/token",
        "inference",
        "Scenario interval of the prefill reading, high",
        io_prices.prefill_flop_from_price,
    ),
    C(
        "prefill_flop_published_per_input_token",
        "float",
        "FLOP/token",
        "inference",
        "The published prefill reading: bias-corrected, x*exp(-b), where the bias on open models is significant "
        "(b estimated with the row's own model left out), else the reading itself",
        validation.validate,
    ),
    C(
        "prefill_flop_validated_low_per_input_token",
        "float",
        "FLOP/token",
        "inference",
        "Validated interval of the published reading, low: the left-out prediction interval of the open models' errors",
        validation.left_out,
    ),
    C(
        "prefill_flop_validated_high_per_input_token",
        "float",
        "FLOP/token",
        "inference",
        "Validated interval of the published reading, high",
        validation.left_out,
    ),
    *evidence_columns(PREFILL_EVIDENCE, "FLOP/token", "Prefill reading"),
    C(
        "true_prefill_flop_per_input_token",
        "float",
        "FLOP/token",
        "derived",
        "Open models: weight and attention FLOPs per uncached prompt token at the traffic mix (deployment model)",
        traffic_cost.prefill_at_mix,
    ),
    C(
        "prefill_flop_over_true_ratio",
        "float",
        "",
        "inference",
        "Open models: the prefill reading / the architecture's FLOPs per token",
        io_prices.prefill_reading,
    ),
    C(
        "implied_decode_batch_seqs",
        "float",
        "sequences",
        "inference",
        "Open models: the decode batch per replica at which the deployment model's decode cost per generated token "
        "over its prefill cost per prompt token (traffic mix, default layout) equals rho",
        traffic_cost.implied_batch,
    ),
    C(
        "implied_decode_batch_status",
        "str",
        "",
        "check",
        "ok; above_batch_1 (decode priced dearer than one sequence costs); below_memory_cap (cheaper than the "
        "largest batch that fits costs); rho_not_above_1; no_prefill_cost; or not deployed (closed model)",
        traffic_cost.implied_batch,
    ),
    C(
        "implied_decode_batch_check",
        "str",
        "",
        "check",
        "The implied batch per chip against measured systems (DeepSeek decode: about 90 sequences per H800)",
        measured_decode.batch_check,
    ),
    C(
        "balance_batch_seqs",
        "float",
        "sequences",
        "bound",
        "Open models: B*0 = R*N_tot/N_act at the scenario chip and format",
        traffic_cost.implied_batch,
    ),
    C(
        "decode_memory_cap_seqs",
        "float",
        "sequences",
        "bound",
        "Open models: the largest decode batch whose weights and cache at the decode context fit the default layout",
        traffic_cost.implied_batch,
    ),
    C(
        "replica_chips",
        "float",
        "chips",
        "derived",
        "Chips of the open model's default layout at the scenario chip",
        sharding.replica_chips,
    ),
    *(
        C(name, "float", unit, "derived", meaning, traffic_cost.prefill_at_mix)
        for name, unit, meaning in (
            (
                "decode_flop_per_output_token",
                "FLOP/token",
                "Weight and attention FLOPs per generated token at the decode context (deployment model)",
            ),
            ("weight_bytes_per_step", "bytes", "N_tot*b_w: the weights a decode step reads (all experts touched)"),
            (
                "decode_kv_read_bytes_per_output_token",
                "bytes/token",
                "Cache bytes a generated token reads at the decode context (deployment model)",
            ),
        )
    ),
)
