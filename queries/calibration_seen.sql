-- The models and chips the serving model's TTFT/TPOT bands were measured on: those of the InferenceX runs the
-- calibration included, a model counting as seen when any model of its architecture group
-- (model_derived.architecture_group: a model and its re-releases or fine-tunes, left out together by the
-- leave-one-model-out folds) has included runs. A prediction's distance from the data (seen, new model, new chip
-- or both; calibration_bands.distance) reads it: the published throughput points fit the model too, but the bands
-- come from the runs only, so a model or chip known only from a published point is new to them.
-- Grain: one row per (arch_model, chip) pair whose architecture group has at least one included run on the chip.
select distinct m.model as arch_model, m.architecture_group, r.chip
from calibration_runs as r
join model_derived as d on d.model = r.arch_model
join model_derived as m on m.architecture_group = d.architecture_group
where r.included
order by arch_model, r.chip
