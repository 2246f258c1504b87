-- The prompt and output lengths (and the stated speculation) of the InferenceX runs the calibration included: the
-- range the serving model's TTFT/TPOT bands (calibration_bands) were measured over. A prediction beyond it (a
-- 128k-token prompt, where the runs stop at 15k; a stated draft length, where no run states one) says so in its
-- notes: its band was not checked that far.
-- Grain: one row.
-- column min_input_tokens: Shortest prompt of an included run [tokens]
-- column max_input_tokens: Longest prompt of an included run [tokens]
-- column min_output_tokens: Shortest output of an included run [tokens]
-- column max_output_tokens: Longest output of an included run [tokens]
-- column max_speculative_tokens: Most draft tokens per decode step an included run states; 0: none states one [tokens]
select
    min(input_tokens) as min_input_tokens,
    max(input_tokens) as max_input_tokens,
    min(output_tokens) as min_output_tokens,
    max(output_tokens) as max_output_tokens,
    max(speculative_tokens) as max_speculative_tokens
from calibration_runs
where included
