-- Prices in effect on a date: today, or the date in the variable as_of (SET VARIABLE as_of = DATE '2026-01-01'),
-- with the canonical model each key sells, whether its seller makes it and whether the row is free (price_history).
-- Grain: one row per source x provider x model x variant x context tier.
with params as (
    select coalesce(getvariable('as_of')::date, current_date) as as_of
),

final as (
    select
        h.source,
        h.provider,
        h.model,
        h.variant,
        h.tier_min_prompt_tokens,
        h.from_date,
        h.to_date,
        h.input_usd_per_mtok,
        h.output_usd_per_mtok,
        h.cache_read_usd_per_mtok,
        h.cache_write_5m_usd_per_mtok,
        h.cache_write_1h_usd_per_mtok,
        h.cache_write_12h_usd_per_mtok,
        h.cache_storage_usd_per_mtok_hour,
        h.max_input_tokens,
        h.speed_ratio,
        h.hugging_face_id,
        h.source_url,
        h.notes,
        h.source_key,
        h.snapshot_date,
        h.source_line,
        h.source_commit,
        h.last_commit,
        h.declared,
        h.prev_snapshot_date,
        h.price_change,
        h.price_date,
        h.canonical_model,
        h.is_first_party,
        h.is_free
    from price_history as h, params
    where h.from_date <= params.as_of
      and (h.to_date is null or h.to_date > params.as_of)
)

select * from final
