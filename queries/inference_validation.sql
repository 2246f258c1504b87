-- Every price inference on the open-weight models whose architecture gives the true value: implied and true value,
-- their ratio, the published value (bias-corrected where the bias is significant, the correction estimated with the
-- model's whole architecture group left out) and its left-out prediction interval, whether it covers the truth, and
-- its interval score beside the no-price baseline's (the geometric mean of the other architecture groups' true
-- values). Each number is computed once, by the analysis that validates the quantity, and stored on its row of the
-- quantity's source table (inference_quantities.source_table: fit_context_tiers, fit_io_prices, fit_markup_rows,
-- markup_inversions); this view only puts those rows in one layout. The evidence every inferred number cites.
-- Grain: one row per inferred quantity x open-weights model x price schedule (first-party and resellers apart).
-- column quantity: Inferred quantity (inference_quantities.quantity)
-- column model: Open-weights model whose architecture gives the truth (models.model)
-- column architecture_group: The model's architecture group (model_derived.architecture_group): the unit left out together
-- column price_source: Price source of the schedule (hand, litellm, openrouter)
-- column price_provider: Seller
-- column price_model: Model id as the seller names it
-- column variant: Service variant (standard: the validated rows)
-- column price_from_date: First day of the price's period where the reading keeps every snapshot (the markup model); null: current
-- column price_column: The prices column read, where a schedule has several for one quantity (cache writes); null otherwise
-- column provider_kind: first_party (the model's maker) or reseller
-- column unit: Unit of implied_value, true_value and the intervals (inference_quantities.unit)
-- column implied_value: Value read from the price, uncorrected (the value the validation read) [unit column]
-- column true_value: The architecture's value (deployment model's terms) [unit column]
-- column implied_over_true_ratio: implied_value / true_value
-- column log_ratio: ln(implied/true)
-- column scenario_low_value: The reading's own interval, low (assumption ranges, Monte Carlo); null without one [unit column]
-- column scenario_high_value: The reading's own interval, high [unit column]
-- column scenario_interval_covers_true: Whether the reading's own interval covers the truth (false without one)
-- column published_value: The published value: implied * exp(-b_-m), b_-m the bias of the other architecture groups (where the bias is significant and the quantity is a reading), else implied [unit column]
-- column correction_factor_ratio: published / implied: exp(-b_-m), 1 where uncorrected
-- column validated_low_value: Validated interval, low: the published value's prediction interval from the other groups' errors [unit column]
-- column validated_high_value: Validated interval, high [unit column]
-- column interval_covers_true: Whether the validated interval covers the truth (cross-validated: its architecture group left out)
-- column baseline_value: No-price baseline: the geometric mean of the other architecture groups' true values [unit column]
-- column baseline_low_value: No-price baseline's prediction interval, low [unit column]
-- column baseline_high_value: No-price baseline's prediction interval, high [unit column]
-- column interval_score_log: Interval score of the validated interval, in ln (lower is better)
-- column baseline_interval_score_log: Interval score of the baseline's interval, in ln
with markup_rows as (
    select
        r.*,
        k.quantity
    from fit_markup_rows as r
    inner join fit_markups as k on r.component = k.component
),

