"""The notes a prediction carries about its own error band (econ.analyses.prediction_notes)."""

from __future__ import annotations

import polars as pl

from econ.analyses.prediction_notes import attention_note, vendor_note
from tests.analyses.helpers import q


def test_the_makers_note_names_only_a_maker_no_measured_chip_is_from():
    """A chip of a maker with measured chips, of another, and one the hardware table lacks; and no calibration runs at
    all (no band to speak of: no note)."""
    hardware = pl.DataFrame(
        {"chip": ["H100", "B300", "MI355X", "TPU7x"], "vendor": ["NVIDIA", "NVIDIA", "AMD", "Google"]}
    )
    chips = pl.Series(["B300", "MI355X", "TPU7x", "XPU-9"])
    rows = pl.DataFrame({"chip": chips})  # a note is a column of the prediction's frame
    notes = rows.with_columns(vendor_note(chips, hardware, {"H100"}).alias("n"))["n"].to_list()
    assert [n is not None for n in notes] == [False, True, True, False]
    google = "the calibration measured no run on Google's chips: the error band is that of NVIDIA chips held out"
    assert notes[2] == f"{google}, not Google's"
    assert rows.with_columns(vendor_note(chips, hardware, set()).alias("n"))["n"].to_list() == [None] * 4


def test_a_model_with_a_kind_of_attention_no_measured_model_has_says_its_band_is_other_architectures(real_db):
    """The measured models have MLA, GQA and sliding-window layers (gpt-oss); DeepSeek-V4's compressed attention and
    indexer, DeepSeek-V3.2's indexer and Qwen3.5's linear layers were never measured, so their new-model band, checked
    with other architectures held out, says so; a measured kind says nothing, and without calibration runs no note."""
    models = q(real_db, "select * from model_derived")
    seen = set(q(real_db, "select arch_model from calibration_seen")["arch_model"].to_list())
    names = pl.Series(["DeepSeek-V4-Pro", "DeepSeek-V3.2", "Qwen3.5-397B-A17B", "gpt-oss-120b", "Llama-3.1-405B"])
    rows = pl.DataFrame({"model": names})
    notes = rows.with_columns(attention_note(names, models, seen).alias("n"))["n"].to_list()
    said = "the calibration measured no model with {}: the error band is that of other architectures held out"
    assert notes == [
        said.format("compressed attention or a sparse-attention indexer"),
        said.format("a sparse-attention indexer"),
        said.format("linear-attention layers"),
        None,
        None,
    ]
    assert rows.with_columns(attention_note(names, models, set()).alias("n"))["n"].to_list() == [None] * 5
