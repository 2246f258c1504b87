"""Descriptions and column comments of the ``fit_*`` tables written by :mod:`econ.analyses.pricing`.

One meaning per column name across the tables. Interval convention everywhere: ``…_fit_low/high`` is
the guarded wrapper's interval (kind in ``fit_interval_kind``: covariance, bootstrap, none = ±inf /
not identified, ``not a fit`` where the quantity is arithmetic on published prices); ``…_scenario_low/high``
is the 5-95 % Monte Carlo interval over the scenario's ranges (what it varies: ``scenario_interval``).
"""

from __future__ import annotations

_INTERVALS = (
    "Columns …_fit_low/high: the fitting wrapper's 90% interval (kind in fit_interval_kind; -inf/inf = "
    "not identified, e.g. an exact two-tier fit). Columns …_scenario_low/high: 90% Monte Carlo interval over "
    "the scenario's low/high ranges and chip/format alternatives (listed in scenario_interval), holding the "
    "fitted numbers at their estimates."
)

DESCRIPTIONS = {
    "fit_context_tiers": (
        "Long-context price tiers read backwards (lecture f.1-f.2): per schedule x price component x representative-"
        "context rule, the per-context-token cost slope of c(L) = a + k*L and the KV bytes per token it implies, by "
        "the "
        "slope reading b_kv = k*(1-margin)*W*mbu/p and by the crossover reading b_kv = b_w*N_act/(R*L*) at the first "
        "threshold; open-weight models add implied/true. One price source per model among tiered schedules (hand, else "
        "litellm, else openrouter; price_source says which). Pooled rows (pooled = true) fit one relative slope per "
        "provider over its standard schedules. "
        + _INTERVALS
        + " Grain: one row per price source x provider x model x variant x component x rule, plus pooled rows per "
        "provider x component x rule."
    ),
    "fit_io_prices": (
        "Output/input price ratio of every priced model (base tier, one price source per model) and what it implies "
        "under the roofline with compute-bound prefill and memory-bound decode (lecture f.3): rho = (mfu/mbu)*(B*0/B + "
        "L/L*), so B/B*0 = 1/(rho*mbu/mfu - L/L*) and, at the scenario batch B = m*B*0, decode mbu = mfu*(1/m + "
        "L/L*)/rho."
        " lecture_f3_check flags the lecture's inconsistency (rho near 5 with L* near 200k needs a batch below B*0); "
        "implied_decode_mbu_check flags an implied mbu above 1 (impossible: the roofline prices decode dearer than "
        "observed). "
        "Ratios of published prices: no fit interval. " + _INTERVALS + " Grain: one row per price source x provider x "
        "model x variant."
    ),
    "fit_io_market": (
        "Cross-model regression over every provider's standard price of an open-weight model with known architecture "
        "(OpenRouter hugging_face_id, LiteLLM keys embedding the HF repo, documented name rule): input = "
        "c_flop*2*N_act, "
        "output = c_flop*2*N_act + c_byte*(N_tot*b_w/B_eff + L*b_kv), weights 1/price (relative errors), at the "
        "scenario's context, weight and KV formats; derived chip-hour prices at the scenario chip. "
        + _INTERVALS
        + " Grain: one row per implied quantity (unit column)."
    ),
    "fit_io_market_residuals": (
        "Observed vs predicted price of every row in the fit_io_market regression. Grain: one row per price source x "
        "provider x model x component (input, output)."
    ),
    "fit_cache_tiers": (
        "Prompt-cache prices read backwards (lecture g.1-g.4): hold price = (write - input)/T for T = 5 min, 1 h, 12 "
        "h, "
        "or the published storage price per token-hour; hold cost = price*(1-margin), per GB-hour with KV bytes from "
        "the architecture (open models) or the long-context fit (crossover and slope readings, kv_method); compared "
        "with "
        "every memory tier and recompute (cost = retrieve + hold*T; cheapest_tier, fastest_covered_tier at the "
        "scenario "
        "margin) and with the g.4 drain-time rule. Base tier, one price source per model. "
        + _INTERVALS
        + " Grain: one row per price source x provider x model x variant x cache item x kv_method (row_id)."
    ),
    "fit_cache_tiers_by_memory_tier": (
        "Each fit_cache_tiers row against each memory_tiers row and recompute (lecture g.2): hold and retrieve cost, "
        "cost of holding for the item's time and reading once, and the cache price's margin over it; central "
        "assumptions. Grain: one row per fit_cache_tiers row_id x memory tier (recompute first)."
    ),
    "fit_fast_mode": (
        "Fast and priority variants (lecture a.5): price multiple m (output, fast/standard at the same tier) x "
        "published "
        "speed multiple s = batch ratio B0/B1 on the same replica; the roofline solver's baseline and fast batches "
        "relative to B*0 at the scenario context (and in sequences for open-weight models). One price source per "
        "model; rows without a published speed multiple are listed with status. "
        + _INTERVALS
        + " Grain: one row per price source x provider x model x variant x context tier."
    ),
}

