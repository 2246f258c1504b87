"""The columns only ``fit_fast_mode`` and ``fit_fast_mode_guides`` carry (the shared ones are in ``fit_columns``)."""

from __future__ import annotations

from econ.analyses.fit_columns import vocabulary
from econ.fits import fast_mode, price_ratios
from econ.physics import fast_mode as physics_fast_mode
from econ.physics import roofline
from econ.results import ResultColumn as C

columns = vocabulary(
    C(
        "balance_batch_seqs",
        "float",
        "sequences",
        "bound",
        "B*0 = R*N_tot/N_act for open-weight models",
        roofline.balance_batch,
    ),
    C(
        "baseline_batch_over_balance_ratio",
        "float",
        "",
        "inference",
        "Roofline's baseline batch B0/B*0",
        physics_fast_mode.implied_batches,
    ),
    C(
        "baseline_batch_over_balance_scenario_high_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of B0/B*0, high",
        physics_fast_mode.implied_batches,
    ),
    C(
        "baseline_batch_over_balance_scenario_low_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of B0/B*0, low",
        physics_fast_mode.implied_batches,
    ),
    C(
        "baseline_batch_seqs",
        "float",
        "sequences",
        "inference",
        "Baseline batch for open-weight models",
        physics_fast_mode.implied_batches,
    ),
    C(
        "baseline_step_over_weight_read_ratio",
        "float",
        "",
        "inference",
        "Baseline step time / weight-read time",
        physics_fast_mode.implied_batches,
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
        "Context the fast-mode row is solved at: max(scenario context, the row's tier threshold)",
        fast_mode.implied,
    ),
    C(
        "fast_batch_over_balance_ratio",
        "float",
        "",
        "inference",
        "Roofline's fast batch B1/B*0 = (B0/B*0)/(m*s)",
        physics_fast_mode.implied_batches,
    ),
    C(
        "fast_batch_over_balance_scenario_high_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of B1/B*0, high",
        physics_fast_mode.implied_batches,
    ),
    C(
        "fast_batch_over_balance_scenario_low_ratio",
        "float",
        "",
        "inference",
        "Scenario interval of B1/B*0, low",
        physics_fast_mode.implied_batches,
    ),
    C(
        "fast_batch_seqs",
        "float",
        "sequences",
        "inference",
        "Fast batch for open-weight models",
        physics_fast_mode.implied_batches,
    ),
    C(
        "fast_step_over_weight_read_ratio",
        "float",
        "",
        "inference",
        "Fast step time / weight-read time",
        physics_fast_mode.implied_batches,
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
        "solved",
        "bool",
        "",
        "check",
        "False where the roofline has no (baseline, fast) pair giving s (s <= 1, m <= 1, or ratio out of reach)",
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
)
