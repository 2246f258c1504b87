-- Price keys no rule maps to a canonical model (econ.fits.model_identity): listed, never guessed. Map one by adding
-- a row to data/model_aliases.csv.
-- Grain: one row per price key (source x provider x model x hugging_face_id) without a canonical model.
with final as (
    select
        source,
        provider,
        model,
        hugging_face_id,
        model_name,
        match_rule,
        seller_organisation,
        seller_kind,
        maker,
        is_first_party
    from price_keys
    where canonical_model is null
)

select * from final
