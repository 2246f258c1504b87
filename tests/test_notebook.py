"""The notebook API's I/O edge (econ.notebook): Model and Chip read from a built database."""

from __future__ import annotations

import duckdb
import pytest

from econ.errors import EconError
from econ.notebook import load_chip, load_model


def test_load_from_path_and_connection(fixture_db):
    model = load_model("DeepSeek-V3", db=fixture_db)
    assert (model.params_total, model.params_active) == (671e9, 37e9)
    assert model.kv_bytes_per_token == pytest.approx(61 * (512 + 64) * 2)  # MLA latent + rope at bf16 (reference f.2)
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        chip = load_chip("TPU-v5e", db=con)
    assert chip.formats() == ("bf16",) and chip.scale_up_domain_chips == 256


def test_unknown_names_suggest_the_nearest_and_any_spelling_loads(fixture_db):
    with pytest.raises(
        EconError, match=r"^unknown model 'GPT-5' .* — known: DeepSeek-V3, Llama-3.1-70B, gpt-oss-120b$"
    ):
        load_model("GPT-5", db=fixture_db)
    with pytest.raises(EconError, match=r"^unknown chip 'H20' \(not in hardware\) — did you mean H100, B200\?$"):
        load_chip("H20", db=fixture_db)
    assert load_model("deepseek-ai/deepseek-v3", db=fixture_db) == load_model("DeepSeek-V3", db=fixture_db)
    assert load_chip("tpu-v5e", db=fixture_db) == load_chip("TPU-v5e", db=fixture_db)
