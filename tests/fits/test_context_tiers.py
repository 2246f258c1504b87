"""Long-context tiers → KV bytes per token: worked example, synthetic round trips with coverage, real rows.

Independent numbers: the lecture's f.1 worked example (200k, 1e11, R 300, 1 B/weight → 1,667 B; FP4 → 833 B),
synthetic price tables generated from the roofline's own cost functions with a known b_kv, and hand arithmetic
on published tier edges.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.fits import context_tiers as ct
from econ.physics import roofline
from econ.units import SECONDS_PER_HOUR
from fits.pricing_data import frames, hand_prices

# ---------------------------------------------------------------------------- the lecture's worked example


@pytest.mark.parametrize(
    ("critical_ratio", "weight_bytes", "expected"),
    [
        (300.0, 1.0, 1_666.7),  # lecture f.1: "(1/300) * 1e11 / 2e5 = 1,667 bytes"
        (300.0, 0.5, 833.3),  # lecture-math f.1 precision caveat: FP4 weights
    ],
)
def test_crossover_reading_reproduces_the_lecture(critical_ratio, weight_bytes, expected):
    result = ct.kv_bytes_at_crossover(critical_ratio, weight_bytes, 1e11, 200_000)
    assert result == pytest.approx(expected, abs=0.1)


def test_usd_per_kv_byte_is_price_over_bandwidth():
    """$2/chip-hour on 8 TB/s at full bandwidth: 2/3600/8e12 $ per byte read per token."""
    assert ct.usd_per_token_per_kv_byte(2.0, 8e12, 1.0) == pytest.approx(2.0 / 3600 / 8e12, rel=1e-12)


# ---------------------------------------------------------------------------- representative contexts


def schedule(thresholds, max_input, prices, *, provider="p", model="m", variant="standard", source="hand"):
    n = len(thresholds)
    return pl.DataFrame(
        {
            "source": [source] * n,
            "provider": [provider] * n,
            "model": [model] * n,
            "variant": [variant] * n,
            "tier_min_prompt_tokens": thresholds,
            "max_input_tokens": [max_input] * n,
            "input_usd_per_mtok": prices,
            "output_usd_per_mtok": [6.0 * p for p in prices],
            "cache_read_usd_per_mtok": [None] * n,
        },
        schema_overrides={"cache_read_usd_per_mtok": pl.Float64},
    )


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("midpoint", [100_000, (200_000 + 1_048_576) / 2]),
        ("lower", [0, 200_000]),
        ("upper", [200_000, 1_048_576]),
        ("geometric", [np.sqrt(1_000 * 200_000), np.sqrt(200_000 * 1_048_576)]),
    ],
)
def test_representative_context_rules_on_gemini_edges(rule, expected):
    """Gemini 3.1 Pro's published edges: 0-200k and 200k-1,048,576 (max_input_tokens)."""
    out = ct.representative_contexts(schedule([0, 200_000], 1_048_576, [2.0, 4.0]))
    assert out[f"context_{rule}_tokens"].to_list() == pytest.approx(expected)


def test_missing_max_input_leaves_the_top_tier_without_a_midpoint():
    out = ct.representative_contexts(schedule([0, 200_000], None, [2.0, 4.0]))
    assert out["context_midpoint_tokens"].to_list() == [100_000, None]
    fits = ct.fit_schedules(schedule([0, 200_000], None, [2.0, 4.0]), rules=("midpoint", "lower"))
    status = dict(
        zip(fits.filter(pl.col("component") == "input")["rule"], fits.filter(pl.col("component") == "input")["status"])
    )
    assert status == {"midpoint": "underdetermined", "lower": "exact"}


# ---------------------------------------------------------------------------- synthetic round trips

W, P_CHIP, MBU, MARGIN, B_KV = 8e12, 2.0, 0.8, 0.5, 70_000.0
THRESHOLDS = [0, 32_000, 128_000, 256_000]
MAX_INPUT = 1_000_000


def roofline_tier_prices(contexts_per_tier: np.ndarray, *, batch=2_000.0, n_act=3.7e10, n_tot=6.7e11) -> np.ndarray:
    """Break-even price per tier [$/MTok]: decode cost per token from the roofline (memory-bound, one chip's share),
    averaged over prompts spread evenly across the tier, grossed up by the margin."""
    t = roofline.memory_time_s(batch, contexts_per_tier, B_KV, n_tot, 1.0, 64.0, W, mbu=MBU)
    cost = roofline.usd_per_token(t, batch, 64.0, P_CHIP)
    return cost.mean(axis=-1) / (1 - MARGIN) * 1e6


