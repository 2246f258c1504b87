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


def test_deepseek_v4s_compressed_layers_cross_later_than_v32s(real_db):
    """DeepSeek-V4-Pro's 128 query heads read one 512-wide entry per 4 tokens on 30 layers and per 128 on 31 (2 x 128
    x 1,024 x (30/4 + 31/128) FLOP per context token), plus a 128-token window on all 61: attention overtakes its
    2 x 49e9 weight FLOPs at (98e9 - 2 x 128 x 1,024 x 61 x 128) / that slope = 47k tokens, three times later than
    DeepSeek-V3.2's 15k (every entry counted, as for every model of the table: no top-k)."""
    rows = {r["model"]: r for r in q(real_db, "select * from attention_crossover").iter_rows(named=True)}
    slope, window = 2 * 128 * 1024 * (30 / 4 + 31 / 128), 2 * 128 * 1024 * 61
    assert rows["DeepSeek-V4-Pro"]["crossover_context_tokens"] == pytest.approx((98e9 - window * 128) / slope)
    assert rows["DeepSeek-V4-Pro"]["crossover_context_tokens"] > 3 * rows["DeepSeek-V3.2"]["crossover_context_tokens"]
