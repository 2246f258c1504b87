"""attention_crossover on the fixture models: the lecture's h.1 crossover for Llama."""

from __future__ import annotations

import pytest

from tests.analyses.helpers import q


def test_attention_crossover_for_llama(fixture_db):
    """Llama-3.1-70B: 4 x 64 heads x 128 x 80 layers per cached token vs 2 x 70.6e9 -> ~54k tokens (lecture h.1:
    ~50k)."""
    row = q(fixture_db, "select * from attention_crossover where model = 'Llama-3.1-70B'").row(0, named=True)
    assert row["crossover_context_tokens"] == pytest.approx(2 * 70.6e9 / (4 * 64 * 128 * 80))
    assert row["attention_over_weight_flop_at_8k_ratio"] == pytest.approx(8192 * 4 * 64 * 128 * 80 / (2 * 70.6e9))