def tier_grid(n=201):
    edges = np.array(THRESHOLDS[1:] + [MAX_INPUT], dtype=float)
    lower = np.array(THRESHOLDS, dtype=float)
    return lower[:, None] + (edges - lower)[:, None] * np.linspace(0, 1, n)[None, :]


def synthetic(prices_per_replication: np.ndarray) -> pl.DataFrame:
    frames_ = [schedule(THRESHOLDS, MAX_INPUT, list(p), model=f"m{i}") for i, p in enumerate(prices_per_replication)]
    return pl.concat(frames_)


def test_round_trip_recovers_kv_bytes_exactly_without_noise():
    """Prices from the roofline with prompts uniform in each tier: the midpoint rule recovers b_kv (4 tiers: ok)."""
    prices = roofline_tier_prices(tier_grid())
    fits = ct.fit_schedules(synthetic(prices[None, :]), rules=("midpoint",)).filter(pl.col("component") == "input")
    assert fits["status"].to_list() == ["ok"]
    kv = ct.kv_bytes_from_slope(fits["slope_usd_per_mtok_per_mtok_context"][0], MARGIN, P_CHIP, W, MBU)
    assert kv == pytest.approx(B_KV, rel=1e-6)


def test_round_trip_with_noise_recovers_truth_and_intervals_cover_at_nominal_rate():
    """400 noisy replications (additive N(0, 2% of the base price) on every tier), generated at once: the median
    estimate is within 2 % of the truth and the 90 % covariance interval covers it 90 % ± 4 % of the time."""
    rng = np.random.default_rng(11)
    clean = roofline_tier_prices(tier_grid())
    noisy = clean[None, :] + rng.normal(0.0, 0.02 * clean[0], size=(400, clean.size))
    fits = ct.fit_schedules(synthetic(noisy), rules=("midpoint",)).filter(pl.col("component") == "input")
    assert set(fits["status"]) == {"ok"}
    to_kv = ct.kv_bytes_from_slope(1.0, MARGIN, P_CHIP, W, MBU)  # bytes per unit of slope
    est = fits["slope_usd_per_mtok_per_mtok_context"].to_numpy() * to_kv
    lo = fits["slope_fit_low_usd_per_mtok_per_mtok_context"].to_numpy() * to_kv
    hi = fits["slope_fit_high_usd_per_mtok_per_mtok_context"].to_numpy() * to_kv
    assert np.median(est) == pytest.approx(B_KV, rel=0.02)
    assert np.mean((lo <= B_KV) & (B_KV <= hi)) == pytest.approx(0.9, abs=0.04)


def test_implied_kv_carries_fit_and_scenario_intervals():
    a = frames()["assumptions"]
    prices = roofline_tier_prices(tier_grid())
    fits = ct.fit_schedules(synthetic(prices[None, :]), rules=("midpoint",)).with_columns(
        pl.lit(None, dtype=pl.Float64).alias("params_active"),
        pl.lit(None, dtype=pl.Float64).alias("kv_bytes_per_token"),
    )
    out = ct.implied_kv(fits, a).filter(pl.col("component") == "input").row(0, named=True)
    assert (
        out["kv_slope_fit_low_bytes_per_token"]
        < out["kv_slope_bytes_per_token"]
        < out["kv_slope_fit_high_bytes_per_token"]
    )
    assert (
        out["kv_slope_scenario_low_bytes_per_token"]
        < out["kv_slope_bytes_per_token"]
        < out["kv_slope_scenario_high_bytes_per_token"]
    )
    assert out["params_active_source"] == "scenario frontier_active_params"
    assert (
        out["kv_crossover_scenario_low_bytes_per_token"]
        < out["kv_crossover_bytes_per_token"]
        < out["kv_crossover_scenario_high_bytes_per_token"]
    )


# ---------------------------------------------------------------------------- real rows


@pytest.fixture(scope="module")
def real_table():
    from econ.analyses.fit_context_tiers import table as context_tiers_table

    f = frames()
    return context_tiers_table(f["price_current"], f["models"], f["assumptions"])


def row(table, model, component="output", rule="midpoint", variant="standard"):
    match = table.filter(
        (pl.col("model") == model)
        & (pl.col("component") == component)
        & (pl.col("rule") == rule)
        & (pl.col("variant") == variant)
        & ~pl.col("pooled")
    )
    assert match.height == 1, f"{model}: {match.height} rows"
    return match.row(0, named=True)


