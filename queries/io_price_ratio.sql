-- Output price over input price of every current price row (the lecture's rho, section f.3); the ratio is
-- price_ratios.output_over_input_ratio.
-- Grain: one row per source x provider x model x variant x context tier with a positive input price.
with final as (
    select
        p.source,
        p.provider,
        p.model,
        p.variant,
        p.tier_min_prompt_tokens,
        p.input_usd_per_mtok,
        p.output_usd_per_mtok,
        r.output_over_input_ratio,
        p.hugging_face_id,
        p.from_date
    from price_current as p
    inner join price_ratios as r using (source, provider, model, variant, tier_min_prompt_tokens, from_date)
    where p.input_usd_per_mtok > 0 and p.output_usd_per_mtok is not null
)

select * from final