COLUMNS = {
    # identity and selection
    "price_source": "Price source used for this model: hand (first-party tables), litellm or openrouter (one per "
    "model)",
    "price_provider": "Provider of the chosen price rows (prices.provider)",
    "price_model": "Price key of the chosen rows (prices.model); '(pooled)' on pooled rows",
    "name_key": "Model identity across sources: last path segment, lower-case, '.'/'_' as '-' "
    "(econ.fits.price_selection)",
    "source": "Price source (prices.source)",
    "provider": "Provider (prices.provider)",
    "model": "Price key (prices.model)",
    "variant": "standard, batch, flex, priority or fast",
    "arch_model": "models.model behind the price row (null for closed models)",
    "arch_match": "How the architecture was found: hugging_face_id, litellm_key or name (documented rule)",
    "params_total": "Architecture's total parameters N_tot [params]",
    "params_active": "Architecture's active parameters N_act [params]",
    "kv_bytes_per_token": "Architecture's KV bytes per context token at BF16 (models.kv_bytes_per_token) [bytes/token]",
    "tier_threshold_tokens": "First long-context threshold of the schedule (any variant), null without tiers [tokens]",
    # fit status
    "status": "Fit status from the wrapper (ok, exact, underdetermined, rank_deficient, at_bound), not_fitted, or "
    "why no fit",
    "fit_interval_kind": "Kind of the …_fit_low/high interval: covariance, bootstrap, none (±inf: not identified), "
    "not a fit",
    "n_points": "Points in the fit",
    "fit_message": "The wrapper's message (degrees of freedom, what is at a bound, …)",
    "interval_level_frac": "Two-sided level of every interval (0.9 = 5%-95%)",
    "scenario_interval": "What the …_scenario_low/high Monte Carlo interval varies (ranges, chip/format "
    "alternatives, draws)",
    "assumptions_defaulted": "Assumptions absent from the scenario that took the documented default "
    "(econ.fits.assumptions)",
    # stated assumptions
    "chip": "Serving chip assumed (scenario serving_chip)",
    "number_format": "Weight and math format assumed (scenario weight_format): b_w and F",
    "kv_cache_format": "KV-cache format assumed (scenario kv_cache_format); models.kv_bytes_per_token is scaled to it",
    "usd_per_chip_hour": "Rental price p assumed (scenario gpu_usd_per_hour) [USD/chip-hour]",
    "gross_margin_frac": "Gross margin assumed: cost = price x (1 - margin) (scenario gross_margin_frac)",
    "decode_mbu_frac": "Achieved fraction of HBM bandwidth in decode (scenario decode_mbu)",
    "prefill_mfu_frac": "Achieved fraction of peak FLOP/s in prefill (scenario prefill_mfu)",
    "context_tokens": "Typical context L assumed (scenario context_tokens) [tokens]",
    "frontier_active_params": "N_act assumed for closed models (scenario frontier_active_params) [params]",
    "batch_multiple_over_balance_ratio": "Decode batch over the balance batch assumed, m = B/B*0 (scenario)",
    # fit_context_tiers
    "n_tiers": "Tiers in the schedule",
    "tier_thresholds_tokens": "Tier thresholds, comma-separated [tokens]",
    "crossover_threshold_tokens": "First threshold above the base tier: the crossover reading's L* [tokens]",
    "component": "Price component: input, output or cache_read (fit_context_tiers); input or output (residuals)",
    "rule": "Representative-context rule: midpoint (default), lower, upper or geometric "
    "(econ.fits.context_tiers.RULES)",
    "default_rule": "True on the default rule's rows (midpoint)",
    "representative_contexts_tokens": "Each tier's representative context under the rule, comma-separated [tokens]",
    "base_price_usd_per_mtok": "Base-tier price of the component [USD/MTok]",
    "intercept_usd_per_mtok": "Fitted a of c(L) = a + k*L [USD/MTok]",
    "slope_usd_per_mtok_per_mtok_context": "Fitted k: price added per million context tokens [USD/MTok per MTok of "
    "context]",
    "slope_fit_low_usd_per_mtok_per_mtok_context": "Fit interval of k, low",
    "slope_fit_high_usd_per_mtok_per_mtok_context": "Fit interval of k, high",
    "uplift_per_mtok_context_frac": "Relative slope k/a (pooled rows: the common kappa): fraction of the "
    "zero-context price added per million context tokens",
    "uplift_fit_low_per_mtok_context_frac": "Fit interval of the pooled kappa, low",
    "uplift_fit_high_per_mtok_context_frac": "Fit interval of the pooled kappa, high",
    "max_abs_residual_frac": "Largest |fitted - observed| tier price over the base price",
    "kv_slope_bytes_per_token": "Slope reading: b_kv = k*(1-margin)*W*mbu/p [bytes/token]",
    "kv_slope_fit_low_bytes_per_token": "Fit interval of the slope reading, low [bytes/token]",
    "kv_slope_fit_high_bytes_per_token": "Fit interval of the slope reading, high [bytes/token]",
    "kv_slope_scenario_low_bytes_per_token": "Scenario interval of the slope reading, low [bytes/token]",
    "kv_slope_scenario_high_bytes_per_token": "Scenario interval of the slope reading, high [bytes/token]",
    "kv_crossover_bytes_per_token": "Crossover reading: b_kv = b_w*N_act/(R*L*) with L* = first threshold "
    "[bytes/token]",
    "kv_crossover_scenario_low_bytes_per_token": "Scenario interval of the crossover reading, low [bytes/token]",
    "kv_crossover_scenario_high_bytes_per_token": "Scenario interval of the crossover reading, high [bytes/token]",
    "params_active_used": "N_act used: the architecture's, else the scenario's frontier_active_params [params]",
    "params_active_source": "architecture or scenario frontier_active_params",
    "kv_true_bytes_per_token": "Architecture's KV bytes per token at the scenario's KV format (open-weight models) "
    "[bytes/token]",
    "kv_slope_over_true_ratio": "Slope reading / architecture's KV bytes (reported, not tuned)",
    "kv_slope_over_true_scenario_low_ratio": "Scenario interval of slope/true, low",
    "kv_slope_over_true_scenario_high_ratio": "Scenario interval of slope/true, high",
    "kv_crossover_over_true_ratio": "Crossover reading / architecture's KV bytes (reported, not tuned)",
    "kv_crossover_over_true_scenario_low_ratio": "Scenario interval of crossover/true, low",
    "kv_crossover_over_true_scenario_high_ratio": "Scenario interval of crossover/true, high",
    "pooled": "True on pooled rows (one relative slope for a provider's standard schedules)",
    "pool_models": "Members of the pool (price keys)",
    "pool_model_count": "Models in the pool",
    "pool_spread_ratio": "Max/min of the members' own relative slopes",
    "pool_plausible": "True where the members' relative slopes differ by at most 1.25x: one slope is plausible",
    # fit_io_prices
    "input_usd_per_mtok": "Input price [USD/MTok]",
    "output_usd_per_mtok": "Output price [USD/MTok]",
    "output_over_input_ratio": "rho = output price / input price",
    "critical_context_tokens": "L* used: architecture's b_w*N_act/(R*b_kv), else the first tier threshold, else null "
    "[tokens]",
    "critical_context_source": "architecture, price_tier_threshold, or none (KV term dropped: B/B*0 is a lower bound)",
    "context_over_critical_ratio": "L/L* at the scenario context (fast mode: at context_used_tokens; 0 where L* is "
    "unknown)",
    "context_used_tokens": "Context the fast-mode row is solved at: max(scenario context, the row's tier threshold) "
    "[tokens]",
    "regime": "memory_bound, rho_at_most_1 (decode not dearer than prefill) or kv_alone_exceeds_rho",
    "batch_over_balance_ratio": "Implied B/B*0 = 1/(rho*mbu/mfu - L/L*)",
    "batch_over_balance_scenario_low_ratio": "Scenario interval of B/B*0, low",
    "batch_over_balance_scenario_high_ratio": "Scenario interval of B/B*0, high",
    "implied_decode_mbu_frac": "Decode bandwidth efficiency that makes rho hold at B = m*B*0: mfu*(1/m + L/L*)/rho; "
    "null where rho <= 1; above 1 is impossible (see implied_decode_mbu_check) and kept "
    "as the factor by which the roofline over-prices decode",
    "implied_decode_mbu_check": "within 0-1; above 1: impossible (the prices and the roofline disagree at the "
    "scenario context and batch: filter these out before using the value as an "
    "efficiency); not identified (rho <= 1)",
    "implied_decode_mbu_scenario_low_frac": "Scenario interval of the implied mbu, low",
    "implied_decode_mbu_scenario_high_frac": "Scenario interval of the implied mbu, high",
    "predicted_output_over_input_ratio": "rho the roofline predicts at the scenario batch and context: max(1, "
    "(mfu/mbu)*(1/m + L/L*)) (decode costs at least its compute, which is "
    "prefill's)",
    "predicted_output_over_input_scenario_low_ratio": "Scenario interval of the predicted rho, low",
    "predicted_output_over_input_scenario_high_ratio": "Scenario interval of the predicted rho, high",
    "lecture_f3_check": "consistent; batch below the scenario's (f.3 inconsistency: implied B/B*0 below the "
    "scenario's lowest m); no batch fits (the KV read alone at the scenario context exceeds "
    "rho); or not identified (rho <= 1)",
    # fit_io_market
    "quantity": "Implied quantity (its unit in unit)",
    "unit": "Unit of estimate and the interval columns",
    "estimate": "Central estimate [unit]",
    "fit_low": "Fit interval, low [unit]",
    "fit_high": "Fit interval, high [unit]",
    "scenario_low": "Scenario interval, low [unit]",
    "scenario_high": "Scenario interval, high [unit]",
    "meaning": "What the quantity is and how it is computed",
    "n_price_rows": "Price rows in the regression",
    "n_models": "Architectures in the regression",
    "n_providers": "Providers in the regression",
    "observed_usd_per_mtok": "Published price [USD/MTok]",
    "predicted_usd_per_mtok": "Regression's price [USD/MTok]",
    "observed_over_predicted_ratio": "Published / predicted price",
    # fit_cache_tiers
    "row_id": "Row key shared with fit_cache_tiers_by_memory_tier",
    "cache_item": "write_5m, write_1h, write_12h (cache write prices) or storage_1h (storage price per token-hour)",
    "hold_time_s": "Hold time T the item pays for [s]",
    "kv_method": "Source of b_kv: architecture (open models), crossover (first tier threshold or 200k, scenario "
    "N_act) or slope (the model's standard input tiers, midpoint rule)",
    "crossover_source": "L* used by the crossover reading: the model's first tier threshold, or the lecture's 200k",
    "cache_read_usd_per_mtok": "Cache-read price [USD/MTok]",
    "item_price_usd_per_mtok": "Price of the cache item [USD/MTok, storage: USD/MTok-hour]",
    "premium_usd_per_mtok": "What holding for T costs the user: write - input, or storage x T [USD/MTok]",
    "cache_price_usd_per_mtok": "Premium + cache read: the price of holding for T and reading once [USD/MTok]",
    "hold_price_usd_per_mtok_hour": "Premium / T [USD/MTok-hour]",
    "kv_bytes_per_token_used": "b_kv used (kv_method) at the scenario's assumptions [bytes/token]",
    "kv_scenario_low_bytes_per_token": "Scenario interval of b_kv, low",
    "kv_scenario_high_bytes_per_token": "Scenario interval of b_kv, high",
    "hold_cost_usd_per_mtok_hour": "Hold price x (1 - margin) [USD/MTok-hour]",
    "hold_cost_scenario_low_usd_per_mtok_hour": "Scenario interval (margin), low",
    "hold_cost_scenario_high_usd_per_mtok_hour": "Scenario interval (margin), high",
    "hold_cost_usd_per_gb_hour": "Hold cost per GB of KV held for an hour = hold cost per token-hour / b_kv "
    "[USD/GB-hour]",
    "hold_cost_fit_low_usd_per_gb_hour": "Fit interval (slope reading's b_kv), low",
    "hold_cost_fit_high_usd_per_gb_hour": "Fit interval (slope reading's b_kv), high",
    "hold_cost_scenario_low_usd_per_gb_hour": "Scenario interval, low",
    "hold_cost_scenario_high_usd_per_gb_hour": "Scenario interval, high",
    "cheapest_tier": "Cheapest way to hold for T and read once (recompute or a memory tier; lecture g.2 argmin)",
    "cheapest_tier_device": "Device of the cheapest tier (memory_tiers.device)",
    "cheapest_tier_cost_usd_per_mtok": "Its cost: retrieve + hold x T [USD/MTok]",
    "margin_over_cheapest_frac": "1 - cheapest cost / cache price: the margin the price earns over the cheapest "
    "mechanism",
    "price_over_cheapest_cost_ratio": "Cache price / cheapest cost",
    "fastest_covered_tier": "Fastest stored tier (hbm > ddr > flash > disk) whose cost the price covers at the "
    "scenario margin",
    "drain_time_tier": "Tier whose drain time C/W is closest to T in log terms (lecture g.4)",
    "drain_time_tier_device": "Its device",
    "drain_time_tier_s": "Its drain time [s]",
    "tier": "recompute, hbm, ddr, flash or disk",
    "device": "memory_tiers.device, or the chip's forward pass for recompute",
    "drain_time_s": "C/W of the tier [s]",
    "tier_hold_cost_usd_per_mtok_hour": "(b_kv/C) x p_tier [USD/MTok-hour]",
    "tier_retrieve_cost_usd_per_mtok": "(b_kv/W) x p_tier, or the forward pass 2*N_act/(F*mfu) x p for recompute "
    "[USD/MTok]",
    "tier_cost_for_hold_time_usd_per_mtok": "retrieve + hold x T [USD/MTok]",
    "covered_at_scenario_margin": "True where tier cost <= cache price x (1 - margin)",
    "margin_over_tier_frac": "1 - tier cost / cache price",
    "price_over_tier_cost_ratio": "Cache price / tier cost",
    # fit_fast_mode
    "tier_min_prompt_tokens": "Context tier of the variant row [tokens]",
    "standard_tier_min_prompt_tokens": "Tier of the standard price used (largest <= the variant's) [tokens]",
    "standard_input_usd_per_mtok": "Standard input price at that tier [USD/MTok]",
    "standard_output_usd_per_mtok": "Standard output price at that tier [USD/MTok]",
    "speed_ratio": "Published speed multiple s (prices.speed_ratio)",
    "output_price_ratio": "m = variant / standard output price",
    "input_price_ratio": "Variant / standard input price",
    "batch_ratio": "B0/B1 = m*s on the same replica (lecture a.5; 6 x 2.5 = 15)",
    "solved": "False where the roofline has no (baseline, fast) pair giving s (s <= 1, m <= 1, or ratio out of reach)",
    "baseline_batch_over_balance_ratio": "Roofline's baseline batch B0/B*0",
    "baseline_batch_over_balance_scenario_low_ratio": "Scenario interval of B0/B*0, low",
    "baseline_batch_over_balance_scenario_high_ratio": "Scenario interval of B0/B*0, high",
    "fast_batch_over_balance_ratio": "Roofline's fast batch B1/B*0 = (B0/B*0)/(m*s)",
    "fast_batch_over_balance_scenario_low_ratio": "Scenario interval of B1/B*0, low",
    "fast_batch_over_balance_scenario_high_ratio": "Scenario interval of B1/B*0, high",
    "baseline_step_over_weight_read_ratio": "Baseline step time / weight-read time",
    "fast_step_over_weight_read_ratio": "Fast step time / weight-read time",
    "balance_batch_seqs": "B*0 = R*N_tot/N_act for open-weight models [sequences]",
    "baseline_batch_seqs": "Baseline batch for open-weight models [sequences]",
    "fast_batch_seqs": "Fast batch for open-weight models [sequences]",
}
