-- How far prompt-cache prices sit from the memory-tier boundaries (fit_cache_tiers): per memory tier, the cache
-- schedules whose implied hold cost is nearest its rental-equivalent $/GB-hour, and the median factor those prices
-- would have to move to cross to the next tier.
-- Grain: one row per memory tier that some schedule is nearest.
-- column nearest_tier: memory_tiers.tier the implied hold cost is nearest (in ratio)
-- column schedules: Cache schedules with a hold cost nearest this tier (count)
-- column median_flip_ratio: Median over them of fit_cache_tiers.boundary_distance_ratio (ratio)
with final as (
    select
        nearest_tier,
        count(*) as schedules,
        median(boundary_distance_ratio) as median_flip_ratio
    from fit_cache_tiers
    where nearest_tier is not null
    group by nearest_tier
)

select * from final order by schedules desc, nearest_tier
