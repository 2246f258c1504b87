"""overtraining of the fixture models: tokens per active and total parameter, the factor over k, the MoE caveat."""

from __future__ import annotations

import pytest

from tests.analyses.helpers import q


@pytest.mark.parametrize(
    "model, per_active, factor, per_total",
    [
        ("DeepSeek-V3", 400.0, 20.0, 14.8e12 / 671e9),  # 14.8T tokens, 37B active / 671B total (DeepSeek-V3 report)
        ("Llama-3.1-70B", 15e12 / 70.6e9, 15e12 / 70.6e9 / 20, 15e12 / 70.6e9),  # 15T tokens (Meta), dense
    ],
)
def test_overtraining_of_real_models(fixture_db, model, per_active, factor, per_total):
    row = q(fixture_db, "select * from overtraining where model = ?", [model]).row(0, named=True)
    assert row["tokens_per_active_param_ratio"] == pytest.approx(per_active)
    assert row["overtraining_active_ratio"] == pytest.approx(factor)
    assert row["tokens_per_total_param_ratio"] == pytest.approx(per_total)
    assert row["overtraining_active_low_ratio"] < factor < row["overtraining_active_high_ratio"]
    assert row["caveat"].startswith("MoE") == row["is_moe"]


def test_models_without_reported_tokens_are_left_out(fixture_db):
    assert "gpt-oss-120b" not in q(fixture_db, "select model from overtraining")["model"].to_list()
