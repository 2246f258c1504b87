-- Prompt-cache prices as multiples of the uncached input price (lecture section g.3: read ~0.1x, 5-minute write
-- 1.25x, 1-hour write 2x); the ratios are price_ratios' columns.
-- Grain: one row per source x provider x model x variant x context tier with a positive input price and a cache price.
with final as (
    select
        p.source,
        p.provider,
        p.model,
        p.variant,
        p.tier_min_prompt_tokens,
        p.input_usd_per_mtok,
        p.cache_read_usd_per_mtok,
        p.cache_write_5m_usd_per_mtok,
        p.cache_write_1h_usd_per_mtok,
        p.cache_write_12h_usd_per_mtok,
        p.cache_storage_usd_per_mtok_hour,
        r.cache_read_ratio,
        r.cache_write_5m_ratio,
        r.cache_write_1h_ratio,
        r.cache_write_12h_ratio,
        r.cache_storage_per_hour_ratio,
        p.hugging_face_id,
        p.from_date
    from price_current as p
    inner join price_ratios as r using (source, provider, model, variant, tier_min_prompt_tokens, from_date)
    where p.input_usd_per_mtok > 0
      and coalesce(
          p.cache_read_usd_per_mtok, p.cache_write_5m_usd_per_mtok, p.cache_write_1h_usd_per_mtok,
          p.cache_write_12h_usd_per_mtok, p.cache_storage_usd_per_mtok_hour
      ) is not null
)

select * from final
