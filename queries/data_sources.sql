-- Where every input table's rows come from: each distinct source_url with its row count and the dates the rows carry
-- (price periods and snapshots for prices, quote dates for rental prices and memory tiers, release dates for hardware and models,
-- publication dates for measured points, the start of billing rules and windows, the price date of worked billing examples,
-- whose source is their rule's;
-- scenarios, scaling-law points, layouts, deployments and the model-identity tables carry no date).
-- origin says how rows arrived: hand-kept CSV (hand), an imported price map (litellm, openrouter) or a third-party file
-- vendored unmodified (vendored: the InferenceX runs, data/README.md).
-- Grain: one row per input table x origin x source_url (models' pre-training token counts are listed as their own table).
-- column table_name: Input table the rows are in (models.pretrain_tokens: the models' pre-training token counts)
-- column origin: How the rows arrived: hand (a CSV in data/), litellm or openrouter (an imported price map), vendored (a third-party file kept unmodified in data/), derived (written from a third-party repository by a script in scripts/)
-- column source_url: Page the rows were read from ('' when blank)
-- column row_count: Rows of the table with this origin and source_url [rows]
-- column date_column: Column the dates come from (null: the table carries no date)
-- column first_date: Earliest date of those rows (price periods, quotes, releases)
-- column last_date: Latest date of those rows (for imported prices, the newest snapshot carrying them)
with urls as (
    select 'hardware' as table_name, 'hand' as origin, source_url, 'release_date' as date_column,
        release_date as first_date, release_date as last_date
    from hardware
    union all
    select 'rental_prices', 'hand', source_url, 'as_of', as_of, as_of
    from rental_prices
    union all
    select 'models', 'hand', source_url, 'release_date', release_date, release_date
    from models
    union all
    select 'models.pretrain_tokens', 'hand', pretrain_tokens_source_url, 'release_date', release_date, release_date
    from models
    where pretrain_tokens is not null
    union all
    select 'prices', source, source_url, 'from_date / snapshot_date', from_date, coalesce(snapshot_date, from_date)
    from prices
    union all
    select 'memory_tiers', 'hand', source_url, 'as_of', as_of, as_of
    from memory_tiers
    union all
    select 'scenarios', 'hand', source_url, null, null, null
    from scenarios
    union all
    select 'scaling_law_points', 'hand', source_url, null, null, null
    from scaling_law_points
    union all
    select 'layouts', 'hand', source_url, null, null, null
    from layouts
    union all
    select 'measured_points', 'hand', source_url, 'published_date', published_date, published_date
    from measured_points
    union all
    select 'providers', 'hand', source_url, null, null, null
    from providers
    union all
    select 'model_families', 'hand', source_url, null, null, null
    from model_families
    union all
    select 'model_aliases', 'hand', source_url, null, null, null
    from model_aliases
    union all
    select 'deployments', 'hand', source_url, null, null, null
    from deployments
    union all
    select 'billing_rules', 'hand', source_url, 'from_date', from_date, from_date
    from billing_rules
    union all
    select 'billing_windows', 'hand', source_url, 'from_date', from_date, from_date
    from billing_windows
    union all
    select 'billing_examples', 'hand', r.source_url, 'as_of', e.as_of, e.as_of
    from billing_examples as e
    left join (
        select rule_id, source_url from billing_rules
        union all
        select window_id, source_url from billing_windows
    ) as r using (rule_id)
    union all
    select
        'inferencex_train', 'vendored',
        'https://github.com/ai-dynamo/aiconfigurator/blob/095f58a51c4ca8e61b66ec108d86f223f8d559ce/'
        || 'aic-core/src/aiconfigurator_core/systems/silicon_sample.csv',
        null, null, null
    from inferencex_train
    union all
    select
        'inferencex_launches', 'derived',
        'https://github.com/SemiAnalysisAI/InferenceX/blob/' || last_commit || '/.github/configs/'
        || case when system like 'mi3%' then 'amd' else 'nvidia' end || '-master.yaml',
        'last_date', first_date, last_date
    from inferencex_launches
    union all
    select
        'inferencex_node_launches', 'derived',
        'https://github.com/SemiAnalysisAI/InferenceX/blob/' || last_commit || '/.github/configs/'
        || case when system like 'mi3%' then 'amd' else 'nvidia' end || '-master.yaml',
        'last_date', first_date, last_date
    from inferencex_node_launches
),

final as (
    select
        table_name,
        origin,
        coalesce(source_url, '') as source_url,
        count(*) as row_count,
        any_value(date_column) as date_column,
        min(first_date) as first_date,
        max(last_date) as last_date
    from urls
    group by table_name, origin, coalesce(source_url, '')
)

select * from final
