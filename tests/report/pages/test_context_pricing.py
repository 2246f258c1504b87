"""Context-pricing page: the headline is the output-slope reading with its validation stated, the crossover
reading (the lecture's f.1 arithmetic on the fixture's datasheet) is only a hypothesis, the fitted line meets the
published tiers, and no reading is shown bare."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from scipy.integrate import quad

from ..html_tables import read_tables
from ..specs import by, figure_text, rows, scenario_value


def crossover_bytes(threshold_tokens: float) -> float:
    """b_kv = b_w·N_act/(R·L*): bf16 weights (the fixture sets no weight format), the scenario's frontier N_act,
    R of its serving chip B200 at bf16 = F/W from the datasheet (lecture f.1)."""
    b200 = by(rows("hardware"), "chip")["B200"]
    r = float(b200["peak_bf16_tflop_per_s"]) * 1e12 / (float(b200["hbm_bandwidth_tb_per_s"]) * 1e12)
    return 2 * scenario_value("frontier_active_params") / (r * threshold_tokens)


def test_the_crossover_reading_is_the_lectures_arithmetic_and_only_a_hypothesis(built_report):
    data = pl.read_csv(built_report / "context-pricing" / "implied-kv.csv.gz")
    gemini = data.filter(pl.col("label") == "hand · google · gemini-3.1-pro-preview")
    assert sorted(gemini["reading"].to_list()) == ["crossover", "slope"]  # closed model: no true value
    crossover = gemini.filter(pl.col("reading") == "crossover")
    assert crossover["bytes_per_token"][0] == pytest.approx(crossover_bytes(200_000), rel=1e-6)
    assert crossover["fit_low"].is_null().all()  # a threshold is read, not fitted
    text = figure_text(built_report / "context-pricing.html", "implied-kv")
    assert "hypothesis, never a headline" in text and "validated interval" in text and "fit interval" in text


def token_weighted_mean(lo: float, hi: float, alpha: float) -> float:
    """E[L²]/E[L] for a request density ∝ L^-alpha on [max(lo, 1,000), hi], by numerical quadrature."""
    lo = max(lo, 1_000.0)
    num = quad(lambda x: x ** (2 - alpha), lo, hi, limit=200)[0]
    return num / quad(lambda x: x ** (1 - alpha), lo, hi, limit=200)[0]


def test_fitted_line_passes_through_each_tiers_price_at_its_token_weighted_mean_context(built_report, built_db):
    """A two-tier schedule is fitted exactly: the input line meets 2 USD and 4 USD at each tier's token-weighted mean
    prompt under the stated within-tier density L^-alpha (the scenario's alpha), not at the tier's midpoint."""
    steps = pl.read_csv(built_report / "context-pricing" / "tier-prices.csv.gz")
    gemini = steps.filter(pl.col("model") == "gemini-3.1-pro-preview")
    tiers = gemini.filter(pl.col("kind") == "tier").sort("context_tokens")
    assert tiers["usd_per_mtok"].to_list() == [2.0, 4.0, 4.0]  # fixture prices.csv, carried to the max prompt
    end = tiers["context_tokens"].max()
    assert end == 1_048_576  # the schedule's max_input_tokens
    (x0, y0), (x1, y1) = (
        gemini.filter(pl.col("kind") == "fit").sort("context_tokens").select("context_tokens", "usd_per_mtok").rows()
    )
    line = lambda x: y0 + (y1 - y0) * (x - x0) / (x1 - x0)  # noqa: E731
    with duckdb.connect(str(built_db), read_only=True) as con:  # the scenario's alpha, as the table states it
        alpha = con.execute("select any_value(tier_context_density_exponent_ratio) from fit_context_tiers").fetchone()[
            0
        ]
    assert line(token_weighted_mean(0, 200_000, alpha)) == pytest.approx(2.0, rel=1e-5)  # 6 digits in the CSV
    assert line(token_weighted_mean(200_000, end, alpha)) == pytest.approx(4.0, rel=1e-5)


def test_every_reading_in_the_table_is_shown_with_its_interval_or_its_status(built_report):
    """No reading appears bare: a number has its validated interval beside it, or a [status] when not ok."""
    table = read_tables(built_report / "context-pricing.html")["context-fits"]
    shown = [r["Reading (validated interval) [status if not ok]"] for r in table]
    numbers = [v for v in shown if v and v[0].isdigit()]
    assert numbers
    assert all("(" in v or "[" in v for v in numbers)
    validation = read_tables(built_report / "context-pricing.html")["inference-quantities"]
    assert {r["Quantity"] for r in validation} >= {
        "decode_kv_read_bytes_per_context_token",
        "kv_bytes_per_token_crossover",
    }
