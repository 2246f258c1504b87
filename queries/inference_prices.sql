-- The prices in effect on the build's date that the price inferences, fast mode and the fleet's revenue read: those
-- of price_current from the hand-kept pages and the imported price maps, without the replayed histories
-- (genai-prices, llm-prices: sources whose snapshots are commits). The histories date prices and changes; their
-- newest snapshots repeat the maps' sellers, so they add no schedule to the fits, and a new commit of theirs
-- changes no inference.
-- Grain: one row per source x provider x model x variant x context tier.
with histories as (
    select distinct source from price_snapshots where commit is not null
),

final as (
    select p.*
    from price_current as p
    where p.source not in (select source from histories)
)

select * from final
