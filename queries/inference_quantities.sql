-- What the check on open models earns each price inference, one row per quantity: models, architecture groups and
-- rows checked, the bias and its t test, the correction applied, left-out coverage of the validated interval at the
-- stated level, the interval score beside the no-price baseline's (skill), the interval a closed model gets (width),
-- the uncorrected hypothesis's verdict and one status (econ.fits.validation): too_few_open_models (< 5 architecture
-- groups), falsified (a hypothesis missing beyond its own interval), uninformative (no skill, or wider than 10x), ok.
-- The unit is the architecture group (model_derived.architecture_group): left out whole, counted for the 5, and
-- weighing 1 in the bias, coverage and skill. Each row is stored once, with its status, by the analysis that
-- validates the quantity (fit_context_tier_quantities, fit_io_price_quantities, fit_markup_quantities,
-- markup_inversion_quantities); this view only unions them.
-- Grain: one row per inferred quantity.
with final as (
    select * from fit_context_tier_quantities
    union all by name
    select * from fit_io_price_quantities
    union all by name
    select * from fit_markup_quantities
    union all by name
    select * from markup_inversion_quantities
)

select * from final
