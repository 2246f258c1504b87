-- The three cheapest sellers of each open model with an architecture in models, at the build's date
-- (standard variant, base tier, no free or placeholder prices). econ sql -f examples/cheapest_sellers.sql
with priced as (
    select c.arch_model, p.provider, p.input_usd_per_mtok, p.output_usd_per_mtok,
           row_number() over (
               partition by c.arch_model
               order by p.input_usd_per_mtok + p.output_usd_per_mtok, p.provider, p.model
           ) as rank
    from price_current p join model_catalog c using (canonical_model)
    where c.arch_model is not null and p.variant = 'standard' and p.tier_min_prompt_tokens = 0 and not p.is_free
      and p.input_usd_per_mtok is not null and p.output_usd_per_mtok is not null
)
select arch_model, provider, input_usd_per_mtok, output_usd_per_mtok
from priced where rank <= 3 and arch_model in ('DeepSeek-V3', 'gpt-oss-120b') order by arch_model, rank
