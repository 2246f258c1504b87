-- Output price over input price of every current price row (the lecture's rho, section f.3).
-- Grain: one row per source x provider x model x variant x context tier with a positive input price.
with final as (
    select
        source,
        provider,
        model,
        variant,
        tier_min_prompt_tokens,
        input_usd_per_mtok,
        output_usd_per_mtok,
        output_usd_per_mtok / input_usd_per_mtok as output_over_input_ratio,
        hugging_face_id,
        from_date
    from price_current
    where input_usd_per_mtok > 0 and output_usd_per_mtok is not null
)

select * from final
