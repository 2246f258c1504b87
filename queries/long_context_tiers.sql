-- Current long-context tiers: every tier above the base tier, next to the base tier, with the uplift ratios of
-- price_tier_ratios. A tier bills the whole request at its rate once the prompt exceeds tier_min_prompt_tokens.
-- Grain: one row per source x provider x model x variant x tier above 0 (models with more than one tier).
-- column tier_count: Tiers of the schedule (source x provider x model x variant), the base tier included
-- column tier_index: Position of this tier in its schedule (1 = the first above the base tier)
-- column base_input_usd_per_mtok: Uncached input price of the base tier (tier_min_prompt_tokens 0) [USD/MTok]
-- column base_output_usd_per_mtok: Output price of the base tier [USD/MTok]
-- column base_cache_read_usd_per_mtok: Cache-read price of the base tier [USD/MTok]
with base as (
    select * from price_current where tier_min_prompt_tokens = 0
),

tiers as (
    select
        *,
        count(*) over (partition by source, provider, model, variant) as tier_count,
        row_number() over (
            partition by source, provider, model, variant order by tier_min_prompt_tokens
        ) - 1 as tier_index
    from price_current
),

final as (
    select
        t.source,
        t.provider,
        t.model,
        t.variant,
        t.tier_count,
        t.tier_index,
        t.tier_min_prompt_tokens,
        t.max_input_tokens,
        b.input_usd_per_mtok as base_input_usd_per_mtok,
        t.input_usd_per_mtok,
        b.output_usd_per_mtok as base_output_usd_per_mtok,
        t.output_usd_per_mtok,
        b.cache_read_usd_per_mtok as base_cache_read_usd_per_mtok,
        t.cache_read_usd_per_mtok,
        r.input_uplift_ratio,
        r.output_uplift_ratio,
        r.cache_read_uplift_ratio,
        t.hugging_face_id,
        t.from_date,
        t.source_url
    from tiers as t
    inner join base as b
        on t.source = b.source and t.provider = b.provider and t.model = b.model and t.variant = b.variant
    inner join price_tier_ratios as r
        on r.source = t.source and r.provider = t.provider and r.model = t.model and r.variant = t.variant
        and r.tier_min_prompt_tokens = t.tier_min_prompt_tokens
        and r.tier_from_date = t.from_date and r.base_from_date = b.from_date
    where t.tier_count > 1 and t.tier_min_prompt_tokens > 0
)

select * from final
