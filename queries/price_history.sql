-- Every price period next to the period before it for the same key, with the change of each component.
-- Grain: one row per source x provider x model x variant x context tier x effective period.
with ordered as (
    select
        p.*,
        lag(p.from_date) over w as prev_from_date,
        lag(p.input_usd_per_mtok) over w as prev_input_usd_per_mtok,
        lag(p.output_usd_per_mtok) over w as prev_output_usd_per_mtok,
        lag(p.cache_read_usd_per_mtok) over w as prev_cache_read_usd_per_mtok,
        lag(p.cache_write_5m_usd_per_mtok) over w as prev_cache_write_5m_usd_per_mtok,
        lag(p.cache_write_1h_usd_per_mtok) over w as prev_cache_write_1h_usd_per_mtok,
        row_number() over w as period_number
    from prices as p
    window w as (
        partition by p.source, p.provider, p.model, p.variant, p.tier_min_prompt_tokens
        order by p.from_date
    )
),

final as (
    select
        *,
        input_usd_per_mtok / nullif(prev_input_usd_per_mtok, 0) - 1 as input_change_frac,
        output_usd_per_mtok / nullif(prev_output_usd_per_mtok, 0) - 1 as output_change_frac,
        cache_read_usd_per_mtok / nullif(prev_cache_read_usd_per_mtok, 0) - 1 as cache_read_change_frac
    from ordered
)

select * from final
