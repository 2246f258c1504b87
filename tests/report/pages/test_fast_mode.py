"""Fast-mode page: the lecture's a.5 identity on the fixture's Opus 4.6 prices, and what the multiples allow."""

from __future__ import annotations

import polars as pl

from ..html_tables import read_tables
from ..specs import rows


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
    chart = pl.read_csv(built_report / "fast-mode" / "fast-multiples.csv.gz")
    assert chart.select("output_price_ratio", "speed_ratio", "batch_ratio").row(0) == (m, s, m * s)


def test_fast_mode_says_which_explanations_the_multiples_allow(built_report):
    """Each read variant lists the four explanations with how many reference architectures the multiples explain and
    exclude on either side, and the counts agree with the downloaded per-architecture table (its verdicts)."""
    table = read_tables(built_report / "fast-mode.html")["fast-explanations"]
    opus = next(r for r in table if r["Model"] == "claude-opus-4-6" and r["Prompt above (tokens)"] == "0")
    detail = pl.read_csv(built_report / "fast-mode" / "fit-fast-mode-explanations.csv.gz").filter(
        (pl.col("model") == "claude-opus-4-6") & (pl.col("tier_min_prompt_tokens") == 0)
    )
    labels = {"smaller_batch": "smaller batch", "more_chips": "more chips", "speculation": "speculation alone"}
    for e, label in labels.items():
        mine = detail.filter(pl.col("explanation") == e)
        cell = opus["Explained on (reference architectures), and excluded on either side"]
        dear, cheap = (int((mine["verdict"] == v).sum()) for v in ("too dear", "too cheap"))
        assert (
            f"{label}: {mine['allowed'].sum()} of {mine.height} explained ({dear} too dear, {cheap} too cheap)" in cell
        )
        assert (mine["allowed"] == (mine["verdict"] == "explained")).all()
