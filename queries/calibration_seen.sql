-- The models (their architecture rows) and chips the serving model's TTFT/TPOT bands were measured on: those of the
-- InferenceX runs the calibration included. A prediction's distance from the data (seen, new model, new chip or
-- both; calibration_bands.distance) reads it: the published throughput points fit the model too, but the bands
-- come from the runs only, so a model or chip known only from a published point is new to them.
-- Grain: one row per (arch_model, chip) pair with at least one included run.
select distinct arch_model, chip
from calibration_runs
where included
order by arch_model, chip
