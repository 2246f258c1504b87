"""Context-pricing page: the crossover reading against the lecture's f.1 arithmetic on the fixture's datasheet, and
the fitted line against the published tiers."""

from __future__ import annotations

import polars as pl
import pytest

from ..html_tables import read_tables
from ..specs import by, figure_text, number, rows, scenario_value


def crossover_bytes(threshold_tokens: float) -> float:
    """b_kv = b_w·N_act/(R·L*): bf16 weights (the fixture sets no weight format), the scenario's frontier N_act,
    R of its serving chip B200 at bf16 = F/W from the datasheet (lecture f.1)."""
    b200 = by(rows("hardware"), "chip")["B200"]
    r = float(b200["peak_bf16_tflop_per_s"]) * 1e12 / (float(b200["hbm_bandwidth_tb_per_s"]) * 1e12)
    return 2 * scenario_value("frontier_active_params") / (r * threshold_tokens)


def test_crossover_reading_of_a_200k_tier_is_the_lectures_arithmetic(built_report):
    row = by(read_tables(built_report / "index.html")["headline-kv_bytes_per_token-rows"], "For")["google"]
    assert number(row["Value (bytes/token)"]) == pytest.approx(crossover_bytes(200_000), rel=1e-3)
    # lecture f.1: 200k threshold, N_act = 1e11, R = 300, 1-byte weights ⇒ ≈ 1,667 B; here 2-byte weights and R = 292
    assert number(row["Value (bytes/token)"]) == pytest.approx(1667 * 2 * 300 / 292.2, rel=0.01)
    low, high = (number(v) for v in row["Interval"].split("–"))
    assert low < number(row["Value (bytes/token)"]) < high
    assert "slope reading" in row["Note"]


def test_fitted_line_passes_through_each_tiers_price_at_its_midpoint(built_report):
    """A two-tier schedule is fitted exactly: the line meets 2 USD at 100k and 4 USD at the second tier's midpoint."""
    steps = pl.read_csv(built_report / "context-pricing" / "tier-prices.csv")
    gemini = steps.filter(pl.col("model") == "gemini-3.1-pro-preview")
    tiers = gemini.filter(pl.col("kind") == "tier").sort("context_tokens")
    assert tiers["usd_per_mtok"].to_list() == [2.0, 4.0, 4.0]  # fixture prices.csv, carried to the max prompt
    end = tiers["context_tokens"].max()
    assert end == 1_048_576  # the schedule's max_input_tokens
    (x0, y0), (x1, y1) = (
        gemini.filter(pl.col("kind") == "fit").sort("context_tokens").select("context_tokens", "usd_per_mtok").rows()
    )
    line = lambda x: y0 + (y1 - y0) * (x - x0) / (x1 - x0)  # noqa: E731
    assert line(100_000) == pytest.approx(2.0) and line((200_000 + end) / 2) == pytest.approx(4.0)


def test_implied_kv_chart_shows_both_readings_and_keeps_intervals_apart(built_report):
    data = pl.read_csv(built_report / "context-pricing" / "implied-kv.csv")
    gemini = data.filter(pl.col("label") == "hand · google · gemini-3.1-pro-preview")
    assert sorted(gemini["reading"].to_list()) == ["crossover", "slope"]  # closed model: no true value
    crossover = gemini.filter(pl.col("reading") == "crossover")
    assert crossover["bytes_per_token"][0] == pytest.approx(crossover_bytes(200_000), rel=1e-6)
    assert crossover["fit_low"].is_null().all()  # a threshold is read, not fitted: only a scenario interval
    text = figure_text(built_report / "context-pricing.html", "implied-kv")
    assert "scenario interval" in text and "fit interval" in text and "lecture §f.1" in text
