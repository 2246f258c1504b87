"""Views from queries/*.sql on the fixture data, each against a published figure."""

from __future__ import annotations

import duckdb
import pytest


def one(db, sql):
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("set variable as_of = date '2026-11-30'")
        return con.execute(sql).fetchone()


def test_long_context_tiers_gemini_uplift(fixture_db):
    """Lecture f.1 (ai.google.dev pricing): Gemini 3.1 Pro >200k is +100% input, +50% output, +100% cache read."""
    row = one(
        fixture_db,
        "select tier_min_prompt_tokens, input_uplift_ratio, output_uplift_ratio, cache_read_uplift_ratio, "
        "tier_count from long_context_tiers where model = 'gemini-3.1-pro-preview'",
    )
    assert row == (200_000, pytest.approx(2.0), pytest.approx(1.5), pytest.approx(2.0), 2)


def test_cache_price_ratios_anthropic(fixture_db):
    """Lecture g.3: Opus read 0.1x, 5-minute write 1.25x, 1-hour write 2x the $5 input price."""
    row = one(
        fixture_db,
        "select cache_read_ratio, cache_write_5m_ratio, cache_write_1h_ratio from cache_price_ratios "
        "where model = 'claude-opus-4-6' and variant = 'standard'",
    )
    assert row == pytest.approx((0.1, 1.25, 2.0))


def test_io_price_ratio(fixture_db):
    """Lecture f.3: Opus 4.6 $5/$25 is 5x; Gemini 3.1 Pro $2/$12 is 6x."""
    assert one(
        fixture_db,
        "select output_over_input_ratio from io_price_ratio where model = 'claude-opus-4-6' and variant = 'standard'",
    )[0] == pytest.approx(5.0)
    assert one(
        fixture_db,
        "select output_over_input_ratio from io_price_ratio where model = 'gemini-3.1-pro-preview' "
        "and tier_min_prompt_tokens = 0",
    )[0] == pytest.approx(6.0)


@pytest.mark.parametrize(
    ("chip", "number_format", "expected", "rel"),
    [
        ("TPU-v5e", "bf16", 240, 0.01),  # scaling book roofline.md: 1.97e14 / 8.2e11 ~ 240
        ("H100", "bf16", 295, 0.01),  # scaling book gpus.md Q3: 295
        ("H100", "fp8", 295, 0.01),  # R barely depends on format when weights match the math (lecture b.1)
    ],
)
def test_critical_batch(fixture_db, chip, number_format, expected, rel):
    r = one(
        fixture_db,
        f"select critical_batch_ratio from hardware_derived where chip = '{chip}' and number_format = "
        f"'{number_format}'",
    )[0]
    assert r == pytest.approx(expected, rel=rel)


def test_hbm_drain_time_h100(fixture_db):
    """Lecture a.6: H100 80 GB / 3.35 TB/s ~ 24 ms."""
    assert one(
        fixture_db, "select hbm_drain_time_s from hardware_derived where chip = 'H100' and number_format = 'bf16'"
    )[0] == pytest.approx(0.024, abs=0.0005)


def test_model_derived_deepseek_sparsity(fixture_db):
    """Lecture b.2: DeepSeek-V3 is 671/37 = 18.1 by parameters and 256/8 = 32 by experts (the lecture said 8)."""
    row = one(
        fixture_db,
        "select sparsity_param_ratio, sparsity_expert_ratio, kv_bytes_per_token, weight_fp8_bytes "
        "from model_derived where model = 'DeepSeek-V3'",
    )
    assert row == (pytest.approx(18.1, abs=0.05), 32.0, 70_272.0, 671e9)


def test_price_current_respects_as_of(fixture_db):
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        con.execute("set variable as_of = date '2026-02-10'")
        models = sorted(r[0] for r in con.execute("select distinct model from price_current").fetchall())
    assert models == ["claude-opus-4-6"]  # Gemini 3.1 Pro prices start 2026-02-19 in the fixture
