"""compute_optimal on the fixture points: the closed form and the numerical solve agree; ~20 tokens per parameter."""

from __future__ import annotations

from tests.analyses.helpers import q


def test_compute_optimal_closed_form_and_numerical_agree(fixture_db):
    worst = q(fixture_db, "select max(numerical_rel_diff_frac) from compute_optimal").item()
    assert worst < 1e-6
    row = q(
        fixture_db,
        "select * from compute_optimal where law = 'besiroglu_2024' order by abs(ln(compute_flop / 5.88e23)) limit 1",
    )
    assert 15 < row["tokens_per_param_ratio"].item() < 25  # ≈20 tokens/param at Chinchilla scale (70B, 1.4T)
