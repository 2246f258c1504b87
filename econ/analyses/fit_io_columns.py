"""The columns only ``fit_io_prices``, ``fit_io_market`` and ``fit_io_market_residuals`` carry (the shared ones are in
``fit_columns``)."""

from __future__ import annotations

from econ.analyses.fit_columns import vocabulary
from econ.fits import io_prices, price_ratios
from econ.results import ResultColumn as C

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
        "L* used: architecture's b_w*N_act/(R*b_kv), else the first tier threshold, else null",
        io_prices.critical_context,
    ),
    C("estimate", "float", "unit", "inference", "Central estimate", io_prices.market_quantities),
    C("fit_high", "float", "unit", "inference", "Fit interval, high", io_prices.market_quantities),
    C("fit_low", "float", "unit", "inference", "Fit interval, low", io_prices.market_quantities),
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
        io_prices.market_residuals,
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
    C("predicted_usd_per_mtok", "float", "USD/MTok", "fit", "Regression's price", io_prices.market_residuals),
    C("quantity", "str", "", "key", "Implied quantity (its unit in unit)"),
    C(
        "regime",
        "str",
        "",
        "check",
        "memory_bound, rho_at_most_1 (decode not dearer than prefill) or kv_alone_exceeds_rho",
    ),
    C("scenario_high", "float", "unit", "inference", "Scenario interval, high", io_prices.market_quantities),
    C("scenario_low", "float", "unit", "inference", "Scenario interval, low", io_prices.market_quantities),
    C("unit", "str", "", "input", "Unit of estimate and the interval columns"),
)
