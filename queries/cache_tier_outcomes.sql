-- What prompt-cache prices say about the memory tier behind them (fit_cache_tiers): per outcome, how many standard
-- cache schedules with a hold cost reach it. A tier is identified only where exactly one memory tier's holding cost
-- lies inside the hold price's interval; otherwise the outcome lists the tiers that remain.
-- Grain: one row per outcome (identified: <tier>, or the status naming the tiers that remain).
-- column outcome: identified: <tier>, or fit_cache_tiers.tier_status (not identified: consistent with …)
-- column schedules: Standard cache schedules with a hold cost that reach this outcome (count)
-- column providers: Distinct sellers among them (count)
-- column provider_list: Those sellers, comma-separated
with final as (
    select
        case when identified_tier is not null then 'identified: ' || identified_tier else tier_status end as outcome,
        count(*) as schedules,
        count(distinct provider) as providers,
        string_agg(distinct provider, ', ' order by provider) as provider_list
    from fit_cache_tiers
    where variant = 'standard' and hold_cost_usd_per_gb_hour is not null
    group by outcome
)

select * from final order by schedules desc, outcome
