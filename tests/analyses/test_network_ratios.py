"""network_ratios on the fixture data: stored per-chip bandwidths, the lecture's expert-parallel width."""

from __future__ import annotations

import pytest

from tests.analyses.helpers import q


def test_network_uses_stored_bandwidths(fixture_db):
    row = q(fixture_db, "select * from network_ratios where model = 'DeepSeek-V3' and chip = 'H100'").row(0, named=True)
    assert row["expert_parallel_chips"] == 8 and row["moe_layers"] == 58
    # t_up/t_out = 2 k_GPU L_stage W_out/W_up with k_GPU = 8 (1 - (7/8)^8) = 5.25 and W_up/W_out = 9
    assert row["time_ratio_one_layer_ratio"] == pytest.approx(2 * 8 * (1 - (7 / 8) ** 8) / 9.0)


def test_only_moe_models(fixture_db):
    assert set(q(fixture_db, "select distinct model from network_ratios")["model"]) == {"DeepSeek-V3", "gpt-oss-120b"}