def test_two_tier_schedule_is_exact_with_no_fit_interval(real_table):
    """Gemini 3.1 Pro (hand rows: 2/4 input, 12/18 output at 200k): exact, the fit interval unidentified (±inf)."""
    r = row(real_table, "gemini-3.1-pro-preview")
    assert r["status"] == "exact" and r["fit_interval_kind"] == "none"
    assert r["kv_slope_fit_low_bytes_per_token"] == -np.inf and r["kv_slope_fit_high_bytes_per_token"] == np.inf
    # slope by hand: (18 - 12) $/MTok over the midpoints 100k -> 624,288 tokens
    assert r["slope_usd_per_mtok_per_mtok_context"] == pytest.approx(6.0 / ((200_000 + 1_048_576) / 2 - 100_000) * 1e6)


def test_a_schedule_with_one_tier_is_not_fitted(real_table):
    """Claude Opus 4.6: one standard tier (flat to 1M) is not fitted; its fast variant has two (200k) and is exact."""
    rows = hand_prices("anthropic", "claude-opus-4-6")
    assert rows.filter(pl.col("variant") == "standard").height == 1
    assert rows.filter(pl.col("variant") == "fast").height == 2
    fitted = real_table.filter(pl.col("model") == "claude-opus-4-6")
    assert set(fitted["variant"]) == {"fast"} and set(fitted["status"]) == {"exact"}


def test_qwen_three_and_four_tier_schedules_get_residual_intervals(real_table):
    for model, tiers in (("qwen3-max", 3), ("qwen3-coder-plus", 4)):
        r = row(real_table, model, component="input")
        assert r["n_tiers"] == tiers and r["status"] in ("ok", "at_bound")
        assert np.isfinite(r["slope_fit_low_usd_per_mtok_per_mtok_context"])


def test_crossover_reading_at_gemini_threshold_matches_the_lecture_at_the_scenario_chip(real_table):
    """L* = 200k, N_act = 1e11 (scenario), GB200 fp8 (R = 312.5, b_w = 1): 1e11/(312.5*2e5) = 1,600 B."""
    r = row(real_table, "gemini-3.1-pro-preview")
    assert r["params_active_source"] == "scenario frontier_active_params"
    assert r["kv_crossover_bytes_per_token"] == pytest.approx(1e11 / (312.5 * 2e5))


def test_open_weight_tiered_models_report_implied_over_true(real_table):
    """Open-weight models with tiers (MiniMax-M3 hand rows; reseller schedules of GLM-5.1 and Qwen3.5): the ratio
    is present and finite; its value is reported, not tested."""
    open_rows = real_table.filter(pl.col("arch_model").is_not_null() & pl.col("default_rule") & ~pl.col("pooled"))
    assert "MiniMax-M3" in open_rows["arch_model"].to_list()
    assert open_rows["kv_slope_over_true_ratio"].is_finite().all()
    assert open_rows["kv_crossover_over_true_ratio"].is_finite().all()
    assert (open_rows["params_active_source"] == "architecture").all()


def test_openai_pool_is_one_plausible_relative_slope(real_table):
    """OpenAI's >272k tiers are uniformly 2x input: with the lower rule kappa = (2 - 1)/0.272 per million tokens."""
    pool = real_table.filter(
        pl.col("pooled")
        & (pl.col("provider") == "openai")
        & (pl.col("component") == "input")
        & (pl.col("rule") == "lower")
    ).row(0, named=True)
    assert pool["pool_plausible"] and pool["pool_model_count"] >= 5
    assert pool["uplift_per_mtok_context_frac"] == pytest.approx(1.0 / 0.272, rel=1e-6)
    assert pool["status"] == "ok"


def test_every_row_states_its_assumptions(real_table):
    for column in (
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "rule",
        "scenario_interval",
        "source",
    ):
        assert real_table[column].null_count() == 0, column
    assert set(real_table["rule"]) == set(ct.RULES)
    hw = frames()["assumptions"]
    assert real_table["usd_per_chip_hour"][0] == hw.central["usd_per_chip_hour"]


def test_slope_conversion_uses_assumptions_by_hand(real_table):
    """b_kv = k*(1-margin)*W*mbu/p for Sonnet 4.5 output (15 -> 22.5 at 200k, max 1M), by hand at the scenario."""
    a = frames()["assumptions"]
    r = row(real_table, "claude-sonnet-4-5")
    k = 7.5 / ((200_000 + 1_000_000) / 2 - 100_000) * 1e6 / 1e12  # $/token per context token
    by_hand = (
        k
        * (1 - a.central["gross_margin_frac"])
        * 8e12
        * a.central["decode_mbu_frac"]
        / (a.central["usd_per_chip_hour"] / SECONDS_PER_HOUR)
    )
    assert r["kv_slope_bytes_per_token"] == pytest.approx(by_hand, rel=1e-9)
