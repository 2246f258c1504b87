-- Prices in effect on a date: today, or the date in the variable as_of (SET VARIABLE as_of = DATE '2026-01-01').
-- Grain: one row per source x provider x model x variant x context tier.
with params as (
    select coalesce(getvariable('as_of')::date, current_date) as as_of
),

final as (
    select p.*
    from prices as p, params
    where p.from_date <= params.as_of
      and (p.to_date is null or p.to_date > params.as_of)
)

select * from final