checked as (
        select
            'decode_kv_read_bytes_per_context_token' as quantity,
            arch_model as model,
            source as price_source,
            provider as price_provider,
            model as price_model,
            variant as variant,
            null::date as price_from_date,
            null::varchar as price_column,
            provider_kind,
            kv_read_bytes_per_context_token as implied_value,
            true_kv_read_bytes_per_context_token as true_value,
            implied_over_true_ratio as implied_over_true_ratio,
            kv_read_log_ratio as log_ratio,
            kv_read_scenario_low_bytes_per_context_token as scenario_low_value,
            kv_read_scenario_high_bytes_per_context_token as scenario_high_value,
            kv_read_scenario_interval_covers_true as scenario_interval_covers_true,
            kv_read_published_bytes_per_context_token as published_value,
            kv_read_correction_factor_ratio as correction_factor_ratio,
            kv_read_validated_low_bytes_per_context_token as validated_low_value,
            kv_read_validated_high_bytes_per_context_token as validated_high_value,
            kv_read_interval_covers_true as interval_covers_true,
            kv_read_baseline_bytes_per_context_token as baseline_value,
            kv_read_baseline_low_bytes_per_context_token as baseline_low_value,
            kv_read_baseline_high_bytes_per_context_token as baseline_high_value,
            kv_read_interval_score_log as interval_score_log,
            kv_read_baseline_interval_score_log as baseline_interval_score_log
        from fit_context_tiers
        where kv_read_log_ratio is not null

        union all

        select
            'prefill_attention_flop_per_context_token' as quantity,
            arch_model as model,
            source as price_source,
            provider as price_provider,
            model as price_model,
            variant as variant,
            null::date as price_from_date,
            null::varchar as price_column,
            provider_kind,
            attention_flop_per_context_token as implied_value,
            true_attention_flop_per_context_token as true_value,
            implied_over_true_ratio as implied_over_true_ratio,
            attention_log_ratio as log_ratio,
            attention_scenario_low_flop_per_context_token as scenario_low_value,
            attention_scenario_high_flop_per_context_token as scenario_high_value,
            attention_scenario_interval_covers_true as scenario_interval_covers_true,
            attention_published_flop_per_context_token as published_value,
            attention_correction_factor_ratio as correction_factor_ratio,
            attention_validated_low_flop_per_context_token as validated_low_value,
            attention_validated_high_flop_per_context_token as validated_high_value,
            attention_interval_covers_true as interval_covers_true,
            attention_baseline_flop_per_context_token as baseline_value,
            attention_baseline_low_flop_per_context_token as baseline_low_value,
            attention_baseline_high_flop_per_context_token as baseline_high_value,
            attention_interval_score_log as interval_score_log,
            attention_baseline_interval_score_log as baseline_interval_score_log
        from fit_context_tiers
        where attention_log_ratio is not null

        union all

        select
            'kv_bytes_per_token_crossover' as quantity,
            arch_model as model,
            source as price_source,
            provider as price_provider,
            model as price_model,
            variant as variant,
            null::date as price_from_date,
            null::varchar as price_column,
            provider_kind,
            kv_crossover_bytes_per_token as implied_value,
            kv_true_bytes_per_token as true_value,
            kv_crossover_over_true_ratio as implied_over_true_ratio,
            kv_crossover_log_ratio as log_ratio,
            kv_crossover_scenario_low_bytes_per_token as scenario_low_value,
            kv_crossover_scenario_high_bytes_per_token as scenario_high_value,
            kv_crossover_scenario_interval_covers_true as scenario_interval_covers_true,
            kv_crossover_published_bytes_per_token as published_value,
            kv_crossover_correction_factor_ratio as correction_factor_ratio,
            kv_crossover_validated_low_bytes_per_token as validated_low_value,
            kv_crossover_validated_high_bytes_per_token as validated_high_value,
            kv_crossover_interval_covers_true as interval_covers_true,
            kv_crossover_baseline_bytes_per_token as baseline_value,
            kv_crossover_baseline_low_bytes_per_token as baseline_low_value,
            kv_crossover_baseline_high_bytes_per_token as baseline_high_value,
            kv_crossover_interval_score_log as interval_score_log,
            kv_crossover_baseline_interval_score_log as baseline_interval_score_log
        from fit_context_tiers
        where kv_crossover_log_ratio is not null and component = 'input'

        union all

        select
            'prefill_flop_per_input_token' as quantity,
            arch_model as model,
            source as price_source,
            provider as price_provider,
            model as price_model,
            variant as variant,
            null::date as price_from_date,
            null::varchar as price_column,
            provider_kind,
            prefill_flop_per_input_token as implied_value,
            true_prefill_flop_per_input_token as true_value,
            prefill_flop_over_true_ratio as implied_over_true_ratio,
            prefill_flop_log_ratio as log_ratio,
            prefill_flop_scenario_low_per_input_token as scenario_low_value,
            prefill_flop_scenario_high_per_input_token as scenario_high_value,
            prefill_flop_scenario_interval_covers_true as scenario_interval_covers_true,
            prefill_flop_published_per_input_token as published_value,
            prefill_flop_correction_factor_ratio as correction_factor_ratio,
            prefill_flop_validated_low_per_input_token as validated_low_value,
            prefill_flop_validated_high_per_input_token as validated_high_value,
            prefill_flop_interval_covers_true as interval_covers_true,
            prefill_flop_baseline_per_input_token as baseline_value,
            prefill_flop_baseline_low_per_input_token as baseline_low_value,
            prefill_flop_baseline_high_per_input_token as baseline_high_value,
            prefill_flop_interval_score_log as interval_score_log,
            prefill_flop_baseline_interval_score_log as baseline_interval_score_log
        from fit_io_prices
        where prefill_flop_log_ratio is not null

        union all

        select
            quantity as quantity,
            arch_model as model,
            source as price_source,
            provider as price_provider,
            model as price_model,
            'standard' as variant,
            from_date as price_from_date,
            price_column as price_column,
            provider_kind,
            read_cost_value as implied_value,
            cost_value as true_value,
            implied_over_true_ratio as implied_over_true_ratio,
            log_ratio as log_ratio,
            null::double as scenario_low_value,
            null::double as scenario_high_value,
            scenario_interval_covers_true as scenario_interval_covers_true,
            implied_cost_value as published_value,
            correction_factor_ratio as correction_factor_ratio,
            implied_cost_low_value as validated_low_value,
            implied_cost_high_value as validated_high_value,
            interval_covers_true as interval_covers_true,
            baseline_cost_value as baseline_value,
            baseline_cost_low_value as baseline_low_value,
            baseline_cost_high_value as baseline_high_value,
            interval_score_log as interval_score_log,
            baseline_interval_score_log as baseline_interval_score_log
        from markup_rows
        where log_ratio is not null

        union all

        select
            'active_params_from_input_price' as quantity,
            arch_model as model,
            source as price_source,
            provider as price_provider,
            model as price_model,
            'standard' as variant,
            from_date as price_from_date,
            null::varchar as price_column,
            provider_kind,
            active_params_raw as implied_value,
            true_active_params as true_value,
            active_params_implied_over_true_ratio as implied_over_true_ratio,
            active_params_log_ratio as log_ratio,
            null::double as scenario_low_value,
            null::double as scenario_high_value,
            active_params_scenario_interval_covers_true as scenario_interval_covers_true,
            implied_active_params as published_value,
            active_params_correction_factor_ratio as correction_factor_ratio,
            active_params_low as validated_low_value,
            active_params_high as validated_high_value,
            active_params_interval_covers_true as interval_covers_true,
            baseline_active_params as baseline_value,
            baseline_active_params_low as baseline_low_value,
            baseline_active_params_high as baseline_high_value,
            active_params_interval_score_log as interval_score_log,
            active_params_baseline_interval_score_log as baseline_interval_score_log
        from markup_inversions
        where active_params_log_ratio is not null

        union all

        select
            'kv_held_bytes_per_token_from_cache_price' as quantity,
            arch_model as model,
            source as price_source,
            provider as price_provider,
            model as price_model,
            'standard' as variant,
            from_date as price_from_date,
            null::varchar as price_column,
            provider_kind,
            kv_held_raw_bytes_per_token as implied_value,
            true_kv_held_bytes_per_token as true_value,
            kv_held_implied_over_true_ratio as implied_over_true_ratio,
            kv_held_log_ratio as log_ratio,
            null::double as scenario_low_value,
            null::double as scenario_high_value,
            kv_held_scenario_interval_covers_true as scenario_interval_covers_true,
            implied_kv_held_bytes_per_token as published_value,
            kv_held_correction_factor_ratio as correction_factor_ratio,
            kv_held_low_bytes_per_token as validated_low_value,
            kv_held_high_bytes_per_token as validated_high_value,
            kv_held_interval_covers_true as interval_covers_true,
            kv_held_baseline_bytes_per_token as baseline_value,
            kv_held_baseline_low_bytes_per_token as baseline_low_value,
            kv_held_baseline_high_bytes_per_token as baseline_high_value,
            kv_held_interval_score_log as interval_score_log,
            kv_held_baseline_interval_score_log as baseline_interval_score_log
        from markup_inversions
        where kv_held_log_ratio is not null
),

final as (
    select
        c.quantity,
        c.model,
        d.architecture_group,
        c.price_source,
        c.price_provider,
        c.price_model,
        c.variant,
        c.price_from_date,
        c.price_column,
        c.provider_kind,
        q.unit,
        c.implied_value,
        c.true_value,
        c.implied_over_true_ratio,
        c.log_ratio,
        c.scenario_low_value,
        c.scenario_high_value,
        c.scenario_interval_covers_true,
        c.published_value,
        c.correction_factor_ratio,
        c.validated_low_value,
        c.validated_high_value,
        c.interval_covers_true,
        c.baseline_value,
        c.baseline_low_value,
        c.baseline_high_value,
        c.interval_score_log,
        c.baseline_interval_score_log
    from checked as c
    inner join inference_quantities as q on c.quantity = q.quantity
    left join model_derived as d on c.model = d.model
)

select * from final
