"""The notes a prediction carries about its own error band: where the band was not measured on what is predicted (a
maker's chips, a kind of attention, lengths or draft tokens beyond the measured runs) and the cache format it takes
for a sparse-attention model. Read by
:func:`econ.analyses.serving_predict.predict_configurations` (``econ predict``, ``--points``) and ``econ fleet``.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.launch_settings import SPARSE_CACHE_FORMAT


def sparse_cache_note(scenario_format: str) -> str:
    """What a prediction or a plan of a sparse-attention model says when it takes its engines' cache format
    (:data:`~econ.analyses.launch_settings.SPARSE_CACHE_FORMAT`) over the scenario's."""
    return (
        f"KV cache {SPARSE_CACHE_FORMAT}: the engines' format for a sparse-attention model (the scenario's "
        f"{scenario_format} is not theirs)"
    )


def vendor_note(chips: pl.Series, hardware: pl.DataFrame, seen_chips: set) -> pl.Expr:
    """A note on each row whose chip's vendor made none of the chips the calibration measured runs on: its band (a new
    chip's) was checked with NVIDIA's chips held out one at a time and one architecture at a time (it holds), never
    on another vendor's chips and engines (docs/design-notes.md, "A band holds for the engine, the chip and the model
    it is printed for")."""
    vendor_of = dict(hardware.select("chip", "vendor").iter_rows())
    measured = sorted({vendor_of[x] for x in seen_chips if vendor_of.get(x)})
    if not measured:  # no calibration runs: no band to speak of
        return pl.lit(None, dtype=pl.String)
    vendor = chips.replace_strict(vendor_of, default=None, return_dtype=pl.String)
    text = "the calibration measured no run on {}'s chips: the error band is that of {} chips held out, not {}'s"
    return pl.when(vendor.is_not_null() & ~vendor.is_in(measured)).then(
        pl.format(text, vendor, pl.lit(" and ".join(measured)), vendor)
    )


ATTENTION_KINDS = {
    "compressed attention": pl.col("attention") == "csa",
    "a sparse-attention indexer": pl.col("index_slope_flop_per_token") > 0,
    "linear-attention layers": pl.col("state_bytes_per_sequence") > 0,
    "chunked-attention layers": pl.col("kv_chunk_bytes_per_token") > 0,
    "sliding-window layers": pl.col("kv_window_bytes_per_sequence") > 0,
}
"""The kinds of attention layer beside full (MHA/GQA/MLA) ones a model may have, read from ``model_derived``."""


def attention_note(arch_models: pl.Series, models: pl.DataFrame, seen_models: set) -> pl.Expr:
    """A note on each row whose model has a kind of attention layer (:data:`ATTENTION_KINDS`) that no model the
    calibration measured runs of has: its band (a new model's) was measured with other architectures held out, none
    of them of that kind (DeepSeek-V4's compressed attention and indexer, Qwen3.5's linear layers). Decided once per
    model of ``models`` (``model_derived`` columns), not per row."""
    kinds = models.select("model", *(kind.fill_null(False).alias(name) for name, kind in ATTENTION_KINDS.items()))
    seen = kinds.filter(pl.col("model").is_in(sorted(seen_models)))
    if not seen.height:  # no calibration runs: no band to speak of
        return pl.lit(None, dtype=pl.String)
    unmeasured = [name for name in ATTENTION_KINDS if not seen[name].any()]
    text = "the calibration measured no model with {}: the error band is that of other architectures held out"
    said = {
        row["model"]: text.format(" or ".join(k for k in unmeasured if row[k]))
        for row in kinds.iter_rows(named=True)
        if any(row[k] for k in unmeasured)
    }
    return pl.lit(arch_models).replace_strict(said, default=None, return_dtype=pl.String)


def length_note(input_tokens: pl.Expr, output_tokens: pl.Expr, lengths: dict) -> pl.Expr:
    """The note of a row whose prompt or output lies outside the lengths of the runs its error band was measured on
    (``lengths``: the row of ``calibration_lengths``; null: within them), as ``_length_note``."""
    parts = []
    for tokens, what in ((input_tokens, "input"), (output_tokens, "output")):
        low, high = lengths.get(f"min_{what}_tokens"), lengths.get(f"max_{what}_tokens")
        if low is None or high is None:
            continue
        outside = (tokens < low) | (tokens > high)
        text = f"{{}} {what} tokens (the measured runs: {low:,.0f}-{high:,.0f})"
        parts.append(pl.when(outside).then(pl.format(text, tokens.cast(pl.Int64))))
    if not parts:
        return pl.lit(None, dtype=pl.String).alias("_length_note")
    said = pl.concat_str(parts, separator=" and ", ignore_nulls=True).replace("", None)
    return pl.format("{}: outside the lengths the error band was measured on", said).alias("_length_note")


def speculation_note(speculative_tokens: pl.Expr, lengths: dict) -> pl.Expr:
    """The note of a row that states more draft tokens per step than any run its error band was measured on
    (``calibration_lengths.max_speculative_tokens``; null: within them), as ``_speculation_note``. InferenceX's MTP
    launches state neither draft length nor acceptance: a stated speculation is timed as stated
    (``deployment.accepted_tokens_per_step``), and no measured run checked that timing."""
    most = lengths.get("max_speculative_tokens")
    if most is None:
        return pl.lit(None, dtype=pl.String).alias("_speculation_note")
    measured = "no measured run states one" if most <= 0 else f"the measured runs state at most {most:,.0f}"
    text = f"{{}} draft token{{}} per step, timed as stated: {measured}, so the error band was not measured on it"
    plural = pl.when(speculative_tokens == 1).then(pl.lit("")).otherwise(pl.lit("s"))
    return (
        pl.when(speculative_tokens > most)
        .then(pl.format(text, speculative_tokens.cast(pl.Int64), plural))
        .alias("_speculation_note")
    )
