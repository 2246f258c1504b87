"""Fast-mode page: the lecture's a.5 identity on the fixture's Opus 4.6 prices, and the batches it implies."""

from __future__ import annotations

import polars as pl
import pytest

from ..html_tables import read_tables
from ..specs import figure_text, rows


def test_opus_fast_mode_is_six_times_the_price_at_two_and_a_half_times_the_speed(built_report):
    opus = {
        r["variant"]: r
        for r in rows("prices")
        if r["model"] == "claude-opus-4-6" and r["tier_min_prompt_tokens"] == "0"
    }
    m = float(opus["fast"]["output_usd_per_mtok"]) / float(opus["standard"]["output_usd_per_mtok"])
    s = float(opus["fast"]["speed_ratio"])
    assert (m, s, m * s) == (6.0, 2.5, 15.0)  # lecture a.5: "6x the price at 2.5x the speed" ⇒ a 15x smaller batch
    row = next(r for r in read_tables(built_report / "fast-mode.html")["fast-mode"] if r["Model"] == "claude-opus-4-6")
    assert (float(row["m (× standard)"]), float(row["s (× standard)"]), float(row["m·s = B₀/B₁ (ratio)"])) == (
        m,
        s,
        m * s,
    )
    chart = pl.read_csv(built_report / "fast-mode" / "fast-multiples.csv")
    assert chart.select("output_price_ratio", "speed_ratio", "batch_ratio").row(0) == (m, s, m * s)


def test_fast_batch_is_the_baseline_over_m_times_s(built_report):
    batches = pl.read_csv(built_report / "fast-mode" / "fast-batches.csv")
    ratio = dict(batches.select("batch", "batch_over_balance_ratio").iter_rows())
    assert ratio["baseline"] / ratio["fast"] == pytest.approx(15.0, rel=1e-9)
    assert "lecture §a.5" in figure_text(built_report / "fast-mode.html", "fast-batches")
