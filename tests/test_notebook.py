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


def test_unknown_names_list_the_known_ones(fixture_db):
    with pytest.raises(
        EconError, match=r"^no models row named 'GPT-5' — known: DeepSeek-V3, Llama-3.1-70B, gpt-oss-120b$"
    ):
        load_model("GPT-5", db=fixture_db)
    with pytest.raises(EconError, match=r"^no hardware row named 'H200' — known: B200, H100, TPU-v5e$"):
        load_chip("H200", db=fixture_db)
