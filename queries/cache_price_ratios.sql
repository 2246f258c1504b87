-- Prompt-cache prices as multiples of the uncached input price (lecture section g.3: read ~0.1x, 5-minute write 1.25x, 1-hour write 2x).
-- Grain: one row per source x provider x model x variant x context tier with a positive input price and a cache price.
with final as (
    select
        source,
        provider,
        model,
        variant,
        tier_min_prompt_tokens,
        input_usd_per_mtok,
        cache_read_usd_per_mtok,
        cache_write_5m_usd_per_mtok,
        cache_write_1h_usd_per_mtok,
        cache_write_12h_usd_per_mtok,
        cache_storage_usd_per_mtok_hour,
        cache_read_usd_per_mtok / input_usd_per_mtok as cache_read_ratio,
        cache_write_5m_usd_per_mtok / input_usd_per_mtok as cache_write_5m_ratio,
        cache_write_1h_usd_per_mtok / input_usd_per_mtok as cache_write_1h_ratio,
        cache_write_12h_usd_per_mtok / input_usd_per_mtok as cache_write_12h_ratio,
        cache_storage_usd_per_mtok_hour / input_usd_per_mtok as cache_storage_per_hour_ratio,
        hugging_face_id,
        from_date
    from price_current
    where input_usd_per_mtok > 0
      and coalesce(
          cache_read_usd_per_mtok, cache_write_5m_usd_per_mtok, cache_write_1h_usd_per_mtok,
          cache_write_12h_usd_per_mtok, cache_storage_usd_per_mtok_hour
      ) is not null
)

select * from final
